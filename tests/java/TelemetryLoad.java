/*
 * tests/java/TelemetryLoad.java — a few threads that allocate for a while, for
 * the telemetry test (lock_tests.sh): the heap fills and is collected (run it
 * with a small -Xmx), the process uses CPU, and the thread count is known.
 *
 *   java TelemetryLoad THREADS SECONDS
 *
 * Prints "threads N" (the JVM's live threads at the end, as Thread.activeCount
 * sees them in the main group) and "gcs N" (the collections the MXBeans count).
 */
public class TelemetryLoad {
    static volatile boolean running = true;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        double seconds = Double.parseDouble(args[1]);
        Thread[] t = new Thread[n];
        long[] sink = new long[n];
        for (int i = 0; i < n; i++) {
            final int k = i;
            t[i] = new Thread(() -> {
                byte[][] keep = new byte[64][];
                long s = 0;
                for (int j = 0; running; j++) {
                    byte[] b = new byte[4096 + (j & 1023)];
                    b[j & 4095] = (byte) j;
                    keep[j & 63] = b;
                    s += b[0];
                    if ((j & 1023) == 0) {
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
                sink[k] = s;
            }, "loader-" + i);
            t[i].start();
        }
        Thread.sleep((long) (seconds * 1000));
        System.out.println("threads " + Thread.activeCount());
        running = false;
        for (Thread x : t)
            x.join();
        long gcs = 0;
        for (java.lang.management.GarbageCollectorMXBean b :
                 java.lang.management.ManagementFactory.getGarbageCollectorMXBeans())
            gcs += Math.max(0, b.getCollectionCount());
        System.out.println("gcs " + gcs);
    }
}
