/*
 * tests/java/BillingServer.java — a billing server in miniature whose workers
 * contend on one global lock, for the lock-contention tests (lock_tests.sh).
 *
 *   java BillingServer WORKERS SECONDS THRESHOLD_US
 *
 * Each worker ("worker-N") prices an invoice (a little CPU), then posts it to
 * the one Ledger under its monitor, which it holds for about 2 ms (a sleep: the
 * ledger "writes to disk"), then waits a little for the next request. Every 25th
 * invoice also looks up a RateTable under that table's monitor (held 1 ms,
 * rarely contended). The CPU stays well below saturation: the workers mostly
 * sleep or wait.
 *
 * The program measures its own waits: System.nanoTime() just before each
 * synchronized and first thing inside it. At the end it prints, per monitor,
 * the sum and count of the waits at or above THRESHOLD_US:
 *   ledger_wait_ns SUM count N
 *   rates_wait_ns SUM count N
 * which the test compares with the agent's lock samples.
 */
public class BillingServer {
    static final class Ledger {
        long posted;
        void post(long cents) throws InterruptedException {
            posted += cents;
            Thread.sleep(2);
        }
    }

    static final class RateTable {
        long lookups;
        long rate(int region) throws InterruptedException {
            lookups++;
            Thread.sleep(1);
            return 100 + region;
        }
    }

    static final Ledger LEDGER = new Ledger();
    static final RateTable RATES = new RateTable();
    static long thresholdNs;
    static volatile boolean running = true;

    static final class Worker extends Thread {
        long ledgerWait, ledgerCount, ratesWait, ratesCount, sink;
        final java.util.Random rnd;

        Worker(int i) {
            super("worker-" + i);
            rnd = new java.util.Random(i);
        }

        long price(int items) {
            long h = items;
            for (int i = 0; i < 2000 * items; i++)
                h = h * 31 + i;
            return h & 0xffff;
        }

        void processInvoice(int n) throws InterruptedException {
            long cents = price(1 + rnd.nextInt(4));
            if (n % 25 == 0) {
                long t0 = System.nanoTime();
                synchronized (RATES) {
                    long w = System.nanoTime() - t0;
                    if (w >= thresholdNs) {
                        ratesWait += w;
                        ratesCount++;
                    }
                    cents *= RATES.rate(n % 7);
                }
            }
            long t0 = System.nanoTime();
            synchronized (LEDGER) {
                long w = System.nanoTime() - t0;
                if (w >= thresholdNs) {
                    ledgerWait += w;
                    ledgerCount++;
                }
                LEDGER.post(cents);
            }
            sink += cents;
        }

        @Override
        public void run() {
            try {
                for (int n = 1; running; n++) {
                    processInvoice(n);
                    Thread.sleep(1 + rnd.nextInt(3));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int workers = Integer.parseInt(args[0]);
        double seconds = Double.parseDouble(args[1]);
        thresholdNs = Long.parseLong(args[2]) * 1000L;
        Worker[] w = new Worker[workers];
        for (int i = 0; i < workers; i++)
            (w[i] = new Worker(i)).start();
        Thread.sleep((long) (seconds * 1000));
        running = false;
        long lw = 0, lc = 0, rw = 0, rc = 0;
        for (Worker x : w) {
            x.join();
            lw += x.ledgerWait;
            lc += x.ledgerCount;
            rw += x.ratesWait;
            rc += x.ratesCount;
        }
        System.out.println("ledger_wait_ns " + lw + " count " + lc);
        System.out.println("rates_wait_ns " + rw + " count " + rc);
        System.out.println("posted " + LEDGER.posted);
    }
}
