#!/usr/bin/env python3
"""tests/convert/expect.py — what a correct `ringprof convert` must print, computed
from rp_testwriter's manifests (the list of samples it wrote), never from the
converter's own output.

usage: expect.py CHECK OUTPUT [options] -- MANIFEST...
       expect.py --batch FILE


  CHECK collapsed   OUTPUT (collapsed text) has exactly the expected stack lines
        tree        OUTPUT (tree text): root = sum of the samples written; every
                    node's total = self + its children's totals (the hidden ones'
                    line included); self% and the hidden shares add up to 100;
                    the lines shown are exactly the expected nodes at or over the
                    cutoff (--cutoff, else the tree's default, 1%) with their
                    total, self and samples, and each parent's hidden children
                    are one "[N more below X% hidden]" line with their sums
        flat        OUTPUT (flat text, CPU SAMPLES layout): each method's count,
                    self and total weight (recursion counted once per stack);
                    accum ends at 100%
        sites       OUTPUT (flat text for alloc): the SITES rows (live bytes and
                    objects from the chosen live snapshot, or "-" without one;
                    allocated bytes, objects, samples, class; bytes in binary
                    units), a site being a stack with its lines (HPROF's traces)
                    at the default granularity, and the allocating methods
        livesites   OUTPUT (flat text for --event live): the LIVE SITES rows
                    (bytes, objects, samples, median and max age in GCs, oldest)
        backtrace   OUTPUT (backtrace text): each root's self/total, and the
                    figures of its direct callers (outermost occurrence)
  options (the converter's): --event K, --per-thread, --lines, --bci,
        --thread RE, --include RE, --exclude RE, --from T, --to T,
        --value samples, --snapshot S
A live profile (and the live columns of SITES) holds one snapshot per recording:
the one --snapshot names among those in the time range (default: the last).
Prints what differs and exits 1, or exits 0.

--batch FILE runs many checks in one process (a test script's matrix): one per
line, "WHAT<TAB>CHECK<TAB>OUTPUT<TAB>option...<TAB>--<TAB>MANIFEST...". For each
that fails it prints "FAIL: WHAT" and what differs; it exits with the number that
failed (at most 100), 0 if none did.
"""
import json
import re
import sys
import traceback
from datetime import datetime, timezone

JAVA = {0, 1, 2}
SUFFIX = {0: "_[0]", 1: "_[j]", 2: "_[i]", 5: "_[k]"}
TAG = {0: " [interpreted]", 2: " [inlined]", 3: " [native]", 4: " [c++]", 5: " [kernel]"}
CLASS = 16
MARKER = 6


def parse_args(argv):
    opts = {"event": None, "per_thread": False, "gran": "method", "thread": None,
            "include": None, "exclude": None, "from": None, "to": None,
            "value_samples": False, "snapshot": "last", "cutoff": None}
    i = 0
    while i < len(argv) and argv[i] != "--":
        a = argv[i]
        if a == "--per-thread":
            opts["per_thread"] = True
        elif a == "--lines":
            opts["gran"] = "line"
        elif a == "--bci":
            opts["gran"] = "bci"
        elif a in ("--event", "--thread", "--include", "--exclude", "--from", "--to",
                   "--value", "--top", "--cutoff", "--method", "--format", "--snapshot"):
            i += 1
            key = a[2:]
            if key == "value":
                opts["value_samples"] = argv[i] == "samples"
            elif key in opts:
                opts[key] = argv[i]
        i += 1
    return opts, argv[i + 1:]


def load(manifests):
    recs = []
    for m in manifests:
        with open(m) as f:
            recs.append(json.load(f))
    return recs


def parse_time(s, first, last):
    m = re.fullmatch(r"([+-])([0-9.]+)(ns|us|ms|s|m|h)", s)
    if m:
        mul = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}[m.group(3)]
        d = int(round(float(m.group(2)) * mul))
        return first + d if m.group(1) == "+" else last - d
    s = s.rstrip("Z").replace(" ", "T")
    frac = 0
    if "." in s:
        s, f = s.split(".")
        frac = int((f + "000000000")[:9])
    dt = datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return int(dt.timestamp()) * 10**9 + frac


def display(fr, gran):
    if fr["type"] in JAVA:
        d = fr["class"] + "." + fr["name"] if fr["class"] else fr["name"]
        if gran == "line":
            d += ":%d" % fr["line"] if fr["line"] else ":?"
        elif gran == "bci":
            d += "@%d" % fr["bci"] if fr["bci"] >= 0 else "@?"
        return d
    return fr["name"]


