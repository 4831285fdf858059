/*
 * CpuSplit — one thread ("splitter") whose CPU is split 50/30/20 between the
 * methods fifty(), thirty() and twenty(). Each calls the same kernel for 5, 3 and 2
 * units of work, so whatever the JIT does to the kernel, it does it alike for all
 * three and the split is near 50/30/20 in CPU time.
 *
 * Each round scales the work by a random factor (0.5 to 1.5) and calls the three
 * in a random order. Without that the round is a fixed ~2 ms, half the 4 ms
 * scheduler tick on which Linux fires CPU-clock timers, and the samples alias:
 * they land at the same few points of the round and a 6 s run could give twenty()
 * 28% (docs/engines.md, "Periodic work").
 *
 * The split is near 50/30/20, but not exactly, and not always:
 * on a loaded machine the JIT may compile one call site much later than the
 * others (CI once saw 41/31/28). So the thread also measures its own CPU time
 * around every call and prints the truth at the end, and the test compares the
 * profile with that rather than with 50/30/20. The three methods never call
 * each other.
 *
 *   java CpuSplit SECONDS
 *
 * prints "truth fifty=NS thirty=NS twenty=NS" (thread CPU nanoseconds spent in
 * each) and then "CpuSplit done".
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class CpuSplit {
    static final int UNIT = 200_000;

    static long kernel(long x, int n) {
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    static long fifty(long x, int unit) { return kernel(x, 5 * unit); }
    static long thirty(long x, int unit) { return kernel(x, 3 * unit); }
    static long twenty(long x, int unit) { return kernel(x, 2 * unit); }

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        long[] sink = new long[1];
        long[] spent = new long[3];
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Thread t = new Thread(() -> {
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            long x = 1;
            java.util.SplittableRandom rnd = new java.util.SplittableRandom(42);
            while (System.nanoTime() < end) {
                int unit = UNIT / 2 + rnd.nextInt(UNIT);
                int order = rnd.nextInt(6);
                for (int k = 0; k < 3; k++) {
                    int which = (order + (order < 3 ? k : 3 - k)) % 3;
                    long t0 = mx.getCurrentThreadCpuTime();
                    if (which == 0)
                        x = fifty(x, unit);
                    else if (which == 1)
                        x = thirty(x, unit);
                    else
                        x = twenty(x, unit);
                    spent[which] += mx.getCurrentThreadCpuTime() - t0;
                }
            }
            sink[0] = x;
        }, "splitter");
        t.start();
        t.join();
        System.out.println("truth fifty=" + spent[0] + " thirty=" + spent[1]
                           + " twenty=" + spent[2]);
        System.out.println("CpuSplit done " + (sink[0] & 1));
    }
}
