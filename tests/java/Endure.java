/*
 * Endure — busy threads for the durability tests (kill -9, disk full, retention).
 * THREADS threads named "endure-0", "endure-1", ... burn CPU until SECONDS have
 * passed (0: until killed). Each unit of work is a recursion of random depth
 * (1..DEPTH) through four methods r0..r3 picked pseudo-randomly, so that with a
 * large DEPTH almost every sample has a stack never seen before and the recording
 * grows fast (the retention test needs that); DEPTH 1 gives a few small stacks.
 * While the file PHASEFILE (optional) does not exist the leaf is phaseA(), once it
 * exists phaseB(): a test can then tell samples taken after an event it caused.
 * With a PHASEFILE, SECONDS is not a time of the clock: each thread runs phaseA()
 * until the file appears, then phaseB() until it has spent SECONDS of its own CPU
 * time there, so phase B gets the same work on a loaded machine as on a quiet one
 * (a deadline of the clock left it 174 ms of CPU under a load average of 25).
 * Prints "started" once every thread runs.
 *
 *   java Endure THREADS SECONDS DEPTH [PHASEFILE]
 */
import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class Endure {
    static volatile long sink;

    static long kernel(long x, int n) {
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    static long phaseA(long x) { return kernel(x, 20_000); }
    static long phaseB(long x) { return kernel(x, 20_000); }

    static long leaf(long x, boolean b) { return b ? phaseB(x) : phaseA(x); }

    static long r0(long x, int d, boolean b) { return d == 0 ? leaf(x, b) : pick(x, d - 1, b) + 1; }
    static long r1(long x, int d, boolean b) { return d == 0 ? leaf(x, b) : pick(x, d - 1, b) + 2; }
    static long r2(long x, int d, boolean b) { return d == 0 ? leaf(x, b) : pick(x, d - 1, b) + 3; }
    static long r3(long x, int d, boolean b) { return d == 0 ? leaf(x, b) : pick(x, d - 1, b) + 4; }

    static long pick(long x, int d, boolean b) {
        switch ((int)((x >>> (d % 61)) & 3)) {
        case 0: return r0(x * 31 + d, d, b);
        case 1: return r1(x * 37 + d, d, b);
        case 2: return r2(x * 41 + d, d, b);
        default: return r3(x * 43 + d, d, b);
        }
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        long seconds = Long.parseLong(args[1]);
        int depth = Integer.parseInt(args[2]);
        File phase = args.length > 3 ? new File(args[3]) : null;
        long end = seconds > 0 && phase == null ? System.nanoTime() + seconds * 1_000_000_000L
                                                : Long.MAX_VALUE;
        long phaseBCpu = seconds * 1_000_000_000L;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            final long seed = 0x9E3779B97F4A7C15L * (i + 1);
            ts[i] = new Thread(() -> {
                long x = seed, next = 0, cpuAtB = 0;
                boolean b = false;
                while (true) {
                    long now = System.nanoTime();
                    if (now >= end)
                        break;
                    if (phase != null && !b && now >= next) {
                        b = phase.exists();
                        next = now + 10_000_000L;
                        if (b)
                            cpuAtB = mx.getCurrentThreadCpuTime();
                    }
                    if (b && now >= next) {
                        if (mx.getCurrentThreadCpuTime() - cpuAtB >= phaseBCpu)
                            break;
                        next = now + 10_000_000L;
                    }
                    x = kernel(x, 7) | 1;
                    x = pick(x, 1 + (int)((x >>> 11) % depth), b);
                }
                sink += x;
            }, "endure-" + i);
            ts[i].start();
        }
        System.out.println("started");
        System.out.flush();
        for (Thread t : ts)
            t.join();
        System.out.println("Endure done " + (sink & 1));
    }
}
