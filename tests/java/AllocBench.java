/*
 * AllocBench — an allocation-heavy workload for bench/overhead_alloc.sh, shaped
 * like a service handling requests: THREADS threads each handle requests in
 * batches of BATCH for SECONDS. A request builds a document (a map of strings,
 * boxed numbers and small lists), renders it to text, parses the text back into a
 * new map, checks that the two agree (the program stops with an error if they do
 * not) and sorts the document's items. One response in 16 goes into a per-thread
 * LRU cache of 4096 entries, so some objects survive several collections and die
 * in the old generation; everything else is garbage at once. Nothing is kept in
 * a static field the JIT could see through: the allocations escape.
 *
 *   java AllocBench THREADS SECONDS [WARMUP_SECONDS [BATCH]]
 *
 * Every batch is timed; batches that start in the first WARMUP_SECONDS (default
 * 3) are left out. It prints one line:
 *
 *   iter_ns MEDIAN batches N ops N cpu_ns C alloc_bytes B check CHECKSUM
 *
 * iter_ns is the median steady-state batch time over all threads, ops the
 * requests handled after warm-up, cpu_ns the process's CPU time over the whole
 * run, alloc_bytes what the worker threads allocated (exact, from
 * ThreadMXBean.getThreadAllocatedBytes), and CHECKSUM the checksums of each
 * thread's first 1000 requests combined: the same in every run with the same
 * THREADS, whatever the speed, so a profiler that changed the program's results
 * would show.
 */
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

public class AllocBench {
    static final String[] WORDS = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot",
        "golf", "hotel", "india", "juliet", "kilo", "lima", "mike", "november"};

    /* A request's document: about 30 entries of strings, numbers and lists. */
    static Map<String, Object> build(SplittableRandom r, long id) {
        Map<String, Object> doc = new HashMap<>();
        doc.put("id", Long.valueOf(id));
        for (int i = 0; i < 24; i++) {
            String key = WORDS[r.nextInt(WORDS.length)] + "." + i;
            switch (r.nextInt(3)) {
            case 0: doc.put(key, WORDS[r.nextInt(WORDS.length)] + "-" + r.nextInt(100000)); break;
            case 1: doc.put(key, Integer.valueOf(r.nextInt(1 << 20))); break;
            default:
                List<Integer> l = new ArrayList<>();
                for (int j = r.nextInt(8); j >= 0; j--)
                    l.add(r.nextInt(1000) + 1000);
                doc.put(key, l);
            }
        }
        return doc;
    }

    /* key=value;key=[a,b,c];... */
    static String render(Map<String, Object> doc) {
        StringBuilder b = new StringBuilder(512);
        for (Map.Entry<String, Object> e : doc.entrySet()) {
            b.append(e.getKey()).append('=');
            Object v = e.getValue();
            if (v instanceof List) {
                b.append('[');
                for (Object x : (List<?>) v)
                    b.append(x).append(',');
                b.append(']');
            } else if (v instanceof Integer || v instanceof Long) {
                b.append('#').append(v);
            } else {
                b.append(v);
            }
            b.append(';');
        }
        return b.toString();
    }

    static Map<String, Object> parse(String s) {
        Map<String, Object> doc = new HashMap<>();
        for (String field : s.split(";")) {
            int eq = field.indexOf('=');
            String k = field.substring(0, eq), v = field.substring(eq + 1);
            if (v.startsWith("[")) {
                List<Integer> l = new ArrayList<>();
                for (String x : v.substring(1, v.length() - 1).split(","))
                    if (!x.isEmpty())
                        l.add(Integer.valueOf(x));
                doc.put(k, l);
            } else if (v.startsWith("#")) {
                long n = Long.parseLong(v.substring(1));
                doc.put(k, k.equals("id") ? (Object) Long.valueOf(n) : (Object) Integer.valueOf((int) n));
            } else {
                doc.put(k, v);
            }
        }
        return doc;
    }

    static long checksum(Map<String, Object> doc) {
        List<String> items = new ArrayList<>();
        for (Map.Entry<String, Object> e : doc.entrySet())
            items.add(e.getKey() + ":" + e.getValue());
        Collections.sort(items);
        long h = 1;
        for (String s : items)
            h = h * 1_000_003 + s.hashCode();
        return h;
    }

    static long handle(SplittableRandom r, long id, LinkedHashMap<Long, String> cache) {
        Map<String, Object> doc = build(r, id);
        String text = render(doc);
        Map<String, Object> back = parse(text);
        long h = checksum(doc);
        if (!back.equals(doc) || checksum(back) != h)
            throw new IllegalStateException("request " + id + ": the parsed document differs: " + text);
        if ((id & 15) == 0)
            cache.put(id, text);
        return h;
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long seconds = Long.parseLong(args[1]);
        long warmup = args.length > 2 ? Long.parseLong(args[2]) : 3;
        int batch = args.length > 3 ? Integer.parseInt(args[3]) : 500;
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L, steady = start + warmup * 1_000_000_000L;
        com.sun.management.ThreadMXBean mx =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long[][] times = new long[threads][];
        long[] ops = new long[threads], sums = new long[threads], bytes = new long[threads];
        int[] nbatches = new int[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int me = t;
            ts[t] = new Thread(() -> {
                SplittableRandom r = new SplittableRandom(me);
                LinkedHashMap<Long, String> cache = new LinkedHashMap<>(8192, 0.75f, true) {
                    @Override
                    protected boolean removeEldestEntry(Map.Entry<Long, String> e) {
                        return size() > 4096;
                    }
                };
                long[] mine = new long[1 << 16];
                int n = 0;
                long id = 0, sum = 0, done = 0;
                for (long t0 = System.nanoTime(); t0 < end && n < mine.length; ) {
                    for (int i = 0; i < batch; i++, id++) {
                        long h = handle(r, ((long) me << 40) | id, cache);
                        if (id < 1000)
                            sum = sum * 31 + h;
                    }
                    long t1 = System.nanoTime();
                    if (t0 >= steady) {
                        mine[n++] = t1 - t0;
                        done += batch;
                    }
                    t0 = t1;
                }
                times[me] = mine;
                nbatches[me] = n;
                ops[me] = done;
                sums[me] = id >= 1000 ? sum : 0;
                bytes[me] = mx.getThreadAllocatedBytes(Thread.currentThread().getId());
            }, "allocbench-" + t);
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
        List<Long> all = new ArrayList<>();
        long totalOps = 0, check = 0, totalBytes = 0;
        for (int t = 0; t < threads; t++) {
            for (int i = 0; i < nbatches[t]; i++)
                all.add(times[t][i]);
            totalOps += ops[t];
            check = check * 1_000_003 + sums[t];
            totalBytes += bytes[t];
        }
        if (all.isEmpty())
            throw new IllegalStateException("no batch after the warm-up: run longer");
        Collections.sort(all);
        long median = all.get(all.size() / 2);
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        System.out.println("iter_ns " + median + " batches " + all.size() + " ops " + totalOps
            + " cpu_ns " + os.getProcessCpuTime() + " alloc_bytes " + totalBytes
            + " check " + Long.toHexString(check));
    }
}
