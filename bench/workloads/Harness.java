/*
 * Harness — the loop every bench/workloads program runs in, and what it prints;
 * bench/overhead reads these lines.
 *
 *   java -cp bench_workloads.jar[:LIBRARY.jar ...] MAIN SECONDS
 *   java -cp ... MAIN -n ITERATIONS
 *
 * The workload's set-up runs once, outside any iteration. Then iterations run back
 * to back until SECONDS of them have passed (at least MIN_ITERS), or exactly
 * ITERATIONS. Every iteration does the same fixed amount of work and checks its own
 * result, throwing if it is wrong; it returns a checksum, and the harness also checks
 * that every iteration's checksum equals the first one's (the work is deterministic).
 * Printed to stdout, one line an iteration and one at the end:
 *
 *   iter N MS CPU  N counts from 1; MS is the iteration's wall time in milliseconds;
 *                  CPU the process's CPU time (all threads) at its end, in ms
 *   done N MS      the number of iterations and their total wall time
 *
 * A wrong result prints "FAIL <workload>: <reason>" to stderr and exits 1, so a
 * profiler that corrupts a program's state shows up as a failed run, not as a figure.
 */
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

public final class Harness {
    /** One iteration: the fixed work, checked. Returns a checksum of the result. */
    public interface Iteration {
        long run() throws Exception;
    }

    /** One of the parts an iteration is split into, run on a pool thread. */
    public interface Part {
        long run(int part) throws Exception;
    }

    /** A run shorter than this many iterations has no steady state to speak of. */
    static final int MIN_ITERS = 6;

    private static ExecutorService pool;

    /**
     * Runs PARTS parts of an iteration on a fixed pool of PARTS threads ("work-N",
     * daemons, made on first use) and returns the sum of their results. The number of
     * parts is the workload's, not the machine's, so the work per iteration is fixed.
     */
    public static long parallel(int parts, Part part) throws Exception {
        if (pool == null) {
            AtomicInteger n = new AtomicInteger();
            pool = Executors.newFixedThreadPool(parts, r -> {
                Thread t = new Thread(r, "work-" + n.getAndIncrement());
                t.setDaemon(true);
                return t;
            });
        }
        List<Future<Long>> fs = new ArrayList<>();
        for (int i = 0; i < parts; i++) {
            final int p = i;
            fs.add(pool.submit(() -> part.run(p)));
        }
        long sum = 0;
        for (Future<Long> f : fs)
            sum += f.get();
        return sum;
    }

    /**
     * Throws with REASON unless OK: the workloads' result checks. REASON is built
     * before the call, so a check inside a hot loop tests first and calls this only
     * to fail: a message built per element would be garbage the workload is not about.
     */
    public static void check(boolean ok, String reason) {
        if (!ok)
            throw new IllegalStateException(reason);
    }

    /** Runs IT as the command line ARGS says (see the top of this file), then exits. */
    public static void run(String name, String[] args, Iteration it) {
        long seconds = 0, iters = 0;
        if (args.length == 2 && args[0].equals("-n"))
            iters = Long.parseLong(args[1]);
        else if (args.length == 1)
            seconds = Long.parseLong(args[0]);
        else
            fail(name, "usage: " + name + " SECONDS | -n ITERATIONS", null);
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        try {
            long start = System.nanoTime(), end = start + seconds * 1_000_000_000L;
            long first = 0, n = 0;
            while (iters > 0 ? n < iters : (n < MIN_ITERS || System.nanoTime() < end)) {
                long t0 = System.nanoTime();
                long sum = it.run();
                long t1 = System.nanoTime();
                n++;
                if (n == 1)
                    first = sum;
                else
                    check(sum == first, "iteration " + n + " computed " + sum + ", the first " + first);
                System.out.printf("iter %d %.3f %.3f%n", n, (t1 - t0) / 1e6, os.getProcessCpuTime() / 1e6);
            }
            System.out.printf("done %d %.3f%n", n, (System.nanoTime() - start) / 1e6);
            System.out.flush();
            System.exit(0);
        } catch (Throwable e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            fail(name, cause.toString(), e);
        }
    }

    static void fail(String name, String reason, Throwable e) {
        System.out.flush();
        System.err.println("FAIL " + name + ": " + reason);
        if (e != null)
            e.printStackTrace();
        System.exit(1);
    }
}
