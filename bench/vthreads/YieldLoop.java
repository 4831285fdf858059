import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.LongAdder;

/**
 * YieldLoop — a worst case for what the JVM does at each virtual-thread mount
 * (bench/vthread_cost.sh): THREADS virtual threads each run WORK iterations of
 * a small loop and Thread.yield(), which unmounts the thread and mounts the next
 * one, until the process has used CPU_SECONDS of CPU; then it prints the CPU
 * nanoseconds per yield (the process's CPU over the yields, after a warm-up of
 * half a second). Built with JDK 17's javac: the virtual-thread API is reached
 * by reflection; it runs on JDK 21 and later.
 *
 *   java YieldLoop THREADS WORK CPU_SECONDS
 *
 * prints "yields N cpu_ns_per_yield X wall_s W".
 */
public class YieldLoop {
    static volatile boolean stop;
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]), work = Integer.parseInt(args[1]);
        double seconds = Double.parseDouble(args[2]);
        LongAdder yields = new LongAdder();
        Runnable body = () -> {
            long s = 0;
            while (!stop) {
                for (int j = 0; j < work; j++)
                    s += j * 31 ^ s;
                Thread.yield();
                yields.increment();
            }
            sink += s;
        };
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        java.lang.reflect.Method unstarted =
            Class.forName("java.lang.Thread$Builder").getMethod("unstarted", Runnable.class);
        Thread[] t = new Thread[threads];
        for (int i = 0; i < threads; i++)
            t[i] = (Thread) unstarted.invoke(builder, body);
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        for (Thread x : t)
            x.start();
        Thread.sleep(500);
        long y0 = yields.sum(), c0 = os.getProcessCpuTime(), w0 = System.nanoTime();
        while (os.getProcessCpuTime() - c0 < seconds * 1e9)
            Thread.sleep(50);
        long y1 = yields.sum(), c1 = os.getProcessCpuTime(), w1 = System.nanoTime();
        stop = true;
        for (Thread x : t)
            x.join();
        System.out.printf("yields %d cpu_ns_per_yield %.1f wall_s %.2f%n", y1 - y0,
                          (double) (c1 - c0) / (y1 - y0), (w1 - w0) / 1e9);
    }
}
