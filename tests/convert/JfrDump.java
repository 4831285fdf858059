/*
 * tests/convert/JfrDump.java — a .jfr file as the JDK's own parser reads it.
 *
 *     java JfrDump.java FILE...
 *
 * Reads each FILE with jdk.jfr.consumer.RecordingFile (the API behind `jfr print`,
 * IntelliJ's profiler and most JFR tooling) and prints JSON lines: first
 * {"file": FILE, "types": {name: [field, ...]}} with the event types its metadata
 * declares, then one line per event, in file order:
 *
 *   {"type": NAME, "start": EPOCH_NS, "duration": NS, "fields": {NAME: VALUE, ...}}
 *
 * over every field of the event (startTime and duration among them), generically:
 * a timestamp field as epoch nanoseconds, a timespan as nanoseconds, a thread as
 * {"javaName", "osName", "javaThreadId", "osThreadId"}, a class as its name
 * (RecordedClass.getName(): java.lang.String, [B), a stack trace as
 * {"truncated", "frames": [{"class", "method", "descriptor", "line", "bci",
 * "type"}, ...]} leaf first, any other object as an object of its fields, an
 * array as a list, null as null. tests/convert/test_jfr.py compares what it
 * prints with rp_testwriter's manifests. Any exception (a file the parser
 * refuses) ends the program with its message and exit status 1.
 * JmcDump.java prints the same shape from JDK Mission Control's parser.
 */
import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import jdk.jfr.EventType;
import jdk.jfr.ValueDescriptor;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedObject;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

public class JfrDump {
    static final String TIMESTAMP = "jdk.jfr.Timestamp";
    static final String TIMESPAN = "jdk.jfr.Timespan";

    public static void main(String[] args) {
        if (args.length == 0) {
            System.err.println("usage: java JfrDump.java FILE...");
            System.exit(2);
        }
        PrintWriter out = new PrintWriter(new BufferedWriter(
            new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16));
        try {
            for (String file : args)
                dump(file, out);
        } catch (Throwable e) {
            out.flush();
            System.err.println("JfrDump: " + e);
            e.printStackTrace();
            System.exit(1);
        }
        out.flush();
        if (out.checkError()) {
            System.err.println("JfrDump: cannot write the output");
            System.exit(1);
        }
    }

