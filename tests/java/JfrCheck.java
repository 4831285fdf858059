/*
 * tests/java/JfrCheck.java — reads a .jfr file with the JDK's own parser
 * (jdk.jfr.consumer.RecordingFile) and checks it against expectations that
 * tests/agent/jfr_tests.sh derived from ringprof's own outputs of the same
 * recording (summary, collapsed stacks, locks --json, rp_agent_dump):
 *
 *   java JfrCheck FILE.jfr EXPECTATIONS
 *
 * EXPECTATIONS has one check a line, fields separated by tabs:
 *   count TYPE N                  N events of TYPE
 *   cpu_top METHOD                the top frame of the most ExecutionSample
 *                                 events (Class.method)
 *   cpu_split                     every jdk.ExecutionSample is at the time, thread
 *                                 and stack of a ringprof.CPUSample, as many as its
 *                                 executionSamples say
 *   cpu_line METHOD LINE W        the weight fields of the ringprof.CPUSample events
 *                                 whose top frame is METHOD at LINE add up to W
 *   cpu_stack W F1;F2;...         ... whose stack is F1 (root) .. Fn (leaf), each
 *                                 frame Class.method:LINE (? unknown) and the
 *                                 frame type's suffix of collapsed stacks
 *                                 (_[j] JIT compiled ...), add up to W
 *   cpu_thread NAME W             ... of thread NAME (its first name: ringprof's
 *                                 " (renamed NEW)" left out) add up to W
 *   cpu_times FIRST LAST          the first and last ringprof.CPUSample, wall ns
 *   wall NAME STATE N             N ringprof.WallClockSample events of thread NAME
 *                                 with wallState STATE
 *   alloc METHOD CLASS BYTES      the ObjectAllocationSample weights of top frame
 *                                 METHOD and objectClass CLASS (ringprof's name:
 *                                 byte[], java.lang.String[]) add up to BYTES, 1%
 *   wall_types                    every ringprof.WallClockSample's JDK thread state
 *                                 is the one of its wallState, and those in states
 *                                 native and io with a frame each have a
 *                                 jdk.NativeMethodSample at their time and thread
 *                                 (and no other has: the JDK samples no thread
 *                                 without a Java frame)
 *   lock CLASS N NS               N JavaMonitorEnter events of monitorClass CLASS,
 *                                 NS ns in all
 *   lock_top CLASS TOP N          ... of those, N with top frame TOP
 *   lock_owner CLASS OWNER N NS   ... of those, N with previousOwner OWNER ("-":
 *                                 none) waited NS ns
 *   gc FIRST LAST NS              GarbageCollection ids FIRST..LAST, each once,
 *                                 NS ns of duration in all; as many GCPhasePause
 *   live CLASS BYTES              in the last snapshot (the ringprof.LiveObject
 *                                 events of the latest startTime), the weights of
 *                                 objects of CLASS add up to BYTES
 *   live_top CLASS                the class with the most bytes in it
 *   gauge NAME N LAST             N ringprof.Gauge events NAME, the last LAST
 *   cpuload T USER SYS            a jdk.CPULoad at wall ns T: jvmUser USER, jvmSystem
 *                                 SYS, machineTotal their sum (within 1e-6)
 * Prints one line per check ("ok ..." or "FAIL ..."); exits 1 if one failed.
 */
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedObject;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

public class JfrCheck {
    static int failed;

    static void check(boolean ok, String what) {
        System.out.println((ok ? "ok   " : "FAIL ") + what);
        if (!ok)
            failed++;
    }

    static <K> void add(Map<K, Long> m, K k, long v) {
        m.merge(k, v, Long::sum);
    }

    static long get(Map<String, Long> m, String k) {
        return m.getOrDefault(k, 0L);
    }

    static String method(RecordedFrame f) {
        RecordedMethod m = f.getMethod();
        return m.getType().getName() + "." + m.getName();
    }

    static RecordedFrame top(RecordedEvent e) {
        RecordedStackTrace st = e.getStackTrace();
        return st == null || st.getFrames().isEmpty() ? null : st.getFrames().get(0);
    }

    static String topMethod(RecordedEvent e) {
        RecordedFrame f = top(e);
        return f == null ? "-" : method(f);
    }

    /* The JDK thread state of each wall state (docs/tool.md, "JFR"). */
    static final Map<String, String> JDK_STATE = Map.of("running", "STATE_RUNNABLE",
            "runnable", "STATE_RUNNABLE", "native", "STATE_RUNNABLE", "io", "STATE_RUNNABLE",
            "sleeping", "STATE_SLEEPING", "waiting", "STATE_IN_OBJECT_WAIT", "parked", "STATE_PARKED",
            "blocked", "STATE_BLOCKED_ON_MONITOR_ENTER");