def method_name(fr):
    """The flat table's method: display at method granularity."""
    return display(fr, "method")


class Sample:
    pass


def chosen_snapshot(r, opts, t_from, t_to):
    """The index of the live snapshot of recording r that --snapshot names among
    those in the time range, or None."""
    snaps = [k for k, t in enumerate(r.get("snapshots", []))
             if (t_from is None or t >= t_from) and (t_to is None or t < t_to)]
    which = {"first": 1, "last": -1}.get(opts["snapshot"]) or int(opts["snapshot"])
    if which > 0:
        return snaps[which - 1] if which <= len(snaps) else None
    return snaps[which] if -which <= len(snaps) else None


def samples(recs, opts):
    """Every kept sample as (weight, path) where path is a list of frame dicts
    root first, synthetic frames included ({"name": ..., "type": MARKER})."""
    alls = [s for r in recs for s in r["samples"]]
    first = min(s["t"] for s in alls)
    last = max(s["t"] for s in alls)
    kinds = []
    for s in alls:
        if s["kind"] not in kinds:
            kinds.append(s["kind"])
    event = opts["event"] or ("cpu" if "cpu" in kinds else
                              "alloc" if "alloc" in kinds else kinds[0])
    t_from = parse_time(opts["from"], first, last) if opts["from"] else None
    t_to = parse_time(opts["to"], first, last) if opts["to"] else None
    multi = len(recs) > 1
    out = []
    for r in recs:
        snap = chosen_snapshot(r, opts, t_from, t_to) if event == "live" else None
        for s in r["samples"]:
            if s["kind"] != event:
                continue
            if event == "live" and s["snap"] != snap:
                continue
            if t_from is not None and s["t"] < t_from:
                continue
            if t_to is not None and s["t"] >= t_to:
                continue
            if opts["thread"] and not re.search(opts["thread"], s["thread"]):
                continue
            st = r["stacks"][s["stack"]]
            path = []
            if not st["frames"]:
                path.append({"class": "", "name": "[no stack]", "type": MARKER})
            if st["truncated"]:
                path.append({"class": "", "name": "[truncated]", "type": MARKER})
            path += st["frames"]
            if s["class"] is not None:
                path.append({"class": "", "name": s["class"], "type": CLASS})
            names = [display(f, opts["gran"]) for f in path]
            if opts["include"] and not any(re.search(opts["include"], n) for n in names):
                continue
            if opts["exclude"] and any(re.search(opts["exclude"], n) for n in names):
                continue
            x = Sample()
            x.weight = 1 if opts["value_samples"] else s["weight"]
            x.w = s["weight"]
            x.objects = s["objects"]
            x.path = path
            x.thread = s["thread"]
            x.label = "[%s] (tid %d%s)" % (s["thread"], s["tid"],
                                           ", " + r["recording"] if multi else "")
            x.klass = s["class"]
            x.age_gcs = s.get("age_gcs")
            x.age_ms = s.get("age_ms")
            out.append(x)
    return out


def fold_name(n):
    n = n.replace(";", ":")
    return "".join("?" if ord(c) < 0x20 or ord(c) == 0x7f else c for c in n) or "?"


def text_name(n):
    return "".join("?" if ord(c) < 0x20 or ord(c) == 0x7f else c for c in n)


errors = []


def fail(msg):
    errors.append(msg)


def check_collapsed(output, opts, recs):
    exp = {}
    for s in samples(recs, opts):
        parts = ["[%s]" % fold_name(s.thread)] if opts["per_thread"] else []
        parts += [fold_name(display(f, opts["gran"])) + SUFFIX.get(f["type"], "")
                  for f in s.path]
        line = ";".join(parts)
        exp[line] = exp.get(line, 0) + s.weight
    got = {}
    for ln in open(output).read().splitlines():
        stack, _, v = ln.rpartition(" ")
        if stack in got:
            fail("duplicate line: " + stack)
        got[stack] = int(v)
    for k in sorted(set(exp) | set(got)):
        if exp.get(k) != got.get(k):
            fail("collapsed %r: expected %s, got %s" % (k, exp.get(k), got.get(k)))


HIDDEN = re.compile(r"\[(\d+) more below ([0-9.]+)% hidden\]$")
TREE_CUTOFF = 1.0   # the tree's default --cutoff (docs/profiles.md, "tree")