    static void dump(String file, PrintWriter out) throws Exception {
        try (RecordingFile rf = new RecordingFile(Path.of(file))) {
            StringBuilder b = new StringBuilder("{\"file\": ");
            str(b, file);
            b.append(", \"types\": {");
            List<EventType> types = rf.readEventTypes();
            for (int i = 0; i < types.size(); i++) {
                if (i > 0)
                    b.append(", ");
                str(b, types.get(i).getName());
                b.append(": [");
                List<ValueDescriptor> fields = types.get(i).getFields();
                for (int k = 0; k < fields.size(); k++) {
                    if (k > 0)
                        b.append(", ");
                    str(b, fields.get(k).getName());
                }
                b.append(']');
            }
            out.println(b.append("}}"));
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                b.setLength(0);
                b.append("{\"type\": ");
                str(b, e.getEventType().getName());
                b.append(", \"start\": ").append(epochNanos(e.getStartTime()));
                b.append(", \"duration\": ");
                nanos(b, e.getDuration());
                b.append(", \"fields\": ");
                fields(b, e);
                out.println(b.append('}'));
            }
        }
    }

    /* The fields of o as a JSON object, each value by its descriptor. */
    static void fields(StringBuilder b, RecordedObject o) {
        b.append('{');
        boolean first = true;
        for (ValueDescriptor d : o.getFields()) {
            if (!first)
                b.append(", ");
            first = false;
            str(b, d.getName());
            b.append(": ");
            if (o.getValue(d.getName()) == null || d.isArray())
                value(b, o.getValue(d.getName()));
            else if (annotated(d, TIMESTAMP))
                b.append(epochNanos(o.getInstant(d.getName())));
            else if (annotated(d, TIMESPAN))
                nanos(b, o.getDuration(d.getName()));
            else
                value(b, o.getValue(d.getName()));
        }
        b.append('}');
    }

    /* Whether d has the annotation: not its content type, which is the first
     * content-type annotation (the JDK writes @Unsigned before @Timestamp). */
    static boolean annotated(ValueDescriptor d, String annotation) {
        for (jdk.jfr.AnnotationElement a : d.getAnnotationElements())
            if (a.getTypeName().equals(annotation))
                return true;
        return false;
    }

    static void value(StringBuilder b, Object v) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof RecordedThread) {
            RecordedThread t = (RecordedThread) v;
            b.append("{\"javaName\": ");
            str(b, t.getJavaName());
            b.append(", \"osName\": ");
            str(b, t.getOSName());
            b.append(", \"javaThreadId\": ").append(t.getJavaThreadId());
            b.append(", \"osThreadId\": ").append(t.getOSThreadId()).append('}');
        } else if (v instanceof RecordedClass) {
            str(b, ((RecordedClass) v).getName());
        } else if (v instanceof RecordedStackTrace) {
            RecordedStackTrace s = (RecordedStackTrace) v;
            b.append("{\"truncated\": ").append(s.isTruncated()).append(", \"frames\": [");
            List<RecordedFrame> frames = s.getFrames();
            for (int i = 0; i < frames.size(); i++) {
                if (i > 0)
                    b.append(", ");
                frame(b, frames.get(i));
            }
            b.append("]}");
        } else if (v instanceof RecordedObject) {
            fields(b, (RecordedObject) v);
        } else if (v instanceof Object[]) {
            b.append('[');
            Object[] a = (Object[]) v;
            for (int i = 0; i < a.length; i++) {
                if (i > 0)
                    b.append(", ");
                value(b, a[i]);
            }
            b.append(']');
        } else if (v instanceof List) {
            value(b, ((List<?>) v).toArray());
        } else if (v instanceof String || v instanceof Character) {
            str(b, v.toString());
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isFinite(d))
                b.append(d);
            else
                str(b, Double.toString(d));
        } else if (v instanceof Number || v instanceof Boolean) {
            b.append(v);
        } else {
            str(b, v.toString());
        }
    }

    static void frame(StringBuilder b, RecordedFrame f) {
        b.append("{\"class\": ");
        RecordedClass k = f.getMethod() == null ? null : f.getMethod().getType();
        str(b, k == null ? null : k.getName());
        b.append(", \"method\": ");
        str(b, f.getMethod() == null ? null : f.getMethod().getName());
        b.append(", \"descriptor\": ");
        str(b, f.getMethod() == null ? null : f.getMethod().getDescriptor());
        b.append(", \"line\": ").append(f.getLineNumber());
        b.append(", \"bci\": ").append(f.getBytecodeIndex());
        b.append(", \"type\": ");
        str(b, f.getType());
        b.append('}');
    }

    static String epochNanos(Instant t) {
        try {
            long s = Math.multiplyExact(t.getEpochSecond(), 1_000_000_000L);
            return Long.toString(Math.addExact(s, t.getNano()));
        } catch (ArithmeticException e) {
            return "\"" + t + "\"";
        }
    }

    static void nanos(StringBuilder b, Duration d) {
        try {
            b.append(d.toNanos());
        } catch (ArithmeticException e) {   /* Long.MIN/MAX_VALUE ticks: "forever" */
            str(b, d.toString());
        }
    }

    static void str(StringBuilder b, String s) {
        if (s == null) {
            b.append("null");
            return;
        }
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\')
                b.append('\\').append(c);
            else if (c < 0x20 || (c >= 0xd800 && c <= 0xdfff))
                b.append(String.format("\\u%04x", (int) c));
            else
                b.append(c);
        }
        b.append('"');
    }
}
