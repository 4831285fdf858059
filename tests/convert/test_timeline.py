#!/usr/bin/env python3
"""convert --format timeline against rp_testwriter's "timeline" recording.

usage: test_timeline.py RINGPROF RP_TESTWRITER

The recording (tests/convert/rp_testwriter.c, write_timeline) has five threads
in known states over 30 s, one lock wait, one GC pause and eleven gauges at
1 Hz. With --width 30 every column is one second, so the expected chart can be
written down by hand: the sleeper sleeps in every column, the worker is
blocked in columns 10-19, "late" is absent before column 15, and so on. At
--width 47 the columns do not fall on sample boundaries; there the expected
letters, counts and telemetry are recomputed from the writer's manifest (every
sample and reading it wrote) with the documented rules, independently of the
converter. The HTML and SVG outputs are parsed (html.parser, and xml for the
SVG) and checked for a row per thread with the right state spans, and for
holding no URL. Errors: no wall samples nor gauges, telemetry only, bad options.
The "timeline-many" recording (2000 threads, 1900 parked) checks --rows, the
note on the threads left out, the counts of all of them, --sort busy, the
escaping of a name holding markup, and prints the conversion times (not
asserted: the machine is shared).
"""
import html.parser
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

RINGPROF, WRITER = sys.argv[1], sys.argv[2]
FAILS = []
CHECKS = [0]
STATES = ["unknown", "running", "runnable", "native", "io", "blocked", "waiting",
          "parked", "sleeping"]
LETTER = dict(zip(range(9), "?RrNIBWPS"))
SEC = 10**9


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def run(*args, rc=0):
    p = subprocess.run([RINGPROF, "convert", "--quiet"] + list(args),
                       capture_output=True, text=True)
    if p.returncode != rc:
        FAILS.append("exit %d, not %d: %s\n%s" % (p.returncode, rc, args, p.stderr))
        print("FAIL: exit %d for %s: %s" % (p.returncode, args, p.stderr))
    return p


def parse_text(out):
    """The chart rows {name: letters} and the table [{col: value}]."""
    rows, table, head = {}, [], None
    for line in out.splitlines():
        m = re.match(r"^(\S.*?) \(tid (\d+)\)\s* \|(.*)\|$", line)
        if m:
            rows[m.group(1)] = m.group(3)
            continue
        m = re.match(r"^(GC pauses|lock waits|threads seen|[a-z ]+?)\s+\|(.*)\|", line)
        if m:
            rows["@" + m.group(1).strip()] = m.group(2)
            continue
        if line.startswith("col t_s alive"):
            head = line.split()
            continue
        if head and line and line[0].isdigit():
            table.append(dict(zip(head, line.split())))
    return rows, table


# ------------------------------------------------------------ the truth --

LIVES = {"sleeper": (0, 30), "worker": (0, 30), "late": (15, 30), "ender": (0, 24),
         "reader": (0, 18)}


def hand_rows():
    """The chart at --width 30, from the scenario's description."""
    r = {}
    r["sleeper"] = "S" * 30
    r["worker"] = "R" * 10 + "B" * 10 + "R" * 10
    r["late"] = " " * 15 + "P" * 15
    r["ender"] = "W" * 24 + " " * 6
    r["reader"] = "N" * 6 + "I" * 6 + "r" * 6 + " " * 12
    return r