def parse_tree(output):
    """-> list of (depth, name, total, self, samples, selfpct); a line of hidden
    children is (depth, "hidden", total, None, samples, totalpct, count)."""
    lines = open(output).read().splitlines()
    hdr = next(i for i, l in enumerate(lines) if "call tree" in l)
    times = "total-time" in lines[hdr]
    col = 57 + (26 if times else 0) + 2
    rows = []
    for l in lines[hdr + 1:]:
        if l.startswith("#"):
            continue
        f = l[:col].split()
        name = l[col:]
        depth = (len(name) - len(name.lstrip(" "))) // 2
        m = HIDDEN.search(name)
        if m:
            rows.append((depth, "hidden", int(f[0]), None, int(f[2]),
                         float(f[1].rstrip("%")), int(m.group(1))))
            continue
        rows.append((depth, name.strip(), int(f[0]), int(f[1]), int(f[4]),
                     float(f[3].rstrip("%"))))
    return rows


def expected_tree(ss, opts):
    """{path: [total, self, samples]} of every node, paths of text names."""
    nodes = {}
    for s in ss:
        p = [s.label] if opts["per_thread"] else []
        p += [text_name(display(f, opts["gran"])) + TAG.get(f["type"], "") for f in s.path]
        for k in range(1, len(p) + 1):
            e = nodes.setdefault(tuple(p[:k]), [0, 0, 0])
            e[0] += s.w
            e[2] += 1
        nodes[tuple(p)][1] += s.w
    return nodes


def check_tree(output, opts, recs):
    ss = samples(recs, opts)
    rows = parse_tree(output)
    want_w = sum(s.w for s in ss)
    if rows[0][2] != want_w or rows[0][4] != len(ss):
        fail("tree root: %d/%d, expected weight %d in %d samples"
             % (rows[0][2], rows[0][4], want_w, len(ss)))
    # structure: total = self + children (a hidden line holds its children's)
    for i, r in enumerate(rows):
        if r[1] == "hidden":
            continue
        d, name, tot, slf = r[:4]
        kids = 0
        for r2 in rows[i + 1:]:
            if r2[0] <= d:
                break
            if r2[0] == d + 1:
                kids += r2[2]
        if tot != slf + kids:
            fail("tree node %r: total %d != self %d + children %d" % (name, tot, slf, kids))
    pct = sum(r[5] for r in rows)
    if abs(pct - 100.0) > 0.01 * len(rows) + 0.01:
        fail("tree self%% and hidden shares add up to %.2f" % pct)
    # the lines shown and hidden: those the cutoff keeps, with their figures
    cutoff = float(opts["cutoff"]) if opts["cutoff"] is not None else TREE_CUTOFF
    nodes = expected_tree(ss, opts)
    exp_shown, exp_hidden = {}, {}
    for path, fig in nodes.items():
        parent = path[:-1]
        if parent and parent not in exp_shown:
            continue                        # under a hidden node
        if cutoff > 0 and want_w and 100.0 * fig[0] / want_w < cutoff:
            h = exp_hidden.setdefault(parent, [0, 0, 0])
            h[0] += 1
            h[1] += fig[0]
            h[2] += fig[2]
        else:
            exp_shown[path] = tuple(fig)
    got_shown, got_hidden = {}, {}
    stack = []
    for r in rows[1:]:
        d = r[0]
        if r[1] == "hidden":
            got_hidden[tuple(stack[:d - 1])] = [r[6], r[2], r[4]]
            continue
        stack = stack[:d - 1] + [r[1]]
        got_shown[tuple(stack)] = (r[2], r[3], r[4])
    for k in sorted(set(exp_shown) | set(got_shown)):
        if exp_shown.get(k) != got_shown.get(k):
            fail("tree path %r: expected [total, self, samples] %s, got %s"
                 % (k, exp_shown.get(k), got_shown.get(k)))
    for k in sorted(set(exp_hidden) | set(got_hidden)):
        if exp_hidden.get(k) != got_hidden.get(k):
            fail("tree: hidden under %r: expected [count, total, samples] %s, got %s"
                 % (k, exp_hidden.get(k), got_hidden.get(k)))


