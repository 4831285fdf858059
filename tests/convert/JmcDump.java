/*
 * tests/convert/JmcDump.java — a .jfr file as JDK Mission Control's parser reads it.
 *
 *     java -cp JMC_JARS JmcDump.java FILE...
 *
 * JMC_JARS: Maven Central's org.openjdk.jmc flightrecorder and common, and what
 * common depends on (tests/fetch-maven puts them in /var/cache/ringprof/jmc).
 * Loads each FILE with JfrLoaderToolkit.loadEvents, the parser JDK Mission
 * Control opens recordings with, and prints the same JSON lines as JfrDump.java:
 * first {"file": FILE}, then one line per event
 *
 *   {"type": ID, "start": EPOCH_NS, "duration": NS, "fields": {ID: VALUE, ...}}
 *
 * with every attribute JMC gives the event's type (its accessor keys: the
 * event's fields and those JMC adds, such as endTime), generically: a timestamp
 * as epoch nanoseconds, a timespan as nanoseconds, any other quantity as its
 * number in the unit JMC reads it in (bytes, a fraction for a percentage), a
 * thread as {"javaName", "javaThreadId"} (JMC's IMCThread has no OS name or id),
 * a class as its full name (JMC's: java.lang.String, byte[]), a stack trace as
 * {"truncated", "frames": [{"class", "method", "descriptor", "line", "bci",
 * "type"}, ...]} leaf first. Events come by type, in JMC's order. Any exception
 * (a file the parser refuses) ends the program with its message and status 1.
 */
import java.io.BufferedWriter;
import java.io.File;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.openjdk.jmc.common.IMCClassLoader;
import org.openjdk.jmc.common.IMCFrame;
import org.openjdk.jmc.common.IMCMethod;
import org.openjdk.jmc.common.IMCModule;
import org.openjdk.jmc.common.IMCOldObject;
import org.openjdk.jmc.common.IMCOldObjectGcRoot;
import org.openjdk.jmc.common.IMCPackage;
import org.openjdk.jmc.common.IMCStackTrace;
import org.openjdk.jmc.common.IMCThread;
import org.openjdk.jmc.common.IMCThreadGroup;
import org.openjdk.jmc.common.IMCType;
import org.openjdk.jmc.common.item.IAccessorKey;
import org.openjdk.jmc.common.item.IItem;
import org.openjdk.jmc.common.item.IItemCollection;
import org.openjdk.jmc.common.item.IItemIterable;
import org.openjdk.jmc.common.item.IMemberAccessor;
import org.openjdk.jmc.common.item.IType;
import org.openjdk.jmc.common.unit.IQuantity;
import org.openjdk.jmc.common.unit.UnitLookup;
import org.openjdk.jmc.flightrecorder.JfrLoaderToolkit;

public class JmcDump {
    public static void main(String[] args) {
        if (args.length == 0) {
            System.err.println("usage: java -cp JMC_JARS JmcDump.java FILE...");
            System.exit(2);
        }
        PrintWriter out = new PrintWriter(new BufferedWriter(
            new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16));
        try {
            for (String file : args)
                dump(file, out);
        } catch (Throwable e) {
            out.flush();
            System.err.println("JmcDump: " + e);
            e.printStackTrace();
            System.exit(1);
        }
        out.flush();
        if (out.checkError()) {
            System.err.println("JmcDump: cannot write the output");
            System.exit(1);
        }
    }

    static void dump(String file, PrintWriter out) throws Exception {
        IItemCollection events = JfrLoaderToolkit.loadEvents(new File(file));
        StringBuilder b = new StringBuilder("{\"file\": ");
        str(b, file);
        out.println(b.append('}'));
        for (IItemIterable items : events) {
            IType<IItem> type = items.getType();
            List<IAccessorKey<?>> keys = new ArrayList<>(type.getAccessorKeys().keySet());
            List<IMemberAccessor<?, IItem>> accessors = new ArrayList<>();
            for (IAccessorKey<?> k : keys)
                accessors.add(type.getAccessor(k));
            for (IItem item : items) {
                b.setLength(0);
                b.append("{\"type\": ");
                str(b, type.getIdentifier());
                b.append(", \"start\": ");
                value(b, member(keys, accessors, item, "startTime"));
                b.append(", \"duration\": ");
                value(b, member(keys, accessors, item, "duration"));
                b.append(", \"fields\": {");
                for (int i = 0; i < keys.size(); i++) {
                    if (i > 0)
                        b.append(", ");
                    str(b, keys.get(i).getIdentifier());
                    b.append(": ");
                    value(b, accessors.get(i) == null ? null : accessors.get(i).getMember(item));
                }
                out.println(b.append("}}"));
            }
        }
    }

    static Object member(List<IAccessorKey<?>> keys, List<IMemberAccessor<?, IItem>> accessors,
                         IItem item, String id) {
        for (int i = 0; i < keys.size(); i++)
            if (keys.get(i).getIdentifier().equals(id) && accessors.get(i) != null)
                return accessors.get(i).getMember(item);
        return null;
    }

