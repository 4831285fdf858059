/*
 * tests/java/JfrWorkload.java — one JVM that gives every kind of the agent
 * something known to record, for the JFR conversion's end-to-end test
 * (tests/agent/jfr_tests.sh): the recording is converted to .jfr and read back
 * by the JDK's own consumers.
 *
 *   java JfrWorkload CPU_MS ALLOC_MB
 *
 * Threads, each named for what it does:
 *   jfr-hot      spins in hot() until it has used CPU_MS of its own CPU time
 *                (ThreadMXBean): the CPU-hot method;
 *   jfr-alloc    allocates ALLOC_MB of Payload objects in allocate(), dropping
 *                them; then keeps KEPT Kept objects (the live heap) and calls
 *                System.gc() three times (gc pauses, live objects that survive);
 *   jfr-lock-N   four threads entering the Ledger monitor 25 times each,
 *                holding it 4 ms (a sleep inside synchronized): the others block;
 *   jfr-sleeper, jfr-parked, jfr-waiter, jfr-accept   asleep, parked, in
 *                Object.wait and in ServerSocket.accept (native) until the end.
 * The work ends on conditions (CPU used, bytes allocated, entries made), never
 * on the clock. Prints "ready" at the start, then at the end its own
 * ThreadMXBean's "threads peak N started M" (the most live Java threads, the
 * threads started) and "done".
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

public class JfrWorkload {
    static final class Payload { long a, b, c, d, e, f, g, h; }   /* 80 bytes */
    static final class Kept { long a, b, c, d; }                  /* 48 bytes */
    static final class Ledger { long entries; }

    static final int KEPT = 200_000;
    static final List<Kept> kept = new ArrayList<>();
    static final Object mailbox = new Object();
    static volatile boolean done;
    static volatile long sink;

    static long hot(long x) {
        for (int i = 0; i < 100_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    static void spin(long cpuNs) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long end = mx.getCurrentThreadCpuTime() + cpuNs;
        long x = 1;
        while (mx.getCurrentThreadCpuTime() < end)
            x = hot(x);
        sink = x;
    }

    static Payload allocate(long bytes) {
        Payload last = null;
        for (long n = bytes / 80; n > 0; n--) {
            Payload p = new Payload();
            p.a = n;
            last = p;
        }
        return last;
    }

    static void keep() {
        for (int i = 0; i < KEPT; i++)
            kept.add(new Kept());
        for (int i = 0; i < 3; i++)
            System.gc();
    }

    static void enter(Ledger ledger) throws InterruptedException {
        synchronized (ledger) {
            ledger.entries++;
            Thread.sleep(4);
        }
    }

    static Thread start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.start();
        return t;
    }

    interface Body { void run() throws Exception; }

    static Runnable body(Body b) {
        return () -> {
            try {
                b.run();
            } catch (Exception e) {
                if (!done)
                    throw new RuntimeException(e);
            }
        };
    }

    public static void main(String[] args) throws Exception {
        long cpuMs = Long.parseLong(args[0]);
        long allocMb = Long.parseLong(args[1]);
        ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        List<Thread> idle = new ArrayList<>();
        idle.add(start("jfr-sleeper", body(() -> {
            while (!done)
                Thread.sleep(50);
        })));
        idle.add(start("jfr-parked", () -> {
            while (!done)
                LockSupport.park(mailbox);
        }));
        idle.add(start("jfr-waiter", body(() -> {
            synchronized (mailbox) {
                while (!done)
                    mailbox.wait();
            }
        })));
        idle.add(start("jfr-accept", body(() -> server.accept())));
        System.out.println("ready");
        System.out.flush();

        List<Thread> work = new ArrayList<>();
        work.add(start("jfr-hot", () -> spin(cpuMs * 1_000_000L)));
        work.add(start("jfr-alloc", () -> {
            sink = allocate(allocMb << 20).a;
            keep();
        }));
        Ledger ledger = new Ledger();
        for (int i = 0; i < 4; i++)
            work.add(start("jfr-lock-" + i, body(() -> {
                for (int k = 0; k < 25; k++)
                    enter(ledger);
            })));
        for (Thread t : work)
            t.join();

        done = true;
        server.close();
        for (Thread t : idle) {
            LockSupport.unpark(t);
            t.interrupt();
        }
        synchronized (mailbox) {
            mailbox.notifyAll();
        }
        for (Thread t : idle)
            t.join();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        System.out.println("threads peak " + mx.getPeakThreadCount() + " started "
                + mx.getTotalStartedThreadCount());
        System.out.println("done entries " + ledger.entries + " kept " + kept.size());
    }
}
