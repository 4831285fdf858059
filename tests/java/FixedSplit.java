/*
 * FixedSplit — one thread ("splitter") whose CPU is split 55/30/15 between the
 * methods large(), medium() and small(), called in that order every round, every
 * round the same length: nothing is randomised (CpuSplit.java is the randomised
 * counterpart).
 *
 * The round is kept by a clock, so the work repeats exactly in step with it:
 *   wall  each round is ROUND_US of wall-clock time (System.nanoTime), as in a
 *         frame or control loop: large() runs for the first 55% of it, medium()
 *         to 85%, small() to the end. The scheduler tick is kept by the same
 *         clock, so samples taken on ticks see the round only at the tick's
 *         phases, however often the thread is preempted.
 *   cpu   each round is ROUND_US of the thread's own CPU time, split the same
 *         way: samples taken at fixed steps of CPU time see it only at the
 *         phases those steps reach.
 * In both, each method runs the same kernel until the clock reaches its end of
 * the round; a thread that was preempted past it resumes in the method the clock
 * says.
 *   count each method runs the kernel a fixed number of times, sized once (after
 *         a warm-up) so that a round takes about ROUND_US of CPU: the plain loop
 *         of issue 13, whose round drifts a little against any clock
 *         (bench/periodic.sh sweeps its length).
 *
 * With ROUND_US=40000 a round is ten 4 ms ticks (HZ=250) or four 10 ms sampling
 * intervals, and its boundaries (22 and 34 ms) fall on neither grid: a sampler
 * tied to either sees each method's share rounded to 10% or 25% of the round
 * (large() 50 or 60%, small() 10 or 20%), 5 points or more off. A sampler whose
 * samples fall at random points of the CPU time sees it within sampling noise,
 * which at four intervals a round is well under 3 points with 1,000 samples
 * (in cpu mode; in wall mode preemption cuts the round's CPU into shorter
 * pieces, split less finely). tests/agent's agent_fixed_split runs cpu mode;
 * bench/periodic.sh any.
 *
 * The thread records the truth: its CPU time in each method (its CPU clock read
 * around every call), printed at the end. It runs until it has used CPU_SECONDS
 * of CPU, so a profile at 10 ms has about 100 samples per CPU second asked for,
 * however busy the machine is.
 *
 *   java FixedSplit CPU_SECONDS ROUND_US wall|cpu|count
 *
 * prints "truth large=NS medium=NS small=NS", then "FixedSplit done ROUNDS".
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class FixedSplit {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    /* Work between two reads of the clock: a few microseconds, so each method
     * ends within that of its end of the round. */
    static final int CHUNK = 2000;

    static long kernel(long x, int n) {
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    static long now(boolean wall) {
        return wall ? System.nanoTime() : MX.getCurrentThreadCpuTime();
    }

    static long spin(long x, boolean wall, long until) {
        while (now(wall) < until)
            x = kernel(x, CHUNK);
        return x;
    }

    static long large(long x, boolean wall, long until) { return spin(x, wall, until); }
    static long medium(long x, boolean wall, long until) { return spin(x, wall, until); }
    static long small(long x, boolean wall, long until) { return spin(x, wall, until); }

    static long large(long x, int n) { return kernel(x, n); }
    static long medium(long x, int n) { return kernel(x, n); }
    static long small(long x, int n) { return kernel(x, n); }

    /* count mode: rounds of fixed work, each about `round` ns of CPU. */
    static long counted(long x, long round, long end, long[] spent, long[] rounds) {
        long t0 = MX.getCurrentThreadCpuTime();
        while (MX.getCurrentThreadCpuTime() - t0 < 500_000_000L)    /* warm-up, JIT */
            x = kernel(x, CHUNK);
        long n = 0, t1 = MX.getCurrentThreadCpuTime();
        while (MX.getCurrentThreadCpuTime() - t1 < 200_000_000L) {
            x = kernel(x, CHUNK);
            n += CHUNK;
        }
        double perIter = (MX.getCurrentThreadCpuTime() - t1) / (double) n;
        int n1 = (int) (round * 0.55 / perIter), n2 = (int) (round * 0.30 / perIter);
        int n3 = (int) (round * 0.15 / perIter);
        long c0 = MX.getCurrentThreadCpuTime();
        while (c0 < end) {
            x = large(x, n1);
            long c1 = MX.getCurrentThreadCpuTime();
            x = medium(x, n2);
            long c2 = MX.getCurrentThreadCpuTime();
            x = small(x, n3);
            long c3 = MX.getCurrentThreadCpuTime();
            spent[0] += c1 - c0;
            spent[1] += c2 - c1;
            spent[2] += c3 - c2;
            c0 = c3;
            rounds[0]++;
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        long round = Long.parseLong(args[1]) * 1000L;
        boolean wall = args[2].equals("wall");
        boolean count = args[2].equals("count");
        long[] spent = new long[3];
        long[] rounds = new long[1];
        long[] sink = new long[1];
        Thread t = new Thread(() -> {
            long x = 1;
            long c0 = MX.getCurrentThreadCpuTime();
            long end = c0 + (long) (seconds * 1e9);
            if (count) {
                /* The warm-up is not in the truth: the profile must leave it out
                 * too (bench/periodic.sh counts the three methods only). */
                sink[0] = counted(x, round, end, spent, rounds);
                return;
            }
            long base = now(wall);
            long ends1 = round * 55 / 100, ends2 = round * 85 / 100;
            while (c0 < end) {
                long at = now(wall);
                long r0 = base + (at - base) / round * round;
                long phase = at - r0;
                int which;
                if (phase < ends1) {
                    which = 0;
                    x = large(x, wall, r0 + ends1);
                } else if (phase < ends2) {
                    which = 1;
                    x = medium(x, wall, r0 + ends2);
                } else {
                    which = 2;
                    x = small(x, wall, r0 + round);
                    rounds[0]++;
                }
                long c1 = MX.getCurrentThreadCpuTime();
                spent[which] += c1 - c0;
                c0 = c1;
            }
            sink[0] = x;
        }, "splitter");
        t.start();
        t.join();
        System.out.println("truth large=" + spent[0] + " medium=" + spent[1]
                           + " small=" + spent[2]);
        System.out.println("FixedSplit done " + rounds[0] + " " + (sink[0] & 1));
    }
}
