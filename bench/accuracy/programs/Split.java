/*
 * Split — the accuracy harness's CPU-split program (bench/accuracy/run, program
 * "split"). One thread, "split", alternates the methods fifty(), thirty() and
 * twenty(), which run the same kernel for 5, 3 and 2 units of work, so whatever the
 * JIT does to the kernel it does alike for all three and the split is 50/30/20 by
 * design. The truth is measured, not assumed: the thread's own CPU clock
 * (ThreadMXBean.getCurrentThreadCpuTime) around every call, summed per method; the
 * rest of the thread's CPU (the loop, the clock reads, start-up) is "other".
 * It prints, for bench/accuracy/run to parse:
 *
 *   truth ROW NANOSECONDS        (ROW: fifty, thirty, twenty, other)
 *
 *   java Split SECONDS
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class Split {
    static final int UNIT = 100_000;
    static volatile long blackhole;

    static long kernel(long x, int n) {
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    static long fifty(long x) { return kernel(x, 5 * UNIT); }
    static long thirty(long x) { return kernel(x, 3 * UNIT); }
    static long twenty(long x) { return kernel(x, 2 * UNIT); }

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long[] ns = new long[4];
        Thread t = new Thread(() -> {
            long end = System.nanoTime() + (long) (seconds * 1e9);
            long x = 1;
            while (System.nanoTime() < end) {
                long c0 = mx.getCurrentThreadCpuTime();
                x = fifty(x);
                long c1 = mx.getCurrentThreadCpuTime();
                x = thirty(x);
                long c2 = mx.getCurrentThreadCpuTime();
                x = twenty(x);
                long c3 = mx.getCurrentThreadCpuTime();
                ns[0] += c1 - c0;
                ns[1] += c2 - c1;
                ns[2] += c3 - c2;
            }
            blackhole = x;
            ns[3] = mx.getCurrentThreadCpuTime() - ns[0] - ns[1] - ns[2];
        }, "split");
        t.start();
        t.join();
        String[] rows = { "fifty", "thirty", "twenty", "other" };
        for (int i = 0; i < 4; i++)
            System.out.println("truth " + rows[i] + " " + ns[i]);
    }
}
