/*
 * Churn — starts and ends THREADS short-lived threads, CONCURRENT at a time. Even
 * ones are named "hasher-N" and run only hash(); odd ones "sorter-N" and run only
 * sort(). A profile that puts sort() in a hasher thread (or the reverse) has
 * attributed a sample to the wrong thread. Most threads do about 0.2 ms of work;
 * one in five does twelve times more, so that CPU-time sampling at 1 ms has enough to
 * see in each kind (a thread is only sampled while it runs on a scheduler tick).
 *
 *   java Churn THREADS CONCURRENT
 */
import java.util.Arrays;
import java.util.Random;

public class Churn {
    static volatile long sink;

    static long hash(long seed, int rounds) {
        long x = seed;
        for (int r = 0; r < rounds; r++)
            for (int i = 0; i < 100_000; i++)
                x = (x ^ (x >>> 31)) * 0x9E3779B97F4A7C15L;
        return x;
    }

    static long sort(long seed, int rounds) {
        long s = 0;
        for (int r = 0; r < rounds; r++) {
            int[] a = new int[2000];
            Random rnd = new Random(seed + r);
            for (int i = 0; i < a.length; i++)
                a[i] = rnd.nextInt();
            Arrays.sort(a);
            s += a[a.length / 2];
        }
        return s;
    }

    /* Two Thread subclasses, not two lambdas run by Thread.run: a compiled
     * Thread.run would inline both behind a type check, and AsyncGetCallTrace
     * (which takes the PcDesc nearest the pc) can then report a frame of the other
     * branch. Here no compiled method contains both hash() and sort(). */
    static final class Hasher extends Thread {
        final long seed;
        final int rounds;

        Hasher(String name, long seed, int rounds) {
            super(name);
            this.seed = seed;
            this.rounds = rounds;
        }

        @Override
        public void run() {
            sink += hash(seed, rounds);
        }
    }

    static final class Sorter extends Thread {
        final long seed;
        final int rounds;

        Sorter(String name, long seed, int rounds) {
            super(name);
            this.seed = seed;
            this.rounds = rounds;
        }

        @Override
        public void run() {
            sink += sort(seed, rounds);
        }
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]), conc = Integer.parseInt(args[1]);
        Thread[] live = new Thread[conc];
        for (int i = 0; i < n; i++) {
            int rounds = i % 10 < 2 ? 12 : 1;
            Thread t = (i & 1) == 0 ? new Hasher("hasher-" + i, i, rounds)
                                    : new Sorter("sorter-" + i, i, rounds);
            int k = i % conc;
            if (live[k] != null)
                live[k].join();
            live[k] = t;
            t.start();
        }
        for (Thread t : live)
            if (t != null)
                t.join();
        System.out.println("Churn done " + n);
    }
}
