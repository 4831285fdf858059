import java.io.File;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Virtual threads for tests/agent/vthread_tests.sh (JDK 21 and later; built by
 * JDK 17's javac, so the virtual-thread API is reached by reflection).
 *
 *   java VThreads cpu CPU_SECONDS
 *
 * Three virtual threads, "vt-six", "vt-three" and "vt-one", run rounds of 4
 * units of the same kernel (each round's unit scaled at random, as CpuSplit
 * does, so that no round length stays in step with the sampling), with
 * Thread.yield() between rounds so that they share the carriers, until each has
 * used 6, 3 and 1 tenths of CPU_SECONDS. The rounds are alike, so the part of a
 * round's measure that is the measuring itself (the clock's file read) weighs
 * as much in each thread's. A virtual
 * thread has no CPU clock of its own, but one that does not park or yield stays
 * on its carrier: each round reads the carrier's CPU clock before and after
 * (/proc/thread-self/schedstat, the OS thread the virtual thread runs on) and
 * counts the difference as the virtual thread's, when the carrier's tid
 * (/proc/thread-self) is the same at both ends (it always is: the kernel never
 * parks). Each round also allocates 64 arrays of 1 KiB a unit, whose bytes are
 * counted exactly. Then six virtual threads "vt-lock-0".."vt-lock-5" take turns
 * on the monitor of a Ledger for 0.6 s, each holding it 2 ms (in
 * Thread.sleep: on JDK 24 and later a virtual thread blocked on a monitor
 * unmounts, and is mounted again, maybe on another carrier, when it gets it),
 * and measure their own waits of 1 ms or more from before `synchronized` to
 * inside it. At the end it prints
 *   "id vt-six=ID vt-three=ID vt-one=ID" (Thread.threadId()),
 *   "truth vt-six=NS vt-three=NS vt-one=NS" (the rounds' CPU),
 *   "bytes vt-six=B vt-three=B vt-one=B" (the rounds' arrays),
 *   "lockwait ns=NS waits=N" (the waits of 1 ms or more),
 *   "carriers T1,T2,..." (the carriers' tids seen), "VThreads done".
 *
 *   java VThreads dump PARKED STOPFILE
 *
 * A platform thread "holder" takes the ReentrantLock `gate` and keeps it; PARKED
 * virtual threads named parked-0, parked-1, ... block in gate.lock() (parked in
 * the same frames); then a virtual thread "vt-jucl" and a platform thread
 * "pt-jucl" deadlock on two ReentrantLocks, and last two virtual threads
 * "vt-mon-a" and "vt-mon-b" deadlock on two monitors (MonitorA, MonitorB). (On
 * JDK 21 a virtual thread blocked on a monitor pins its carrier, so the
 * scheduler is given 8 carriers and the monitor pair comes last.) Once every one
 * is seen stuck (Thread.getState), main prints
 *   "id vt-mon-a=ID vt-mon-b=ID vt-jucl=ID pt-jucl=ID holder=ID",
 *   "parked PARKED", "ready",
 * and exits when STOPFILE exists. Every thread but main is a daemon.
 */
public class VThreads {
    static final class MonitorA {}
    static final class MonitorB {}

    static final int UNIT = 1_000_000;
    static final int ARRAYS = 64;           /* 1 KiB arrays a unit allocates */
    static volatile long sink;
    static volatile Object kept;

    /* ------------------------------------------------ the virtual-thread API -- */

    /* Thread.ofVirtual().name(name).unstarted(body), by reflection. */
    static Thread virtual(String name, Runnable body) throws Exception {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Class<?> b = Class.forName("java.lang.Thread$Builder");
        builder = b.getMethod("name", String.class).invoke(builder, name);
        return (Thread) b.getMethod("unstarted", Runnable.class).invoke(builder, body);
    }

    static long threadId(Thread t) {
        return t.getId();
    }

    /* ------------------------------------------------------------------ cpu -- */

    static long kernel(long x, int n) {
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    /* The CPU ns of the OS thread this code runs on (schedstat's first field). */
    static long carrierCpu() throws Exception {
        String s = Files.readString(Path.of("/proc/thread-self/schedstat"));
        return Long.parseLong(s.substring(0, s.indexOf(' ')));
    }

    /* The tid of the OS thread this code runs on (/proc/thread-self -> PID/task/TID). */
    static String carrierTid() throws Exception {
        String link = Files.readSymbolicLink(Path.of("/proc/thread-self")).toString();
        return link.substring(link.lastIndexOf('/') + 1);
    }

    static final class Worker implements Runnable {
        final String name;
        final int units;
        final long budget;
        final java.util.SplittableRandom rnd;
        volatile long cpu, bytes;
        final java.util.Set<String> carriers = java.util.concurrent.ConcurrentHashMap.newKeySet();

        Worker(String name, int units, long budget, long seed) {
            this.name = name;
            this.units = units;
            this.budget = budget;
            this.rnd = new java.util.SplittableRandom(seed);
        }

        /* One round: the kernel and the arrays, on one carrier throughout. */
        long round(long x, int unit) {
            for (int u = 0; u < units; u++) {
                x = kernel(x, unit);
                for (int a = 0; a < ARRAYS; a++)
                    kept = new byte[1024];
            }
            return x;
        }

        public void run() {
            long x = 1;
            try {
                while (cpu < budget) {
                    int unit = UNIT / 2 + rnd.nextInt(UNIT);
                    String t0 = carrierTid();
                    long c0 = carrierCpu();
                    x = round(x, unit);
                    long c1 = carrierCpu();
                    String t1 = carrierTid();
                    if (t0.equals(t1)) {
                        cpu += c1 - c0;
                        bytes += 1024L * ARRAYS * units;
                        carriers.add(t0);
                    }
                    Thread.yield();
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            sink = x;
        }
    }

    static void cpu(double seconds) throws Exception {
        long tenth = (long) (seconds * 1e8);
        Worker[] w = {new Worker("vt-six", 4, 6 * tenth, 1),
                      new Worker("vt-three", 4, 3 * tenth, 2),
                      new Worker("vt-one", 4, tenth, 3)};
        Thread[] t = new Thread[w.length];
        for (int i = 0; i < w.length; i++)
            t[i] = virtual(w[i].name, w[i]);
        for (Thread th : t)
            th.start();
        for (Thread th : t)
            th.join();
        StringBuilder id = new StringBuilder("id"), truth = new StringBuilder("truth"),
                      bytes = new StringBuilder("bytes");
        java.util.Set<String> carriers = new java.util.TreeSet<>();
        for (int i = 0; i < w.length; i++) {
            id.append(' ').append(w[i].name).append('=').append(threadId(t[i]));
            truth.append(' ').append(w[i].name).append('=').append(w[i].cpu);
            bytes.append(' ').append(w[i].name).append('=').append(w[i].bytes);
            carriers.addAll(w[i].carriers);
        }
        long[] lock = contend(6, 600_000_000L);
        System.out.println(id);
        System.out.println(truth);
        System.out.println(bytes);
        System.out.println("lockwait ns=" + lock[0] + " waits=" + lock[1]);
        System.out.println("carriers " + String.join(",", carriers));
        System.out.println("VThreads done");
    }

    static final class Ledger {}
    static final Ledger ledger = new Ledger();

    /* `n` virtual threads take turns on the ledger for `nanos`; @return their
     * waits of 1 ms or more: {ns, count}. */
    static long[] contend(int n, long nanos) throws Exception {
        java.util.concurrent.atomic.AtomicLong waited = new java.util.concurrent.atomic.AtomicLong(),
                                               waits = new java.util.concurrent.atomic.AtomicLong();
        long end = System.nanoTime() + nanos;
        Thread[] t = new Thread[n];
        for (int i = 0; i < n; i++) {
            t[i] = virtual("vt-lock-" + i, quiet(() -> {
                while (System.nanoTime() < end) {
                    long t0 = System.nanoTime();
                    synchronized (ledger) {
                        long w = System.nanoTime() - t0;
                        if (w >= 1_000_000) {
                            waited.addAndGet(w);
                            waits.incrementAndGet();
                        }
                        Thread.sleep(2);
                    }
                }
            }));
            t[i].start();
        }
        for (Thread th : t)
            th.join();
        return new long[] {waited.get(), waits.get()};
    }

    /* ----------------------------------------------------------------- dump -- */

    static final ReentrantLock gate = new ReentrantLock();
    static final ReentrantLock lockA = new ReentrantLock();
    static final ReentrantLock lockB = new ReentrantLock();
    static final MonitorA monitorA = new MonitorA();
    static final MonitorB monitorB = new MonitorB();

    static void parkedBody() {
        gate.lock();
        gate.unlock();
    }

    static void monA(CountDownLatch both) throws InterruptedException {
        synchronized (monitorA) {
            both.countDown();
            both.await();
            synchronized (monitorB) {
                sink++;
            }
        }
    }

    static void monB(CountDownLatch both) throws InterruptedException {
        synchronized (monitorB) {
            both.countDown();
            both.await();
            synchronized (monitorA) {
                sink++;
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

    interface Body { void run() throws InterruptedException; }

    static Runnable quiet(Body b) {
        return () -> {
            try {
                b.run();
            } catch (InterruptedException e) {
                // not expected: nothing interrupts
            }
        };
    }

    static Thread platform(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        return t;
    }

    static void awaitState(Thread t, Thread.State s) throws InterruptedException {
        while (t.getState() != s)
            Thread.sleep(5);
    }

    static void dump(int parked, String stopFile) throws Exception {
        if (System.getProperty("jdk.virtualThreadScheduler.parallelism") == null)
            System.setProperty("jdk.virtualThreadScheduler.parallelism", "8");
        CountDownLatch held = new CountDownLatch(1);
        Thread holder = platform("holder", quiet(() -> {
            gate.lock();
            held.countDown();
            Thread.sleep(Long.MAX_VALUE);
        }));
        holder.start();
        held.await();
        List<Thread> waiting = new ArrayList<>();
        for (int i = 0; i < parked; i++) {
            Thread t = virtual("parked-" + i, VThreads::parkedBody);
            t.start();
            waiting.add(t);
        }
        for (Thread t : waiting)
            awaitState(t, Thread.State.WAITING);

        CountDownLatch jucl = new CountDownLatch(2);
        Thread vtJucl = virtual("vt-jucl", quiet(() -> lockOrder(lockA, lockB, jucl)));
        Thread ptJucl = platform("pt-jucl", quiet(() -> lockOrder(lockB, lockA, jucl)));
        vtJucl.start();
        ptJucl.start();
        awaitState(vtJucl, Thread.State.WAITING);
        awaitState(ptJucl, Thread.State.WAITING);
        while (!lockA.hasQueuedThread(ptJucl) || !lockB.hasQueuedThread(vtJucl))
            Thread.sleep(5);

        CountDownLatch mon = new CountDownLatch(2);
        Thread monA = virtual("vt-mon-a", quiet(() -> monA(mon)));
        Thread monB = virtual("vt-mon-b", quiet(() -> monB(mon)));
        monA.start();
        monB.start();
        awaitState(monA, Thread.State.BLOCKED);
        awaitState(monB, Thread.State.BLOCKED);

        System.out.println("id vt-mon-a=" + threadId(monA) + " vt-mon-b=" + threadId(monB) +
                           " vt-jucl=" + threadId(vtJucl) + " pt-jucl=" + threadId(ptJucl) +
                           " holder=" + threadId(holder));
        System.out.println("parked " + parked);
        System.out.println("ready");
        File stop = new File(stopFile);
        while (!stop.exists())
            Thread.sleep(20);
        System.exit(0);
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("cpu"))
            cpu(Double.parseDouble(args[1]));
        else
            dump(Integer.parseInt(args[1]), args[2]);
    }
}
