/*
 * SoakMain — runs a bench workload (bench/workloads/) with THREADS companion threads
 * beside it, for tests/soak/run. The workloads split their work over a fixed two
 * threads (threads: 244, mostly idle), so that bench/overhead's figures stay
 * comparable; the soak wants many threads at once under the profiler, and it adds
 * them here rather than changing the workloads' work.
 *
 *   java -cp soak_driver.jar:bench_workloads.jar[:LIB.jar] SoakMain THREADS DIR MAIN ARGS...
 *
 * Each companion ("soak-N") does short bursts of self-checked work: it builds a
 * batch of small arrays in a hash map (allocation samples) and checks their sum,
 * then recurses 8 to 55 frames and spins at the bottom (CPU samples with stacks of
 * every depth), checked against the same arithmetic done without recursing; then
 * it sleeps. The sleeps are sized so the companions together want about one CPU,
 * leaving the other to the workload. Every
 * companion ends after a second or so of bursts and a new one takes its place, so
 * threads start and end all the time (the agent's thread registry, ring reuse).
 *
 * MAIN's main(ARGS) runs on the main thread; the workload's Harness ends the JVM
 * with System.exit when its time is up, but never before 6 iterations, which on a
 * busy machine can take far longer than the soak wants to give one run. So the
 * JVM also exits (status 0) when the file DIR/timeup appears: tests/soak/run
 * creates it once the run's time is up and at least one iteration has been checked.
 * An iteration cut short is simply not finished; a wrong result found before the
 * exit has already printed "FAIL" to stderr, which the run checks for (see the
 * watcher below for what is printed after it).
 *
 * On exit, a shutdown hook prints "soak: exiting" and waits until DIR/stop exists
 * (at most 120 s): while it waits the JVM and the agent are still up, so
 * tests/soak/run can stop sampling, flush and take the agent's status. If a
 * companion computed a wrong result, the hook prints "FAIL soak: ..." and halts
 * the JVM with status 1, whatever the workload's status was.
 */
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

public final class SoakMain {
    static final AtomicLong bursts = new AtomicLong();
    static final AtomicInteger started = new AtomicInteger();
    static final AtomicReference<String> failure = new AtomicReference<>();
    static volatile boolean exiting;

    /** One burst: allocate, recurse, spin at the bottom; every 8th burst is checked. */
    static void burst(int id, int n) {
        Map<Integer, long[]> m = new HashMap<>();
        long want = 0;
        for (int i = 0; i < 200; i++) {
            long[] a = new long[1 + (i + n) % 16];
            for (int k = 0; k < a.length; k++)
                a[k] = (long) i * 31 + k;
            m.put(i, a);
            want += (long) a.length * i * 31 + (long) a.length * (a.length - 1) / 2;
        }
        long got = 0;
        for (int i = 0; i < 200; i++)
            for (long v : m.get(i))
                got += v;
        int depth = 8 + n % 48;
        long deep = descend(depth, n);
        if (got != want)
            failure.compareAndSet(null, "soak-" + id + " burst " + n + ": sum " + got + ", not " + want);
        else if (n % 8 == 0 && deep != flat(depth, n))
            failure.compareAndSet(null, "soak-" + id + " burst " + n + ": recursion returned " + deep
                + ", not " + flat(depth, n));
    }

    static final int SPIN = 100_000;

    static long spin(long x) {
        for (int i = 0; i < SPIN; i++)
            x = (x ^ (x >>> 29)) * 0x9E3779B97F4A7C15L + i;
        return x;
    }

    /** D frames down, then SPIN rounds of mixing: CPU samples with stacks of every depth. */
    static long descend(int d, long x) {
        return d == 0 ? spin(x) : descend(d - 1, x + d) ^ d;
    }

    /** What descend(d, x) returns, without recursing. */
    static long flat(int d, long x) {
        long sum = x;
        for (int k = d; k > 0; k--)
            sum += k;
        long r = spin(sum);
        for (int k = 1; k <= d; k++)
            r ^= k;
        return r;
    }

    /** A companion: bursts and sleeps for about a second, then a successor takes over. */
    static void companion(int threads) {
        int id = started.incrementAndGet();
        Thread t = new Thread(() -> {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            long end = System.nanoTime() + r.nextLong(500_000_000L, 1_500_000_000L);
            try {
                for (int n = 0; System.nanoTime() < end && !exiting; n++) {
                    burst(id, n);
                    bursts.incrementAndGet();
                    // A burst is about 0.3 ms of CPU; sleeping THREADS/4 ms on average
                    // after each keeps all the companions together to about one CPU.
                    Thread.sleep(r.nextInt(1, Math.max(2, threads / 2)));
                }
            } catch (InterruptedException e) {
                // not interrupted: the JVM exits
            } catch (Throwable e) {
                failure.compareAndSet(null, "soak-" + id + ": " + e);
            }
            if (!exiting)
                companion(threads);
        }, "soak-" + id);
        t.setDaemon(true);
        t.start();
    }

    public static void main(String[] args) throws Throwable {
        if (args.length < 3) {
            System.err.println("usage: SoakMain THREADS DIR MAIN ARGS...");
            System.exit(2);
        }
        int threads = Integer.parseInt(args[0]);
        Path stop = Paths.get(args[1], "stop"), timeup = Paths.get(args[1], "timeup");
        PrintStream err = System.err;   // the hook's verdict goes here even after a time-up
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            exiting = true;
            System.out.printf("soak: exiting, %d companion threads started, %d bursts%n",
                started.get(), bursts.get());
            System.out.flush();
            for (int i = 0; i < 1200 && !Files.exists(stop); i++) {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    break;
                }
            }
            String f = failure.get();
            if (f == null && bursts.get() == 0 && threads > 0)
                f = "the companion threads never finished a burst";
            if (f != null) {
                err.println("FAIL soak: " + f);
                err.flush();
                Runtime.getRuntime().halt(1);
            }
        }, "soak-exit"));
        Thread watch = new Thread(() -> {
            try {
                while (!Files.exists(timeup))
                    Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
            System.out.println("soak: time is up");
            System.out.flush();
            // The exit runs the workload's shutdown hooks (H2 closes its databases,
            // EcjWork deletes its project) under the iteration still running, which
            // then fails for that reason alone: what it prints from here on goes to
            // DIR/err-after-timeup, which tests/soak/run shows but does not judge.
            try {
                System.setErr(new PrintStream(new FileOutputStream(args[1] + "/err-after-timeup"), true));
            } catch (IOException e) {
                System.err.println("soak: cannot open err-after-timeup: " + e);
            }
            System.exit(0);
        }, "soak-timeup");
        watch.setDaemon(true);
        watch.start();
        for (int i = 0; i < threads; i++)
            companion(threads);
        String[] rest = new String[args.length - 3];
        System.arraycopy(args, 3, rest, 0, rest.length);
        Class.forName(args[2]).getMethod("main", String[].class).invoke(null, (Object) rest);
    }
}
