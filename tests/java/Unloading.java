/*
 * Unloading — burns CPU in classes that are unloaded right after: each round
 * defines class Unloading$Victim afresh in its own class loader, runs its burn()
 * for 5 ms of the thread's CPU time (not of the clock, which on a loaded machine
 * holds less CPU), drops the loader and asks for a collection. Samples in
 * burn() refer to jmethodIDs whose class may be gone by the time the agent's
 * flusher resolves them; the agent must name them ("[unloaded]" or the real name)
 * and never crash.
 *
 *   java Unloading ROUNDS
 */
import java.io.InputStream;
import java.lang.reflect.Method;

public class Unloading {
    public static class Victim {
        public static long burn(long x) {
            java.lang.management.ThreadMXBean mx =
                java.lang.management.ManagementFactory.getThreadMXBean();
            long end = mx.getCurrentThreadCpuTime() + 5_000_000L;
            while (mx.getCurrentThreadCpuTime() < end)
                for (int i = 0; i < 10_000; i++)
                    x = x * 6364136223846793005L + 1;
            return x;
        }
    }

    static final class OneShot extends ClassLoader {
        private final byte[] bytes;

        OneShot(byte[] bytes) {
            super(null);
            this.bytes = bytes;
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            if (!name.equals("Unloading$Victim"))
                throw new ClassNotFoundException(name);
            return defineClass(name, bytes, 0, bytes.length);
        }
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        byte[] bytes;
        try (InputStream in = Unloading.class.getResourceAsStream("Unloading$Victim.class")) {
            bytes = in.readAllBytes();
        }
        long x = 1;
        for (int r = 0; r < rounds; r++) {
            Class<?> k = new OneShot(bytes).loadClass("Unloading$Victim");
            Method burn = k.getMethod("burn", long.class);
            x = (Long) burn.invoke(null, x);
            k = null;
            burn = null;
            System.gc();
        }
        System.out.println("Unloading done " + (x & 1));
    }
}
