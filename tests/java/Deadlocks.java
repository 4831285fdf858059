import java.io.File;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Two deadlocks and two healthy threads, for `ctl threads` and lock waits in
 * progress (tests/agent/lock_tests.sh, threads).
 *
 *   java Deadlocks STOPFILE [GATEFILE]
 *
 * With GATEFILE, first a wait that ends: main holds a Gate monitor, "gated"
 * blocks entering it (main prints "gated blocked" once it sees it BLOCKED), and
 * main lets it in when GATEFILE exists; "gated" prints "gated_wait_ns N", its
 * own System.nanoTime around the synchronized entry, and ends. Then:
 * "mon-a" holds MonitorA and blocks on MonitorB, which "mon-b" holds while it
 * blocks on MonitorA; "jucl-a" and "jucl-b" do the same with two ReentrantLocks.
 * "waiter" sits in Object.wait on a Mailbox; "live" counts. Once all four are
 * seen stuck, main prints, for each of the five stuck threads, the line its own
 * Thread.getStackTrace gives for the topmost Deadlocks frame (the truth the test
 * compares the dump with) and then "ready"; from then on "live N" lines, one a
 * 50 ms or so. It exits when STOPFILE exists, printing first, for mon-a and
 * mon-b, "stuck NAME LOW_NS HIGH_NS": how long the thread had been blocked at
 * least (since main saw it BLOCKED) and at most (since just before it entered
 * the synchronized block), by System.nanoTime. The stuck threads are daemons.
 */
public class Deadlocks {
    static final class MonitorA {}
    static final class MonitorB {}
    static final class Mailbox {}
    static final class Gate {}

    static final MonitorA monitorA = new MonitorA();
    static final MonitorB monitorB = new MonitorB();
    static final Mailbox mailbox = new Mailbox();
    static final ReentrantLock lockA = new ReentrantLock();
    static final ReentrantLock lockB = new ReentrantLock();
    static final Gate gate = new Gate();
    static volatile long counter;
    /* System.nanoTime just before mon-a and mon-b enter the second monitor. */
    static volatile long beforeA, beforeB;

    static void monA(CountDownLatch both) throws InterruptedException {
        synchronized (monitorA) {
            both.countDown();
            both.await();
            beforeA = System.nanoTime();
            synchronized (monitorB) {
                counter++;
            }
        }
    }

    static void monB(CountDownLatch both) throws InterruptedException {
        synchronized (monitorB) {
            both.countDown();
            both.await();
            beforeB = System.nanoTime();
            synchronized (monitorA) {
                counter++;
            }
        }
    }

    /* The wait that ends: main holds the gate until GATEFILE exists. */
    static void gated(File gateFile) throws InterruptedException {
        Thread t = new Thread(() -> {
            long t0 = System.nanoTime();
            synchronized (gate) {
                System.out.println("gated_wait_ns " + (System.nanoTime() - t0));
            }
        }, "gated");
        synchronized (gate) {
            t.start();
            while (t.getState() != Thread.State.BLOCKED)
                Thread.sleep(5);
            System.out.println("gated blocked");
            System.out.flush();
            while (!gateFile.exists())
                Thread.sleep(10);
        }
        t.join();
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
        if (args.length > 1)
            gated(new File(args[1]));
        CountDownLatch mons = new CountDownLatch(2), locks = new CountDownLatch(2);
        Thread[] stuck = {
            start("mon-a", () -> monA(mons)),
            start("mon-b", () -> monB(mons)),
            start("jucl-a", () -> lockOrder(lockA, lockB, locks)),
            start("jucl-b", () -> lockOrder(lockB, lockA, locks)),
            start("waiter", Deadlocks::waitMail),
        };
        boolean all = false;
        long[] seen = new long[stuck.length];
        while (!all) {
            Thread.sleep(10);
            all = true;
            for (int i = 0; i < stuck.length; i++) {
                boolean s = stuck(stuck[i]);
                if (s && seen[i] == 0)
                    seen[i] = System.nanoTime();
                all &= s;
            }
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
        long now = System.nanoTime();
        System.out.println("stuck mon-a " + (now - seen[0]) + " " + (now - beforeA));
        System.out.println("stuck mon-b " + (now - seen[1]) + " " + (now - beforeB));
        System.out.println("done");
    }
}
