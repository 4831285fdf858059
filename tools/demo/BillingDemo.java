/*
 * tools/demo/BillingDemo.java — the program the Quick start profiles.
 *
 * A small "billing service": worker threads take requests, parse them, score the
 * customer's risk (hashing), and render a compressed invoice (java.util.zip, so the
 * profile shows native frames under Java ones). A reporter thread wakes once a
 * second and sleeps otherwise, so it should be nearly absent from a CPU profile.
 * Every request is then posted to one shared ledger under its monitor, and one
 * posting in 200 "flushes" the ledger while holding it (a 20 ms sleep): the
 * global lock of issue 9's case study, which the wall-clock profile shows as
 * blocked workers and `ringprof locks` ranks first.
 * The work per request is fixed; the program prints its throughput at the end.
 *
 *   java BillingDemo [SECONDS [THREADS]]     (defaults: 10 s, 4 threads)
 */
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.Deflater;

public class BillingDemo {
    static final AtomicLong served = new AtomicLong();

    /* The shared ledger: every invoice is posted here, under its monitor. */
    static final class Ledger {
        long entries, total;

        synchronized void post(long amount) throws InterruptedException {
            entries++;
            total += amount;
            if (entries % 200 == 0)
                Thread.sleep(20);        /* a slow flush, holding the lock */
        }
    }

    static final Ledger ledger = new Ledger();
    static volatile boolean running = true;

    /* Parse "id=..;plan=..;usage=.." lines into a map, many times. */
    static Map<String, String> parse(String request) {
        Map<String, String> fields = new HashMap<>();
        for (int round = 0; round < 40; round++) {
            fields.clear();
            for (String part : request.split(";")) {
                int eq = part.indexOf('=');
                if (eq > 0)
                    fields.put(part.substring(0, eq).trim(), part.substring(eq + 1).trim());
            }
        }
        return fields;
    }

    /* A risk score from repeated SHA-256 over the customer id. */
    static int score(MessageDigest sha, String customer) throws Exception {
        byte[] d = customer.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < 300; i++)
            d = sha.digest(d);
        return d[0] & 0xff;
    }

    /* Render an invoice and compress it, as if to store it. */
    static int render(Deflater deflater, Map<String, String> fields, int risk) {
        StringBuilder sb = new StringBuilder();
        for (int line = 0; line < 200; line++)
            sb.append("line ").append(line).append(' ').append(fields.get("plan"))
              .append(" usage=").append(fields.get("usage")).append(" risk=").append(risk)
              .append('\n');
        byte[] in = sb.toString().getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[in.length + 64];
        deflater.reset();
        deflater.setInput(in);
        deflater.finish();
        return deflater.deflate(out);
    }

    static void worker(int id) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            Deflater deflater = new Deflater(Deflater.BEST_COMPRESSION);
            long n = 0;
            while (running) {
                String req = "id=cust" + (n % 9973) + "; plan=gold; usage=" + (n * 7 % 1000)
                           + "; region=eu; currency=EUR";
                Map<String, String> f = parse(req);
                int risk = score(sha, f.get("id"));
                int size = render(deflater, f, risk);
                if (size <= 0)
                    throw new IllegalStateException("empty invoice");
                ledger.post(size);
                served.incrementAndGet();
                n++;
            }
            deflater.end();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            final int id = i;
            Thread t = new Thread(() -> worker(id), "billing-worker-" + (i + 1));
            workers.add(t);
            t.start();
        }
        Thread reporter = new Thread(() -> {
            while (running) {
                try { Thread.sleep(1000); } catch (InterruptedException e) { return; }
            }
        }, "reporter");
        reporter.setDaemon(true);
        reporter.start();
        Thread.sleep(seconds * 1000L);
        running = false;
        for (Thread t : workers)
            t.join();
        System.out.printf("BillingDemo: %d requests in %d s on %d threads%n",
                          served.get(), seconds, threads);
    }
}
