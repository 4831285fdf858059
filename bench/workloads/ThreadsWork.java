/*
 * ThreadsWork — many threads, mostly idle, a few hot: IDLE threads wait the way pool
 * threads in a server do (sleeping, polling an empty queue, waiting on a shared
 * monitor), each waking every 100-200 ms for a moment of work, while HOT threads do
 * each iteration's fixed work: sort and checksum arrays of pseudo-random numbers.
 * 244 threads in all, besides the JVM's own (-Drpbench.idle=N sets the idle
 * count: bench/overhead's threads200 and threads2000 run 196 and 1996). The
 * checks: every array comes out sorted with its sum intact, and every idle thread
 * is still alive and has woken.
 *
 *   java [-Drpbench.idle=N] ThreadsWork SECONDS | -n ITERATIONS
 */
import java.util.Arrays;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

public class ThreadsWork {
    static final int IDLE = Integer.getInteger("rpbench.idle", 240), HOT = 4, ARRAY = 800_000;
    static final AtomicLong wakeups = new AtomicLong();
    static final Object monitor = new Object();

    /** A moment of work on waking: what a pool thread does with a small task. */
    static void tick(int id) {
        int h = id;
        for (int i = 0; i < 200; i++)
            h = h * 31 + i;
        wakeups.addAndGet(h == 42 ? 2 : 1);
    }

    static Thread idler(int id) {
        LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
        Thread t = new Thread(() -> {
            try {
                while (true) {
                    switch (id % 3) {
                    case 0: Thread.sleep(100); break;
                    case 1: queue.poll(150, TimeUnit.MILLISECONDS); break;
                    default: synchronized (monitor) { monitor.wait(200); } break;
                    }
                    tick(id);
                }
            } catch (InterruptedException e) {
                // not interrupted: the harness exits the JVM
            }
        }, "idle-" + id);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Each hot part's array, refilled every iteration: this workload is not about allocation. */
    static final int[][] arrays = new int[HOT][ARRAY];

    static long hot(int part) {
        int[] a = arrays[part];
        long x = 0x9E3779B97F4A7C15L * (part + 1), sum = 0;
        for (int i = 0; i < ARRAY; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            sum += a[i] = (int) (x >>> 33);
        }
        Arrays.sort(a);
        long after = 0, h = 0;
        for (int i = 0; i < ARRAY; i++) {
            if (i > 0 && a[i - 1] > a[i])
                Harness.check(false, "array " + part + " not sorted at " + i);
            after += a[i];
            h = h * 1_000_003 + a[i];
        }
        Harness.check(after == sum, "array " + part + " lost elements in the sort");
        return h;
    }

    public static void main(String[] args) {
        Thread[] idle = new Thread[IDLE];
        for (int i = 0; i < IDLE; i++)
            idle[i] = idler(i);
        int[] n = {0};
        Harness.run("threads", args, () -> {
            long h = Harness.parallel(HOT, ThreadsWork::hot);
            for (Thread t : idle)
                if (!t.isAlive())
                    Harness.check(false, t.getName() + " died");
            Harness.check(++n[0] < 10 || wakeups.get() > 0, "no idle thread ever woke");
            return h;
        });
    }
}
