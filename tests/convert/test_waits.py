#!/usr/bin/env python3
"""tests/convert/test_waits.py RINGPROF RP_TESTWRITER

Wall-clock and lock samples (kinds wall and lock, include/ringprof/events.h)
through `ringprof convert` in every format, `--state`, `ringprof locks` and
`ringprof summary`, on rp_testwriter's `waits` recording (six threads in known
states, lock waits on two monitor classes with owners, telemetry gauges),
against the truth in its manifest, computed here without the converter:
  - each format (tree, backtrace, flat, collapsed, pprof, html) with --event
    wall and --event lock: totals, units and sample types, and every stack's
    weight (collapsed, html's tree, pprof's samples);
  - --state keeps exactly the samples in the states named, --state-frames adds
    the [state:NAME] leaf, --state implies --event wall;
  - errors: an unknown state (the valid ones listed), --state with another
    kind, --event wall/lock on a recording without them (the kinds it has and
    the agent option named), locks on such a recording;
  - locks: monitors ranked by total wait with count, mean, longest and share,
    their stacks and owners ("unknown" counted), --top, --stacks, --thread,
    --from, --json; the parked (java.util.concurrent) sites by the rule of
    docs/profiles.md, reimplemented here;
  - summary: the wall, lock and telemetry lines.
Runs in about a second; no JVM.
"""
import collections
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, go_env, load_manifest, packed, pb_fields, run, tempdir  # noqa

RINGPROF, WRITER = sys.argv[1:3]
T = tempdir()
c = Checks("waits")
W, A = os.path.join(T, "w.rpc"), os.path.join(T, "a.rpc")
run([WRITER, "waits", W, "--manifest", W + ".json"])
run([WRITER, "main", A])
M = load_manifest(W + ".json")
STACKS = M["stacks"]                         # display names, root first
WALL = [s for s in M["samples"] if s["kind"] == "wall"]
LOCK = [s for s in M["samples"] if s["kind"] == "lock"]
STATES = ["unknown", "running", "runnable", "native", "io", "blocked", "waiting",
          "parked", "sleeping"]


def rp(*args):
    r = subprocess.run([RINGPROF] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8",
                                                                             "replace")


def out(*args):
    rc, o, e = rp(*args)
    if rc != 0:
        raise SystemExit("ringprof %s exited %d: %s" % (" ".join(args), rc, e))
    return o


def frames_of(s, kind, thread=False, state_frame=False):
    """The converter's path of sample s, root first, as display names."""
    f = list(STACKS[s["stack"]])
    if thread:
        f.insert(0, "[%s]" % s["thread"])
    if kind == "lock":
        f.append(s["monitor"])
    if state_frame:
        f.append("[state:%s]" % s["state"])
    return f


def expected_stacks(samples, kind, **kw):
    d = collections.Counter()
    for s in samples:
        d[tuple(frames_of(s, kind, **kw))] += s["weight"]
    return dict(d)


def collapsed(text):
    """Folded stacks -> {(frames without the _[j] suffixes): value}."""
    d = {}
    for line in text.splitlines():
        stack, v = line.rsplit(" ", 1)
        d[tuple(re.sub(r"_\[[jik0]\]$", "", f) for f in stack.split(";"))] = int(v)
    return d


# ------------------------------------------------------ every format -- #

