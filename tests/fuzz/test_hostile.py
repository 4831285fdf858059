#!/usr/bin/env python3
"""The `ringprof` command on hostile chunk files, with the memory and time each may take.

usage: test_hostile.py RINGPROF RP_HOSTILE REGRESSIONS_DIR

Each file is one hostile thing (tests/fuzz/rp_hostile.c says what): references to
ids never defined (kept in tests/fuzz/regressions/convert/ too), strings that LZ4
packs 250 to one, a stack of 128 Ki frames, 300 000 threads with a name, a kind
and a counter name each. RINGPROF_LONG_TESTS=1 adds a stack of 1 Mi frames, the
deepest the format allows, in every format, and 300 000 threads with a monitor,
an owner, a parked site and a blocker each for `locks` (about 25 s more). Every
command runs as a child process and must exit 0 (or 1 where it found nothing to
show, with the message that says so), say in one diagnostic what was wrong
where the file is damaged, and stay within:

  memory  its peak resident set (wait4's ru_maxrss) at most what the command
          takes on a clean 500-byte chunk, plus the reader's bound
          (docs/format.md, "Reading": its largest segment, plus
          RP_READER_POOL_FACTOR = 16 times the file, plus RP_READER_POOL_SLACK =
          8 MiB), plus what the tool's own model costs (docs/tool.md: at most 200
          bytes a call-path node for convert, a thread, kind or name for
          summary; stated per file below), plus 8 MiB for the allocator's
          slack. The address space is capped at 4 GiB besides, so a regression
          fails with "out of memory" instead of filling the machine.
  time    30 s of CPU (RLIMIT_CPU): a hang detector, not a speed test, on CPU
          time so that a loaded machine cannot fail it. The slowest command here
          takes under 3 s; the quadratic look-ups these files were made against
          took minutes (`summary` on the 300 000 threads: over 100 s).
  output  for tree and backtrace on the deep stack, 400 bytes a line: a line's
          indentation stops growing at OUT_INDENT_MAX levels (docs/profiles.md).
"""
import os
import resource
import struct
import subprocess
import sys
import tempfile

RINGPROF, HOSTILE, REGRESSIONS = sys.argv[1], sys.argv[2], sys.argv[3]
POOL_FACTOR, POOL_SLACK = 16, 8 << 20        # include/ringprof/chunk.h
NODE_BYTES = 200                             # docs/tool.md: the model's cost a node
MARGIN = 8 << 20
CPU_SECONDS = 30
STACK_MAX = 1 << 20                          # RP_CHUNK_STACK_MAX
FAILS = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def limits():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 5))