def columns(manifest, w):
    """Letters per thread and counts per column, recomputed from the manifest:
    each wall sample covers [t - weight, t]; a column shows the state covering
    most of it, 'no sample' competing like a state; ties to the lower state."""
    samples = manifest["samples"]
    t0 = manifest["wall0"]
    t1 = t0 + 30 * SEC
    bounds = [t0 + (t1 - t0) * i // w for i in range(w)] + [t1]
    cov = {}
    for s in samples:
        if s.get("kind") != "wall":
            continue
        a, z = s["t"] - s["weight"], s["t"]
        c = cov.setdefault(s["thread"], [[0] * 9 for _ in range(w)])
        for i in range(w):
            lo, hi = max(a, bounds[i]), min(z, bounds[i + 1])
            if hi > lo:
                c[i][s["state"]] += hi - lo
    letters, alive = {}, [0] * w
    per_state = [[0] * 9 for _ in range(w)]
    for name, c in cov.items():
        row = ""
        for i in range(w):
            width = bounds[i + 1] - bounds[i]
            best = max(range(9), key=lambda k: (c[i][k], -k))
            none = max(0, width - sum(c[i]))
            if c[i][best] and c[i][best] >= none:
                row += LETTER[best]
                alive[i] += 1
                per_state[i][best] += 1
            else:
                row += " "
        letters[name] = row
    return letters, alive, per_state, bounds


GAUGES = {  # name: (table column, scale, cumulative)
    "proc.cpu_user_ns.total": ("cpu_user%", 1e-7, True),
    "proc.cpu_sys_ns.total": ("cpu_sys%", 1e-7, True),
    "proc.rss_bytes": ("rss_MiB", 1 / 1048576, False),
    "heap.used_bytes": ("heap_used_MiB", 1 / 1048576, False),
    "heap.committed_bytes": ("heap_committed_MiB", 1 / 1048576, False),
    "gc.count.total": ("gc_per_s", 1, True),
    "gc.time_ns.total": ("gc_time%", 1e-7, True),
    "threads.os": ("os_threads", 1, False),  # a level
    "threads.runnable": ("os_runnable", 1, False),
    "classes.loaded": ("classes", 1, False),
    "agent.cpu_ns.total": ("agent_cpu%", 1e-7, True),
}


def gauge_columns(manifest, name, bounds):
    pts = sorted((s["t"], s["value"]) for s in manifest["samples"] if s.get("gauge") == name)
    _, scale, total = GAUGES[name]
    out = []
    for i in range(len(bounds) - 1):
        a, z = max(bounds[i], pts[0][0]), min(bounds[i + 1], pts[-1][0])
        if a >= z:
            out.append(None)
            continue
        if total:
            def at(t):
                for (ta, va), (tb, vb) in zip(pts, pts[1:]):
                    if ta <= t <= tb:
                        return va + (vb - va) * (t - ta) / (tb - ta)
            out.append((at(z) - at(a)) / (z - a) * 1e9 * scale)
        else:
            acc = 0.0
            for k, (t, v) in enumerate(pts):
                e = pts[k + 1][0] if k + 1 < len(pts) else z
                lo, hi = max(t, a), min(e, z)
                if hi > lo:
                    acc += v * (hi - lo)
            out.append(acc / (z - a) * scale)
    return out


def close(a, b):
    return abs(a - b) <= 1e-4 * max(1.0, abs(b))


# ----------------------------------------------------------------- tests --

def test_text_by_hand(rec):
    p = run("--format", "timeline", "--width", "30", rec)
    rows, table = parse_text(p.stdout)
    for name, want in hand_rows().items():
        check(rows.get(name) == want, "width 30: %s is %r, want %r" % (name, rows.get(name), want))
    check(rows.get("@GC pauses") == " " * 12 + "G" + " " * 17,
          "GC pause in column 12: %r" % rows.get("@GC pauses"))
    check(rows.get("@lock waits") == " " * 10 + "1" * 10 + " " * 10,
          "lock wait in columns 10-19: %r" % rows.get("@lock waits"))
    check(len(table) == 30, "30 table lines, got %d" % len(table))
    for k, row in enumerate(table):
        alive = sum(lo <= k < hi for lo, hi in LIVES.values())
        check(int(row["alive"]) == alive, "column %d: %s threads, want %d" % (k, row["alive"], alive))
        check(int(row["sleeping"]) == 1 and int(row["blocked"]) == (10 <= k < 20),
              "column %d: state counts %s" % (k, row))
        want = {"cpu_user%": (k % 3 + 1) * 10, "cpu_sys%": 5, "rss_MiB": 100 + k,
                "heap_used_MiB": 40 + 2 * k, "heap_committed_MiB": 256,
                "gc_per_s": 1 if k == 12 else 0, "gc_time%": 5 if k == 12 else 0,
                "os_threads": 10 + alive, "os_runnable": 1 if 10 <= k < 20 else 2,
                "classes": 1000 + 10 * k, "agent_cpu%": 0.2,
                "gc_ms": 50 if k == 12 else 0, "lock_waits": 1 if 10 <= k < 20 else 0}
        for col, v in want.items():
            got = row.get(col)
            check(got is not None and close(float(got), v),
                  "column %d: %s = %s, want %s" % (k, col, got, v))


def test_text_recomputed(rec, manifest):
    w = 47
    p = run("--format", "timeline", "--width", str(w), rec)
    rows, table = parse_text(p.stdout)
    letters, alive, per_state, bounds = columns(manifest, w)
    for name, want in letters.items():
        check(rows.get(name) == want, "width 47: %s is %r, want %r" % (name, rows.get(name), want))
    gauges = {GAUGES[n][0]: gauge_columns(manifest, n, bounds) for n in GAUGES}
    for k, row in enumerate(table):
        check(int(row["alive"]) == alive[k], "width 47, column %d: alive %s, want %d"
              % (k, row["alive"], alive[k]))
        for s, name in enumerate(STATES):
            check(int(row[name]) == per_state[k][s], "width 47, column %d: %s %s, want %d"
                  % (k, name, row[name], per_state[k][s]))
        for col, vals in gauges.items():
            got = row[col]
            ok = got == "-" if vals[k] is None else got != "-" and close(float(got), vals[k])
            check(ok, "width 47, column %d: %s = %s, want %s" % (k, col, got, vals[k]))


def header_count(out, what):
    m = re.search(r"%s (\d+)" % what, out)
    return int(m.group(1)) if m else None


def test_filters(rec, manifest):
    # 10:02:08Z .. 10:02:28Z is +5 s .. +25 s: 20 columns of 1 s
    p = run("--format", "timeline", "--width", "20", "--from", "2026-11-21T10:02:08Z",
            "--to", "2026-11-21T10:02:28Z", rec)
    rows, table = parse_text(p.stdout)
    a, z = manifest["wall0"] + 5 * SEC, manifest["wall0"] + 25 * SEC
    inside = sum(1 for s in manifest["samples"] if s.get("kind") == "wall"
                 and s["t"] - s["weight"] < z and s["t"] > a)
    check(header_count(p.stdout, "wall samples") == inside,
          "--from/--to keeps the %d wall samples that overlap the range: %s"
          % (inside, header_count(p.stdout, "wall samples")))
    check(rows.get("worker") == "R" * 5 + "B" * 10 + "R" * 5,
          "--from/--to: worker %r" % rows.get("worker"))
    check(rows.get("late") == " " * 10 + "P" * 10, "--from/--to: late %r" % rows.get("late"))
    check(len(table) == 20 and close(float(table[0]["rss_MiB"]), 105)
          and close(float(table[19]["rss_MiB"]), 124)
          and close(float(table[19]["cpu_user%"]), 10) and close(float(table[0]["cpu_user%"]), 30),
          "--from/--to: the telemetry from +5 s to +25 s, rates up to the edges: %s"
          % ([table[0], table[-1]] if table else None))
    check(header_count(p.stdout, "gauge readings") == 20 * 11,
          "--from/--to: 220 gauge readings in the range: %s"
          % header_count(p.stdout, "gauge readings"))
    p = run("--format", "timeline", "--width", "30", "--thread", "^(worker|late)$", rec)
    rows, table = parse_text(p.stdout)
    names = sorted(k for k in rows if not k.startswith("@"))
    check(names == ["late", "worker"], "--thread keeps late and worker: %s" % names)
    check([int(r["alive"]) for r in table] == [1] * 15 + [2] * 15,
          "--thread: the counts are of the kept threads: %s" % [r["alive"] for r in table])


def test_rows_and_sort(rec):
    p = run("--format", "timeline", "--width", "30", "--rows", "2", "--sort", "busy", rec)
    names = [m.group(1) for m in re.finditer(r"^(\w+) \(tid \d+\)", p.stdout, re.M)]
    check(names == ["worker", "reader"], "--sort busy --rows 2: %s" % names)
    check(re.search(r"3 more threads not shown \(--rows 2; they are in the counts\): "
                    r"1 mostly waiting, 1 mostly parked, 1 mostly sleeping", p.stdout),
          "--rows note:\n" + p.stdout[:2000])
    _, table = parse_text(p.stdout)
    check(int(table[0]["alive"]) == 4, "--rows does not change the counts")
    p = run("--format", "timeline", "--sort", "start", rec)
    names = [m.group(1) for m in re.finditer(r"^(\w+) \(tid \d+\)", p.stdout, re.M)]
    check(names[-1] == "late", "--sort start puts late last: %s" % names)


class Page(html.parser.HTMLParser):
    """Checks that every non-void element is closed in order."""
    VOID = {"meta", "br", "img", "input", "link", "hr", "area", "base", "col", "wbr",
            "source", "track", "embed", "param"}
    SELF = {"rect", "path", "line", "polyline", "circle"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors = [], []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack else None))
        else:
            self.stack.pop()


