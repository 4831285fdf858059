/*
 * WallIdle — many mostly idle threads (tests/agent/wall_tests.sh, wall_idle_2000):
 * half park (LockSupport.park), half sleep, for the whole run; every ACTIVE-th
 * one (default 100; 0: none) wakes every 100 ms for a moment of work, so not
 * every visit is a repeat.
 *
 *   java WallIdle THREADS SECONDS [ACTIVE]
 */
import java.util.concurrent.locks.LockSupport;

public class WallIdle {
    static volatile boolean done;
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        long seconds = Long.parseLong(args[1]);
        int active = args.length > 2 ? Integer.parseInt(args[2]) : 100;
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            final int k = i;
            ts[i] = new Thread(() -> {
                while (!done) {
                    if (active > 0 && k % active == 0) {
                        sink += k;
                        LockSupport.parkNanos(100_000_000L);
                    } else if (k % 2 == 0) {
                        LockSupport.park();
                    } else {
                        try {
                            Thread.sleep(3_600_000L);
                        } catch (InterruptedException e) {
                            // the end of the run
                        }
                    }
                }
            }, "idle-" + i);
            ts[i].setDaemon(true);
            ts[i].start();
        }
        System.out.println("started " + n);
        Thread.sleep(seconds * 1000);
        done = true;
        for (Thread t : ts) {
            LockSupport.unpark(t);
            t.interrupt();
        }
        for (Thread t : ts)
            t.join();
        System.out.println("WallIdle done");
    }
}