for kind, samples in (("wall", WALL), ("lock", LOCK)):
    total, n = sum(s["weight"] for s in samples), len(samples)
    # collapsed: every stack's weight, merged and per thread
    c.check(collapsed(out("convert", "--event", kind, "--format", "collapsed", W))
            == expected_stacks(samples, kind), "%s collapsed: stacks and weights" % kind)
    c.check(collapsed(out("convert", "--event", kind, "--format", "collapsed",
                          "--per-thread", W))
            == expected_stacks(samples, kind, thread=True),
            "%s collapsed --per-thread: stacks and weights" % kind)
    # tree: the header and the root
    tree = out("convert", "--event", kind, "--format", "tree", W)
    c.check("kind %s (unit ns), %d samples, weight %d" % (kind, n, total) in tree,
            "%s tree: header totals" % kind, tree.splitlines()[0])
    root = [l for l in tree.splitlines() if l.endswith("[all]")]
    c.check(root and root[0].split()[0] == str(total) and root[0].split()[4] == str(n),
            "%s tree: root total and samples" % kind, root)
    c.check(("# weight: wall-clock ns" if kind == "wall" else
             "# weight: ns waited to enter a contended monitor") in tree,
            "%s tree: the header says what the weight is" % kind)
    # flat: per-method self weight (the leaf frame's method; for lock the frame
    # above the monitor class), and for lock the monitor classes
    self_w = collections.Counter()
    for s in samples:
        self_w[STACKS[s["stack"]][-1]] += s["weight"]
    class_w = collections.Counter()   # lock: the monitor class frames' own weight
    for s in samples:
        if kind == "lock":
            class_w[s["monitor"]] += s["weight"]
    flat = out("convert", "--event", kind, "--format", "flat", W)
    title = "WALL SAMPLES" if kind == "wall" else "LOCK SAMPLES"
    c.check("%s BEGIN (total = %d samples, weight = %d ns)" % (title, n, total) in flat,
            "%s flat: title with totals" % kind)
    table = flat.split(title + " BEGIN")[1].split(title + " END")[0]
    got = {l.split()[-1]: int(l.split()[4]) for l in table.splitlines()[2:]
           if int(l.split()[4])}
    c.check(got == dict(self_w), "%s flat: self weight per method" % kind, (got, self_w))
    if kind == "lock":
        mon = collections.Counter()
        for s in samples:
            mon[s["monitor"]] += s["weight"]
        t = flat.split("MONITOR CLASSES BEGIN")[1].split("MONITOR CLASSES END")[0]
        got = {l.split()[-1]: int(l.split()[4]) for l in t.splitlines()[2:]}
        c.check(got == dict(mon), "lock flat: weight per monitor class", got)
        c.check("SITES" not in flat and "allocated" not in flat,
                "lock flat: not an allocation SITES table")
    # backtrace: the top method by self weight and its figures
    bt = out("convert", "--event", kind, "--format", "backtrace", "--top", "1", W)
    top_m, top_w = max((self_w + class_w).items(), key=lambda kv: (kv[1], kv[0]))
    m = re.search(r"--- 1: (\S+)\n\s+(\d+)\s+(\d+)", bt)
    c.check(m and m.group(1) == top_m and int(m.group(3)) == top_w,
            "%s backtrace: top method and its self weight" % kind,
            m.groups() if m else bt[-300:])
    # html: the page's tree, rebuilt from its pre-order nodes
    html = out("convert", "--event", kind, "--format", "html", W)
    data = json.loads(re.search(r'<script id="flame-data" type="application/json">(.*?)</script>',
                                html, re.S).group(1))
    nodes, strings = data["nodes"], data["strings"]
    stacks, pos = collections.Counter(), [0]

    def walk(path):
        i = pos[0]
        name, _, w, _, nk = nodes[i * 5:i * 5 + 5]
        pos[0] += 1
        here = path + [strings[name]] if i else path
        kids = 0
        for _ in range(nk):
            kids += walk(here)
        if w - kids:
            stacks[tuple(here)] += w - kids
        return w

    c.check(data["kind"] == kind and data["unit"] == "ns" and walk([]) == total,
            "%s html: kind, unit and root weight" % kind, (data["kind"], data["unit"]))
    c.check(dict(stacks) == expected_stacks(samples, kind),
            "%s html: every stack's self weight" % kind)


# pprof, decoded here (consumers.pb_fields): sample types and per-stack values.
def pprof(path):
    """(sample types, {(frames root first, thread label, state label): values})."""
    buf = gzip.open(path).read()
    strs, types, samples, locs, funcs = [], [], [], {}, {}
    for f, v in pb_fields(buf):
        if f == 6:
            strs.append(v.decode())
        elif f == 1:
            d = dict(pb_fields(v))
            types.append((d.get(1, 0), d.get(2, 0)))
        elif f == 2:
            ids, vals, labels = [], [], []
            for g, x in pb_fields(v):
                if g == 1:
                    ids += packed(x)
                elif g == 2:
                    vals += packed(x)
                elif g == 3:
                    lab = dict(pb_fields(x))
                    if 2 in lab:
                        labels.append((lab[1], lab[2]))
            samples.append((ids, vals, labels))
        elif f == 4:
            d = list(pb_fields(v))
            lid = [x for g, x in d if g == 1][0]
            line = [dict(pb_fields(x)) for g, x in d if g == 4][0]
            locs[lid] = line[1]
        elif f == 5:
            d = dict(pb_fields(v))
            funcs[d[1]] = d[2]
    types = [(strs[a], strs[b]) for a, b in types]
    agg = collections.defaultdict(lambda: [0] * len(types))
    for ids, vals, labels in samples:
        names = tuple(strs[funcs[locs[i]]] for i in reversed(ids))
        th = [strs[v] for k, v in labels if strs[k] == "thread"]
        st = [strs[v] for k, v in labels if strs[k] == "state"]
        key = (names, th[0] if th else None, st[0] if st else None)
        for k, x in enumerate(vals):
            agg[key][k] += x
    return types, dict(agg)


