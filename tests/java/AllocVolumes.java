/*
 * AllocVolumes — known allocation volumes at two sites, for the allocation
 * sampling test (tests/agent/alloc_tests.sh volumes). In thread "volumes":
 *
 *   bytes()  allocates BYTES_MB MiB as byte[4096]
 *   longs()  allocates LONGS_MB MiB as java.lang.Long
 *
 * Each object is stored into a small static ring of references, so it escapes
 * and the JIT cannot scalar-replace it (an allocation the JIT removes is never
 * made, so never sampled); each is dead once the ring wraps. The truth is
 * measured by the JVM, not assumed: the thread's allocated bytes
 * (com.sun.management.ThreadMXBean.getThreadAllocatedBytes, exact per object)
 * around each method, which allocates nothing else. It prints, per site:
 *
 *   site NAME CLASS objects N bytes B
 *
 *   java AllocVolumes BYTES_MB LONGS_MB
 */
import java.lang.management.ManagementFactory;

public class AllocVolumes {
    static final int RING = 1024;
    static final Object[] sink = new Object[RING];
    static volatile long blackhole;

    /* One object size, approximately: n objects of about per bytes make mb MiB. */
    static long count(long mb, long per) { return (mb << 20) / per; }

    static long bytes(long n) {
        for (long i = 0; i < n; i++)
            sink[(int) (i & (RING - 1))] = new byte[4096];
        return n;
    }

    static long longs(long n) {
        long x = 0x9E3779B97F4A7C15L;
        for (long i = 0; i < n; i++) {
            x += 0x9E3779B97F4A7C15L;       // never in Long.valueOf's cache
            sink[(int) (i & (RING - 1))] = Long.valueOf(x | (1L << 40));
        }
        return n;
    }

    public static void main(String[] args) throws Exception {
        long bytesMb = Long.parseLong(args[0]), longsMb = Long.parseLong(args[1]);
        com.sun.management.ThreadMXBean mx =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long[] out = new long[4];
        Thread t = new Thread(() -> {
            long id = Thread.currentThread().getId();
            // byte[4096] is 4112 bytes and Long 24 with compressed class pointers;
            // the counts only need to be near the volume asked for.
            long n1 = count(bytesMb, 4112), n2 = count(longsMb, 24);
            long a0 = mx.getThreadAllocatedBytes(id);
            out[0] = bytes(n1);
            long a1 = mx.getThreadAllocatedBytes(id);
            out[2] = longs(n2);
            long a2 = mx.getThreadAllocatedBytes(id);
            out[1] = a1 - a0;
            out[3] = a2 - a1;
        }, "volumes");
        t.start();
        t.join();
        blackhole = sink[0].hashCode();
        System.out.println("site bytes byte[] objects " + out[0] + " bytes " + out[1]);
        System.out.println("site longs java.lang.Long objects " + out[2] + " bytes " + out[3]);
    }
}
