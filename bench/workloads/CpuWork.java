/*
 * CpuWork — CPU-bound: two threads count primes by trial division and render a
 * Mandelbrot set, no allocation to speak of. The prime count must be pi(N), a known
 * constant; the Mandelbrot checksum must equal the first iteration's (Harness).
 *
 *   java CpuWork SECONDS | -n ITERATIONS
 */
public class CpuWork {
    static final int N = 1_000_000, PI_N = 78_498;   // pi(1 000 000)
    static final int BLOCK = 1000, SIZE = 340, MAXIT = 500;

    static boolean isPrime(int n) {
        if (n < 2)
            return false;
        for (int d = 2; d * d <= n; d++)
            if (n % d == 0)
                return false;
        return true;
    }

    /** Primes in the blocks of BLOCK numbers whose index is PART mod PARTS. */
    static int countPrimes(int part, int parts) {
        int c = 0;
        for (int b = part * BLOCK; b < N; b += parts * BLOCK)
            for (int n = b; n < b + BLOCK && n < N; n++)
                if (isPrime(n))
                    c++;
        return c;
    }

    static int escape(double cr, double ci) {
        double zr = 0, zi = 0;
        int i = 0;
        while (i < MAXIT && zr * zr + zi * zi <= 4) {
            double t = zr * zr - zi * zi + cr;
            zi = 2 * zr * zi + ci;
            zr = t;
            i++;
        }
        return i;
    }

    /** The rows of the picture whose index is PART mod PARTS: a sum of escape counts. */
    static long mandelbrot(int part, int parts) {
        long sum = 0;
        for (int y = part; y < SIZE; y += parts)
            for (int x = 0; x < SIZE; x++)
                sum += escape(-2.0 + 2.6 * x / SIZE, -1.3 + 2.6 * y / SIZE) * (long) (x + 1);
        return sum;
    }

    public static void main(String[] args) {
        Harness.run("cpu", args, () -> {
            long primes = Harness.parallel(2, p -> countPrimes(p, 2));
            Harness.check(primes == PI_N, "counted " + primes + " primes below " + N + ", not " + PI_N);
            return Harness.parallel(2, p -> mandelbrot(p, 2)) * 31 + primes;
        });
    }
}
