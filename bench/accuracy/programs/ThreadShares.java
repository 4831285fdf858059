/*
 * ThreadShares — the accuracy harness's many-threads program (bench/accuracy/run,
 * program "threads"). Eight threads, "share-1" to "share-8", run the same kernel at
 * the same time; thread k stops once its own CPU clock has passed k quanta, so the
 * threads' CPU is 1:2:...:8 (shares 2.8%, 5.6%, ... 22.2%) by design, whatever the
 * scheduler does. With more threads than CPUs they also wait for a CPU, which a
 * profiler that samples threads by wall-clock time sees as running. The truth is
 * each thread's CPU clock at its end (ThreadMXBean.getCurrentThreadCpuTime). It
 * prints:
 *
 *   truth share-K NANOSECONDS
 *
 *   java ThreadShares SECONDS
 *
 * The quantum is SECONDS / 36: the threads use SECONDS of CPU in all, which takes
 * SECONDS / CPUs on an idle machine.
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;

public class ThreadShares {
    static final int THREADS = 8;
    static volatile long blackhole;

    /* Split's kernel, repeated: meson compiles each file with bench/accuracy/, not
       programs/, on the source path, so a program cannot use another's class. */
    static long kernel(long x, int n) {
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long quantum = (long) (seconds * 1e9 / (THREADS * (THREADS + 1) / 2));
        long[] ns = new long[THREADS];
        CountDownLatch go = new CountDownLatch(1);
        Thread[] ts = new Thread[THREADS];
        for (int k = 1; k <= THREADS; k++) {
            final int id = k;
            ts[k - 1] = new Thread(() -> {
                try { go.await(); } catch (InterruptedException e) { return; }
                long x = id;
                while (mx.getCurrentThreadCpuTime() < id * quantum)
                    x = kernel(x, 50_000);
                blackhole = x;
                ns[id - 1] = mx.getCurrentThreadCpuTime();
            }, "share-" + k);
            ts[k - 1].start();
        }
        go.countDown();
        for (Thread t : ts)
            t.join();
        for (int k = 1; k <= THREADS; k++)
            System.out.println("truth share-" + k + " " + ns[k - 1]);
    }
}
