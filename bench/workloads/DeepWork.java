/*
 * DeepWork — deep stacks: two threads recurse DEPTH (250) calls down a cycle of four
 * methods, then spend their CPU at the bottom, in one of two leaf loops, and in a
 * smaller share on the way back up: nearly every sample is a stack of 250+ frames.
 * The check: every descent returns what the same arithmetic computes without
 * recursion, and once, at set-up, the stack at the bottom really is DEPTH deep.
 *
 *   java DeepWork SECONDS | -n ITERATIONS
 */
public class DeepWork {
    static final int DEPTH = 250, DESCENTS = 15000, LEAF = 3000;

    static long mix(long x) {
        return (x ^ (x >>> 31)) * 0x9E3779B97F4A7C15L;
    }

    static long leafEven(long x) {
        for (int i = 0; i < LEAF; i++)
            x = mix(x + i);
        return x;
    }

    static long leafOdd(long x) {
        for (int i = 0; i < LEAF; i++)
            x = mix(x ^ i);
        return x;
    }

    static long bottom(long x) {
        return (x & 1) == 0 ? leafEven(x) : leafOdd(x);
    }

    /** Back up one level: a little work per frame, so the middle of the stack shows too. */
    static long up(long r, int d) {
        for (int i = 0; i < 8; i++)
            r = mix(r + d);
        return r;
    }

    static long a(int d, long x) { return d == 0 ? bottom(x) : up(b(d - 1, x * 3 + 1), d); }
    static long b(int d, long x) { return d == 0 ? bottom(x) : up(c(d - 1, x * 5 + 2), d); }
    static long c(int d, long x) { return d == 0 ? bottom(x) : up(e(d - 1, x * 7 + 3), d); }
    static long e(int d, long x) { return d == 0 ? bottom(x) : up(a(d - 1, x * 11 + 4), d); }

    /** What a(DEPTH, x) returns, without recursing. */
    static long flat(long x) {
        long[] mul = {3, 5, 7, 11};
        for (int d = DEPTH, k = 0; d > 0; d--, k = (k + 1) % 4)
            x = x * mul[k] + k + 1;
        long r = bottom(x);
        for (int d = 1; d <= DEPTH; d++)
            r = up(r, d);
        return r;
    }

    static long part(int part) {
        long sum = 0;
        for (int i = part; i < DESCENTS; i += 2) {
            long r = a(DEPTH, i);
            if (i % 100 == part) {
                long want = flat(i);
                Harness.check(r == want, "descent " + i + " returned " + r + ", not " + want);
            }
            sum += r;
        }
        return sum;
    }

    static int depthSeen;

    static long probe(int d) {
        if (d == 0) {
            depthSeen = new Throwable().getStackTrace().length;
            return 0;
        }
        return probe(d - 1) + 1;
    }

    public static void main(String[] args) {
        probe(DEPTH);
        Harness.check(depthSeen > DEPTH, "stack only " + depthSeen + " deep");
        Harness.run("deep", args, () -> Harness.parallel(2, DeepWork::part));
    }
}
