/*
 * CpuSplit — one thread ("splitter") whose CPU is split 50/30/20 between the
 * methods fifty(), thirty() and twenty(). Each calls the same kernel for 5, 3 and 2
 * units of work, so whatever the JIT does to the kernel, it does it alike for all
 * three and the split holds in CPU time. The three methods never call each other.
 *
 *   java CpuSplit SECONDS
 */
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

    static long fifty(long x) { return kernel(x, 5 * UNIT); }
    static long thirty(long x) { return kernel(x, 3 * UNIT); }
    static long twenty(long x) { return kernel(x, 2 * UNIT); }

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        long[] sink = new long[1];
        Thread t = new Thread(() -> {
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            long x = 1;
            while (System.nanoTime() < end) {
                x = fifty(x);
                x = thirty(x);
                x = twenty(x);
            }
            sink[0] = x;
        }, "splitter");
        t.start();
        t.join();
        System.out.println("CpuSplit done " + (sink[0] & 1));
    }
}
