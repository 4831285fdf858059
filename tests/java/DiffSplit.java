/*
 * DiffSplit — one thread ("splitter") whose CPU is split between hot() and cold()
 * in a share given on the command line, for `ringprof diff` against a program that
 * measures itself: two runs with different shares, and the diff's change of
 * hot()'s share must be the change the program measured.
 *
 * The split is kept by the thread's own CPU clock, as FixedSplit's cpu mode keeps
 * it: each round is 37 ms of the thread's CPU time, hot() runs until HOT_PCT% of
 * it, cold() to its end. 37 ms, so that the boundaries fall on neither a 1, 4 nor
 * 10 ms grid and a sampler at fixed steps of CPU time sees every phase in turn.
 * The truth is the thread's CPU time in each method (the clock read around every
 * call), printed at the end. It runs until it has used CPU_SECONDS of CPU.
 *
 *   java DiffSplit CPU_SECONDS HOT_PCT
 *
 * prints "truth hot=NS cold=NS", then "DiffSplit done ROUNDS".
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class DiffSplit {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static final long ROUND = 37_000_000L;
    static final int CHUNK = 2000;   /* work between two reads of the clock */

    static long kernel(long x, int n) {
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    static long spin(long x, long until) {
        while (MX.getCurrentThreadCpuTime() < until)
            x = kernel(x, CHUNK);
        return x;
    }

    static long hot(long x, long until) { return spin(x, until); }
    static long cold(long x, long until) { return spin(x, until); }

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        long split = ROUND * Integer.parseInt(args[1]) / 100;
        long[] spent = new long[2];
        long[] rounds = new long[1];
        long[] sink = new long[1];
        Thread t = new Thread(() -> {
            long x = 1;
            long c0 = MX.getCurrentThreadCpuTime(), base = c0;
            long end = c0 + (long) (seconds * 1e9);
            while (c0 < end) {
                long r0 = base + (c0 - base) / ROUND * ROUND;
                int which = c0 - r0 < split ? 0 : 1;
                x = which == 0 ? hot(x, r0 + split) : cold(x, r0 + ROUND);
                rounds[0] += which;
                long c1 = MX.getCurrentThreadCpuTime();
                spent[which] += c1 - c0;
                c0 = c1;
            }
            sink[0] = x;
        }, "splitter");
        t.start();
        t.join();
        System.out.println("truth hot=" + spent[0] + " cold=" + spent[1]);
        System.out.println("DiffSplit done " + rounds[0] + " " + (sink[0] & 1));
    }
}
