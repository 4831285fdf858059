/*
 * JniWork — JNI- and native-heavy: two threads spend their time in native code of
 * our own (bench/workloads/jni_work.c: a byte-mixing loop over a pinned Java array,
 * and a loop of JNI up-calls into Java) and in the JDK's zlib (Deflater, Inflater,
 * CRC32). The checks: the native mix equals the same arithmetic in Java (on a
 * prefix), every up-call chain equals its Java-only value, and inflate(deflate(x)) is
 * x again.
 *
 *   java -Drpbench.jni=/path/to/librpbench_jni.so JniWork SECONDS | -n ITERATIONS
 */
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

public class JniWork {
    static final int DATA = 512 * 1024, ROUNDS = 40, UPCALLS = 400_000, PREFIX = 4096;

    static native long mix(byte[] data, int rounds);

    static native long upcall(int n, long x);

    /** The Java side of upcall(): a step of a 64-bit LCG. */
    static long step(long x) {
        return x * 6364136223846793005L + 1442695040888963407L;
    }

    /** mix() in Java, to check the native one against. */
    static long mixJava(byte[] p, int len, int rounds) {
        long h = 0xcbf29ce484222325L;
        for (int r = 0; r < rounds; r++) {
            h += r;
            for (int i = 0; i < len; i++)
                h = (h ^ (p[i] & 0xff)) * 0x100000001b3L;
        }
        return h;
    }

    /** Text-like bytes that deflate about 3:1, different for each part. */
    static byte[] data(int part) {
        byte[] d = new byte[DATA];
        long x = part + 1;
        for (int i = 0; i < DATA; i++) {
            x = step(x);
            d[i] = (byte) ('a' + (int) ((x >>> 40) % 13));
        }
        return d;
    }

    static final byte[][] inputs = {data(0), data(1)};

    static long zip(byte[] in) throws Exception {
        Deflater def = new Deflater(6);
        def.setInput(in);
        def.finish();
        byte[] packed = new byte[DATA + 1024];
        int plen = 0;
        while (!def.finished())
            plen += def.deflate(packed, plen, packed.length - plen);
        def.end();
        Inflater inf = new Inflater();
        inf.setInput(packed, 0, plen);
        byte[] back = new byte[DATA];
        int blen = 0;
        while (!inf.finished() && blen < DATA)
            blen += inf.inflate(back, blen, DATA - blen);
        inf.end();
        Harness.check(blen == DATA && Arrays.equals(in, back), "inflate(deflate(x)) != x");
        CRC32 crc = new CRC32();
        crc.update(back);
        return crc.getValue() + plen;
    }

    static long part(int part) throws Exception {
        byte[] in = inputs[part];
        long h = mix(in, ROUNDS);
        byte[] prefix = Arrays.copyOf(in, PREFIX);
        Harness.check(mix(prefix, 2) == mixJava(prefix, PREFIX, 2), "native mix differs from Java's");
        long x = part, want = part;
        for (int i = 0; i < UPCALLS; i++)
            want = step(want);
        x = upcall(UPCALLS, x);
        Harness.check(x == want, "up-call chain returned " + x + ", not " + want);
        return h ^ x ^ zip(in);
    }

    public static void main(String[] args) {
        String lib = System.getProperty("rpbench.jni");
        if (lib != null)
            System.load(lib);
        else
            System.loadLibrary("rpbench_jni");
        Harness.run("jni", args, () -> Harness.parallel(2, JniWork::part));
    }
}