def run(args, out_limit=None):
    """Run ringprof ARGS: (exit status, the first 4 MiB and the last MiB of stdout,
    its size, stderr, peak RSS in bytes, CPU seconds). Past out_limit bytes of
    output the child is killed: an output that big is the failure."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([RINGPROF] + args, stdout=subprocess.PIPE, stderr=err,
                             preexec_fn=limits)
        kept, last, size = [], b"", 0
        while True:
            b = p.stdout.read(1 << 20)
            if not b:
                break
            size += len(b)
            if len(kept) < 4:
                kept.append(b)
            else:
                last = (last + b)[-(1 << 20):]
            if out_limit is not None and size > out_limit:
                p.kill()
                break
        p.stdout.close()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
    return (p.returncode, b"".join(kept) + last, size, text, ru.ru_maxrss * 1024,
            ru.ru_utime + ru.ru_stime)


def reader_bound(path):
    """The reader's memory for `path` (docs/format.md): its largest segment's
    payload, and the pools' budget at the file's end."""
    with open(path, "rb") as f:
        data = f.read()
    off = struct.unpack_from("<I", data, 12)[0]
    seg = 0
    while off + 48 <= len(data):
        raw, comp = struct.unpack_from("<II", data, off + 12)
        seg = max(seg, raw)
        off += 48 + comp
    return seg + POOL_FACTOR * len(data) + POOL_SLACK


def hostile(tmp, what, *n):
    path = os.path.join(tmp, what + ".rpc")
    subprocess.run([HOSTILE, what, path] + [str(x) for x in n], check=True)
    return path


def expect(name, args, path, base, nodes=0, diag=None, quiet=False, out_limit=None,
           stdout_has=None, nothing=None):
    """Run ringprof ARGS on `path` and check it (see the top). `nothing`: the
    command may also exit 1 with this message, having found nothing to show."""
    rc, out, size, err, rss, cpu = run(args, out_limit)
    bound = base + reader_bound(path) + NODE_BYTES * nodes + MARGIN
    print("%-44s exit %d, %5.2f s CPU, %6.1f MiB resident (bound %6.1f), %d bytes out"
          % (name, rc, cpu, rss / 2**20, bound / 2**20, size))
    check(rc == 0 or (nothing and rc == 1 and nothing in err),
          "%s: exit %d: %s" % (name, rc, err.strip()[-300:]))
    check(rss <= bound, "%s: %.1f MiB resident, over the bound of %.1f MiB"
          % (name, rss / 2**20, bound / 2**20))
    check(cpu < CPU_SECONDS, "%s: %.1f s of CPU" % (name, cpu))
    if out_limit is not None:
        check(size <= out_limit, "%s: more than %d bytes of output" % (name, out_limit))
    if diag:
        check(diag in err, "%s: no diagnostic '%s' in: %s" % (name, diag, err[-300:]))
    if quiet:
        check(not err, "%s: problems reported where there are none: %s"
              % (name, err[-300:]))
    if stdout_has:
        check(stdout_has.encode() in out, "%s: '%s' not in its output" % (name, stdout_has))
    return out


def main():
    long = os.environ.get("RINGPROF_LONG_TESTS") == "1"
    with tempfile.TemporaryDirectory() as tmp:
        clean = hostile(tmp, "clean")
        rss = 0
        for cmd in (["summary"], ["convert"], ["diff", "--overlap", clean]):
            rc, _, _, err, r, _ = run(cmd + [clean])
            check(rc == 0 and not err, "clean chunk: %s exits %d: %s" % (cmd[0], rc, err))
            rss = max(rss, r)
        print("clean chunk: %.1f MiB resident at most" % (rss / 2**20))
        base = {"summary": rss, "convert": rss, "diff": rss, "locks": rss}

        # Issue 28, item 5: ids never defined, each in a regression file of its own.
        jfr = os.path.join(tmp, "out.jfr")
        for name, shown in (("undefined-frame-id-4294967295", "[unknown frame]"),
                            ("undefined-method-id-4294967294", "[unknown method]"),
                            ("undefined-thread-id-4294967295", "[unknown thread]"),
                            ("undefined-kind-id-4294967295", None)):
            path = os.path.join(REGRESSIONS, name)
            check(os.path.getsize(path) < 1024, "%s: a small file" % name)
            for fmt in ("collapsed", "tree", "flat", "timeline"):
                expect("%s %s" % (name, fmt),
                       ["convert", "--format", fmt] +
                       (["--per-thread"] if fmt == "collapsed" else []) + [path],
                       path, base["convert"], diag="never defined",
                       stdout_has=shown if fmt == "collapsed" else None,
                       nothing="timeline: no wall samples")
            expect(name + " jfr", ["convert", "--format", "jfr", "-o", jfr, path], path,
                   base["convert"], diag="never defined")
            expect(name + " summary", ["summary", path], path, base["summary"],
                   diag="never defined", stdout_has="unresolved references")
            expect(name + " diff", ["diff", "--overlap", path, path], path, base["diff"],
                   diag="never defined")
            expect(name + " locks", ["locks", path], path, base["locks"],
                   diag="never defined", nothing="the inputs have no lock samples")

        # Extras that name class 2^32 + 2 and thread 2^32 + 1: no class, no thread,
        # never class 2 (LockSupport, on no stack) that the low half aliases.
        wide = hostile(tmp, "wide-id")
        for fmt in ("jfr", "timeline"):
            out_path = os.path.join(tmp, "wide." + fmt)
            expect("wide-id " + fmt, ["convert", "--format", fmt, "-o", out_path, wide],
                   wide, base["convert"])
            with open(out_path, "rb") as f:
                check(b"LockSupport" not in f.read(),
                      "wide-id %s: a 64-bit class id taken for its low 32 bits" % fmt)

        # Item 6: 4 segments of 60 strings of 1 MiB, 1 MB in the file.
        bomb = hostile(tmp, "string-bomb", 4)
        for cmd in (["summary"], ["convert", "--format", "collapsed"]):
            expect("string-bomb " + cmd[0], cmd + [bomb], bomb, base[cmd[0]],
                   diag="memory budget")

        # Item 7: a deep stack (8 KB in the file) in the layouts that indent, and
        # in the others; all of them at the format's limit in the long run.
        depth = STACK_MAX if long else STACK_MAX // 8
        deep = hostile(tmp, "deep-stack", depth)
        nodes = depth + 4
        for fmt in ("tree", "backtrace", "collapsed", "flat", "html", "pprof") + \
                (("jfr",) if long else ()):
            indents = fmt in ("tree", "backtrace")
            to_file = ["-o", os.path.join(tmp, "deep.jfr")] if fmt == "jfr" else []
            expect("deep-stack %d %s" % (depth, fmt),
                   ["convert", "--quiet", "--format", fmt] + to_file + [deep], deep,
                   base["convert"], nodes=nodes,
                   out_limit=400 * (nodes + 100) if indents else None,
                   stdout_has="[depth %d] " % (depth - 1) if indents else None)

        # Item 8: 300 000 threads, kinds and counter names.
        threads = hostile(tmp, "threads", 300000)
        out = expect("threads summary", ["summary", threads], threads, base["summary"],
                     nodes=3 * 300000, quiet=True)
        check(b"threads     300001" in out, "threads summary: not 300001 threads")
        expect("threads convert", ["convert", "--event", "k0", "--format", "flat", threads],
               threads, base["convert"], nodes=8, quiet=True, stdout_has="app.Deep.leaf")
        if long:   # and monitors, owners, parked sites, blockers
            many = hostile(tmp, "many", 300000)
            # Two profiles (lock and wall) and locks' own tables: up to 20 entries
            # (nodes, methods, frames, threads, monitors, sites, owners, blockers)
            # for each of the file's threads.
            expect("many locks", ["locks", many], many, base["locks"], nodes=20 * 300000,
                   quiet=True, stdout_has="app.C")

    print("%d of %d checks passed" % (CHECKS[0] - len(FAILS), CHECKS[0]))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