for kind, samples, want in (("wall", WALL, [("samples", "count"), ("wall", "nanoseconds")]),
                            ("lock", LOCK, [("contentions", "count"),
                                            ("delay", "nanoseconds")])):
    path = os.path.join(T, kind + ".pb.gz")
    out("convert", "--event", kind, "-o", path, W)
    types, agg = pprof(path)
    c.check(types == want, "%s pprof: sample types" % kind, types)
    exp = collections.defaultdict(lambda: [0, 0])
    for s in samples:
        e = exp[(tuple(frames_of(s, kind)), s["thread"], s.get("state"))]
        e[0] += 1
        e[1] += s["weight"]
    c.check({k: v for k, v in agg.items()} == dict(exp),
            "%s pprof: count and weight per (stack, thread label, state label)" % kind)

# The real consumer, where it is installed: it must take the lock profile's
# sample types by name (the decoding above is this test's own).
GO = shutil.which("go")
if GO:
    env = go_env(T)
    for idx, want in (("delay", "Total samples = %dms" % (sum(s["weight"] for s in LOCK)
                                                          // 10**6)),
                      ("contentions", "Type: contentions")):
        r = subprocess.run([GO, "tool", "pprof", "-top", "-sample_index=" + idx,
                            os.path.join(T, "lock.pb.gz")], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
        top = r.stdout.decode("utf-8", "replace")
        c.check(want in top, "go tool pprof -sample_index=%s reads the lock profile" % idx,
                top[:300])
    # Wall samples carry their thread state as the label "state" (no frame).
    for state in ("blocked", "running", "parked"):
        want = sum(s["weight"] for s in WALL if s["state"] == state) // 10**6
        r = subprocess.run([GO, "tool", "pprof", "-top", "-unit=ms",
                            "-tagfocus=state=^%s$" % state, os.path.join(T, "wall.pb.gz")],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=120)
        top = r.stdout.decode("utf-8", "replace")
        c.check("Showing nodes accounting for %dms" % want in top and "[state:" not in top,
                "go tool pprof -tagfocus=state=%s: that state's wall time, %d ms" %
                (state, want), top[:600])
else:
    print("note: go not found; the lock profile was not read by go tool pprof")

# ---------------------------------------------------------- --state -- #

for states in (["blocked", "waiting"], ["parked"], ["running"], ["sleeping", "native"]):
    keep = [s for s in WALL if s["state"] in states]
    got = collapsed(out("convert", "--event", "wall", "--state", ",".join(states),
                        "--format", "collapsed", W))
    c.check(got == expected_stacks(keep, "wall"), "--state %s: exactly those samples"
            % ",".join(states))
tree = out("convert", "--state", "blocked", W)
c.check("kind wall" in tree and "%d by --state" % sum(s["state"] != "blocked" for s in WALL)
        in tree, "--state alone: kind wall, the samples left out counted in the header")
c.check(collapsed(out("convert", "--event", "wall", "--state-frames", "--format",
                      "collapsed", W))
        == expected_stacks(WALL, "wall", state_frame=True),
        "--state-frames: [state:NAME] as the leaf of every stack")
per_state, per_state_n = collections.Counter(), collections.Counter()
for s in WALL:
    per_state[s["state"]] += s["weight"]
    per_state_n[s["state"]] += 1


def fmt_time(ns):
    return ("%.3f s" % (ns / 1e9) if ns >= 1e9 else "%.3f ms" % (ns / 1e6) if ns >= 1e6
            else "%.3f us" % (ns / 1e3) if ns >= 1e3 else "%d ns" % ns)


def states_line(states):
    allw = sum(per_state[k] for k in states)
    return "# states: " + ", ".join("%s %s (%.2f%%, %d samples)" % (
        k, fmt_time(per_state[k]), 100.0 * per_state[k] / allw, per_state_n[k])
        for k in STATES if k in states and per_state_n[k])


c.check(states_line(["blocked"]) in tree.splitlines(),
        "tree --state blocked: the header's time per state", states_line(["blocked"]))
full = out("convert", "--event", "wall", "--format", "flat", W).splitlines()
c.check(states_line(STATES) in full, "flat: the header's time per state",
        states_line(STATES))

# ------------------------------------------------------------ errors -- #

rc, o, e = rp("convert", "--state", "blocked,bogus", W)
c.check(rc == 2 and "unknown state 'bogus'" in e and all(s in e.split("states are")[1]
                                                        for s in STATES),
        "--state bogus: usage error listing every state", e[:300])
rc, o, e = rp("convert", "--event", "cpu", "--state", "blocked", W)
c.check(rc == 2 and "--event wall" in e, "--state with --event cpu: usage error", e[:200])
rc, o, e = rp("convert", "--event", "lock", "--state-frames", W)
c.check(rc == 2, "--state-frames with --event lock: usage error", e[:200])
for kind, opt in (("wall", "wall="), ("lock", "lock=")):
    for fmt in ("tree", "collapsed"):
        rc, o, e = rp("convert", "--event", kind, "--format", fmt, A)
        c.check(rc == 1 and "no %s samples" % kind in e and "cpu 100" in e and
                "alloc 16" in e and opt in e and o == "",
                "--event %s --format %s without %s samples: error naming the kinds "
                "there and %s" % (kind, fmt, kind, opt), (rc, e))
rc, o, e = rp("locks", A)
c.check(rc == 1 and "lock=" in o and "wall=" in o, "locks without lock or wall samples: "
        "exit 1, says lock= and wall= record them", (rc, o))

# ------------------------------------------------------------- locks -- #


def truth_monitors(samples):
    mons = {}
    for s in samples:
        m = mons.setdefault(s["monitor"], {"waits": 0, "wait_ns": 0, "max_ns": 0,
                                           "owners": collections.Counter(),
                                           "owner_waits": collections.Counter(),
                                           "stacks": collections.Counter(),
                                           "stack_waits": collections.Counter()})
        m["waits"] += 1
        m["wait_ns"] += s["weight"]
        m["max_ns"] = max(m["max_ns"], s["weight"])
        m["owners"][s["owner"]] += s["weight"]
        m["owner_waits"][s["owner"]] += 1
        st = tuple(reversed(STACKS[s["stack"]]))
        m["stacks"][st] += s["weight"]
        m["stack_waits"][st] += 1
    return sorted(mons.items(), key=lambda kv: (-kv[1]["wait_ns"], -kv[1]["waits"], kv[0]))


def check_locks_json(args, samples, what, top=10, nstacks=5):
    j = json.loads(out("locks", "--json", *args, W))
    truth = truth_monitors(samples)
    allw = sum(s["weight"] for s in samples)
    c.check(j["lock_samples"] == len(samples) and j["lock_wait_ns"] == allw,
            "%s: lock totals" % what, (j["lock_samples"], j["lock_wait_ns"]))
    c.check([m["class"] for m in j["monitors"]] == [k for k, _ in truth][:top],
            "%s: monitors ranked by total wait" % what, [m["class"] for m in j["monitors"]])
    for m, (name, t) in zip(j["monitors"], truth):
        c.check((m["waits"], m["wait_ns"], m["max_ns"], m["mean_ns"]) ==
                (t["waits"], t["wait_ns"], t["max_ns"], t["wait_ns"] // t["waits"]) and
                abs(m["share"] - t["wait_ns"] / allw) < 1e-4,
                "%s: %s count, total, longest, mean, share" % (what, name), m)
        owners = [((o["thread"]), o["waits"], o["wait_ns"]) for o in m["owners"]]
        want = sorted(((k, t["owner_waits"][k], v) for k, v in t["owners"].items()),
                      key=lambda x: (-x[2], -x[1], x[0] is None, x[0] or ""))[:nstacks]
        c.check(owners == want, "%s: %s owners by wait caused, unknown counted"
                % (what, name), (owners, want))
        stacks = [(tuple(s["frames"]), s["waits"], s["wait_ns"]) for s in m["stacks"]]
        want = sorted(((k, t["stack_waits"][k], v) for k, v in t["stacks"].items()),
                      key=lambda x: (-x[2], -x[1]))[:nstacks]
        c.check(stacks == want, "%s: %s waiting stacks, leaf first" % (what, name),
                (stacks, want))
    return j


j = check_locks_json([], LOCK, "locks --json")
c.check(any(o["thread"] is None for o in j["monitors"][0]["owners"]),
        "locks: the unknown owner is listed")
check_locks_json(["--top", "1", "--stacks", "1"], LOCK, "locks --top 1 --stacks 1", 1, 1)
check_locks_json(["--thread", "^worker-2$"], [s for s in LOCK if s["thread"] == "worker-2"],
                 "locks --thread worker-2")
t0 = min(s["t"] for s in M["samples"])
check_locks_json(["--from", "+1.9s"], [s for s in LOCK if s["t"] >= t0 + 1900 * 10**6],
                 "locks --from +1.9s")


# parked sites: LockSupport.park*, then towards the root skip
# java.util.concurrent.locks.*; the first other frame is the site.
def parked_key(stack):
    names = STACKS[stack]
    i = max((k for k, f in enumerate(names)
             if f.startswith("java.util.concurrent.locks.LockSupport.park")), default=None)
    if i is None:
        return (None, None)
    via = None
    for f in reversed(names[:i]):
        if f.startswith("java.util.concurrent.locks."):
            via = f
            continue
        return (f, via)
    return (None, via)


sites = collections.defaultdict(lambda: [0, 0, set()])
for s in WALL:
    if s["state"] == "parked":
        k = sites[parked_key(s["stack"])]
        k[0] += s["weight"]
        k[1] += 1
        k[2].add(s["thread"])
want = sorted(((k[0], k[1], v[0], v[1], len(v[2])) for k, v in sites.items()),
              key=lambda x: (-x[2], -x[3]))
got = [(p["site"], p["via"], p["wall_ns"], p["samples"], p["threads"]) for p in j["parked"]]
c.check(got == want and j["wall_samples"] == len(WALL) and
        j["parked_ns"] == sum(s["weight"] for s in WALL if s["state"] == "parked"),
        "locks: parked sites (site, via, wall, samples, threads)", (got, want))
c.check(got[0][0] == "java.util.concurrent.LinkedBlockingQueue.take" and
        ("app.Billing.charge", "java.util.concurrent.locks.ReentrantLock.lock")
        in [g[:2] for g in got], "locks: the idle pool and the ReentrantLock user found")



# each parked site's blocker classes and blocker owners, by wall time (None:
# none recorded, unknown), exactly as the manifest has them
def by_wall(counts, ns):
    return sorted(((k, counts[k], ns[k]) for k in counts),
                  key=lambda x: (-x[2], -x[1], x[0] is None, x[0] or ""))


def truth_parked(old):
    t = collections.defaultdict(lambda: [collections.Counter() for _ in range(4)])
    for s in WALL:
        if s["state"] == "parked":
            k = t[parked_key(s["stack"])]
            b, o = (None, None) if old else (s["blocker"], s["blocker_owner"])
            k[0][b] += 1
            k[1][b] += s["weight"]
            k[2][o] += 1
            k[3][o] += s["weight"]
    return {k: (by_wall(v[0], v[1]), by_wall(v[2], v[3])) for k, v in t.items()}


def got_parked(j):
    return {(p["site"], p["via"]):
            ([(b["class"], b["samples"], b["wall_ns"]) for b in p["blockers"]],
             [(o["thread"], o["waits"], o["wait_ns"]) for o in p["owners"]])
            for p in j["parked"]}


got, want = got_parked(j), truth_parked(False)
c.check(got == want, "locks: parked sites' blocker classes and owners", (got, want))
c.check([o[0] for o in want[("app.Billing.charge",
                             "java.util.concurrent.locks.ReentrantLock.lock")][1]]
        == ["worker-1", None, "worker-2"], "locks: the ReentrantLock's owners, unknown counted")
# a wall kind written before blocker_class and blocker_owner (five extras):
# the same sites, no blocker, owners unknown
O = os.path.join(T, "old.rpc")
run([WRITER, "waits-old", O])
jo = json.loads(out("locks", "--json", O))
c.check([(p["site"], p["via"], p["wall_ns"], p["samples"], p["threads"]) for p in jo["parked"]]
        == [(p["site"], p["via"], p["wall_ns"], p["samples"], p["threads"]) for p in j["parked"]]
        and got_parked(jo) == truth_parked(True),
        "locks: an old wall kind (five extras) reads, blockers none, owners unknown",
        got_parked(jo))

text = out("locks", W)
site2 = text.split("PARKED 2:")[1]
c.check("blocker classes (1, by wall time)" in site2 and
        "java.util.concurrent.locks.ReentrantLock$NonfairSync" in site2 and
        "worker-1 (tid 501)" in site2 and "unknown" in site2,
        "locks text: a parked site's blocker class and owners", site2)
rows = text.split("MONITORS BEGIN")[1].split("MONITORS END")[0].splitlines()[2:]
truth = truth_monitors(LOCK)
c.check([r.split()[-1] for r in rows] == [k for k, _ in truth] and
        [int(r.split()[1]) for r in rows] == [t["waits"] for _, t in truth],
        "locks text: ranking and counts", rows)
c.check("unknown" in text.split("MONITOR 1:")[1].split("MONITOR 2:")[0] and
        "PARKED BEGIN" in text, "locks text: owners with unknown, parked section")
rc, o, e = rp("locks", "--top", "0", W)
c.check(rc == 2, "locks --top 0: usage error")
rc, o, e = rp("locks", "--bogus", W)
c.check(rc == 2, "locks --bogus: usage error")

# ----------------------------------------------------------- summary -- #

summ = out("summary", W)
wline = [l for l in summ.splitlines() if l.startswith("  wall ")]
want_wall = "  wall        %d samples of %d threads, %.3f s:" % (
    len(WALL), len({s["thread"] for s in WALL}), sum(s["weight"] for s in WALL) / 1e9)
c.check(wline and wline[0].startswith(want_wall), "summary: wall line", wline)
allw = sum(s["weight"] for s in WALL)
for st in STATES:
    v = per_state.get(st, 0)
    if v:
        c.check(wline and ("%s %.3f s (%.1f%%)" % (st, v / 1e9, 100 * v / allw)) in wline[0],
                "summary: time in state %s" % st)
c.check(wline and "%d repeats" % sum(s["repeat"] for s in WALL) in wline[0],
        "summary: repeats")
top_name, top = truth[0]
lline = "  lock        %d contended waits, %.3f s waited; the most on %s (%.3f s, %d waits" % (
    len(LOCK), sum(s["weight"] for s in LOCK) / 1e9, top_name, top["wait_ns"] / 1e9,
    top["waits"])
c.check(lline in summ, "summary: lock line", lline)
G = collections.defaultdict(list)
for g in M["gauges"]:
    G[g["name"]].append((g["t"], g["value"]))


def rate(name):
    (t0, v0), (t1, v1) = min(G[name]), max(G[name])
    return (v1 - v0) * 1e9 / (t1 - t0)


def avg(name):
    return sum(v for _, v in G[name]) / len(G[name])


def mx(name):
    return max(v for _, v in G[name])


MiB = 1024.0 * 1024
u, s_, a = rate("proc.cpu_user_ns.total"), rate("proc.cpu_sys_ns.total"), \
    rate("agent.cpu_ns.total")
for want in ("    cpu       user %.1f%%, sys %.1f%% of one CPU" % (u / 1e7, s_ / 1e7),
             "    rss       max %.1f MiB, average %.1f MiB" % (mx("proc.rss_bytes") / MiB,
                                                           avg("proc.rss_bytes") / MiB),
             "    heap      used max %.1f MiB, average %.1f MiB; committed max %.1f MiB" % (
                 mx("heap.used_bytes") / MiB, avg("heap.used_bytes") / MiB,
                 mx("heap.committed_bytes") / MiB),
             "    gc        %d collections, %.3f ms" % (
                 mx("gc.count.total") - min(v for _, v in G["gc.count.total"]),
                 (mx("gc.time_ns.total") - min(v for _, v in G["gc.time_ns.total"])) / 1e6),
             "    threads   total max %d, average %.1f; runnable max %d, average %.1f" % (
                 mx("threads.os"), avg("threads.os"), mx("threads.runnable"),
                 avg("threads.runnable")),
             "    classes   %d loaded at most" % mx("classes.loaded"),
             "    agent     CPU %.3f ms/s (%.2f%% of one CPU, %.2f%% of the process's CPU)"
             % (a / 1e6, a / 1e7, 100 * a / (u + s_))):
    c.check(want in summ, "summary: " + want.split()[0] + " line", want)
trow = [l.split() for l in summ.splitlines() if re.match(r"\s+502\s+worker-2", l)]
c.check(trow and trow[0][2] == str(sum(1 for s in M["samples"] if s["kind"] == "cpu")),
        "summary: the thread table counts cpu samples, not wall or lock ones", trow)
c.check("  wall " not in out("summary", A) and "telemetry" not in out("summary", A),
        "summary: no wall, lock or telemetry lines for a recording without them")
c.close()
