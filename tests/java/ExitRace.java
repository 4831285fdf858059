/*
 * ExitRace — THREADS threads burn CPU at a stack depth of about 40 frames and
 * allocate; "ready" is printed once they run; after MILLIS ms the main thread ends
 * the JVM with System.exit(CODE) or Runtime.getRuntime().halt(CODE) (MODE is exit
 * or halt), while every thread is still being sampled. The shutdown tests race the
 * agent's flushes, control requests and attach against that exit.
 *
 *   java ExitRace THREADS MILLIS MODE CODE
 */
public class ExitRace {
    static volatile long sink;

    static long deep(int depth, long x) {
        if (depth > 0)
            return deep(depth - 1, x) + 1;
        for (int i = 0; i < 200_000; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        byte[] b = new byte[512 + (int) (x & 511)];
        return x ^ b.length;
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long millis = Long.parseLong(args[1]);
        boolean halt = args[2].equals("halt");
        int code = Integer.parseInt(args[3]);
        for (int t = 0; t < threads; t++) {
            final long seed = t;
            Thread th = new Thread(() -> {
                long x = seed;
                while (true)
                    sink += deep(40, x++);
            }, "racer-" + t);
            th.setDaemon(true);
            th.start();
        }
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(millis);
        if (halt)
            Runtime.getRuntime().halt(code);
        System.exit(code);
    }
}
