/*
 * AllocSoak — allocation and CPU sampling together for a long run, for the soak
 * test (tests/agent/alloc_tests.sh soak).
 *
 *   java AllocSoak SECONDS THREADS STOPFILE
 *
 * THREADS threads "soak-N" run for SECONDS a mix that gives both samplers work:
 * small objects (strings, boxed numbers, map nodes), arrays of every size from a
 * few bytes to 1 MiB (the large ones outside the TLAB), and arithmetic; each keeps
 * a table of 1024 slots overwritten at random, so that sampled objects live for
 * anything from microseconds to many collections. Meanwhile a thread "spawner"
 * starts a short thread ("brief-N") every 20 ms that allocates and ends, so the
 * allocation callback runs on threads that come and go.
 *
 * When the SECONDS are up it prints what the soak threads allocated (exact, from
 * com.sun.management.ThreadMXBean.getThreadAllocatedBytes) and their CPU time,
 *
 *   workers done allocated BYTES cpu_ns NS briefs N
 *
 * then waits for STOPFILE to exist (at most 60 s) so that the test can stop the
 * agent's sampling and flush before the JVM exits, and prints "AllocSoak done".
 */
import java.io.File;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

public class AllocSoak {
    static volatile long sink;

    static Object small(SplittableRandom r) {
        HashMap<String, Long> m = new HashMap<>();
        for (int i = 0; i < 16; i++)
            m.put(Long.toString(r.nextLong(1_000_000)), r.nextLong());
        return m;
    }

    static Object array(SplittableRandom r) {
        int kind = r.nextInt(4);
        int len = 1 << r.nextInt(kind == 3 ? 18 : 12);   // up to 256k ints = 1 MiB
        switch (kind) {
        case 0: return new byte[len];
        case 1: return new long[len];
        case 2: return new Object[len];
        default: return new int[len];
        }
    }

    static long burn(long x) {
        for (int i = 0; i < 800_000; i++)
            x = (x ^ (x >>> 31)) * 0x94D049BB133111EBL;
        return x;
    }

    static void work(long end, int seed) {
        SplittableRandom r = new SplittableRandom(seed);
        Object[] table = new Object[1024];
        long x = seed;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 64; i++) {
                Object o = (i & 3) == 0 ? array(r) : small(r);
                // Most go at once; one in eight lands in the table and stays
                // until a later one overwrites its slot.
                if ((i & 7) == 0)
                    table[r.nextInt(table.length)] = o;
                else
                    sink += o.hashCode();
            }
            x = burn(x);
        }
        sink += x;
    }

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        int threads = Integer.parseInt(args[1]);
        File stop = new File(args[2]);
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        com.sun.management.ThreadMXBean mx =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        AtomicLong allocated = new AtomicLong(), cpu = new AtomicLong();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int seed = t + 1;
            ts[t] = new Thread(() -> {
                work(end, seed);
                long id = Thread.currentThread().getId();
                allocated.addAndGet(mx.getThreadAllocatedBytes(id));
                cpu.addAndGet(mx.getThreadCpuTime(id));
            }, "soak-" + t);
            ts[t].start();
        }
        long[] briefs = new long[1];
        Thread spawner = new Thread(() -> {
            try {
                while (System.nanoTime() < end) {
                    Thread b = new Thread(() -> {
                        SplittableRandom r = new SplittableRandom(briefs[0]);
                        for (int i = 0; i < 200; i++)
                            sink += small(r).hashCode() + array(r).hashCode();
                    }, "brief-" + briefs[0]++);
                    b.start();
                    Thread.sleep(20);
                    b.join();
                }
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "spawner");
        spawner.start();
        for (Thread t : ts)
            t.join();
        spawner.join();
        System.out.println("workers done allocated " + allocated.get() + " cpu_ns " + cpu.get()
            + " briefs " + briefs[0]);
        for (int i = 0; i < 600 && !stop.exists(); i++)
            Thread.sleep(100);
        System.out.println("AllocSoak done");
    }
}
