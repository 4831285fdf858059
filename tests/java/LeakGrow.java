/*
 * LeakGrow — a leak and a churn, for the live-object test (tests/agent/alloc_tests.sh
 * leak and churn).
 *
 *   java LeakGrow leak SECONDS [KB_PER_S]   a thread "leaker" adds KB_PER_S KiB a
 *                                           second (default 4096) of long[126]
 *                                           (1 KiB each) to a static list, in
 *                                           leak(), while two "churn" threads make
 *                                           short-lived garbage
 *   java LeakGrow churn SECONDS             only the two churn threads
 *
 * The churn threads build a map of strings and boxed numbers, sum it and drop it,
 * then pause 2 ms (about 100 MB/s a thread): nothing they allocate outlives the
 * next young collection. The list's backing
 * array is sized up front, so that the leaked long[] are the only objects whose
 * number grows. It prints "LeakGrow MODE done LEAKED_OBJECTS CHECKSUM".
 */
import java.util.ArrayList;
import java.util.HashMap;

public class LeakGrow {
    static ArrayList<long[]> leaked;
    static volatile long sink;

    /* The growing site: 1 KiB a call, kept for ever. */
    static void leak(long i) {
        long[] a = new long[126];
        a[0] = i;
        leaked.add(a);
    }

    static long churn(long seed) {
        HashMap<String, Long> m = new HashMap<>();
        for (int i = 0; i < 2000; i++)
            m.put("key-" + (seed + i), Long.valueOf(seed * 31 + i));
        long s = 0;
        for (Long v : m.values())
            s += v;
        return s;
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        long seconds = Long.parseLong(args[1]);
        long kbPerS = args.length > 2 ? Long.parseLong(args[2]) : 4096;
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        leaked = new ArrayList<>((int) (kbPerS * (seconds + 1)));
        Thread[] ts = new Thread[mode.equals("leak") ? 3 : 2];
        for (int t = 0; t < 2; t++) {
            ts[t] = new Thread(() -> {
                long s = 0, i = 0;
                while (System.nanoTime() < end) {
                    s += churn(i += 2000);
                    try {
                        Thread.sleep(2);            // about 100 MB/s a thread
                    } catch (InterruptedException e) {
                        break;
                    }
                }
                sink += s;
            }, "churn-" + t);
        }
        if (mode.equals("leak")) {
            // kbPerS objects a second, in 100 steps a second, on schedule.
            ts[2] = new Thread(() -> {
                long start = System.nanoTime(), n = 0;
                for (int step = 1; System.nanoTime() < end; step++) {
                    long due = kbPerS * step / 100;
                    for (; n < due; n++)
                        leak(n);
                    long wake = start + step * 10_000_000L;
                    long now;
                    while ((now = System.nanoTime()) < wake)
                        try {
                            Thread.sleep((wake - now) / 1_000_000, (int) ((wake - now) % 1_000_000));
                        } catch (InterruptedException e) {
                            return;
                        }
                }
            }, "leaker");
        } else if (!mode.equals("churn")) {
            throw new IllegalArgumentException("mode is leak or churn, not " + mode);
        }
        for (Thread t : ts)
            t.start();
        for (Thread t : ts)
            t.join();
        System.out.println("LeakGrow " + mode + " done " + leaked.size() + " " + (sink & 1));
    }
}
