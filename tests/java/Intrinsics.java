/*
 * Intrinsics — CPU spent in JDK code that HotSpot runs as intrinsics and stubs,
 * where a profiler that trusts AsyncGetCallTrace alone loses the Java stack:
 * libm (Math.sin/log/exp/pow: StubRoutines' libmSin and friends), a message
 * digest (SHA-256: sha256_implCompressMB), CRC32 (updateBytesCRC32), Deflater
 * (zlib, through JNI), array fill and copy (the fill and arraycopy stubs),
 * BigInteger (multiplyToLen), String intrinsics (indexOf, equals, compareTo,
 * hashCode, Latin-1 inflation), and a JNI call into a C library of our own
 * (tests/agent/intrinsics_jni.c).
 *
 * The truth is measured, not assumed: each method times its own calls with the
 * thread's CPU clock (ThreadMXBean.getCurrentThreadCpuTime), summed over the
 * worker threads. Before measuring, each method is calibrated (twice: the JIT
 * has compiled it by the second pass) so one call takes about the same CPU, so
 * every share is near 1/8 and a profile of a few thousand samples has a small
 * sampling error. The methods are called in the same order every round;
 * nothing is randomised.
 *
 *   java -Drp.jni=/path/librp_intrinsics.so Intrinsics CPU_SECONDS THREADS
 *
 * Each worker runs until it has used CPU_SECONDS of its own CPU after the
 * calibration, so a profile of it has the same number of samples however busy
 * the machine is.
 * prints "truth METHOD NS" for each method (the sum over threads), then
 * "Intrinsics done CHECKSUM". Worker threads are named "mix-0", "mix-1", ...
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.math.BigInteger;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.Deflater;

public class Intrinsics {
    static final String[] NAMES = {"libm", "digest", "crc", "deflate", "arrays", "bigint",
                                   "strings", "jni"};
    /* CPU per call after calibration: about 2 ms, a little different for each
     * method, so that a round (the eight calls) is not a multiple of the
     * kernel's 4 ms tick, on which CPU-time timers fire. A round that is would
     * alias with the samples whatever the profiler (docs/engines.md, "Periodic
     * work"); that limit has a test of its own. */
    static long target(int k) { return 1_800_000 + 53_000L * k; }
    static native long cwork(int n);

    static final class Work {
        final byte[] buf = new byte[64 * 1024];
        final byte[] out = new byte[80 * 1024];
        final int[] ia = new int[64 * 1024], ib = new int[64 * 1024];
        final MessageDigest md;
        final Deflater deflater = new Deflater(6);
        final BigInteger big = BigInteger.ONE.shiftLeft(4000).subtract(BigInteger.valueOf(98765));
        final String text, needle;
        long sink;

        Work() throws Exception {
            md = MessageDigest.getInstance("SHA-256");
            for (int i = 0; i < buf.length; i++)
                buf[i] = (byte) (i * 31 + (i >> 7));
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 20000; i++)
                sb.append((char) ('a' + (i * 7) % 26));
            text = sb.toString();
            needle = text.substring(15000, 15040) + "#";
        }

        double libm(int n) {
            double s = 0;
            for (int i = 0; i < n; i++)
                s += Math.sin(i * 0.001) + Math.log(i + 1.0) + Math.exp(-i * 1e-6) +
                     Math.pow(1.0001, i & 1023);
            return s;
        }

        long digest(int n) {
            long s = 0;
            for (int i = 0; i < n; i++) {
                md.update(buf, 0, 16384);
                s += md.digest()[0];
            }
            return s;
        }

        long crc(int n) {
            CRC32 c = new CRC32();
            for (int i = 0; i < n; i++)
                c.update(buf, 0, buf.length);
            return c.getValue();
        }

        long deflate(int n) {
            long s = 0;
            for (int i = 0; i < n; i++) {
                deflater.reset();
                deflater.setInput(buf, 0, 8192);
                deflater.finish();
                s += deflater.deflate(out);
            }
            return s;
        }

        long arrays(int n) {
            long s = 0;
            for (int i = 0; i < n; i++) {
                Arrays.fill(ia, i);
                System.arraycopy(ia, 0, ib, 1, ia.length - 1);
                s += ib[i & 1023];
            }
            return s;
        }

        long bigint(int n) {
            long s = 0;
            for (int i = 0; i < n; i++)
                s += big.multiply(big.add(BigInteger.valueOf(i))).bitLength();
            return s;
        }

        long strings(int n) {
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += text.indexOf(needle);
                s += text.substring(i & 1023).hashCode();
                s += text.compareTo(needle) + (text.equals(needle) ? 1 : 0);
                s += new String(buf, 0, 4096, java.nio.charset.StandardCharsets.ISO_8859_1)
                         .toCharArray().length;
            }
            return s;
        }

        long jni(int n) {
            return cwork(n);
        }

        long call(int k, int n) {
            switch (k) {
            case 0: return (long) libm(n);
            case 1: return digest(n);
            case 2: return crc(n);
            case 3: return deflate(n);
            case 4: return arrays(n);
            case 5: return bigint(n);
            case 6: return strings(n);
            default: return jni(n);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        System.load(System.getProperty("rp.jni"));
        double seconds = Double.parseDouble(args[0]);
        int threads = Integer.parseInt(args[1]);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long[][] spent = new long[threads][NAMES.length];
        long[] sums = new long[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int ti = t;
            ts[t] = new Thread(() -> {
                try {
                    Work w = new Work();
                    /* Calibrate: grow each method's count until a call takes about
                     * its target(k) of this thread's CPU (warming the JIT up too). */
                    int[] count = new int[NAMES.length];
                    Arrays.fill(count, 1);
                    for (int pass = 0; pass < 2; pass++) {
                        for (int k = 0; k < NAMES.length; k++) {
                            int n = count[k];
                            for (int rep = 0; rep < 20; rep++) {
                                long c0 = mx.getCurrentThreadCpuTime();
                                w.sink += w.call(k, n);
                                long took = Math.max(1, mx.getCurrentThreadCpuTime() - c0);
                                n = (int) Math.max(1, Math.min(1 << 24,
                                    (long) n * target(k) / took));
                            }
                            count[k] = n;
                        }
                    }
                    long end = mx.getCurrentThreadCpuTime() + (long) (seconds * 1e9);
                    while (mx.getCurrentThreadCpuTime() < end) {
                        for (int k = 0; k < NAMES.length; k++) {
                            long c0 = mx.getCurrentThreadCpuTime();
                            w.sink += w.call(k, count[k]);
                            spent[ti][k] += mx.getCurrentThreadCpuTime() - c0;
                        }
                    }
                    sums[ti] = w.sink;
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, "mix-" + t);
            ts[t].start();
        }
        long check = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            check += sums[t];
        }
        for (int k = 0; k < NAMES.length; k++) {
            long ns = 0;
            for (int t = 0; t < threads; t++)
                ns += spent[t][k];
            System.out.println("truth " + NAMES[k] + " " + ns);
        }
        System.out.println("Intrinsics done " + (check & 0xff));
    }
}