    static void value(StringBuilder b, Object v) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof IQuantity) {
            quantity(b, (IQuantity) v);
        } else if (v instanceof IMCThread) {
            IMCThread t = (IMCThread) v;
            b.append("{\"javaName\": ");
            str(b, t.getThreadName());
            b.append(", \"javaThreadId\": ").append(t.getThreadId()).append('}');
        } else if (v instanceof IMCType) {
            str(b, ((IMCType) v).getFullName());
        } else if (v instanceof IMCStackTrace) {
            IMCStackTrace s = (IMCStackTrace) v;
            b.append("{\"truncated\": ").append(s.getTruncationState().isTruncated());
            b.append(", \"frames\": [");
            List<? extends IMCFrame> frames = s.getFrames();
            for (int i = 0; i < frames.size(); i++) {
                if (i > 0)
                    b.append(", ");
                frame(b, frames.get(i));
            }
            b.append("]}");
        } else if (v instanceof IMCMethod) {
            IMCMethod m = (IMCMethod) v;
            b.append("{\"class\": ");
            str(b, m.getType() == null ? null : m.getType().getFullName());
            b.append(", \"method\": ");
            str(b, m.getMethodName());
            b.append(", \"descriptor\": ");
            str(b, m.getFormalDescriptor());
            b.append('}');
        } else if (v instanceof IMCOldObject) {
            IMCOldObject o = (IMCOldObject) v;
            b.append("{\"address\": ");
            value(b, o.getAddress());
            b.append(", \"type\": ");
            value(b, o.getType());
            b.append(", \"description\": ");
            str(b, o.getDescription());
            b.append('}');
        } else if (v instanceof IMCOldObjectGcRoot) {
            IMCOldObjectGcRoot r = (IMCOldObjectGcRoot) v;
            b.append("{\"description\": ");
            str(b, r.getDescription());
            b.append(", \"system\": ");
            str(b, r.getSystem());
            b.append(", \"type\": ");
            str(b, r.getType());
            b.append('}');
        } else if (v instanceof IMCClassLoader) {
            IMCClassLoader l = (IMCClassLoader) v;
            b.append("{\"name\": ");
            str(b, l.getName());
            b.append(", \"type\": ");
            value(b, l.getType());
            b.append('}');
        } else if (v instanceof IMCThreadGroup) {
            str(b, ((IMCThreadGroup) v).getName());
        } else if (v instanceof IMCPackage) {
            str(b, ((IMCPackage) v).getName());
        } else if (v instanceof IMCModule) {
            str(b, ((IMCModule) v).getName());
        } else if (v instanceof Object[]) {
            list(b, List.of((Object[]) v));
        } else if (v instanceof Collection) {
            list(b, (Collection<?>) v);
        } else if (v instanceof Map) {
            b.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first)
                    b.append(", ");
                first = false;
                str(b, String.valueOf(e.getKey()));
                b.append(": ");
                value(b, e.getValue());
            }
            b.append('}');
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

    /* A quantity as a number in the unit that keeps it exact where JFR is exact. */
    static void quantity(StringBuilder b, IQuantity q) {
        if (q.getType() == UnitLookup.TIMESTAMP)
            b.append(q.clampedLongValueIn(UnitLookup.EPOCH_NS));
        else if (q.getType() == UnitLookup.TIMESPAN)
            b.append(q.clampedLongValueIn(UnitLookup.NANOSECOND));
        else if (q.getType() == UnitLookup.MEMORY)
            b.append(q.clampedLongValueIn(UnitLookup.BYTE));
        else if (q.getType() == UnitLookup.PERCENTAGE)
            value(b, q.doubleValueIn(UnitLookup.PERCENT_UNITY));
        else if (q.getType() == UnitLookup.NUMBER || q.getType() == UnitLookup.ADDRESS)
            value(b, q.numberValue());
        else
            str(b, q.persistableString());
    }

    static void list(StringBuilder b, Collection<?> c) {
        b.append('[');
        boolean first = true;
        for (Object o : c) {
            if (!first)
                b.append(", ");
            first = false;
            value(b, o);
        }
        b.append(']');
    }

    static void frame(StringBuilder b, IMCFrame f) {
        IMCMethod m = f.getMethod();
        b.append("{\"class\": ");
        str(b, m == null || m.getType() == null ? null : m.getType().getFullName());
        b.append(", \"method\": ");
        str(b, m == null ? null : m.getMethodName());
        b.append(", \"descriptor\": ");
        str(b, m == null ? null : m.getFormalDescriptor());
        b.append(", \"line\": ").append(f.getFrameLineNumber());
        b.append(", \"bci\": ").append(f.getBCI());
        b.append(", \"type\": ");
        str(b, f.getType() == null ? null : f.getType().getName());
        b.append('}');
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
