/*
 * UnloadStorm — classes loaded and unloaded continuously while THREADS threads run
 * them. Each round of a worker defines UnloadStorm$Victim (and its UnloadStorm$Crumb,
 * an allocated object type) afresh in a throwaway class loader, burns CPU in
 * Victim.burn() and allocates Crumb objects and arrays of them in Victim.litter()
 * for a few milliseconds, then drops the loader. A collector thread asks for a
 * collection every few ms, so classes go while other workers are still sampled in
 * their (different) copies, and sampled objects of a gone class may still be
 * tracked by live=on. Samples carry jmethodIDs (and allocation samples class
 * references) whose class may be gone by the time the agent resolves them.
 *
 * Prints "UnloadStorm done ROUNDS" with the number of rounds run.
 *
 *   java UnloadStorm SECONDS THREADS
 */
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.concurrent.atomic.AtomicLong;

public class UnloadStorm {
    public static class Crumb {
        long a, b;
        Crumb next;
    }

    public static class Victim {
        static Object keep;

        public static long burn(long x) {
            long end = System.nanoTime() + 2_000_000L;
            while (System.nanoTime() < end)
                for (int i = 0; i < 10_000; i++)
                    x = x * 6364136223846793005L + 1;
            return x;
        }

        /* Allocation samples in a class that is about to go; the last chain is
         * kept in a static of this copy, so it lives exactly as long as the class. */
        public static long litter(long x) {
            Crumb head = null;
            for (int i = 0; i < 20_000; i++) {
                Crumb c = new Crumb();
                c.a = x + i;
                c.next = (i & 63) == 0 ? null : head;
                head = c;
                if ((i & 255) == 0)
                    keep = new Crumb[64];
            }
            keep = head;
            return x ^ head.a;
        }
    }

    static final class OneShot extends ClassLoader {
        private final byte[] victim, crumb;

        OneShot(byte[] victim, byte[] crumb) {
            super(UnloadStorm.class.getClassLoader());
            this.victim = victim;
            this.crumb = crumb;
        }

        /* Child-first for the two classes, so every loader has its own copies. */
        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                Class<?> k = findLoadedClass(name);
                if (k == null && name.equals("UnloadStorm$Victim"))
                    k = defineClass(name, victim, 0, victim.length);
                else if (k == null && name.equals("UnloadStorm$Crumb"))
                    k = defineClass(name, crumb, 0, crumb.length);
                else if (k == null)
                    return super.loadClass(name, resolve);
                return k;
            }
        }
    }

    static byte[] bytes(String name) throws Exception {
        try (InputStream in = UnloadStorm.class.getResourceAsStream(name + ".class")) {
            return in.readAllBytes();
        }
    }

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        int threads = Integer.parseInt(args[1]);
        byte[] victim = bytes("UnloadStorm$Victim"), crumb = bytes("UnloadStorm$Crumb");
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        AtomicLong rounds = new AtomicLong(), sink = new AtomicLong();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final long seed = t;
            ts[t] = new Thread(() -> {
                long x = seed;
                try {
                    while (System.nanoTime() < end) {
                        Class<?> k = new OneShot(victim, crumb).loadClass("UnloadStorm$Victim");
                        Method burn = k.getMethod("burn", long.class);
                        Method litter = k.getMethod("litter", long.class);
                        x = (Long) burn.invoke(null, x);
                        x = (Long) litter.invoke(null, x);
                        rounds.incrementAndGet();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
                sink.addAndGet(x);
            }, "storm-" + t);
            ts[t].start();
        }
        Thread gc = new Thread(() -> {
            while (System.nanoTime() < end) {
                System.gc();
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "collector");
        gc.setDaemon(true);
        gc.start();
        for (Thread t : ts)
            t.join();
        System.gc();
        System.out.println("UnloadStorm done " + rounds.get() + " " + (sink.get() & 1));
    }
}
