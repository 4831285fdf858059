#!/usr/bin/env python3
"""bench/push.py -- what `ringprof push` costs and sends. Prints figures; it
asserts nothing.

    bench/push.py [BUILD_DIR [SECONDS [THREADS]]]

For each agent configuration, the defaults (interval=10ms, alloc=512k) and
interval=1ms, both with chunktime=10s (a fleet's chunk a minute, six times as
often, so a short run has several chunks):

  sidecar   tests/java/BenchWork (THREADS threads, SECONDS) with the agent, and
            `ringprof push --follow` beside it sending OTLP to a server of the
            bench's own on 127.0.0.1 (tests/push/pushlib.py: it answers 200 at
            once); after the JVM ends and push has sent the last chunk, push is
            stopped and its CPU (user + system) and peak RSS come from wait4.
            CPU is also given per minute of recording, as a share of one core.
  bytes     `ringprof push --dry-run` of the same chunk files as OTLP, Pyroscope
            pprof and Pyroscope jfr: the bytes of the request bodies (what goes
            on the wire, gzipped as sent) per minute of recording, against the
            chunk files' own bytes per minute.
  speed     `ringprof push` of the same chunk files to the server, once per
            format, interleaved (otlp, pprof, jfr, otlp, ...), 3 rounds: chunk
            MB/s by the clock and CPU s per MB of chunk files, medians. Small
            chunks: each run's start (libcurl and OpenSSL) weighs in.
  large     the same for one large chunk: bench_convert --quick's 10 MB
            recording (0.8 M CPU samples on 20 000 stacks, bench_convert.c), its
            chunk MB/s and CPU s per MB without the start's share.

Defaults: build, 60 s, 2 threads.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "convert"))
sys.path.insert(0, os.path.join(ROOT, "tests", "push"))
from pushlib import Backend  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
SECONDS = int(sys.argv[2]) if len(sys.argv) > 2 else 60
THREADS = int(sys.argv[3]) if len(sys.argv) > 3 else 2
RINGPROF = os.path.join(BUILD, "tools", "ringprof")
AGENT = os.path.join(BUILD, "src", "libringprof.so")
JAR = os.path.join(BUILD, "tests", "agent", "agent_programs.jar")
JAVA = os.environ.get("JAVA", "java")
CONFIGS = [("defaults", "interval=10ms,alloc=512k"), ("interval=1ms", "interval=1ms,alloc=512k")]
FORMATS = [("otlp", ["--protocol", "otlp"]), ("pprof", ["--protocol", "pyroscope"]),
           ("jfr", ["--protocol", "pyroscope", "--format", "jfr"])]


def wait4(p):
    """Wait for p: (exit status, CPU s of user + system, peak RSS in MB)."""
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def chunks(rec):
    return sorted(os.path.join(rec, f) for f in os.listdir(rec) if f.endswith(".rpc"))


def all_sent(rec):
    n = len(chunks(rec))
    try:
        with open(os.path.join(rec, ".ringprof-push.state")) as f:
            return n and any(l.split()[:1] == ["rec"] and int(l.split()[2]) == n for l in f)
    except OSError:
        return False


def sidecar(work, name, opts):
    rec = os.path.join(work, name.replace("=", "-"))
    os.makedirs(rec)
    server = Backend()
    push = subprocess.Popen([RINGPROF, "push", "--follow", rec, "--protocol", "otlp",
                             "--quiet", server.url()], stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    subprocess.run([JAVA, "-agentpath:%s=dir=%s,chunktime=10s,%s" % (AGENT, rec, opts),
                    "-cp", JAR, "BenchWork", str(THREADS), str(SECONDS)],
                   stdout=subprocess.DEVNULL, check=True)
    while not all_sent(rec):
        time.sleep(0.1)
    lag = time.monotonic() - t0 - SECONDS
    push.terminate()
    _, cpu, rss = wait4(push)
    server.close()
    size = sum(os.path.getsize(c) for c in chunks(rec))
    minutes = SECONDS / 60.0
    print("%-13s sidecar: %d chunks, %.1f kB of chunk files a minute; push CPU %.3f s "
          "(%.2f%% of a core), peak RSS %.1f MB, %d requests; last chunk sent %.1f s "
          "after the JVM ended" % (name, len(chunks(rec)), size / 1e3 / minutes, cpu,
                                   100.0 * cpu / SECONDS, rss, len(server.requests), lag))
    return rec, size


def wire_bytes(work, rec, size):
    minutes = SECONDS / 60.0
    line = "%-13s bytes a minute: chunk files %.1f kB" % ("", size / 1e3 / minutes)
    for fmt, args in FORMATS:
        out = tempfile.mkdtemp(dir=work)
        subprocess.run([RINGPROF, "push", "--dry-run", out, "--quiet"] + args +
                       ["http://127.0.0.1:9"] + chunks(rec), check=True,
                       stderr=subprocess.DEVNULL)
        sent = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out)
                   if f.endswith(".body"))
        line += "; %s %.1f kB (%.2fx)" % (fmt, sent / 1e3 / minutes, sent / size)
        shutil.rmtree(out)
    print(line)


def speed(rec, size, title="speed", rounds=3):
    runs = {fmt: [] for fmt, _ in FORMATS}
    server = Backend()
    files = chunks(rec)
    for _ in range(rounds):
        for fmt, args in FORMATS:
            t0 = time.monotonic()
            p = subprocess.Popen([RINGPROF, "push", "--quiet", "--timeout", "10m"] + args +
                                 [server.url()] + files, stderr=subprocess.DEVNULL)
            _, cpu, rss = wait4(p)
            runs[fmt].append((time.monotonic() - t0, cpu, rss))
    server.close()
    mb = size / 1e6
    line = "%-13s %s (medians of %d):" % ("", title, rounds)
    for fmt, _ in FORMATS:
        wall = statistics.median(r[0] for r in runs[fmt])
        cpu = statistics.median(r[1] for r in runs[fmt])
        rss = max(r[2] for r in runs[fmt])
        line += " %s %.2f MB/s, %.2f CPU s/MB, %.0f MB RSS;" % (fmt, mb / wall, cpu / mb, rss)
    print(line.rstrip(";"))


def main():
    for f in (RINGPROF, AGENT, JAR):
        if not os.path.exists(f):
            sys.exit("push.py: %s missing; build first: ninja -C %s" % (f, BUILD))
    work = tempfile.mkdtemp(prefix="rp-pushbench-")
    try:
        print("push.py: BenchWork %d threads x %d s, chunktime=10s, %d CPUs, load %.1f"
              % (THREADS, SECONDS, os.cpu_count(), os.getloadavg()[0]))
        for name, opts in CONFIGS:
            rec, size = sidecar(work, name, opts)
            wire_bytes(work, rec, size)
            speed(rec, size)
        big = os.path.join(work, "large")
        subprocess.run([os.path.join(BUILD, "bench", "bench_convert"), "--quick", "--runs",
                        "1", "--keep", "--dir", big], stdout=subprocess.DEVNULL, check=True)
        size = sum(os.path.getsize(c) for c in chunks(big))
        print("%-13s %d chunk of %.1f MB (bench_convert --quick)" % ("large", len(chunks(big)),
                                                                     size / 1e6))
        speed(big, size, "large")
    finally:
        shutil.rmtree(work, True)


main()
