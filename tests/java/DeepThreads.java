import java.util.concurrent.CountDownLatch;

/**
 * Many threads with deep stacks, and two deadlocked ones, for the limits of
 * `ctl threads` (tests/agent/lock_tests.sh threads_big, security_tests.sh
 * threads_readers); with N 0, a JVM that only waits (security_tests.sh).
 *
 *   java DeepThreads N DEPTH
 *
 * "dl-a" holds monitor A and blocks on B, which "dl-b" holds while it blocks on
 * A. Then N daemon threads "deep-0" .. "deep-(N-1)" each go DEPTH calls down
 * a method whose name and class's name are long (so that one thread's frames
 * take about 300 KB of a dump) and sleep there. When every one is in place, main prints
 * "threads T", T the live threads as Java itself counts them
 * (Thread.getAllStackTraces: the JVM's own threads too, not JVMTI agent
 * threads), then "ready", and sleeps until it is killed. Nothing burns CPU.
 * Its threads are started as Deadlocks starts its own (daemons).
 */
public class DeepThreads {
    static final Object monitorA = new Object(), monitorB = new Object();

    /** Long names, so that each frame of a dump is large and a few threads fill it. */
    static final class DescendsThroughAVeryLongChainOfCallsSoThatEachFrameOfTheThreadDump {
        static void takesRoomAndTheReplyReachesItsLimitWithOnlyAFewDozenThreadsInTheJvm(
                int n, CountDownLatch placed) throws InterruptedException {
            if (n > 0) {
                takesRoomAndTheReplyReachesItsLimitWithOnlyAFewDozenThreadsInTheJvm(n - 1, placed);
                return;
            }
            placed.countDown();
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    static void down(int n, CountDownLatch placed) throws InterruptedException {
        DescendsThroughAVeryLongChainOfCallsSoThatEachFrameOfTheThreadDump
            .takesRoomAndTheReplyReachesItsLimitWithOnlyAFewDozenThreadsInTheJvm(n, placed);
    }

    static void lockBoth(Object first, Object second, CountDownLatch both)
            throws InterruptedException {
        synchronized (first) {
            both.countDown();
            both.await();
            synchronized (second) {
                System.out.println("not deadlocked");
            }
        }
    }

    static void awaitState(Thread t, Thread.State s) throws InterruptedException {
        while (t.getState() != s)
            Thread.sleep(5);
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]), depth = Integer.parseInt(args[1]);
        CountDownLatch both = new CountDownLatch(2), placed = new CountDownLatch(n);
        Thread a = Deadlocks.start("dl-a", () -> lockBoth(monitorA, monitorB, both));
        Thread b = Deadlocks.start("dl-b", () -> lockBoth(monitorB, monitorA, both));
        Thread[] deep = new Thread[n];
        for (int i = 0; i < n; i++)
            deep[i] = Deadlocks.start("deep-" + i, () -> down(depth, placed));
        placed.await();
        awaitState(a, Thread.State.BLOCKED);
        awaitState(b, Thread.State.BLOCKED);
        for (Thread t : deep)
            awaitState(t, Thread.State.TIMED_WAITING);
        System.out.println("threads " + Thread.getAllStackTraces().size());
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
