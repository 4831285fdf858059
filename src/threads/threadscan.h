/*
 * src/threads/threadscan.h — the /proc/self/task scan: slots for the threads that never
 * pass a ThreadStart of ours (GC, JIT compilers, the VM thread, native threads),
 * and their retirement.
 *
 * Each pass, on the flusher: (1) retires every slot whose timer another thread
 * made (RP_SLOT_REMOTE_TIMER: scanned or adopted, so no ThreadEnd of ours is
 * sure to end it) once that timer reads disarmed, i.e. its thread died
 * (threadtimer.h); (2) re-reads the names of scanned threads that took samples
 * since the last pass (a thread may rename itself; a comm that is the name it
 * has cut to 15 bytes leaves the name); (3) registers every tid in
 * /proc/self/task that has no slot and is not an agent thread, named from
 * /proc/self/task/<tid>/comm, RP_SLOT_SCANNED | RP_SLOT_REMOTE_TIMER, with a
 * timer on its CPU clock made from the flusher; (4) names every scanned thread
 * whose comm the kernel cut to 15 bytes by its full name if it is one of the
 * JVM's hidden Java threads (vmnames.h: "C2 CompilerThre" is "C2
 * CompilerThread0"), trying a few times per thread, as a read may fail while a
 * GC moves what it follows.
 *
 * Threads: the flusher (one caller at a time); not async-signal-safe. It takes
 * the registry lock per slot, never while it reads /proc.
 */
#ifndef RINGPROF_SRC_THREADSCAN_H
#define RINGPROF_SRC_THREADSCAN_H

/* rp_threads_scan: one pass as above. @return threads added. */
int rp_threads_scan(void);

#endif
