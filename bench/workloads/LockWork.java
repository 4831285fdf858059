/*
 * LockWork — a contended lock, the way the billing server of issue 9 had one:
 * THREADS worker threads post invoices to one shared ledger, each under the
 * ledger's monitor (synchronized), with work before it (pricing the invoice) and
 * inside it (appending to the ledger). One posting in SLOW_EVERY holds the lock
 * long (a "ledger flush", SLOW_MS), so waits of 10 ms and more happen every
 * iteration: what lock=10ms is there to catch. Most waits are shorter.
 *
 * An iteration is a fixed number of postings per worker; the checks: the ledger
 * holds exactly the postings made, and its running checksum matches the one
 * computed from the same invoices without the lock.
 *
 *   java LockWork SECONDS | -n ITERATIONS
 */
public class LockWork {
    static final int THREADS = 6, POSTINGS = 60, SLOW_EVERY = 30;
    static final long SLOW_MS = 12;

    static final class Ledger {
        long entries, checksum;
    }

    static final Ledger ledger = new Ledger();

    /** CPU work standing for pricing an invoice (outside the lock) or booking it (inside). */
    static long work(long x, int n) {
        for (int i = 0; i < n; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    static long post(int part) throws InterruptedException {
        long mine = 0;
        for (int i = 0; i < POSTINGS; i++) {
            long invoice = work(part * 1_000_003L + i, 150_000);
            mine += invoice;
            synchronized (ledger) {
                ledger.entries++;
                ledger.checksum += invoice;
                work(invoice, 40_000);
                if ((part * POSTINGS + i) % SLOW_EVERY == 0)
                    Thread.sleep(SLOW_MS);
            }
        }
        return mine;
    }

    public static void main(String[] args) {
        Harness.run("lock", args, () -> {
            long before, sumBefore;
            synchronized (ledger) {
                before = ledger.entries;
                sumBefore = ledger.checksum;
            }
            long total = Harness.parallel(THREADS, part -> post(part));
            synchronized (ledger) {
                Harness.check(ledger.entries - before == (long) THREADS * POSTINGS,
                              "the ledger lost postings");
                Harness.check(ledger.checksum - sumBefore == total, "the ledger's checksum is wrong");
            }
            return total;
        });
    }
}
