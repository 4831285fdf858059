/*
 * WallStates — one thread in each state for the whole run (tests/agent/wall_tests.sh):
 *
 *   w-sleeping   Thread.sleep
 *   w-blocked    waiting to enter a monitor that w-holder keeps (synchronized)
 *   w-waiting    Object.wait, never notified
 *   w-parked     ReentrantLock.lock() on a lock that w-holder keeps (LockSupport.park)
 *   w-native     a blocking socket read that never gets data
 *   w-running    burning CPU
 *   w-holder     holds the monitor and the ReentrantLock, sleeping
 *
 *   java WallStates SECONDS
 *
 * Each thread prints "life NAME START_NS END_NS" (System.nanoTime, which is
 * CLOCK_MONOTONIC, the agent's clock): its life from its first instruction to its
 * last, so the test can compare the wall samples' weights with it.
 */
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

public class WallStates {
    static final Object MONITOR = new Object();
    static final Object WAITROOM = new Object();
    static final ReentrantLock LOCK = new ReentrantLock();
    static final CountDownLatch HELD = new CountDownLatch(1);
    static volatile boolean done;
    static volatile long sink;

    static synchronized void life(String name, long start) {
        System.out.println("life " + name + " " + start + " " + System.nanoTime());
    }

    interface Body { void run() throws Exception; }

    static Thread start(String name, Body body) {
        Thread t = new Thread(() -> {
            long start = System.nanoTime();
            try {
                body.run();
            } catch (Exception e) {
                // interrupted or closed: the end of the run
            }
            life(name, start);
        }, name);
        t.start();
        return t;
    }

    static long burn(long x) {
        for (int i = 0; i < 100_000; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
        Socket peer = server.accept();
        Thread holder = start("w-holder", () -> {
            LOCK.lock();
            try {
                synchronized (MONITOR) {
                    HELD.countDown();
                    Thread.sleep(3_600_000L);
                }
            } finally {
                LOCK.unlock();
            }
        });
        HELD.await();
        Thread[] ts = {
            start("w-sleeping", () -> Thread.sleep(3_600_000L)),
            start("w-blocked", () -> { synchronized (MONITOR) { sink++; } }),
            start("w-waiting", () -> {
                synchronized (WAITROOM) {
                    while (!done)
                        WAITROOM.wait();
                }
            }),
            start("w-parked", () -> {
                LOCK.lockInterruptibly();
                LOCK.unlock();
            }),
            start("w-native", () -> {
                InputStream in = client.getInputStream();
                in.read();
            }),
            start("w-running", () -> {
                long x = 1;
                while (!done)
                    x = burn(x);
                sink = x;
            }),
        };
        Thread.sleep(seconds * 1000);
        done = true;
        for (Thread t : ts)
            if (!t.getName().equals("w-blocked") && !t.getName().equals("w-native"))
                t.interrupt();
        client.close();               // ends w-native's read
        peer.close();
        server.close();
        holder.interrupt();           // lets w-blocked in
        for (Thread t : ts)
            t.join();
        holder.join();
        System.out.println("WallStates done");
    }
}
