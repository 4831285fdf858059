/*
 * AllocSites — the accuracy harness's allocation program (bench/accuracy/run,
 * program "alloc"). One thread, "alloc", allocates in rounds at three sites:
 *
 *   pages()  byte[4096]        4112 bytes each (16-byte array header + 4096)
 *   boxes()  java.lang.Long    24 bytes each (12-byte header + 8, aligned to 8)
 *   ints()   int[100]          416 bytes each (16 + 400)
 *
 * about 50%, 30% and 20% of the bytes (sizes with compressed class pointers, the
 * default below 32 GB of heap). Every object is stored into a small static ring of
 * references, so it escapes and C2 cannot scalar-replace it (an allocation the JIT
 * removes is never made, so never sampled), and is dead once the ring wraps. The
 * truth is measured by the JVM: the thread's allocated bytes
 * (com.sun.management.ThreadMXBean.getCurrentThreadAllocatedBytes, exact per
 * object) around every call; what the thread allocated elsewhere is "other".
 * It prints:
 *
 *   truth ROW BYTES              (ROW: pages, boxes, ints, other)
 *
 *   java AllocSites SECONDS
 */
import java.lang.management.ManagementFactory;

public class AllocSites {
    static final int RING = 1024;
    static final Object[] sink = new Object[RING];
    static volatile long blackhole;

    static void pages(int n) {
        for (int i = 0; i < n; i++)
            sink[i & (RING - 1)] = new byte[4096];
    }

    static void boxes(int n, long seed) {
        long x = seed;
        for (int i = 0; i < n; i++) {
            x += 0x9E3779B97F4A7C15L;           // never in Long.valueOf's cache
            sink[i & (RING - 1)] = Long.valueOf(x | (1L << 40));
        }
    }

    static void ints(int n) {
        for (int i = 0; i < n; i++)
            sink[i & (RING - 1)] = new int[100];
    }

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        com.sun.management.ThreadMXBean mx =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long[] bytes = new long[4];
        Thread t = new Thread(() -> {
            // One round: 2 MiB of pages, 1.2 MiB of boxes, 0.8 MiB of ints.
            int nPages = (2 << 20) / 4112;
            int nBoxes = (12 << 20) / 10 / 24;
            int nInts = (8 << 20) / 10 / 416;
            long end = System.nanoTime() + (long) (seconds * 1e9);
            long start = mx.getCurrentThreadAllocatedBytes();
            long round = 0;
            while (System.nanoTime() < end) {
                long a0 = mx.getCurrentThreadAllocatedBytes();
                pages(nPages);
                long a1 = mx.getCurrentThreadAllocatedBytes();
                boxes(nBoxes, round++);
                long a2 = mx.getCurrentThreadAllocatedBytes();
                ints(nInts);
                long a3 = mx.getCurrentThreadAllocatedBytes();
                bytes[0] += a1 - a0;
                bytes[1] += a2 - a1;
                bytes[2] += a3 - a2;
            }
            bytes[3] = mx.getCurrentThreadAllocatedBytes() - start - bytes[0] - bytes[1] - bytes[2];
        }, "alloc");
        t.start();
        t.join();
        blackhole = sink[0].hashCode();
        String[] rows = { "pages", "boxes", "ints", "other" };
        for (int i = 0; i < 4; i++)
            System.out.println("truth " + rows[i] + " " + bytes[i]);
    }
}
