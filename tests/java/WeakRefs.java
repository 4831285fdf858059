/*
 * WeakRefs — objects that the profiler sampled must die when the program drops
 * them, for the live=on test (tests/agent/alloc_tests.sh weakrefs).
 *
 *   java WeakRefs COUNT HOLD_MS
 *
 * allocate() makes COUNT short[512] (1040 bytes each) in thread "weakrefs", 100
 * every 20 ms (a burst of thousands of samples at once would overflow the
 * thread's ring, and lost samples are not what this tests), keeps them in a list
 * and a WeakReference to each. It holds them for HOLD_MS, drops the
 * list, then calls System.gc() until every weak reference has cleared (at most 50
 * times), waits HOLD_MS again and exits. It prints, with wall-clock instants in
 * UTC (for ringprof convert --from/--to):
 *
 *   held AT              the objects are all allocated and strongly held
 *   dropped AT           the list is dropped
 *   cleared N of COUNT after G gcs in T ms AT
 *   done AT
 */
import java.lang.ref.WeakReference;
import java.time.Instant;
import java.util.ArrayList;

public class WeakRefs {
    static ArrayList<short[]> held;

    static short[] allocate(int i) {
        short[] a = new short[512];
        a[0] = (short) i;
        return a;
    }

    static int cleared(ArrayList<WeakReference<short[]>> refs) {
        int n = 0;
        for (WeakReference<short[]> r : refs)
            if (r.get() == null)
                n++;
        return n;
    }

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        long holdMs = Long.parseLong(args[1]);
        Thread t = new Thread(() -> {
            try {
                ArrayList<WeakReference<short[]>> refs = new ArrayList<>(count);
                held = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    short[] a = allocate(i);
                    held.add(a);
                    refs.add(new WeakReference<>(a));
                    if (i % 100 == 99)
                        Thread.sleep(20);
                }
                System.out.println("held " + Instant.now());
                Thread.sleep(holdMs);
                held = null;
                System.out.println("dropped " + Instant.now());
                long t0 = System.nanoTime();
                int gcs = 0, n = cleared(refs);
                while (n < count && gcs < 50) {
                    System.gc();
                    gcs++;
                    n = cleared(refs);
                }
                long ms = (System.nanoTime() - t0) / 1_000_000;
                System.out.println("cleared " + n + " of " + count + " after " + gcs + " gcs in "
                    + ms + " ms " + Instant.now());
                Thread.sleep(holdMs);
                System.out.println("done " + Instant.now());
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "weakrefs");
        t.start();
        t.join();
    }
}
