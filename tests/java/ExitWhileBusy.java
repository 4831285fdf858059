/*
 * ExitWhileBusy — four threads burn CPU; after MILLIS one of them calls
 * System.exit(0) while the others are still running (and being sampled).
 *
 *   java ExitWhileBusy MILLIS
 */
public class ExitWhileBusy {
    static volatile long sink;

    public static void main(String[] args) {
        long millis = Long.parseLong(args[0]);
        long start = System.nanoTime();
        for (int i = 0; i < 4; i++) {
            final int id = i;
            new Thread(() -> {
                long x = id;
                while (true) {
                    for (int k = 0; k < 100_000; k++)
                        x = x * 6364136223846793005L + 1;
                    sink += x;
                    if (id == 0 && System.nanoTime() - start > millis * 1_000_000L)
                        System.exit(0);
                }
            }, "spinner-" + i).start();
        }
    }
}
