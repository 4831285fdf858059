/*
 * EcjWork — a compiler: the Eclipse Java compiler (Debian's libecj-java) compiles a
 * generated project of CLASSES Java source files (generics, lambdas, streams, inner
 * classes, switches) to class files. Two threads, each with its own copy of the
 * project. The checks: the compiler reports success and nothing on stderr, every
 * class file is written, and the compiled program, loaded in a fresh class loader,
 * computes what the generator says it must.
 *
 *   java -cp bench_workloads.jar:/usr/share/java/ecj.jar EcjWork SECONDS | -n ITERATIONS
 */
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.eclipse.jdt.core.compiler.batch.BatchCompiler;

public class EcjWork {
    static final int CLASSES = 8, N = 2_000;
    static Path root;
    static long expected;

    /** Source of class gen.C<k>: compute(n) must return value(k, n). */
    static String source(int k) {
        return String.join("\n",
            "package gen;",
            "import java.util.*;",
            "import java.util.function.*;",
            "import java.util.stream.*;",
            "public class C" + k + " {",
            "    interface Shape { long area(); }",
            "    static final class Box implements Shape {",
            "        final int w, h;",
            "        Box(int w, int h) { this.w = w; this.h = h; }",
            "        public long area() { return (long) w * h; }",
            "    }",
            "    enum Kind { SMALL, MEDIUM, LARGE }",
            "    static Kind kind(long v) { return v < 30 ? Kind.SMALL : v < 70 ? Kind.MEDIUM : Kind.LARGE; }",
            "    static <T extends Comparable<T>> T max(List<T> xs) {",
            "        T m = xs.get(0);",
            "        for (T x : xs) if (x.compareTo(m) > 0) m = x;",
            "        return m;",
            "    }",
            "    public static long compute(int n) {",
            "        Map<Kind, List<Long>> byKind = new EnumMap<>(Kind.class);",
            "        Function<Integer, Shape> make = i -> new Box(i % 10 + 1, (i * " + k + ") % 10 + 1);",
            "        long sum = IntStream.range(0, n).mapToLong(i -> (long) i * " + (k + 1) + " % 97).sum();",
            "        for (int i = 0; i < n; i++) {",
            "            long a = make.apply(i).area();",
            "            byKind.computeIfAbsent(kind(a), x -> new ArrayList<>()).add(a);",
            "        }",
            "        for (Map.Entry<Kind, List<Long>> e : byKind.entrySet()) {",
            "            switch (e.getKey()) {",
            "            case SMALL: sum += e.getValue().size(); break;",
            "            case MEDIUM: sum += 2L * e.getValue().size(); break;",
            "            default: sum += max(e.getValue()); break;",
            "            }",
            "        }",
            "        String s = byKind.keySet().stream().map(Kind::name).sorted().collect(Collectors.joining(\",\"));",
            "        return sum + s.length();",
            "    }",
            "}", "");
    }

    /** What gen.C<k>.compute(n) returns, computed here. */
    static long value(int k, int n) {
        long sum = 0, small = 0, medium = 0, largeMax = -1;
        for (int i = 0; i < n; i++) {
            sum += (long) i * (k + 1) % 97;
            long a = (long) (i % 10 + 1) * ((i * k) % 10 + 1);
            if (a < 30) small++;
            else if (a < 70) medium++;
            else largeMax = Math.max(largeMax, a);
        }
        sum += small + 2 * medium + (largeMax >= 0 ? largeMax : 0);
        int names = (small > 0 ? 5 : 0) + (medium > 0 ? 6 : 0) + (largeMax >= 0 ? 5 : 0);   // SMALL, MEDIUM, LARGE
        int kinds = (small > 0 ? 1 : 0) + (medium > 0 ? 1 : 0) + (largeMax >= 0 ? 1 : 0);
        return sum + names + kinds - 1;
    }

    static String mainSource() {
        StringBuilder b = new StringBuilder("package gen;\npublic class Main {\n    public static long run(int n) {\n        long s = 0;\n");
        for (int k = 0; k < CLASSES; k++)
            b.append("        s += C").append(k).append(".compute(n);\n");
        return b.append("        return s;\n    }\n}\n").toString();
    }

    static void makeProject() throws IOException {
        root = Files.createTempDirectory("rpbench-ecj");
        Runtime.getRuntime().addShutdownHook(new Thread(EcjWork::removeProject));
        for (int part = 0; part < 2; part++) {
            Path src = root.resolve("src" + part).resolve("gen");
            Files.createDirectories(src);
            for (int k = 0; k < CLASSES; k++)
                Files.writeString(src.resolve("C" + k + ".java"), source(k));
            Files.writeString(src.resolve("Main.java"), mainSource());
        }
        for (int k = 0; k < CLASSES; k++)
            expected += value(k, N);
    }

    static void removeProject() {
        try (Stream<Path> s = Files.walk(root)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind is not worth failing for
        }
    }

    static long part(int part) throws Exception {
        Path out = root.resolve("out" + part);
        StringWriter msgs = new StringWriter(), errs = new StringWriter();
        boolean ok = BatchCompiler.compile(new String[] {"-8", "-nowarn", "-d", out.toString(),
            root.resolve("src" + part).toString()}, new PrintWriter(msgs), new PrintWriter(errs), null);
        Harness.check(ok && errs.toString().isEmpty(), "compilation failed: " + errs + msgs);
        long files;
        try (Stream<Path> s = Files.list(out.resolve("gen"))) {
            files = s.filter(p -> p.toString().endsWith(".class")).count();
        }
        Harness.check(files >= CLASSES + 1, "only " + files + " class files written");
        long got;
        try (URLClassLoader loader = new URLClassLoader(new URL[] {out.toUri().toURL()}, null)) {
            got = (Long) loader.loadClass("gen.Main").getMethod("run", int.class).invoke(null, N);
        }
        Harness.check(got == expected, "the compiled program computed " + got + ", not " + expected);
        return got + files;
    }

    public static void main(String[] args) throws Exception {
        makeProject();
        Harness.run("ecj", args, () -> Harness.parallel(2, EcjWork::part));
    }
}