def spans_of(svg, ns=""):
    """{thread name: [(state, t0, t1)]}, lock marks per thread, GC marks."""
    rows, locks = {}, {}
    for g in svg.iter(ns + "g"):
        if g.get("class") != "thread":
            continue
        name = g.get("data-name")
        rows[name] = []
        for r in g.iter(ns + "rect"):
            if r.get("class") != "span":
                continue
            t0, t1 = float(r.get("data-t0")), float(r.get("data-t1"))
            x, w = float(r.get("x")), float(r.get("width"))
            check(abs(x - (260 + t0 / 30 * 900)) < 0.02 and
                  abs(x + w - (260 + t1 / 30 * 900)) < 0.02,
                  "%s: the rect is drawn where its times say: %s" % (name, r.attrib))
            rows[name].append((r.get("data-state"), t0, t1))
        locks[name] = [r for r in g.iter(ns + "rect") if r.get("class") == "lock"]
        for r in g.iter(ns + "rect"):
            check(r.find(ns + "title") is not None, "every mark has a hover title")
    gcs = [r for r in svg.iter(ns + "rect") if r.get("class") == "gc"]
    return rows, locks, gcs


def check_picture(svg, ns, what):
    rows, locks, gcs = spans_of(svg, ns)
    check(sorted(rows) == sorted(LIVES), "%s: a row per thread: %s" % (what, sorted(rows)))
    # The scenario's state changes fall on whole pixel columns (30 s over
    # 900 px), so the spans' times are exact.
    px = 1e-5

    def same(got, want):
        return len(got) == len(want) and all(
            g[0] == w[0] and abs(g[1] - w[1]) <= px and abs(g[2] - w[2]) <= px
            for g, w in zip(got, want))
    want = {"sleeper": [("sleeping", 0, 30)],
            "worker": [("running", 0, 10), ("blocked", 10, 20), ("running", 20, 30)],
            "late": [("parked", 15, 30)], "ender": [("waiting", 0, 24)],
            "reader": [("native", 0, 6), ("io", 6, 12), ("runnable", 12, 18)]}
    for name, spans in want.items():
        check(same(rows.get(name, []), spans), "%s: %s spans %s, want %s"
              % (what, name, rows.get(name), spans))
    check(len(locks.get("worker", [])) == 1 and sum(len(v) for v in locks.values()) == 1,
          "%s: one lock mark, on the worker's row" % what)
    check(len(gcs) == 1, "%s: one GC mark, got %d" % (what, len(gcs)))


