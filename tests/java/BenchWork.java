/*
 * BenchWork — a CPU-bound workload for bench/overhead_cpu.sh: THREADS threads run
 * a mix of arithmetic, small allocations, hash-map updates and string building for
 * SECONDS, then it prints the operations done and the process's CPU time:
 *
 *   ops N cpu_ns C
 *
 *   java BenchWork THREADS SECONDS
 */
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.concurrent.atomic.AtomicLong;

public class BenchWork {
    static long step(long x, HashMap<Integer, String> map, StringBuilder b) {
        for (int i = 0; i < 2000; i++)
            x = (x ^ (x >>> 29)) * 0xBF58476D1CE4E5B9L;
        int k = (int) (x & 1023);
        map.put(k, Long.toHexString(x));
        b.setLength(0);
        b.append(map.get(k)).append(':').append(k);
        return x + b.length();
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long seconds = Long.parseLong(args[1]);
        AtomicLong ops = new AtomicLong();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                HashMap<Integer, String> map = new HashMap<>();
                StringBuilder b = new StringBuilder();
                long x = System.nanoTime(), n = 0;
                while (System.nanoTime() < end) {
                    for (int i = 0; i < 100; i++)
                        x = step(x, map, b);
                    n += 100;
                }
                ops.addAndGet(n + (x == 42 ? 1 : 0));
            }, "bench-" + t);
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        System.out.println("ops " + ops.get() + " cpu_ns " + os.getProcessCpuTime());
    }
}