def method_figures(ss, alloc):
    """method -> [self_samples, self_weight, total_weight], recursion once."""
    m = {}
    for s in ss:
        names = [method_name(f) if f["type"] != CLASS else None for f in s.path]
        leaf = len(s.path) - 1
        if alloc and s.path[leaf]["type"] == CLASS:
            leaf -= 1
        for n in set(x for x in names if x is not None):
            m.setdefault(n, [0, 0, 0])[2] += s.w
        if leaf >= 0:
            r = m.setdefault(names[leaf], [0, 0, 0])
            r[0] += 1
            r[1] += s.w
    return m


def parse_method_table(text, title):
    rows = {}
    last_accum = None
    inside = False
    for l in text.splitlines():
        if l.startswith(title + " BEGIN"):
            inside = True
            continue
        if l.startswith(title + " END"):
            break
        if not inside or l.startswith("rank"):
            continue
        f = l.split(None, 7)
        rows[f[7]] = [int(f[3]), int(f[4]), int(f[6])]
        last_accum = float(f[2].rstrip("%"))
    return rows, last_accum


def check_flat(output, opts, recs, alloc=False):
    ss = samples(recs, opts)
    exp = method_figures(ss, alloc)
    text = open(output).read()
    title = "ALLOCATING METHODS" if alloc else (opts["event"] or "cpu").upper() + " SAMPLES"
    got, accum = parse_method_table(text, title)
    exp = {text_name(k): v for k, v in exp.items()}
    for k in sorted(set(exp) | set(got)):
        if exp.get(k) != got.get(k):
            fail("flat %r: expected [count, self, total] %s, got %s" % (k, exp.get(k), got.get(k)))
    if ss and (accum is None or abs(accum - 100.0) > 0.01):
        fail("flat: accum ends at %s, not 100%%" % accum)


def site_key(s, opts):
    """A site: its thread (per thread), its frames at the granularity, its class.
    A site is a stack trace with its lines, as HPROF's, unless --bci asks more."""
    gran = "line" if opts["gran"] == "method" else opts["gran"]
    frames = tuple((display(f, gran), f["type"]) for f in s.path[:-1])
    return (s.label if opts["per_thread"] else None, frames, s.klass)


UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def fmt_bytes(v):
    """Bytes as the tables show them (tools/outputs/out_common.c, out_fmt_bytes)."""
    a, u = abs(v), 0
    while a >= 1024 and u + 1 < len(UNITS):
        a, u = a / 1024, u + 1
    return "%.0f B" % v if u == 0 else "%s%.2f %s" % ("-" if v < 0 else "", a, UNITS[u])


def parse_bytes(s):
    """The value fmt_bytes shows (rounded as shown)."""
    num, unit = s.split()
    return float(num) * 1024 ** UNITS.index(unit)


def fields(line, n):
    """A table row's first n - 1 fields and the rest of the line; a figure in
    units ("3.00 MiB") is one field."""
    out, rest = [], line
    while len(out) < n - 1:
        m = re.match(r"\s*(\S+(?: (?:%s)(?=\s|$))?)" % "|".join(UNITS), rest)
        if not m:
            break
        out.append(m.group(1))
        rest = rest[m.end():]
    return out + [rest.strip()]


def table_rows(output, title, ncols):
    """The rows of a SITES-like table, split into ncols fields (the last holds
    the rest of the line)."""
    rows, inside = [], False
    for l in open(output).read().splitlines():
        if l.startswith(title + " BEGIN"):
            inside = True
        elif l.startswith(title + " END"):
            break
        elif inside and l.strip() and l.strip()[0].isdigit():
            rows.append(fields(l, ncols))
    return rows


def check_sites(output, opts, recs):
    ss = samples(recs, opts)
    has_live = any(r.get("snapshots") for r in recs)
    live = samples(recs, dict(opts, event="live")) if has_live else []
    exp = {}
    for s in ss:
        e = exp.setdefault(site_key(s, opts), [0, 0, 0, 0, 0])
        e[2] += s.w
        e[3] += s.objects
        e[4] += 1
    for s in live:
        e = exp.setdefault(site_key(s, opts), [0, 0, 0, 0, 0])
        e[0] += s.w
        e[1] += s.objects
    want = sorted(((fmt_bytes(v[0]), str(v[1])) if has_live else ("-", "-")) +
                  (fmt_bytes(v[2]), str(v[3]), str(v[4]), k[2]) for k, v in exp.items())
    got = sorted((f[3], f[4], f[5], f[6], f[7], f[9]) for f in table_rows(output, "SITES", 10))
    if got != want:
        fail("sites: expected %s, got %s" % (want, got))
    check_flat(output, opts, recs, alloc=True)