    /* The collapsed format's frame suffixes, by JFR frame type (docs/profiles.md). */
    static final Map<String, String> SUFFIX = Map.of("Interpreted", "_[0]", "JIT compiled", "_[j]",
            "Inlined", "_[i]", "Kernel", "_[k]");

    /* Root first, as collapsed stacks are: Class.method:LINE_[T], ? for no line. */
    static String stack(RecordedEvent e) {
        List<RecordedFrame> fr = e.getStackTrace().getFrames();
        StringBuilder b = new StringBuilder();
        for (int i = fr.size() - 1; i >= 0; i--) {
            int line = fr.get(i).getLineNumber();
            b.append(method(fr.get(i))).append(':').append(line < 0 ? "?" : Integer.toString(line))
                    .append(SUFFIX.getOrDefault(fr.get(i).getType(), ""));
            if (i > 0)
                b.append(';');
        }
        return b.toString();
    }

    /* One sample's time, thread and stack (its ExecutionSample events share them). */
    static String sampleKey(RecordedEvent e) {
        return nanos(e.getStartTime()) + "\t" + thread(e.getThread("sampledThread")) + "\t"
                + (e.getStackTrace() == null ? "-" : stack(e) + e.getStackTrace().isTruncated());
    }

    /* A thread's name, without ringprof's " (renamed NEW)": which of two agent
     * threads of one OS thread names it last (main and DestroyJavaVM, both
     * written at the JVM's last flush) differs between ringprof's profiles of
     * one kind and of all kinds. */
    static String thread(RecordedThread t) {
        if (t == null)
            return "-";
        String n = t.getJavaName() != null ? t.getJavaName() : t.getOSName();
        int r = n.indexOf(" (renamed ");
        return r > 0 ? n.substring(0, r) : n;
    }

    /* ringprof's class names (byte[], java.lang.String[][]) as Class.getName(). */
    static String binaryName(String c) {
        int dims = 0;
        while (c.endsWith("[]")) {
            c = c.substring(0, c.length() - 2);
            dims++;
        }
        if (dims == 0)
            return c;
        String prim = Map.of("boolean", "Z", "byte", "B", "char", "C", "short", "S", "int", "I",
                "long", "J", "float", "F", "double", "D").get(c);
        return "[".repeat(dims) + (prim != null ? prim : "L" + c + ";");
    }

