/*
 * ringprof/recorder.h — the recorder library: everything that carries samples from
 * application threads to files on disk and back, with no JVM in it.
 *
 *   ring.h       per-thread SPSC byte rings (producer side async-signal-safe)
 *   chunk.h      chunk writer (flusher thread) and streaming reader (tools)
 *   recording.h  a recording directory: naming, rotation, retention
 *   format.h     the on-disk format; docs/format.md is its prose twin
 *
 * Link with the static library `ringprof_recorder` (meson: recorder_dep) and liblz4.
 */
#ifndef RINGPROF_RECORDER_H
#define RINGPROF_RECORDER_H

#include "ringprof/format.h"
#include "ringprof/ring.h"
#include "ringprof/chunk.h"
#include "ringprof/recording.h"

#endif
