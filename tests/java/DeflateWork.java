/*
 * DeflateWork — thread "deflater" compresses random data with java.util.zip.Deflater,
 * so nearly all its CPU is in libz, called from Deflater's native methods.
 *
 *   java DeflateWork SECONDS
 */
import java.util.Random;
import java.util.zip.Deflater;

public class DeflateWork {
    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        long[] total = new long[1];
        Thread t = new Thread(() -> {
            byte[] in = new byte[1 << 20];
            new Random(42).nextBytes(in);
            byte[] out = new byte[1 << 21];
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            while (System.nanoTime() < end) {
                Deflater d = new Deflater(9);
                d.setInput(in);
                d.finish();
                while (!d.finished())
                    total[0] += d.deflate(out);
                d.end();
            }
        }, "deflater");
        t.start();
        t.join();
        System.out.println("DeflateWork done " + total[0]);
    }
}
