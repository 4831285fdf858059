/*
 * TakeProf — the application takes the CPU-timer signal away from the agent: it
 * burns CPU for a second, installs its own SIGPROF handler (sun.misc.Signal), burns
 * for two more, and prints how many SIGPROFs reached its handler. (Through
 * reflection: javac warns about sun.misc.Signal used directly.) The agent must
 * notice, delete its timers and stop, so only the few signals of the first drain
 * pass after the switch arrive here.
 *
 *   java TakeProf
 */
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicLong;

public class TakeProf {
    static volatile long sink;

    static void burn(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        while (System.nanoTime() < end)
            sink += sink * 31 + 7;
    }

    public static void main(String[] args) throws Exception {
        burn(1000);
        AtomicLong got = new AtomicLong();
        Class<?> sig = Class.forName("sun.misc.Signal");
        Class<?> handler = Class.forName("sun.misc.SignalHandler");
        Object h = Proxy.newProxyInstance(handler.getClassLoader(), new Class<?>[] {handler},
                (proxy, m, a) -> {
                    if (m.getName().equals("handle"))
                        got.incrementAndGet();
                    return null;
                });
        sig.getMethod("handle", sig, handler)
           .invoke(null, sig.getConstructor(String.class).newInstance("PROF"), h);
        burn(2000);
        Thread.sleep(200);       /* let the dispatcher run the last handlers */
        System.out.println("handled " + got.get());
    }
}
