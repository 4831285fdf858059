/*
 * tests/convert/JfrViews.java — the JDK's `jfr view` (JDK 21 and later), many
 * views of many files in one JVM.
 *
 *     java --add-exports jdk.jfr/jdk.jfr.internal.tool=ALL-UNNAMED \
 *          -Duser.timezone=UTC -cp jfrviews.jar JfrViews WIDTH VIEW FILE [VIEW FILE]...
 *
 * Each (VIEW, FILE) is run as `jfr view --width WIDTH VIEW FILE` runs it: by the
 * jfr tool's own View command (jdk.jfr.internal.tool.View, which the jfr
 * launcher calls; not exported, hence --add-exports and reflection, so that this
 * file compiles with any JDK). Its output is printed between the lines
 *
 *     ### view VIEW FILE
 *     ### exit STATUS
 *
 * STATUS 0, or 1 and the exception's message on the line before when the view
 * threw (the jfr tool's "jfr view: ..." and exit 1). tests/convert/test_jfr.py and
 * tests/agent/jfr_tests.sh read it; a JVM start for every view would cost them
 * seconds.
 */
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

public class JfrViews {
    public static void main(String[] args) throws Exception {
        if (args.length < 3 || args.length % 2 == 0) {
            System.err.println("usage: JfrViews WIDTH VIEW FILE [VIEW FILE]...");
            System.exit(2);
        }
        Class<?> view = Class.forName("jdk.jfr.internal.tool.View");
        Method execute = view.getMethod("execute", Deque.class);
        PrintStream out = System.out, err = System.err;
        for (int i = 1; i < args.length; i += 2) {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            PrintStream capture = new PrintStream(buf, true, StandardCharsets.UTF_8);
            String error = null;
            System.setOut(capture);
            System.setErr(capture);
            try {
                Deque<String> argv = new ArrayDeque<>(List.of("--width", args[0], args[i], args[i + 1]));
                execute.invoke(view.getDeclaredConstructor().newInstance(), argv);
            } catch (InvocationTargetException e) {
                error = "jfr view: " + e.getCause();
            } finally {
                capture.flush();
                System.setOut(out);
                System.setErr(err);
            }
            out.println("### view " + args[i] + " " + args[i + 1]);
            out.print(buf.toString(StandardCharsets.UTF_8));
            if (error != null)
                out.println(error);
            out.println("### exit " + (error == null ? 0 : 1));
        }
        out.flush();
    }
}