def check_livesites(output, opts, recs):
    exp = {}
    for s in samples(recs, opts):
        e = exp.setdefault(site_key(s, opts), [0, 0, 0, [], 0])
        e[0] += s.w
        e[1] += s.objects
        e[2] += 1
        e[3].append(s.age_gcs)
        e[4] = max(e[4], s.age_ms)
    want = []
    for k, (w, o, n, ages, oldest) in exp.items():
        ages.sort()
        mid = len(ages) // 2
        median = ages[mid] if len(ages) % 2 else (ages[mid - 1] + ages[mid]) / 2
        want.append((w, o, n, "%.1f" % median, str(ages[-1]), "%.1fs" % (oldest / 1e3),
                     k[2]))
    want = [(fmt_bytes(x[0]),) + x[1:] for x in want]
    got = [(f[3], int(f[4]), int(f[5]), f[7], f[8], f[9], f[10])
           for f in table_rows(output, "LIVE SITES", 11)]
    if sorted(got) != sorted(want):
        fail("live sites: expected %s, got %s" % (sorted(want), sorted(got)))
    weights = [parse_bytes(g[0]) for g in got]
    if weights != sorted(weights, reverse=True):
        fail("live sites: not ordered by live bytes: %s" % [g[0] for g in got])
    check_flat(output, opts, recs, alloc=True)


def check_backtrace(output, opts, recs):
    ss = samples(recs, opts)
    text = open(output).read().splitlines()
    blocks = {}
    cur = None
    for l in text:
        if l.startswith("--- "):
            cur = l.split(": ", 1)[1]
            blocks[cur] = []
        elif cur is not None and l and not l.startswith("#"):
            f = l.split(None, 5)
            blocks[cur].append((int(f[0]), int(f[1]), l))
    if not blocks:
        fail("backtrace: no blocks")
    for m, rows in blocks.items():
        tot = slf = 0
        callers = {}
        for s in ss:
            # An allocated class is a root of its own (who allocates byte[]?).
            names = [text_name(method_name(f)) for f in s.path]
            if m not in names:
                continue
            i = names.index(m)           # outermost occurrence
            tot += s.w
            running = names[-1] == m or (s.path[-1]["type"] == CLASS and len(names) > 1
                                         and names[-2] == m)
            if running:
                slf += s.w
            if i > 0:
                c = text_name(display(s.path[i - 1], opts["gran"])) + TAG.get(s.path[i - 1]["type"], "")
            elif opts["per_thread"]:
                c = s.label
            else:
                continue
            e = callers.setdefault(c, [0, 0])
            e[0] += s.w
            e[1] += s.w if running else 0
        if (rows[0][0], rows[0][1]) != (tot, slf):
            fail("backtrace %r root: expected total/self %d/%d, got %d/%d"
                 % (m, tot, slf, rows[0][0], rows[0][1]))
        got = {}
        for (t, sf, l) in rows[1:]:
            prefix, name = l.split("<- ", 1)
            indent = len(prefix) - len(prefix.rstrip(" "))
            if indent == 4:              # "  " + one level: a direct caller
                got[name] = [t, sf]
        if got != callers:
            fail("backtrace %r callers: expected %s, got %s" % (m, callers, got))


def run(argv):
    """One check, argv = CHECK OUTPUT [options] -- MANIFEST...: its problems, as lines."""
    del errors[:]
    check, output = argv[0], argv[1]
    opts, manifests = parse_args(argv[2:])
    recs = load(manifests)
    {"collapsed": check_collapsed, "tree": check_tree, "flat": check_flat,
     "sites": check_sites, "livesites": check_livesites,
     "backtrace": check_backtrace}[check](output, opts, recs)
    return ["expect.py %s %s: %s" % (check, output, e) for e in errors]


def batch(path):
    """--batch FILE: every line's check, each apart (an exception fails its own)."""
    failed = 0
    for line in open(path).read().splitlines():
        what, *argv = line.split("\t")
        try:
            problems = run(argv)
        except Exception:
            problems = [traceback.format_exc()]
        if problems:
            failed += 1
            print("FAIL: " + what)
            print("\n".join(problems))
    return min(failed, 100)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--batch":
        return batch(sys.argv[2])
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    problems = run(sys.argv[1:])
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
