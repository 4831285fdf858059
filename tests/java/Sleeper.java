/*
 * Sleeper — thread "sleeper" only sleeps while thread "burner" burns CPU in burn()
 * until it has used SECONDS of CPU time (its own clock, so that a loaded machine
 * makes the run longer, not the burn shorter).
 *
 *   java Sleeper SECONDS
 */
public class Sleeper {
    static volatile long sink;

    static long burn(long x) {
        for (int i = 0; i < 1_000_000; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        Thread sleeper = new Thread(() -> {
            try {
                Thread.sleep(3_600_000L);
            } catch (InterruptedException e) {
                // the end of the run
            }
        }, "sleeper");
        Thread burner = new Thread(() -> {
            java.lang.management.ThreadMXBean mx =
                java.lang.management.ManagementFactory.getThreadMXBean();
            long end = mx.getCurrentThreadCpuTime() + seconds * 1_000_000_000L, x = 1;
            while (mx.getCurrentThreadCpuTime() < end)
                x = burn(x);
            sink = x;
        }, "burner");
        sleeper.start();
        burner.start();
        burner.join();
        sleeper.interrupt();
        sleeper.join();
        System.out.println("Sleeper done");
    }
}
