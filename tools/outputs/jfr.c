/*
 * tools/outputs/jfr.c — encoding JFR values, the chunk header, and the metadata
 * event that describes every type `ringprof convert --format jfr` writes (see
 * jfr.h). The schema is the table below: one row per type, its fields in the
 * order events and pool entries write them (out_jfr.c must follow it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr.h"
#include "model/strtab.h"
#include "model/xalloc.h"

/* ------------------------------------------------------------- encoding -- */

void rp_jfr_buf_free(struct rp_jfr_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static void reserve(struct rp_jfr_buf *b, size_t n)
{
    if (b->cap - b->n < n)
        rp_xgrow((void **)&b->p, &b->cap, b->n + n - 1, 1, 256);
}

void rp_jfr_u8(struct rp_jfr_buf *b, uint8_t v)
{
    reserve(b, 1);
    b->p[b->n++] = v;
}

void rp_jfr_bytes(struct rp_jfr_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return; /* p may be NULL: a stack of no frames has no buffer yet */
    reserve(b, n);
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

void rp_jfr_varint(struct rp_jfr_buf *b, uint64_t v)
{
    reserve(b, 9);
    for (int i = 0; i < 8; i++) {
        if (v < 0x80) {
            b->p[b->n++] = (uint8_t)v;
            return;
        }
        b->p[b->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->p[b->n++] = (uint8_t)v;   /* the 9th byte carries 8 bits */
}

size_t rp_jfr_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80 && n < 9) {
        v >>= 7;
        n++;
    }
    return n;
}

void rp_jfr_bool(struct rp_jfr_buf *b, int v)
{
    rp_jfr_u8(b, v ? 1 : 0);
}

void rp_jfr_float(struct rp_jfr_buf *b, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    uint8_t be[4] = {(uint8_t)(u >> 24), (uint8_t)(u >> 16), (uint8_t)(u >> 8), (uint8_t)u};
    rp_jfr_bytes(b, be, 4);
}

void rp_jfr_string(struct rp_jfr_buf *b, const char *s)
{
    if (!s) {
        rp_jfr_u8(b, 0);
        return;
    }
    if (!*s) {
        rp_jfr_u8(b, 1);
        return;
    }
    rp_jfr_utf8(b, s);
}

void rp_jfr_utf8(struct rp_jfr_buf *b, const char *s)
{
    size_t len = strlen(s);
    rp_jfr_u8(b, 3);
    rp_jfr_varint(b, len);
    rp_jfr_bytes(b, s, len);
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

void rp_jfr_header(uint8_t out[RP_JFR_HEADER_SIZE], const struct rp_jfr_header *h)
{
    memcpy(out, "FLR", 4);           /* magic, with its NUL                       */
    put_be(out + 4, 2, 2);           /* major                                     */
    put_be(out + 6, 0, 2);           /* minor                                     */
    put_be(out + 8, h->size, 8);
    put_be(out + 16, h->cp_offset, 8);
    put_be(out + 24, h->meta_offset, 8);
    put_be(out + 32, h->start_nanos, 8);
    put_be(out + 40, h->duration_nanos, 8);
    put_be(out + 48, h->start_ticks, 8);
    put_be(out + 56, h->ticks_per_second, 8);
    out[64] = 0;                     /* file state: complete                      */
    out[65] = out[66] = 0;
    out[67] = 1 | 2;                 /* compressed integers, final chunk          */
}

void rp_jfr_event(struct rp_jfr_buf *out, const struct rp_jfr_buf *body)
{
    size_t n = rp_jfr_varint_len(body->n + 1);
    while (rp_jfr_varint_len(body->n + n) != n)
        n++;
    rp_jfr_varint(out, body->n + n);
    rp_jfr_bytes(out, body->p, body->n);
}

/* --------------------------------------------------------------- schema -- */

/* Field flags: what the field is and which annotations say so. A field of a
 * JDK type has the JDK's annotations (its `jfr metadata`), labels aside. */
enum {
    F_CP = 1 << 0,          /* constantPool: an id into the type's pool           */
    F_ARRAY = 1 << 1,       /* dimension 1                                        */
    F_UNSIGNED = 1 << 2,    /* @Unsigned                                          */
    F_TICKS = 1 << 3,       /* @Timestamp(TICKS)                                  */
    F_MILLIS = 1 << 4,      /* @Timestamp(MILLISECONDS_SINCE_EPOCH)               */
    F_SPAN = 1 << 5,        /* @Timespan(TICKS)                                   */
    F_NANOS = 1 << 6,       /* @Timespan(NANOSECONDS)                             */
    F_BYTES = 1 << 7,       /* @DataAmount(BYTES)                                 */
    F_ADDR = 1 << 8,        /* @MemoryAddress                                     */
    F_PCT = 1 << 9,         /* @Percentage                                        */
    F_GCID = 1 << 10,       /* @GcId (relational: joins a GC's events)            */
    F_MONITOR = 1 << 11,    /* @JavaMonitorAddress (relational)                   */
    F_MS_SPAN = 1 << 12     /* @Timespan(MILLISECONDS)                            */
};
#define F_UBYTES (F_UNSIGNED | F_BYTES)
#define F_UADDR (F_UNSIGNED | F_ADDR)

struct field {
    const char *name;
    int type;
    unsigned flags;
    const char *label;
};

struct type {
    int id;
    const char *name, *super, *label, *description;
    const char *category[3];
    int simple;                    /* simpleType: the pool holds its one field    */
    const struct field *fields;
};

#define EVENT "jdk.jfr.Event"
#define ANNOTATION "java.lang.annotation.Annotation"
#define END {NULL, 0, 0, NULL}
#define START_TIME {"startTime", JFR_LONG, F_TICKS, "Start Time"}
#define DURATION {"duration", JFR_LONG, F_SPAN, "Duration"}
#define EVENT_THREAD {"eventThread", JFR_THREAD, F_CP, "Event Thread"}
#define STACK_TRACE {"stackTrace", JFR_STACK_TRACE, F_CP, "Stack Trace"}
/* ringprof's events: the markers of the sample's stack, which are not frames of
 * the file (out_jfr.c, struct stack_note). */
#define MARKERS {"markers", JFR_STRING, 0, "ringprof Markers"}

static const struct field F_CLASS[] = {
    {"classLoader", JFR_CLASS_LOADER, F_CP, "Class Loader"},
    {"name", JFR_SYMBOL, F_CP, "Name"},
    {"package", JFR_PACKAGE, F_CP, "Package"},
    {"modifiers", JFR_INT, 0, "Access Modifiers"},
    {"hidden", JFR_BOOLEAN, 0, "Hidden"}, END};
static const struct field F_THREAD[] = {
    {"osName", JFR_STRING, 0, "OS Thread Name"},
    {"osThreadId", JFR_LONG, 0, "OS Thread Id"},
    {"javaName", JFR_STRING, 0, "Java Thread Name"},
    {"javaThreadId", JFR_LONG, 0, "Java Thread Id"},
    {"group", JFR_THREAD_GROUP, F_CP, "Java Thread Group"},
    {"virtual", JFR_BOOLEAN, 0, "Virtual Thread"}, END};
static const struct field F_CLASS_LOADER[] = {
    {"type", JFR_CLASS, F_CP, "Type"}, {"name", JFR_SYMBOL, F_CP, "Name"}, END};
static const struct field F_DESCRIPTION[] = {{"description", JFR_STRING, 0, "Description"}, END};
static const struct field F_NAME[] = {{"name", JFR_STRING, 0, "Name"}, END};
static const struct field F_STACK_TRACE[] = {
    {"truncated", JFR_BOOLEAN, 0, "Truncated"},
    {"frames", JFR_STACK_FRAME, F_ARRAY, "Stack Frames"}, END};
static const struct field F_STACK_FRAME[] = {
    {"method", JFR_METHOD, F_CP, "Java Method"},
    {"lineNumber", JFR_INT, 0, "Line Number"},
    {"bytecodeIndex", JFR_INT, 0, "Bytecode Index"},
    {"type", JFR_FRAME_TYPE, F_CP, "Frame Type"}, END};
static const struct field F_METHOD[] = {
    {"type", JFR_CLASS, F_CP, "Type"},
    {"name", JFR_SYMBOL, F_CP, "Name"},
    {"descriptor", JFR_SYMBOL, F_CP, "Descriptor"},
    {"modifiers", JFR_INT, 0, "Access Modifiers"},
    {"hidden", JFR_BOOLEAN, 0, "Hidden"}, END};
static const struct field F_PACKAGE[] = {{"name", JFR_SYMBOL, F_CP, "Name"}, END};
static const struct field F_SYMBOL[] = {{"string", JFR_STRING, 0, "String"}, END};
static const struct field F_THREAD_GROUP[] = {
    {"parent", JFR_THREAD_GROUP, F_CP, "Parent"}, {"name", JFR_STRING, 0, "Name"}, END};
static const struct field F_GC_CAUSE[] = {{"cause", JFR_STRING, 0, "Cause"}, END};
static const struct field F_GC_WHEN[] = {{"when", JFR_STRING, 0, "When"}, END};
static const struct field F_VIRTUAL_SPACE[] = {
    {"start", JFR_LONG, F_UADDR, "Start Address"},
    {"committedEnd", JFR_LONG, F_UADDR, "Committed End Address"},
    {"committedSize", JFR_LONG, F_UBYTES, "Committed Size"},
    {"reservedEnd", JFR_LONG, F_UADDR, "Reserved End Address"},
    {"reservedSize", JFR_LONG, F_UBYTES, "Reserved Size"}, END};
static const struct field F_OLD_OBJECT[] = {
    {"address", JFR_LONG, F_UADDR, "Memory Address"},
    {"type", JFR_CLASS, F_CP, "Java Class"},
    {"description", JFR_STRING, 0, "Object Description"}, END};
static const struct field F_GC_ROOT[] = {
    {"description", JFR_STRING, 0, "Root Description"},
    {"system", JFR_ROOT_SYSTEM, F_CP, "System"},
    {"type", JFR_ROOT_TYPE, F_CP, "Type"}, END};
static const struct field F_SYSTEM[] = {{"system", JFR_STRING, 0, "System"}, END};
static const struct field F_TYPE[] = {{"type", JFR_STRING, 0, "Type"}, END};

/* The JDK's event types have the JDK's fields, no more (async-profiler's
 * converter reads ExecutionSample, NativeMethodSample, ObjectAllocationSample and
 * JavaMonitorEnter field by field and takes the next byte for the next event);
 * what ringprof knows beyond them is in its own events, one per sample. */
#define SAMPLED_THREAD {"sampledThread", JFR_THREAD, F_CP, "Thread"}
#define THREAD_STATE {"state", JFR_THREAD_STATE, F_CP, "Thread State"}
#define OBJECT_CLASS {"objectClass", JFR_CLASS, F_CP, "Object Class"}
static const struct field F_EXECUTION_SAMPLE[] = {
    START_TIME, SAMPLED_THREAD, STACK_TRACE, THREAD_STATE, END};
static const struct field F_ALLOCATION_SAMPLE[] = {
    START_TIME, EVENT_THREAD, STACK_TRACE, OBJECT_CLASS,
    {"weight", JFR_LONG, F_BYTES, "Sample Weight"}, END};
static const struct field F_OLD_OBJECT_SAMPLE[] = {
    START_TIME, DURATION, EVENT_THREAD, STACK_TRACE,
    {"allocationTime", JFR_LONG, F_UNSIGNED | F_TICKS, "Allocation Time"},
    {"objectSize", JFR_LONG, F_UBYTES, "Object Size"},
    {"objectAge", JFR_LONG, F_UNSIGNED | F_SPAN, "Object Age"},
    {"lastKnownHeapUsage", JFR_LONG, F_UBYTES, "Last Known Heap Usage"},
    {"object", JFR_OLD_OBJECT, F_CP, "Object"},
    {"arrayElements", JFR_INT, 0, "Array Elements"},
    {"root", JFR_GC_ROOT, F_CP, "GC Root"}, END};
static const struct field F_MONITOR_ENTER[] = {
    START_TIME, DURATION, EVENT_THREAD, STACK_TRACE,
    {"monitorClass", JFR_CLASS, F_CP, "Monitor Class"},
    {"previousOwner", JFR_THREAD, F_CP, "Previous Monitor Owner"},
    {"address", JFR_LONG, F_UADDR | F_MONITOR, "Monitor Address"}, END};
static const struct field F_RP_CPU_SAMPLE[] = {
    START_TIME, SAMPLED_THREAD, STACK_TRACE,
    {"weight", JFR_LONG, F_NANOS, "CPU Time"},
    {"executionSamples", JFR_LONG, 0, "jdk.ExecutionSample Events"}, MARKERS, END};
static const struct field F_RP_WALL_SAMPLE[] = {
    START_TIME, SAMPLED_THREAD, STACK_TRACE, THREAD_STATE,
    {"weight", JFR_LONG, F_NANOS, "Weight"},
    {"wallState", JFR_STRING, 0, "ringprof Thread State"},
    {"cpuTime", JFR_LONG, F_NANOS, "CPU Time"},
    {"repeat", JFR_BOOLEAN, 0, "Stack Repeated"},
    {"blockerClass", JFR_CLASS, F_CP, "Parked On"},
    {"blockerOwner", JFR_THREAD, F_CP, "Owner of the Lock Parked On"}, MARKERS, END};
static const struct field F_RP_ALLOCATION_SAMPLE[] = {
    START_TIME, EVENT_THREAD, STACK_TRACE, OBJECT_CLASS,
    {"weight", JFR_LONG, F_UBYTES, "Sample Weight"},
    {"objects", JFR_LONG, 0, "Objects"},
    {"size", JFR_LONG, F_UBYTES, "Object Size"},
    {"arrayLength", JFR_LONG, 0, "Array Length"}, MARKERS, END};
static const struct field F_RP_LIVE_OBJECT[] = {
    START_TIME, EVENT_THREAD, STACK_TRACE, OBJECT_CLASS,
    {"weight", JFR_LONG, F_UBYTES, "Sample Weight"},
    {"objects", JFR_LONG, 0, "Objects"},
    {"ageGcs", JFR_LONG, 0, "GCs Survived"}, MARKERS, END};
#define GC_ID {"gcId", JFR_INT, F_UNSIGNED | F_GCID, "GC Identifier"}
static const struct field F_GARBAGE_COLLECTION[] = {
    START_TIME, DURATION, EVENT_THREAD, GC_ID,
    {"name", JFR_GC_NAME, F_CP, "Name"},
    {"cause", JFR_GC_CAUSE, F_CP, "Cause"},
    {"sumOfPauses", JFR_LONG, F_UNSIGNED | F_SPAN, "Sum of Pauses"},
    {"longestPause", JFR_LONG, F_UNSIGNED | F_SPAN, "Longest Pause"}, END};
static const struct field F_GC_PHASE_PAUSE[] = {
    START_TIME, DURATION, EVENT_THREAD, GC_ID, {"name", JFR_STRING, 0, "Name"}, END};
static const struct field F_GC_HEAP_SUMMARY[] = {
    START_TIME, GC_ID,
    {"when", JFR_GC_WHEN, F_CP, "When"},
    {"heapSpace", JFR_VIRTUAL_SPACE, 0, "Heap Space"},
    {"heapUsed", JFR_LONG, F_UBYTES, "Heap Used"}, END};
static const struct field F_CPU_LOAD[] = {
    START_TIME,
    {"jvmUser", JFR_FLOAT, F_PCT, "JVM User"},
    {"jvmSystem", JFR_FLOAT, F_PCT, "JVM System"},
    {"machineTotal", JFR_FLOAT, F_PCT, "Machine Total"}, END};
static const struct field F_RESIDENT_SET_SIZE[] = {
    START_TIME,
    {"size", JFR_LONG, F_UBYTES, "Resident Set Size"},
    {"peak", JFR_LONG, F_UBYTES, "Resident Set Size Peak Value"}, END};
static const struct field F_CLASS_LOADING_STATISTICS[] = {
    START_TIME, {"loadedClassCount", JFR_LONG, 0, "Loaded Class Count"}, END};
static const struct field F_JVM_INFORMATION[] = {
    START_TIME,
    {"jvmName", JFR_STRING, 0, "JVM Name"},
    {"jvmVersion", JFR_STRING, 0, "JVM Version"},
    {"jvmArguments", JFR_STRING, 0, "JVM Command Line Arguments"},
    {"jvmFlags", JFR_STRING, 0, "JVM Settings File Arguments"},
    {"javaArguments", JFR_STRING, 0, "Java Application Arguments"},
    {"jvmStartTime", JFR_LONG, F_MILLIS, "JVM Start Time"},
    {"pid", JFR_LONG, 0, "Process Identifier"}, END};
static const struct field F_THREAD_CPU_LOAD[] = {
    START_TIME, EVENT_THREAD,
    {"user", JFR_FLOAT, F_PCT, "User Mode CPU Load"},
    {"system", JFR_FLOAT, F_PCT, "System Mode CPU Load"}, END};
static const struct field F_JAVA_THREAD_STATISTICS[] = {
    START_TIME,
    {"activeCount", JFR_LONG, 0, "Active Threads"},
    {"daemonCount", JFR_LONG, 0, "Daemon Threads"},
    {"accumulatedCount", JFR_LONG, 0, "Accumulated Threads"},
    {"peakCount", JFR_LONG, 0, "Peak Threads"}, END};
static const struct field F_SHUTDOWN[] = {
    START_TIME, EVENT_THREAD, STACK_TRACE, {"reason", JFR_STRING, 0, "Reason"}, END};
static const struct field F_YOUNG_GARBAGE_COLLECTION[] = {
    START_TIME, DURATION, GC_ID,
    {"tenuringThreshold", JFR_INT, F_UNSIGNED, "Tenuring Threshold"}, END};
static const struct field F_OLD_GARBAGE_COLLECTION[] = {START_TIME, DURATION, GC_ID, END};
static const struct field F_GC_CONFIGURATION[] = {
    START_TIME,
    {"youngCollector", JFR_GC_NAME, F_CP, "Young Garbage Collector"},
    {"oldCollector", JFR_GC_NAME, F_CP, "Old Garbage Collector"},
    {"parallelGCThreads", JFR_INT, F_UNSIGNED, "Parallel GC Threads"},
    {"concurrentGCThreads", JFR_INT, F_UNSIGNED, "Concurrent GC Threads"},
    {"usesDynamicGCThreads", JFR_BOOLEAN, 0, "Uses Dynamic GC Threads"},
    {"isExplicitGCConcurrent", JFR_BOOLEAN, 0, "Concurrent Explicit GC"},
    {"isExplicitGCDisabled", JFR_BOOLEAN, 0, "Disabled Explicit GC"},
    {"pauseTarget", JFR_LONG, F_MS_SPAN, "Pause Target"},
    {"gcTimeRatio", JFR_INT, F_UNSIGNED, "GC Time Ratio"}, END};
static const struct field F_GC_HEAP_CONFIGURATION[] = {
    START_TIME,
    {"minSize", JFR_LONG, F_UBYTES, "Minimum Heap Size"},
    {"maxSize", JFR_LONG, F_UBYTES, "Maximum Heap Size"},
    {"initialSize", JFR_LONG, F_UBYTES, "Initial Heap Size"},
    {"usesCompressedOops", JFR_BOOLEAN, 0, "If Compressed Oops Are Used"},
    {"compressedOopsMode", JFR_NARROW_OOP_MODE, F_CP, "Compressed Oops Mode"},
    {"objectAlignment", JFR_LONG, F_UBYTES, "Object Alignment"},
    {"heapAddressBits", JFR_BYTE, F_UNSIGNED, "Heap Address Size"}, END};
static const struct field F_MODE[] = {{"mode", JFR_STRING, 0, "Mode"}, END};
static const struct field F_RP_SAMPLE[] = {
    START_TIME, {"sampledThread", JFR_THREAD, F_CP, "Thread"}, STACK_TRACE,
    {"kind", JFR_STRING, 0, "Kind"},
    {"weight", JFR_LONG, 0, "Weight"},
    {"unit", JFR_STRING, 0, "Unit"}, MARKERS, END};
static const struct field F_RP_GAUGE[] = {
    START_TIME, {"name", JFR_STRING, 0, "Name"}, {"value", JFR_LONG, 0, "Value"}, END};
static const struct field F_RP_THREAD_CPU[] = {
    START_TIME, EVENT_THREAD, {"cpuTime", JFR_LONG, F_NANOS, "CPU Time (cumulative)"},
    END};
static const struct field F_RP_COUNTER[] = {
    START_TIME, {"name", JFR_STRING, 0, "Name"}, {"value", JFR_LONG, 0, "Value"}, END};
static const struct field F_RP_RECORDING[] = {
    START_TIME,
    {"recordingId", JFR_STRING, 0, "Recording"},
    {"chunkSeq", JFR_LONG, 0, "Chunk Sequence Number"},
    {"pid", JFR_LONG, 0, "Process Identifier"},
    {"host", JFR_STRING, 0, "Host"},
    {"jvmName", JFR_STRING, 0, "JVM Name"},
    {"jvmVersion", JFR_STRING, 0, "JVM Version"},
    {"agentOptions", JFR_STRING, 0, "Agent Options"},
    {"producer", JFR_STRING, 0, "Producer"},
    {"file", JFR_STRING, 0, "Chunk File"},
    {"metadata", JFR_STRING, 0, "Chunk Header"},
    {"segmentsWhole", JFR_LONG, 0, "Segments Whole"},
    {"segmentsDamaged", JFR_LONG, 0, "Segments Damaged"},
    {"segmentsCutOff", JFR_LONG, 0, "Segments Cut Off"}, END};
static const struct field F_VALUE[] = {{"value", JFR_STRING, 0, NULL}, END};
static const struct field F_VALUES[] = {{"value", JFR_STRING, F_ARRAY, NULL}, END};
static const struct field F_NONE[] = {END};

#define C_PROFILING {"Java Virtual Machine", "Profiling"}
#define C_APP {"Java Application"}
#define C_GC {"Java Virtual Machine", "GC", "Collector"}
#define C_GC_PHASES {"Java Virtual Machine", "GC", "Phases"}
#define C_GC_CONFIGURATION {"Java Virtual Machine", "GC", "Configuration"}
#define C_RUNTIME {"Java Virtual Machine", "Runtime"}
#define C_RP {"ringprof"}
/* A JDK event type declared for the views that read it, never written: the
 * agent does not record what its fields hold. */
#define NOT_RECORDED "Not written: ringprof does not record it"

static const struct type TYPES[] = {
    {JFR_BOOLEAN, "boolean"}, {JFR_CHAR, "char"}, {JFR_FLOAT, "float"},
    {JFR_DOUBLE, "double"}, {JFR_BYTE, "byte"}, {JFR_SHORT, "short"},
    {JFR_INT, "int"}, {JFR_LONG, "long"}, {JFR_STRING, "java.lang.String"},

    {JFR_CLASS, "java.lang.Class", NULL, "Java Class", .fields = F_CLASS},
    {JFR_THREAD, "java.lang.Thread", NULL, "Thread", .fields = F_THREAD},
    {JFR_CLASS_LOADER, "jdk.types.ClassLoader", NULL, "Java Class Loader",
     .fields = F_CLASS_LOADER},
    {JFR_FRAME_TYPE, "jdk.types.FrameType", NULL, "Frame type", .simple = 1,
     .fields = F_DESCRIPTION},
    {JFR_THREAD_STATE, "jdk.types.ThreadState", NULL, "Java Thread State", .simple = 1,
     .fields = F_NAME},
    {JFR_STACK_TRACE, "jdk.types.StackTrace", NULL, "Stacktrace", .fields = F_STACK_TRACE},
    {JFR_STACK_FRAME, "jdk.types.StackFrame", NULL, "Stack Frame", .fields = F_STACK_FRAME},
    {JFR_METHOD, "jdk.types.Method", NULL, "Java Method", .fields = F_METHOD},
    {JFR_PACKAGE, "jdk.types.Package", NULL, "Package", .fields = F_PACKAGE},
    {JFR_SYMBOL, "jdk.types.Symbol", NULL, "Symbol", .simple = 1, .fields = F_SYMBOL},
    {JFR_THREAD_GROUP, "jdk.types.ThreadGroup", NULL, "Thread Group",
     .fields = F_THREAD_GROUP},
    {JFR_GC_NAME, "jdk.types.GCName", NULL, "GC Name", .simple = 1, .fields = F_NAME},
    {JFR_GC_CAUSE, "jdk.types.GCCause", NULL, "GC Cause", .simple = 1,
     .fields = F_GC_CAUSE},
    {JFR_GC_WHEN, "jdk.types.GCWhen", NULL, "GC When", .simple = 1, .fields = F_GC_WHEN},
    {JFR_VIRTUAL_SPACE, "jdk.types.VirtualSpace", NULL, "Virtual Space",
     .fields = F_VIRTUAL_SPACE},
    {JFR_OLD_OBJECT, "jdk.types.OldObject", NULL, "Old Object", .fields = F_OLD_OBJECT},
    {JFR_GC_ROOT, "jdk.types.OldObjectGcRoot", NULL, "GC Root", .fields = F_GC_ROOT},
    {JFR_ROOT_SYSTEM, "jdk.types.OldObjectRootSystem", NULL, "GC Root System", .simple = 1,
     .fields = F_SYSTEM},
    {JFR_ROOT_TYPE, "jdk.types.OldObjectRootType", NULL, "GC Root Type", .simple = 1,
     .fields = F_TYPE},
    {JFR_NARROW_OOP_MODE, "jdk.types.NarrowOopMode", NULL, "Narrow Oop Mode", .simple = 1,
     .fields = F_MODE},

    {JFR_EXECUTION_SAMPLE, "jdk.ExecutionSample", EVENT, "Method Profiling Sample",
     "One sampling interval of CPU: ringprof writes the CPU of its samples so far over "
     "the interval, rounded, as events so far (ringprof.CPUSample has each sample)",
     C_PROFILING, .fields = F_EXECUTION_SAMPLE},
    {JFR_NATIVE_METHOD_SAMPLE, "jdk.NativeMethodSample", EVENT, "Method Profiling Sample Native",
     "A wall-clock sample of a thread in native code or blocked in the kernel "
     "(ringprof states native and io; ringprof.WallClockSample has every state)",
     C_PROFILING, .fields = F_EXECUTION_SAMPLE},
    {JFR_ALLOCATION_SAMPLE, "jdk.ObjectAllocationSample", EVENT, "Object Allocation Sample",
     NULL, C_APP, .fields = F_ALLOCATION_SAMPLE},
    {JFR_OLD_OBJECT_SAMPLE, "jdk.OldObjectSample", EVENT, "Old Object Sample",
     "A sampled object still live at a ringprof live snapshot (startTime)",
     {"Java Virtual Machine", "Profiling"}, .fields = F_OLD_OBJECT_SAMPLE},
    {JFR_MONITOR_ENTER, "jdk.JavaMonitorEnter", EVENT, "Java Monitor Blocked", NULL, C_APP,
     .fields = F_MONITOR_ENTER},
    {JFR_GARBAGE_COLLECTION, "jdk.GarbageCollection", EVENT, "Garbage Collection",
     "A GC pause as ringprof's agent saw it (GarbageCollectionStart to Finish)", C_GC,
     .fields = F_GARBAGE_COLLECTION},
    {JFR_GC_PHASE_PAUSE, "jdk.GCPhasePause", EVENT, "GC Phase Pause", NULL, C_GC_PHASES,
     .fields = F_GC_PHASE_PAUSE},
    {JFR_GC_HEAP_SUMMARY, "jdk.GCHeapSummary", EVENT, "Heap Summary", NULL,
     {"Java Virtual Machine", "GC", "Heap"}, .fields = F_GC_HEAP_SUMMARY},
    {JFR_CPU_LOAD, "jdk.CPULoad", EVENT, "CPU Load",
     "The JVM's CPU as shares of all the host's CPUs; machineTotal is the JVM's own "
     "(ringprof does not read the machine's)",
     {"Operating System", "Processor"}, .fields = F_CPU_LOAD},
    {JFR_RESIDENT_SET_SIZE, "jdk.ResidentSetSize", EVENT, "Resident Set Size", NULL,
     {"Java Virtual Machine", "Memory"}, .fields = F_RESIDENT_SET_SIZE},
    {JFR_CLASS_LOADING_STATISTICS, "jdk.ClassLoadingStatistics", EVENT,
     "Class Loading Statistics", NULL, {"Java Application", "Statistics"},
     .fields = F_CLASS_LOADING_STATISTICS},
    {JFR_JVM_INFORMATION, "jdk.JVMInformation", EVENT, "JVM Information",
     "jvmArguments holds the ringprof agent's options", {"Java Virtual Machine"},
     .fields = F_JVM_INFORMATION},
    {JFR_THREAD_CPU_LOAD, "jdk.ThreadCPULoad", EVENT, "Thread CPU Load",
     "A thread's CPU since its previous reading, as a share of all the host's CPUs: "
     "user is its user and system CPU together (ringprof reads the thread's CPU clock, "
     "which does not split them), system is unknown (NaN)",
     {"Operating System", "Processor"}, .fields = F_THREAD_CPU_LOAD},
    {JFR_JAVA_THREAD_STATISTICS, "jdk.JavaThreadStatistics", EVENT, "Java Thread Statistics",
     NULL, {"Java Application", "Statistics"}, .fields = F_JAVA_THREAD_STATISTICS},
    {JFR_SHUTDOWN, "jdk.Shutdown", EVENT, "JVM Shutdown",
     "Not written: a ringprof recording does not say why the JVM ended", C_RUNTIME,
     .fields = F_SHUTDOWN},
    {JFR_YOUNG_GARBAGE_COLLECTION, "jdk.YoungGarbageCollection", EVENT,
     "Young Garbage Collection", NOT_RECORDED, C_GC, .fields = F_YOUNG_GARBAGE_COLLECTION},
    {JFR_OLD_GARBAGE_COLLECTION, "jdk.OldGarbageCollection", EVENT, "Old Garbage Collection",
     NOT_RECORDED, C_GC, .fields = F_OLD_GARBAGE_COLLECTION},
    {JFR_GC_PHASE_PAUSE_LEVEL1, "jdk.GCPhasePauseLevel1", EVENT, "GC Phase Pause Level 1",
     NOT_RECORDED, C_GC_PHASES, .fields = F_GC_PHASE_PAUSE},
    {JFR_GC_PHASE_PAUSE_LEVEL2, "jdk.GCPhasePauseLevel2", EVENT, "GC Phase Pause Level 2",
     NOT_RECORDED, C_GC_PHASES, .fields = F_GC_PHASE_PAUSE},
    {JFR_GC_PHASE_PAUSE_LEVEL3, "jdk.GCPhasePauseLevel3", EVENT, "GC Phase Pause Level 3",
     NOT_RECORDED, C_GC_PHASES, .fields = F_GC_PHASE_PAUSE},
    {JFR_GC_PHASE_PAUSE_LEVEL4, "jdk.GCPhasePauseLevel4", EVENT, "GC Phase Pause Level 4",
     NOT_RECORDED, C_GC_PHASES, .fields = F_GC_PHASE_PAUSE},
    {JFR_GC_CONFIGURATION, "jdk.GCConfiguration", EVENT, "GC Configuration", NOT_RECORDED,
     C_GC_CONFIGURATION, .fields = F_GC_CONFIGURATION},
    {JFR_GC_HEAP_CONFIGURATION, "jdk.GCHeapConfiguration", EVENT, "GC Heap Configuration",
     NOT_RECORDED, C_GC_CONFIGURATION, .fields = F_GC_HEAP_CONFIGURATION},

    {JFR_RP_WALL_SAMPLE, "ringprof.WallClockSample", EVENT, "Wall-Clock Sample",
     "A wall-clock sample of a thread in any state (native and io are also "
     "jdk.NativeMethodSample); weight is the wall time it stands for",
     C_RP, .fields = F_RP_WALL_SAMPLE},
    {JFR_RP_SAMPLE, "ringprof.Sample", EVENT, "Sample",
     "A sample of an event kind this converter has no JFR type for", C_RP,
     .fields = F_RP_SAMPLE},
    {JFR_RP_GAUGE, "ringprof.Gauge", EVENT, "Telemetry Gauge",
     "A telemetry reading; a name ending in .total is cumulative", C_RP,
     .fields = F_RP_GAUGE},
    {JFR_RP_THREAD_CPU, "ringprof.ThreadCPUTime", EVENT, "Thread CPU Time",
     "A thread's cumulative CPU time at a flush", C_RP, .fields = F_RP_THREAD_CPU},
    {JFR_RP_COUNTER, "ringprof.Counter", EVENT, "Counter",
     "What a segment of the recording added to a counter (lost.* are losses)", C_RP,
     .fields = F_RP_COUNTER},
    {JFR_RP_RECORDING, "ringprof.Recording", EVENT, "Recording Chunk",
     "One chunk file of a ringprof recording: its header and what reading it found",
     C_RP, .fields = F_RP_RECORDING},
    {JFR_RP_CPU_SAMPLE, "ringprof.CPUSample", EVENT, "CPU Sample",
     "A CPU sample: weight is the CPU it stands for, executionSamples the "
     "jdk.ExecutionSample events written for it at its time (0 when those before "
     "already stand for its CPU)",
     C_RP, .fields = F_RP_CPU_SAMPLE},
    {JFR_RP_ALLOCATION_SAMPLE, "ringprof.AllocationSample", EVENT, "Allocation Sample",
     "An allocation sample (also jdk.ObjectAllocationSample): objects and bytes it "
     "stands for, the object's size, its array length (-1: not an array)",
     C_RP, .fields = F_RP_ALLOCATION_SAMPLE},
    {JFR_RP_LIVE_OBJECT, "ringprof.LiveObject", EVENT, "Live Object",
     "A sampled object live at a snapshot (also jdk.OldObjectSample): what it stands "
     "for and the GCs it survived",
     C_RP, .fields = F_RP_LIVE_OBJECT},

    {JFR_A_LABEL, "jdk.jfr.Label", ANNOTATION, .fields = F_VALUE},
    {JFR_A_DESCRIPTION, "jdk.jfr.Description", ANNOTATION, .fields = F_VALUE},
    {JFR_A_CATEGORY, "jdk.jfr.Category", ANNOTATION, .fields = F_VALUES},
    {JFR_A_CONTENT_TYPE, "jdk.jfr.ContentType", ANNOTATION, .fields = F_NONE},
    {JFR_A_TIMESTAMP, "jdk.jfr.Timestamp", ANNOTATION, "Timestamp", .fields = F_VALUE},
    {JFR_A_TIMESPAN, "jdk.jfr.Timespan", ANNOTATION, "Timespan", .fields = F_VALUE},
    {JFR_A_DATA_AMOUNT, "jdk.jfr.DataAmount", ANNOTATION, "Data Amount", .fields = F_VALUE},
    {JFR_A_MEMORY_ADDRESS, "jdk.jfr.MemoryAddress", ANNOTATION, "Memory Address",
     .fields = F_NONE},
    {JFR_A_UNSIGNED, "jdk.jfr.Unsigned", ANNOTATION, "Unsigned Value", .fields = F_NONE},
    {JFR_A_PERCENTAGE, "jdk.jfr.Percentage", ANNOTATION, "Percentage", .fields = F_NONE},
    {JFR_A_RELATIONAL, "jdk.jfr.Relational", ANNOTATION, "Relation", .fields = F_NONE},
    {JFR_A_GC_ID, "jdk.types.GcId", ANNOTATION, .fields = F_NONE},
    {JFR_A_MONITOR_ADDRESS, "jdk.types.JavaMonitorAddress", ANNOTATION, .fields = F_NONE},
};

/* ------------------------------------------------------- metadata event -- */

/* The element tree is written into `tree` as strings are interned into `st`;
 * the string table is written before it. */
struct meta {
    struct rp_strtab st;
    struct rp_jfr_buf tree;
};

static void s(struct meta *m, const char *str)
{
    rp_jfr_varint(&m->tree, rp_strtab_cstr(&m->st, str));
}

static void attr(struct meta *m, const char *key, const char *value)
{
    s(m, key);
    s(m, value);
}

static void attr_id(struct meta *m, const char *key, int id)
{
    char num[16];
    snprintf(num, sizeof num, "%d", id);
    attr(m, key, num);
}

/* An annotation element with `nvalues` values (0, 1: "value", more:
 * "value-0", "value-1", ...). */
static void annotation(struct meta *m, int type, const char *const *values, int nvalues)
{
    s(m, "annotation");
    rp_jfr_varint(&m->tree, 1 + (uint64_t)nvalues);
    attr_id(m, "class", type);
    for (int i = 0; i < nvalues; i++) {
        char key[16];
        if (nvalues == 1 && type != JFR_A_CATEGORY)
            snprintf(key, sizeof key, "value");
        else
            snprintf(key, sizeof key, "value-%d", i);
        attr(m, key, values[i]);
    }
    rp_jfr_varint(&m->tree, 0);
}

static void annotation1(struct meta *m, int type, const char *value)
{
    annotation(m, type, &value, value ? 1 : 0);
}

/* The annotation each field flag stands for, in the JDK's order. */
static const struct {
    unsigned flag;
    int type;
    const char *value;
} FIELD_ANNOTATIONS[] = {
    {F_UNSIGNED, JFR_A_UNSIGNED, NULL},
    {F_TICKS, JFR_A_TIMESTAMP, "TICKS"},
    {F_MILLIS, JFR_A_TIMESTAMP, "MILLISECONDS_SINCE_EPOCH"},
    {F_SPAN, JFR_A_TIMESPAN, "TICKS"},
    {F_NANOS, JFR_A_TIMESPAN, "NANOSECONDS"},
    {F_MS_SPAN, JFR_A_TIMESPAN, "MILLISECONDS"},
    {F_BYTES, JFR_A_DATA_AMOUNT, "BYTES"},
    {F_ADDR, JFR_A_MEMORY_ADDRESS, NULL},
    {F_PCT, JFR_A_PERCENTAGE, NULL},
    {F_GCID, JFR_A_GC_ID, NULL},
    {F_MONITOR, JFR_A_MONITOR_ADDRESS, NULL},
};
#define N_FIELD_ANNOTATIONS (sizeof FIELD_ANNOTATIONS / sizeof FIELD_ANNOTATIONS[0])

static void field(struct meta *m, const struct field *f)
{
    s(m, "field");
    rp_jfr_varint(&m->tree, 2 + !!(f->flags & F_CP) + !!(f->flags & F_ARRAY));
    attr(m, "name", f->name);
    attr_id(m, "class", f->type);
    if (f->flags & F_CP)
        attr(m, "constantPool", "true");
    if (f->flags & F_ARRAY)
        attr(m, "dimension", "1");
    uint64_t n = !!f->label;
    for (size_t i = 0; i < N_FIELD_ANNOTATIONS; i++)
        n += !!(f->flags & FIELD_ANNOTATIONS[i].flag);
    rp_jfr_varint(&m->tree, n);
    if (f->label)
        annotation1(m, JFR_A_LABEL, f->label);
    for (size_t i = 0; i < N_FIELD_ANNOTATIONS; i++)
        if (f->flags & FIELD_ANNOTATIONS[i].flag)
            annotation1(m, FIELD_ANNOTATIONS[i].type, FIELD_ANNOTATIONS[i].value);
}

/* The annotations that are themselves annotated: content types (how a value
 * reads: a time, a size, ...) and relational ones (ids that join events). */
static int is_content_type(int id)
{
    return id == JFR_A_TIMESTAMP || id == JFR_A_TIMESPAN || id == JFR_A_DATA_AMOUNT ||
           id == JFR_A_MEMORY_ADDRESS || id == JFR_A_PERCENTAGE || id == JFR_A_UNSIGNED;
}

static int is_relational(int id)
{
    return id == JFR_A_GC_ID || id == JFR_A_MONITOR_ADDRESS;
}

static void class_element(struct meta *m, const struct type *t)
{
    size_t nfields = 0, ncat = 0;
    while (t->fields && t->fields[nfields].name)
        nfields++;
    while (ncat < 3 && t->category[ncat])
        ncat++;
    s(m, "class");
    rp_jfr_varint(&m->tree, 2 + !!t->super + !!t->simple);
    attr_id(m, "id", t->id);
    attr(m, "name", t->name);
    if (t->super)
        attr(m, "superType", t->super);
    if (t->simple)
        attr(m, "simpleType", "true");
    rp_jfr_varint(&m->tree, !!t->label + !!t->description + !!ncat +
                                is_content_type(t->id) + is_relational(t->id) + nfields);
    if (t->label)
        annotation1(m, JFR_A_LABEL, t->label);
    if (t->description)
        annotation1(m, JFR_A_DESCRIPTION, t->description);
    if (ncat)
        annotation(m, JFR_A_CATEGORY, t->category, (int)ncat);
    if (is_content_type(t->id))
        annotation1(m, JFR_A_CONTENT_TYPE, NULL);
    if (is_relational(t->id))
        annotation1(m, JFR_A_RELATIONAL, NULL);
    for (size_t i = 0; i < nfields; i++)
        field(m, &t->fields[i]);
}

void rp_jfr_metadata(struct rp_jfr_buf *out, int64_t ticks)
{
    struct meta m = {0};
    rp_strtab_init(&m.st);
    s(&m, "root");
    rp_jfr_varint(&m.tree, 0);                     /* no attributes             */
    rp_jfr_varint(&m.tree, 2);                     /* metadata, region          */
    s(&m, "metadata");
    rp_jfr_varint(&m.tree, 0);
    rp_jfr_varint(&m.tree, sizeof TYPES / sizeof TYPES[0]);
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        class_element(&m, &TYPES[i]);
    s(&m, "region");
    rp_jfr_varint(&m.tree, 2);
    attr(&m, "locale", "en_US");
    attr(&m, "gmtOffset", "0");
    rp_jfr_varint(&m.tree, 0);

    struct rp_jfr_buf body = {0};
    rp_jfr_varint(&body, JFR_METADATA);
    rp_jfr_long(&body, ticks);                     /* start time                */
    rp_jfr_varint(&body, 0);                       /* duration                  */
    rp_jfr_varint(&body, 1);                       /* metadata id               */
    rp_jfr_varint(&body, m.st.n);
    for (size_t i = 0; i < m.st.n; i++)
        rp_jfr_string(&body, m.st.s[i]);
    rp_jfr_bytes(&body, m.tree.p, m.tree.n);
    rp_jfr_event(out, &body);
    rp_jfr_buf_free(&body);
    rp_jfr_buf_free(&m.tree);
    rp_strtab_free(&m.st);
}