def test_html(rec, tmp):
    path = os.path.join(tmp, "t.html")
    run("--format", "timeline", rec, "-o", path)
    text = open(path, encoding="utf-8").read()
    check(text.startswith("<!DOCTYPE html>"), "html: a page")
    check(not re.search(r"https?:|//[a-z]|<script[^>]*src|<link|@import|url\(", text, re.I),
          "html: self-contained, no URL")
    page = Page()
    page.feed(text)
    page.close()
    check(not page.errors and not page.stack,
          "html: well-formed: %s, unclosed %s" % (page.errors[:3], page.stack))
    m = re.search(r"<svg.*</svg>", text, re.S)
    check(m is not None, "html: an inline svg")
    if m:
        check_picture(ET.fromstring(m.group(0)), "", "html")
    out = run("--format", "timeline", "--html", rec).stdout
    check(out.startswith("<!DOCTYPE html>"), "--html writes the page to stdout")

    path = os.path.join(tmp, "t.svg")
    run("--format", "timeline", rec, "-o", path)
    root = ET.parse(path).getroot()
    check(root.tag == "{http://www.w3.org/2000/svg}svg", "svg: the SVG namespace: %s" % root.tag)
    check_picture(root, "{http://www.w3.org/2000/svg}", "svg")


def test_errors(writer_dir):
    main = os.path.join(writer_dir, "main.rpc")
    subprocess.run([WRITER, "main", main], check=True)
    p = run("--format", "timeline", main, rc=1)
    check("no wall samples and no telemetry gauges" in p.stderr and "wall=" in p.stderr
          and "telemetry=" in p.stderr, "no wall, no gauges: %r" % p.stderr)
    rec = os.path.join(writer_dir, "t.rpc")
    p = run("--format", "timeline", "--width", "30", "--thread", "^nobody$", rec)
    check("showing the telemetry alone" in p.stderr, "gauges only: %r" % p.stderr)
    rows, table = parse_text(p.stdout)
    check(len(table) == 30 and close(float(table[3]["rss_MiB"]), 103)
          and not any(k for k in rows if not k.startswith("@")),
          "gauges only: the telemetry, no thread rows")
    for args, msg in ((["--sort", "size"], "--sort 'size'"), (["--width", "0"], "--width '0'"),
                      (["--rows", "-3"], "--rows '-3'")):
        p = run("--format", "timeline", *args, rec, rc=2)
        check(msg in p.stderr, "usage error names %s: %r" % (msg, p.stderr[:200]))


