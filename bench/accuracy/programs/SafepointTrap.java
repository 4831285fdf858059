/*
 * SafepointTrap — the accuracy harness's safepoint-bias trap (bench/accuracy/run,
 * programs "safepoint" and "safepoint-g1"). One thread, "trap", alternates two
 * methods that do the same arithmetic (x = x * 31 + i) for the same number of
 * iterations:
 *
 *   hot()     a counted int loop. C2 keeps no safepoint poll in it when
 *             UseCountedLoopSafepoints is off, which is the default with the
 *             Parallel and Serial collectors (JDK 17: the JVM picks Serial on a
 *             machine with one CPU or less than 1792 MB); with G1, the default
 *             elsewhere, C2 strip-mines the loop and polls every 1000 iterations.
 *   polled()  the same loop with a stride read from a volatile field, so it is not
 *             a counted loop and C2 keeps a poll on its back-edge with any collector.
 *
 * A profiler that can only see a thread at a safepoint poll (GetStackTrace, as the
 * jvmti engine uses) cannot see it inside hot() when hot() has no poll: its time
 * goes to the next poll, in the caller or in polled(). The truth is measured, not
 * assumed: the thread's CPU clock around every call. It prints:
 *
 *   truth ROW NANOSECONDS        (ROW: hot, polled, other)
 *
 *   java [-XX:+UseParallelGC] SafepointTrap SECONDS
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class SafepointTrap {
    static final int N = 4_000_000;
    static volatile int stride = 1;
    static volatile long blackhole;

    static long hot(long x, int n) {
        for (int i = 0; i < n; i++)
            x = x * 31 + i;
        return x;
    }

    static long polled(long x, int n) {
        for (int i = 0; i < n; i += stride)
            x = x * 31 + i;
        return x;
    }

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long[] ns = new long[3];
        Thread t = new Thread(() -> {
            long end = System.nanoTime() + (long) (seconds * 1e9);
            long x = 1;
            while (System.nanoTime() < end) {
                long c0 = mx.getCurrentThreadCpuTime();
                x = hot(x, N);
                long c1 = mx.getCurrentThreadCpuTime();
                x = polled(x, N);
                long c2 = mx.getCurrentThreadCpuTime();
                ns[0] += c1 - c0;
                ns[1] += c2 - c1;
            }
            blackhole = x;
            ns[2] = mx.getCurrentThreadCpuTime() - ns[0] - ns[1];
        }, "trap");
        t.start();
        t.join();
        String[] rows = { "hot", "polled", "other" };
        for (int i = 0; i < 3; i++)
            System.out.println("truth " + rows[i] + " " + ns[i]);
    }
}
