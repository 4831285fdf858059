/*
 * AttachTarget — a JVM to attach to. Thread "burner" burns CPU in attachBurn()
 * until the file STOPFILE exists (or 120 s pass). Prints "ready" once it runs.
 *
 *   java AttachTarget STOPFILE
 */
import java.io.File;

public class AttachTarget {
    static volatile long sink;

    static long attachBurn(long x) {
        for (int i = 0; i < 2_000_000; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    public static void main(String[] args) throws Exception {
        File stop = new File(args[0]);
        Thread t = new Thread(() -> {
            long end = System.nanoTime() + 120_000_000_000L, x = 1;
            while (!stop.exists() && System.nanoTime() < end)
                x = attachBurn(x);
            sink = x;
        }, "burner");
        t.start();
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        t.join();
        System.out.println("AttachTarget done");
    }
}