def test_short_telemetry(tmp):
    """The gauges' last reading two seconds before the last wall sample (as the
    agent's last telemetry may come before its last sample): up to the end of
    the data a level holds its last reading and a rate its last interval's;
    past the data (an explicit --to beyond it) the columns have none."""
    rec = os.path.join(tmp, "short.rpc")
    subprocess.run([WRITER, "timeline-short", rec], check=True)
    p = run("--format", "timeline", "--width", "30", rec)
    _, table = parse_text(p.stdout)
    tail = [(r.get("rss_MiB"), r.get("cpu_user%")) for r in table[27:]]
    check(len(table) == 30 and all(close(float(rss), 127 + (k > 0)) and
                                   close(float(cpu), 10) for k, (rss, cpu) in
                                   enumerate(tail) if rss != "-" and cpu != "-") and
          "-" not in [x for t in tail for x in t],
          "short telemetry: columns 28 and 29 hold rss 128 MiB and the last rate, 10%%: %s"
          % tail)
    p = run("--format", "timeline", "--width", "32", "--to", "+32s", rec)
    _, table = parse_text(p.stdout)
    check(len(table) == 32 and table[29]["rss_MiB"] != "-" and
          [table[k]["rss_MiB"] for k in (30, 31)] == ["-", "-"],
          "short telemetry, --to past the data: nothing held past it: %s"
          % [r.get("rss_MiB") for r in table[28:]])


def test_many(tmp):
    """2000 threads, 1900 of them parked: rows cut to --rows, counts of all."""
    import time
    rec = os.path.join(tmp, "many.rpc")
    subprocess.run([WRITER, "timeline-many", rec], check=True)
    t = time.monotonic()
    p = run("--format", "timeline", "--width", "60", rec)
    text_s = time.monotonic() - t
    names = re.findall(r"^(.+?) \(tid \d+\)", p.stdout, re.M)
    check(len(names) == 200 and names[0] == "busy-1" and names[99].startswith("busy-100")
          and names[100] == "pool-1" and names[199] == "pool-100",
          "2000 threads: the first 200 by name: %s" % names[:3])
    check("1800 more threads not shown (--rows 200; they are in the counts): 1800 mostly "
          "parked" in p.stdout, "2000 threads: the note on the rest")
    _, table = parse_text(p.stdout)
    check(len(table) == 60 and all(r["alive"] == "2000" and r["parked"] == "1900"
                                   for r in table), "2000 threads: counted in every column")
    p = run("--format", "timeline", "--sort", "busy", "--rows", "50", rec)
    names = re.findall(r"^(.+?) \(tid \d+\)", p.stdout, re.M)
    check(len(names) == 50 and all(n.startswith("busy-") for n in names),
          "--sort busy --rows 50: the busy threads: %s" % names[:5])
    path = os.path.join(tmp, "many.html")
    t = time.monotonic()
    run("--format", "timeline", "--rows", "0", rec, "-o", path)
    html_s = time.monotonic() - t
    text = open(path, encoding="utf-8").read()
    svg = ET.fromstring(re.search(r"<svg.*</svg>", text, re.S).group(0))
    rows = {g.get("data-name"): g for g in svg.iter("g") if g.get("class") == "thread"}
    check(len(rows) == 2000, "--rows 0: all 2000 rows drawn: %d" % len(rows))
    check('busy-100 </svg><b>&"?' in rows, "a name with markup survives, escaped: %s"
          % [n for n in rows if n.startswith("busy-100")])
    print("2000 threads: text %.2f s, html (all rows) %.2f s, %d KiB"
          % (text_s, html_s, len(text) // 1024))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        rec, man = os.path.join(tmp, "t.rpc"), os.path.join(tmp, "t.json")
        subprocess.run([WRITER, "timeline", rec, "--manifest", man], check=True)
        manifest = json.load(open(man))
        test_text_by_hand(rec)
        test_text_recomputed(rec, manifest)
        test_filters(rec, manifest)
        test_rows_and_sort(rec)
        test_html(rec, tmp)
        test_errors(tmp)
        test_short_telemetry(tmp)
        test_many(tmp)
    if FAILS:
        print("%d failure(s)" % len(FAILS))
        sys.exit(1)
    print("timeline: all %d checks passed" % CHECKS[0])


main()
