import java.io.File;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Two deadlocks and two healthy threads, for `ctl threads` (tests/agent/threads_tests.sh).
 *
 *   java Deadlocks STOPFILE
 *
 * "mon-a" holds MonitorA and blocks on MonitorB, which "mon-b" holds while it
 * blocks on MonitorA; "jucl-a" and "jucl-b" do the same with two ReentrantLocks.
 * "waiter" sits in Object.wait on a Mailbox; "live" counts. Once all four are
 * seen stuck, main prints, for each of the five stuck threads, the line its own
 * Thread.getStackTrace gives for the topmost Deadlocks frame (the truth the test
 * compares the dump with) and then "ready"; from then on "live N" lines, one a
 * 50 ms or so. It exits when STOPFILE exists. The stuck threads are daemons.
 */
public class Deadlocks {
    static final class MonitorA {}
    static final class MonitorB {}
    static final class Mailbox {}

    static final MonitorA monitorA = new MonitorA();
    static final MonitorB monitorB = new MonitorB();
    static final Mailbox mailbox = new Mailbox();
    static final ReentrantLock lockA = new ReentrantLock();
    static final ReentrantLock lockB = new ReentrantLock();
    static volatile long counter;

    static void monA(CountDownLatch both) throws InterruptedException {
        synchronized (monitorA) {
            both.countDown();
            both.await();
            synchronized (monitorB) {
                counter++;
            }
        }
    }

    static void monB(CountDownLatch both) throws InterruptedException {
        synchronized (monitorB) {
            both.countDown();
            both.await();
            synchronized (monitorA) {
                counter++;
            }
        }
    }

    static void lockOrder(ReentrantLock first, ReentrantLock second, CountDownLatch both)
            throws InterruptedException {
        first.lock();
        try {
            both.countDown();
            both.await();
            second.lock();
            second.unlock();
        } finally {
            first.unlock();
        }
    }

    static void waitMail() throws InterruptedException {
        synchronized (mailbox) {
            while (true)
                mailbox.wait();
        }
    }

    interface Body { void run() throws InterruptedException; }

    static Thread start(String name, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (InterruptedException e) {
                // not expected: the test never interrupts
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static boolean stuck(Thread t) {
        Thread.State s = t.getState();
        if (t.getName().startsWith("mon-"))
            return s == Thread.State.BLOCKED;
        if (t.getName().startsWith("jucl-"))
            return s == Thread.State.WAITING && java.util.concurrent.locks.LockSupport.getBlocker(t) != null;
        return s == Thread.State.WAITING;
    }

    /** The line of the topmost frame of this class in t's stack, as Java sees it. */
    static String truth(Thread t) {
        for (StackTraceElement e : t.getStackTrace())
            if (e.getClassName().equals("Deadlocks"))
                return e.getMethodName() + " " + e.getLineNumber();
        return "none 0";
    }

    public static void main(String[] args) throws Exception {
        File stop = new File(args[0]);
        CountDownLatch mons = new CountDownLatch(2), locks = new CountDownLatch(2);
        Thread[] stuck = {
            start("mon-a", () -> monA(mons)),
            start("mon-b", () -> monB(mons)),
            start("jucl-a", () -> lockOrder(lockA, lockB, locks)),
            start("jucl-b", () -> lockOrder(lockB, lockA, locks)),
            start("waiter", Deadlocks::waitMail),
        };
        boolean all = false;
        while (!all) {
            Thread.sleep(10);
            all = true;
            for (Thread t : stuck)
                all &= stuck(t);
        }
        for (Thread t : stuck)
            System.out.println("truth " + t.getName() + " " + truth(t));
        System.out.println("ready");
        System.out.flush();
        Thread live = new Thread(() -> {
            long n = 0;
            while (true) {
                for (int i = 0; i < 100000; i++)
                    counter += i;
                System.out.println("live " + ++n);
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "live");
        live.setDaemon(true);
        live.start();
        while (!stop.exists())
            Thread.sleep(20);
        System.out.println("done");
    }
}
