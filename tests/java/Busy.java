/*
 * Busy — many kinds of work at once, for the signal-safety test: compression in
 * libz (malloc and free inside native code), allocation and collection (GC threads),
 * contended monitors (HotSpot's locks), string building and hash maps, and class
 * loading through lambdas. The agent's handler interrupts all of it.
 *
 *   java Busy SECONDS
 */
import java.util.HashMap;
import java.util.Random;
import java.util.zip.Deflater;

public class Busy {
    static volatile long sink;
    static final Object LOCK = new Object();
    static long shared;

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        Runnable[] jobs = {
            () -> {
                byte[] in = new byte[256 << 10];
                new Random(1).nextBytes(in);
                byte[] out = new byte[512 << 10];
                while (System.nanoTime() < end) {
                    Deflater d = new Deflater();
                    d.setInput(in);
                    d.finish();
                    while (!d.finished())
                        sink += d.deflate(out);
                    d.end();
                }
            },
            () -> {
                while (System.nanoTime() < end) {
                    HashMap<String, Integer> m = new HashMap<>();
                    for (int i = 0; i < 20_000; i++)
                        m.put("k" + i, i);
                    sink += m.size();
                    if ((sink & 7) == 0)
                        System.gc();
                }
            },
            () -> {
                while (System.nanoTime() < end) {
                    synchronized (LOCK) {
                        shared++;
                    }
                    Thread.yield();
                }
            },
            () -> {
                while (System.nanoTime() < end) {
                    synchronized (LOCK) {
                        shared--;
                    }
                    StringBuilder b = new StringBuilder();
                    for (int i = 0; i < 1000; i++)
                        b.append(i).append(',');
                    sink += b.length();
                }
            },
        };
        Thread[] threads = new Thread[jobs.length];
        for (int i = 0; i < jobs.length; i++) {
            threads[i] = new Thread(jobs[i], "busy-" + i);
            threads[i].start();
        }
        for (Thread t : threads)
            t.join();
        System.out.println("Busy done");
    }
}