    static long nanos(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    public static void main(String[] args) throws Exception {
        Map<String, Long> count = new HashMap<>();
        Map<String, Long> cpuTop = new HashMap<>(), cpuLine = new HashMap<>(),
                cpuStack = new HashMap<>(), cpuThread = new HashMap<>(), wall = new HashMap<>(),
                wallMisfiled = new TreeMap<>(),
                alloc = new HashMap<>(), lockN = new HashMap<>(), lockNs = new HashMap<>(),
                lockTop = new HashMap<>(), ownerN = new HashMap<>(), ownerNs = new HashMap<>(),
                gcIds = new TreeMap<>(), pauseIds = new TreeMap<>(), gaugeN = new HashMap<>(),
                split = new HashMap<>(), nativeAt = new HashMap<>();
        Map<String, Long> gaugeLast = new HashMap<>(), gaugeTime = new HashMap<>();
        Map<Long, Map<String, Long>> liveBySnapshot = new TreeMap<>();
        Map<Long, double[]> cpuLoad = new HashMap<>();
        long gcNs = 0, gcSum = 0, cpuFirst = Long.MAX_VALUE, cpuLast = Long.MIN_VALUE;

        for (RecordedEvent e : RecordingFile.readAllEvents(Path.of(args[0]))) {
            String type = e.getEventType().getName();
            add(count, type, 1);
            switch (type) {
            case "jdk.ExecutionSample":
                add(cpuTop, topMethod(e), 1);
                add(split, sampleKey(e), 1);
                break;
            case "ringprof.CPUSample": {
                long w = e.getLong("weight");
                add(split, sampleKey(e), -e.getLong("executionSamples"));
                RecordedFrame f = top(e);
                if (f != null)
                    add(cpuLine, method(f) + "\t" + f.getLineNumber(), w);
                add(cpuStack, stack(e), w);
                add(cpuThread, thread(e.getThread("sampledThread")), w);
                cpuFirst = Math.min(cpuFirst, nanos(e.getStartTime()));
                cpuLast = Math.max(cpuLast, nanos(e.getStartTime()));
                break;
            }
            case "jdk.NativeMethodSample":
                add(nativeAt, nanos(e.getStartTime()) + "\t" + thread(e.getThread("sampledThread")), 1);
                break;
            case "ringprof.WallClockSample": {
                String ws = e.getString("wallState");
                add(wall, thread(e.getThread("sampledThread")) + "\t" + ws, 1);
                if ((ws.equals("native") || ws.equals("io")) && top(e) != null)
                    add(nativeAt, nanos(e.getStartTime()) + "\t" + thread(e.getThread("sampledThread")), -1);
                Object st = e.getValue("state");          /* one field: read as its value */
                String jdkState = st instanceof RecordedObject o ? o.getString("name") : String.valueOf(st);
                if (!JDK_STATE.getOrDefault(ws, "STATE_UNKNOWN").equals(jdkState))
                    add(wallMisfiled, type + " " + ws + " " + jdkState, 1);
                break;
            }
            case "jdk.ObjectAllocationSample":
                add(alloc, topMethod(e) + "\t" + e.getClass("objectClass").getName(), e.getLong("weight"));
                break;
            case "jdk.JavaMonitorEnter": {
                String c = e.getClass("monitorClass").getName();
                long ns = e.getDuration().toNanos();
                add(lockN, c, 1);
                add(lockNs, c, ns);
                add(lockTop, c + "\t" + topMethod(e), 1);
                String o = c + "\t" + thread(e.getThread("previousOwner"));
                add(ownerN, o, 1);
                add(ownerNs, o, ns);
                break;
            }
            case "jdk.GarbageCollection":
                add(gcIds, Integer.toString(e.getInt("gcId")), 1);
                gcNs += e.getDuration().toNanos();
                gcSum += e.getDuration("sumOfPauses").toNanos();
                break;
            case "jdk.GCPhasePause":
                add(pauseIds, Integer.toString(e.getInt("gcId")), 1);
                break;
            case "ringprof.LiveObject":
                add(liveBySnapshot.computeIfAbsent(nanos(e.getStartTime()), k -> new HashMap<>()),
                        e.getClass("objectClass").getName(), e.getLong("weight"));
                break;
            case "jdk.CPULoad":
                cpuLoad.put(nanos(e.getStartTime()), new double[] {e.getFloat("jvmUser"),
                        e.getFloat("jvmSystem"), e.getFloat("machineTotal")});
                break;
            case "ringprof.Gauge": {
                String n = e.getString("name");
                add(gaugeN, n, 1);
                long t = nanos(e.getStartTime());
                if (t >= gaugeTime.getOrDefault(n, Long.MIN_VALUE)) {
                    gaugeLast.put(n, e.getLong("value"));
                    gaugeTime.put(n, t);
                }
                break;
            }
            default:
                break;
            }
        }
        Map<String, Long> live = liveBySnapshot.isEmpty() ? Map.of()
                : ((TreeMap<Long, Map<String, Long>>) liveBySnapshot).lastEntry().getValue();

        for (String line : Files.readAllLines(Path.of(args[1]))) {
            String[] f = line.split("\t");
            switch (f[0]) {
            case "count":
                check(get(count, f[1]) == Long.parseLong(f[2]),
                        String.format("%s: %d events, expected %s", f[1], get(count, f[1]), f[2]));
                break;
            case "cpu_top": {
                String best = cpuTop.entrySet().stream().max(Map.Entry.comparingByValue())
                        .map(Map.Entry::getKey).orElse("-");
                check(best.equals(f[1]), String.format("the most ExecutionSample events (%d of %d) have top frame %s, expected %s",
                        get(cpuTop, best), get(count, "jdk.ExecutionSample"), best, f[1]));
                break;
            }
            case "cpu_line":
                check(get(cpuLine, f[1] + "\t" + f[2]) == Long.parseLong(f[3]),
                        String.format("CPUSample at %s line %s: weight %d, expected %s",
                                f[1], f[2], get(cpuLine, f[1] + "\t" + f[2]), f[3]));
                break;
            case "cpu_stack":
                check(get(cpuStack, f[2]) == Long.parseLong(f[1]),
                        String.format("CPUSample stack ...%s: weight %d, expected %s",
                                f[2].substring(Math.max(0, f[2].length() - 120)), get(cpuStack, f[2]), f[1]));
                break;
            case "cpu_thread":
                check(get(cpuThread, f[1]) == Long.parseLong(f[2]),
                        String.format("CPUSample of thread '%s': weight %d, expected %s", f[1], get(cpuThread, f[1]), f[2]));
                break;
            case "cpu_times":
                check(cpuFirst == Long.parseLong(f[1]) && cpuLast == Long.parseLong(f[2]),
                        String.format("CPUSample times %d..%d, expected %s..%s", cpuFirst, cpuLast, f[1], f[2]));
                break;
            case "wall": {
                String k = f[1] + "\t" + f[2];
                check(get(wall, k) == Long.parseLong(f[3]),
                        String.format("wall events of '%s' in state %s: %d, expected %s", f[1], f[2], get(wall, k), f[3]));
                break;
            }
            case "alloc": {
                String k = f[1] + "\t" + binaryName(f[2]);
                long want = Long.parseLong(f[3]), got = get(alloc, k);
                check(Math.abs(got - want) <= want / 100,
                        String.format("ObjectAllocationSample %s of %s: %d bytes, expected %d (1%%)", f[1], f[2], got, want));
                break;
            }
            case "wall_types":
                nativeAt.values().removeIf(n -> n == 0);
                check(wallMisfiled.isEmpty() && nativeAt.isEmpty(),
                        "wall events by wallState and JDK state, NativeMethodSample for native and io; wrong: "
                                + wallMisfiled + ", unpaired: " + nativeAt.size());
                break;
            case "cpu_split":
                split.values().removeIf(n -> n == 0);
                check(split.isEmpty(), "ExecutionSample events where the CPUSample events say; "
                        + split.size() + " samples differ");
                break;
            case "lock":
                check(get(lockN, f[1]) == Long.parseLong(f[2]) && get(lockNs, f[1]) == Long.parseLong(f[3]),
                        String.format("JavaMonitorEnter on %s: %d waits of %d ns, expected %s, %s ns",
                                f[1], get(lockN, f[1]), get(lockNs, f[1]), f[2], f[3]));
                break;
            case "lock_top": {
                String k = f[1] + "\t" + f[2];
                check(get(lockTop, k) == Long.parseLong(f[3]),
                        String.format("JavaMonitorEnter on %s with top frame %s: %d, expected %s", f[1], f[2], get(lockTop, k), f[3]));
                break;
            }
            case "lock_owner": {
                String k = f[1] + "\t" + f[2];
                check(get(ownerN, k) == Long.parseLong(f[3]) && get(ownerNs, k) == Long.parseLong(f[4]),
                        String.format("JavaMonitorEnter on %s with previousOwner '%s': %d waits of %d ns, expected %s, %s ns",
                                f[1], f[2], get(ownerN, k), get(ownerNs, k), f[3], f[4]));
                break;
            }
            case "gc": {
                Map<String, Long> want = new TreeMap<>();
                for (int id = Integer.parseInt(f[1]); id <= Integer.parseInt(f[2]); id++)
                    want.put(Integer.toString(id), 1L);
                check(gcIds.equals(want) && pauseIds.equals(want) && gcNs == Long.parseLong(f[3]) && gcSum == gcNs,
                        String.format("GarbageCollection ids %s, GCPhasePause ids %s, %d ns (sumOfPauses %d); expected ids %s..%s once each, %s ns",
                                gcIds.keySet(), pauseIds.keySet(), gcNs, gcSum, f[1], f[2], f[3]));
                break;
            }
            case "live": {
                String c = binaryName(f[1]);
                check(get(live, c) == Long.parseLong(f[2]),
                        String.format("LiveObject of %s in the last snapshot: %d bytes, expected %s", f[1], get(live, c), f[2]));
                break;
            }
            case "live_top": {
                String best = live.entrySet().stream().max(Map.Entry.comparingByValue())
                        .map(Map.Entry::getKey).orElse("-");
                check(best.equals(binaryName(f[1])), String.format("the most live bytes are of %s, expected %s", best, f[1]));
                break;
            }
            case "gauge": {
                Long last = gaugeLast.get(f[1]);
                check(get(gaugeN, f[1]) == Long.parseLong(f[2]) && last != null && last == Long.parseLong(f[3]),
                        String.format("ringprof.Gauge %s: %d events, the last %s; expected %s, %s", f[1], get(gaugeN, f[1]), last, f[2], f[3]));
                break;
            }
            case "cpuload": {
                double[] v = cpuLoad.get(Long.parseLong(f[1]));
                double u = Double.parseDouble(f[2]), sy = Double.parseDouble(f[3]);
                check(v != null && Math.abs(v[0] - u) < 1e-6 && Math.abs(v[1] - sy) < 1e-6
                                && Math.abs(v[2] - u - sy) < 1e-6,
                        String.format("jdk.CPULoad at %s: %s, expected jvmUser %s, jvmSystem %s",
                                f[1], v == null ? "none" : java.util.Arrays.toString(v), f[2], f[3]));
                break;
            }
            default:
                check(false, "unknown expectation: " + line);
            }
        }
        System.out.println(failed == 0 ? "JfrCheck: all checks passed" : "JfrCheck: " + failed + " checks failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
