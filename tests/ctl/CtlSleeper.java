/* tests/ctl/CtlSleeper.java — a JVM for `ringprof attach` to attach to: it prints
 * "ready" once running, then sleeps for the number of seconds in args[0]. */
public class CtlSleeper {
    public static void main(String[] args) throws InterruptedException {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 60;
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(seconds * 1000);
    }
}
