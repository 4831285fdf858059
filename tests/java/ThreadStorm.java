/*
 * ThreadStorm — THREADS short threads, CONCURRENT at a time, each named "st-N",
 * each doing a little CPU work and a little allocation (so CPU and allocation
 * samples both land in threads that are about to end). Two pauses let a test
 * measure the process: after the first BASELINE threads have ended (and a
 * collection) it prints "baseline" and waits for the file SYNC/base; after all of
 * them (and a collection) it prints "end" and waits for SYNC/end. Each wait gives
 * up after 120 s. Prints "ThreadStorm done THREADS SECONDS" (the churn's time).
 *
 *   java ThreadStorm THREADS CONCURRENT BASELINE SYNC
 */
import java.io.File;

public class ThreadStorm {
    static volatile long sink;

    static final class Short extends Thread {
        final long seed;

        Short(int i) {
            super("st-" + i);
            seed = i;
        }

        @Override
        public void run() {
            long x = seed;
            for (int i = 0; i < 20_000; i++)
                x = (x ^ (x >>> 31)) * 0x9E3779B97F4A7C15L;
            byte[][] keep = new byte[16][];
            for (int i = 0; i < keep.length; i++) {
                keep[i] = new byte[1024 + (int) (x & 1023)];
                x += keep[i].length;
            }
            sink += x;
        }
    }

    static void pause(String what, File sync) throws InterruptedException {
        System.gc();
        System.out.println(what);
        System.out.flush();
        File f = new File(sync, what.equals("baseline") ? "base" : "end");
        long until = System.nanoTime() + 120_000_000_000L;
        while (!f.exists() && System.nanoTime() < until)
            Thread.sleep(20);
    }

    /* CONCURRENT lanes, each starting one thread and joining it before the next:
     * thread creation itself runs in parallel (a single starter thread, waiting on
     * each start's handshake, manages about half the rate on a busy machine). */
    static void churn(int from, int to, int lanes) throws InterruptedException {
        Thread[] ls = new Thread[lanes];
        for (int l = 0; l < lanes; l++) {
            final int lane = l;
            ls[l] = new Thread(() -> {
                try {
                    for (int i = from + lane; i < to; i += lanes) {
                        Thread t = new Short(i);
                        t.start();
                        t.join();
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "lane-" + l);
            ls[l].start();
        }
        for (Thread l : ls)
            l.join();
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]), conc = Integer.parseInt(args[1]);
        int base = Math.min(n, Integer.parseInt(args[2]));
        File sync = new File(args[3]);
        churn(0, base, conc);
        pause("baseline", sync);
        long t0 = System.nanoTime();
        churn(base, n, conc);
        double secs = (System.nanoTime() - t0) / 1e9;
        pause("end", sync);
        System.out.printf("ThreadStorm done %d %.1f%n", n, secs);
    }
}
