#!/usr/bin/env python3
"""tests/convert/test_otlp.py decode|collector RINGPROF RP_TESTWRITER RP_BIGWRITER FETCH_OTELCOL

`ringprof convert --format otlp` of rp_testwriter's recordings (fleet: cpu and
alloc with the service, labels, main jar and runtime in the header; main with
--service and --label; fleet-main: the service named after the jar; waits:
wall and lock; heap: alloc, live snapshots and gc), read two ways:

  decode     by this test's own protobuf reader (otlp_read.decode, field
             numbers from opentelemetry-proto v1.10.0/v1.11.0), which also
             checks what the Collector's JSON would not show: the wire types
             (time_unix_nano a fixed64), every dictionary table's entry 0 its
             zero value and present (link_table[0] 16 and 8 zero bytes), no
             duplicate string, attribute, location or stack, every index in
             range, strings UTF-8 (rp_bigwriter's hostile names), the same
             profile_id from two conversions and another for another span;
             and pprof's sample labels from the header and --label;
  collector  by a real OpenTelemetry Collector v0.165.0 (tests/fetch-otelcol's
             build; exit 77 with one line where it is not cached): the OTLP
             HTTP receiver on 127.0.0.1 at a free port takes the file at
             /v1development/profiles, the file exporter writes pdata's JSON,
             which is read back (otlp_read.from_json).

Either way, against `ringprof convert --format collapsed` of the same chunks
(itself checked against the manifests by convert_text) and the manifests:
every stack and its weight per kind, the totals, the sample types and units,
service.name, host.name, process.pid, process.runtime.*, the labels, thread
names and OS ids with each thread's weight, the wall states' weights, the
frames' files and lines, the frame types, the live profile being the last
snapshot, the objects per allocation site, and the profile's time range.
"""
import gzip
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, load_manifest, pb_fields, run, sample_frames, tempdir  # noqa: E402
from otlp_read import attrs_of, decode, from_json, stacks_of, type_of  # noqa: E402

MODE, RINGPROF, WRITER, BIGWRITER, FETCH = sys.argv[1:6]
T = tempdir()
c = Checks("otlp_" + MODE)

SUFFIX = {"interpreted": "_[0]", "jit": "_[j]", "inlined": "_[i]", "kernel": "_[k]"}
TYPES = {"cpu": [("cpu", "nanoseconds")], "wall": [("wall", "nanoseconds")],
         "alloc": [("alloc_space", "bytes"), ("alloc_objects", "count")],
         "live": [("inuse_space", "bytes"), ("inuse_objects", "count")],
         "lock": [("delay", "nanoseconds"), ("contentions", "count")],
         "gc": [("gc", "nanoseconds")]}
WALL0 = 1795240923000000000          # rec-A's chunk start (rp_testwriter.c)


def write(variant, path):
    run([WRITER, variant, path, "--manifest", path + ".json"])
    return path, load_manifest(path + ".json")


def convert(out, inputs, *extra):
    run([RINGPROF, "convert", "--quiet", "--format", "otlp", "-o", out] + list(extra)
        + list(inputs))
    with open(out, "rb") as f:
        return f.read()


def collapsed(inputs, kind, samples=False):
    text = run([RINGPROF, "convert", "--quiet", "--format", "collapsed", "--event", kind]
               + (["--value", "samples"] if samples else []) + list(inputs))
    out = {}
    for line in text.splitlines():
        stack, _, v = line.rpartition(" ")
        out[stack] = int(v)
    return out


def folded(name):
    return "".join(":" if ch == ";" else "?" if ord(ch) < 0x20 or ch == "\x7f" else ch
                   for ch in name) or "?"


def stack_key(frames):
    return ";".join(folded(n) + SUFFIX.get(a.get("ringprof.frame.type"), "")
                    for n, _, _, a in frames)


def profiles_of(req):
    """(kind, (type, unit), resource, profile) for every profile."""
    for r in req["resources"]:
        for p in r["profiles"]:
            yield attrs_of(req, p["attrs"]).get("ringprof.kind"), type_of(req, p), r, p


def per_stack(req, kind, ptype):
    """A kind's sample type summed per collapsed stack over every resource."""
    out = {}
    for k, t, _, p in profiles_of(req):
        if k == kind and t == ptype:
            for frames, _, v in stacks_of(req, p):
                out[stack_key(frames)] = out.get(stack_key(frames), 0) + v
    return out


def manifest_objects(manifests, kind):
    """Objects per stack from the manifests; for live, each recording's last
    snapshot only."""
    out = {}
    for m in manifests:
        samples = [s for s in m["samples"] if s["kind"] == kind]
        if kind == "live" and samples:
            last = max(s["t"] for s in samples)
            samples = [s for s in samples if s["t"] == last]
        for s in samples:
            frames = sample_frames(m, s)
            if kind == "live" and s.get("class"):      # the class leaf, as for alloc
                frames.append(s["class"])
            key = ";".join(folded(f) for f in frames)
            out[key] = out.get(key, 0) + s["objects"]
    return out


def plain(stacks):
    """Stacks without the frame-type suffixes (the manifest's frames have none)."""
    out = {}
    for k, v in stacks.items():
        key = ";".join(f[:-4] if f[-4:] in ("_[0]", "_[j]", "_[i]", "_[k]") else f
                       for f in k.split(";"))
        out[key] = out.get(key, 0) + v
    return out


def check_stacks(req, inputs, manifests, what):
    """Every profile against collapsed, kind by kind; objects against the
    manifests; each kind's sample types exactly as documented."""
    kinds = {}
    for k, t, _, p in profiles_of(req):
        kinds.setdefault(k, set()).add(t)
        # Grafana Pyroscope names an OTLP profile after its period type's type
        # and refuses one without (pkg/ingester/otlp/convert.go): every profile
        # has one, one of its kind's sample types, and a period of at least 1.
        pt = p["period_type"]
        st = req["dict"]["strings"]
        ptn = (st[pt[0]], st[pt[1]]) if pt else None
        c.check(ptn is not None and ptn[0] and ptn in TYPES.get(k, [ptn]) and p["period"] >= 1,
                "%s: %s %s has a period type of its kind and a period" % (what, k, t[0]),
                (ptn, p["period"]))
    want_kinds = {s["kind"] for m in manifests for s in m["samples"]}
    c.check(set(kinds) == want_kinds, "%s: a profile per kind" % what, (kinds, want_kinds))
    for kind, types in kinds.items():
        c.check(types == set(TYPES.get(kind, [])), "%s: %s's sample types" % (what, kind),
                types)
        for t in types:
            got = per_stack(req, kind, t)
            if t[1] == "count" and t[0] != "contentions":
                want = manifest_objects(manifests, kind)
                got = plain(got)
            else:
                want = collapsed(inputs, kind, samples=t[0] == "contentions")
            c.check(got == want, "%s: %s %s per stack equals %s" % (
                what, kind, t[0], "the manifests" if t[1] == "count" and
                t[0] != "contentions" else "collapsed"),
                sorted(set(got.items()) ^ set(want.items()))[:6])
            c.check(sum(got.values()) == sum(want.values()) and sum(want.values()) > 0,
                    "%s: %s %s total %d" % (what, kind, t[0], sum(want.values())),
                    sum(got.values()))


def check_threads_and_frames(req, manifests, what):
    truth, names = {}, {}
    for m in manifests:
        for s in m["samples"]:
            if s["kind"] == "cpu":
                truth[s["tid"]] = truth.get(s["tid"], 0) + s["weight"]
                names[s["tid"]] = s["thread"]
    got, got_names, lines = {}, {}, set()
    for k, t, _, p in profiles_of(req):
        for frames, a, v in stacks_of(req, p):
            c.check("thread.name" in a and "ringprof.thread.tid" in a,
                    "%s: every sample names its thread" % what, a)
            if k == "cpu":
                got[a["ringprof.thread.tid"]] = got.get(a["ringprof.thread.tid"], 0) + v
                got_names[a["ringprof.thread.tid"]] = a["thread.name"]
            for n, f, line, fa in frames:
                lines.add((n, f, line, fa.get("ringprof.frame.type"),
                           fa.get("profile.frame.type")))
    if truth:
        c.check(got == truth, "%s: cpu weight per OS thread" % what, (got, truth))
        c.check(got_names == names, "%s: thread names" % what, (got_names, names))
    want_lines = set()
    for m in manifests:
        for st in m["stacks"]:
            for fr in st["frames"] if isinstance(st, dict) else []:
                if fr["type"] in (0, 1, 2):
                    want_lines.add((fr["class"] + "." + fr["name"], fr["file"], fr["line"]))
    # Only manifests that list every frame's file and line (waits' name frames only).
    named = all(isinstance(st, dict) for m in manifests for st in m["stacks"])
    java = {(n, f, line) for n, f, line, rt, ot in lines if ot == "jvm"}
    if named:
        c.check(java and java <= want_lines, "%s: Java frames keep file and line" % what,
                sorted(java - want_lines)[:4])
    for n, f, line, rt, ot in lines:
        if rt in ("interpreted", "jit", "inlined"):
            c.check(ot == "jvm", "%s: %s is a jvm frame" % (what, n), ot)
        if rt in ("native", "cpp"):
            c.check(ot == "native", "%s: %s is a native frame" % (what, n), ot)
        if rt == "kernel":
            c.check(ot == "kernel", "%s: %s is a kernel frame" % (what, n), ot)


def check_wall(req, manifest):
    want, got = {}, {}
    for s in manifest["samples"]:
        if s["kind"] == "wall":
            want[s["state"]] = want.get(s["state"], 0) + s["weight"]
    jvm = {"running": "runnable", "runnable": "runnable", "native": "runnable",
           "io": "runnable", "blocked": "blocked", "waiting": "waiting",
           "parked": "waiting", "sleeping": "timed_waiting"}
    for k, t, _, p in profiles_of(req):
        if k != "wall":
            continue
        for _, a, v in stacks_of(req, p):
            st = a.get("ringprof.thread.state")
            got[st] = got.get(st, 0) + v
            c.check(a.get("jvm.thread.state") == jvm.get(st),
                    "wall: jvm.thread.state of %s" % st, a.get("jvm.thread.state"))
    c.check(got == want and len(want) > 3, "wall: weight per thread state", (got, want))


def check_resource(req, want, what):
    c.check(len(req["resources"]) == 1, "%s: one resource" % what, len(req["resources"]))
    a = req["resources"][0]["attrs"] if req["resources"] else {}
    for k, v in want.items():
        c.check(a.get(k) == v, "%s: resource %s" % (what, k), a.get(k))
    c.check(req["resources"][0]["scope"][0] == "ringprof", "%s: scope" % what)


def check_time(req, manifest, what):
    last = max(s["t"] for s in manifest["samples"])
    for k, t, _, p in profiles_of(req):
        c.check(p["time"] == WALL0 and p["time"] + p["duration"] >= last,
                "%s: %s's time range is the chunk's" % (what, t[0]),
                (p["time"], p["duration"]))


def check_request(req, what, inputs, manifests, resource=None):
    check_stacks(req, inputs, manifests, what)
    check_threads_and_frames(req, manifests, what)
    if resource:
        check_resource(req, resource, what)


# ------------------------------------------------------------- decode -- #

def check_wire(data, req, what):
    """What only the bytes show."""
    d = req["dict"]
    c.check(d is not None, "%s: a dictionary" % what)
    c.check(d["strings"][0] == "" and d["mappings"][0] == 0 and d["functions"][0] == (0, 0, 0)
            and d["locations"][0] == {"mapping": 0, "lines": [], "attrs": []}
            and d["stacks"][0] == [] and d["attributes"][0] == (0, None),
            "%s: every table's entry 0 is its zero value" % what)
    c.check(d["links"] == [("00" * 16, "00" * 8)], "%s: link_table[0] of zero bytes" % what,
            d["links"])
    for name in ("strings", "attributes", "stacks"):
        items = [json.dumps(x, sort_keys=True) for x in d[name]]
        c.check(len(items) == len(set(items)), "%s: no duplicate %s" % (what, name))
    locs = [json.dumps(x, sort_keys=True) for x in d["locations"]]
    c.check(len(locs) == len(set(locs)), "%s: no duplicate location" % what)
    ns = len(d["strings"])
    c.check(all(0 <= i < ns for f in d["functions"] for i in f) and
            all(k < ns for k, _ in d["attributes"]) and all(m < ns for m in d["mappings"]),
            "%s: string indexes in range" % what)
    c.check(all(fn < len(d["functions"]) for l in d["locations"] for fn, _ in l["lines"]) and
            all(l["mapping"] < len(d["mappings"]) for l in d["locations"]) and
            all(i < len(d["locations"]) for s in d["stacks"] for i in s),
            "%s: location, function and mapping indexes in range" % what)
    for _, t, _, p in profiles_of(req):
        c.check(p["wire"].get(3) == "bytes", "%s: time_unix_nano is a fixed64" % what,
                p["wire"].get(3))
        c.check(len(p["id"]) == 32 and p["id"] != "0" * 32, "%s: a profile_id" % what)
        for s in p["samples"]:
            c.check(0 < s["stack"] < len(d["stacks"]) and len(s["values"]) == 1 and
                    s["values"][0] > 0 and not s["timestamps"] and
                    all(0 < i < len(d["attributes"]) for i in s["attrs"]),
                    "%s: a sample with one value, a stack and attributes in range" % what)


def run_decode(cases):
    for what, data, req, inputs, manifests, resource in cases:
        check_wire(data, req, what)
        check_request(req, what, inputs, manifests, resource)
    # The same chunks give the same ids; another span another id.
    a, ma = write("main", os.path.join(T, "id.rpc"))
    ids1 = [p["id"] for _, _, _, p in profiles_of(decode(convert(os.path.join(T, "1.otlp"), [a])))]
    ids2 = [p["id"] for _, _, _, p in profiles_of(decode(convert(os.path.join(T, "2.otlp"), [a])))]
    ids3 = [p["id"] for _, _, _, p in profiles_of(decode(convert(
        os.path.join(T, "3.otlp"), [a], "--to", "2026-11-21T06:02:05Z")))]
    c.check(ids1 == ids2 and len(set(ids1)) == len(ids1), "profile ids: stable, one each")
    c.check(not set(ids1) & set(ids3), "profile ids: another for another span")
    # Hostile names: every string UTF-8 (decode is strict), names kept otherwise.
    big = os.path.join(T, "names.rpc")
    run([BIGWRITER, "names", big])
    req = decode(convert(os.path.join(T, "names.otlp"), [big]))
    c.check(any("\ufffd" in s for s in req["dict"]["strings"]),
            "hostile names: bytes that are not UTF-8 became U+FFFD")
    c.check(max(len(req["dict"]["stacks"][s["stack"]]) for _, _, _, p in profiles_of(req)
                for s in p["samples"]) >= 3000, "hostile names: the 3000-frame stack")
    # pprof carries the same labels, as string labels on every sample.
    pp = os.path.join(T, "fleet.pb.gz")
    run([RINGPROF, "convert", "--quiet", "-o", pp, "--label", "env=staging", "--label",
         "region=eu", cases[0][3][0]])
    labels = pprof_labels(pp)
    want = {"env": "staging", "team": "payments", "url": "http://x:1", "region": "eu"}
    c.check(labels and all(all(l.get(k) == v for k, v in want.items()) for l in labels),
            "pprof: every sample has the labels, --label winning", labels[:1])
    # Usage errors: one line, exit 2, no file.
    bad = os.path.join(T, "bad.otlp")
    for args in (["--label", "env"], ["--label", "9x=y"], ["--label", "a=1", "--label", "a=2"],
                 ["--service", ""], ["--group", "class"]):
        r = subprocess.run([RINGPROF, "convert", "--format", "otlp", "-o", bad] + args + [a],
                           capture_output=True, text=True)
        c.check(r.returncode == 2 and not os.path.exists(bad) and
                r.stderr.startswith("ringprof convert: "), "usage error %s" % args,
                (r.returncode, r.stderr[:200]))


def pprof_labels(path):
    """Each sample's string labels of a pprof file, as {key: value}."""
    with gzip.open(path, "rb") as f:
        prof = list(pb_fields(f.read()))
    strings = [v.decode("utf-8") for k, v in prof if k == 6]
    out = []
    for k, v in prof:
        if k != 2:
            continue
        labels = {}
        for sf, sv in pb_fields(v):
            if sf == 3:
                lab = dict(pb_fields(sv))
                if lab.get(2):
                    labels[strings[lab[1]]] = strings[lab[2]]
        out.append(labels)
    return out


# ---------------------------------------------------------- collector -- #

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for(cond, proc, what, limit=120):
    """Poll cond until true; the bound only catches a hang (docs/testing.md)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if cond():
            return True
        if proc.poll() is not None:
            raise RuntimeError("the collector exited (%d) while waiting for %s"
                               % (proc.returncode, what))
        time.sleep(0.05)
    raise RuntimeError("no %s after %d s" % (what, limit))


def run_collector(cases):
    r = subprocess.run([FETCH, "--path"], capture_output=True, text=True)
    if r.returncode != 0:
        print("SKIP: no OpenTelemetry Collector in /var/cache/ringprof/otelcol "
              "(tools/install-deps --test builds it: tests/fetch-otelcol)")
        sys.exit(77)
    binary = r.stdout.strip()
    out = os.path.join(T, "exported.json")
    port = free_port()
    cfg = os.path.join(T, "otelcol.yaml")
    with open(cfg, "w") as f:
        f.write("receivers:\n  otlp:\n    protocols:\n      http:\n"
                "        endpoint: 127.0.0.1:%d\n"
                "exporters:\n  file:\n    path: %s\n    flush_interval: 100ms\n"
                "service:\n  telemetry:\n    metrics:\n      level: none\n"
                "  pipelines:\n    profiles:\n      receivers: [otlp]\n"
                "      exporters: [file]\n" % (port, out))
    log = open(os.path.join(T, "otelcol.log"), "w")
    proc = subprocess.Popen([binary, "--config=" + cfg,
                             "--feature-gates=service.profilesSupport"],
                            stdout=log, stderr=subprocess.STDOUT)
    got = {}
    try:
        wait_for(lambda: "Everything is ready" in open(log.name).read(), proc,
                 "'Everything is ready' in the collector's log")
        lines = 0
        for what, data, _, inputs, manifests, resource in cases:
            req = urllib.request.Request(
                "http://127.0.0.1:%d/v1development/profiles" % port, data=data,
                headers={"Content-Type": "application/x-protobuf"})
            try:
                with urllib.request.urlopen(req, timeout=60) as resp:
                    status = resp.status
            except urllib.error.HTTPError as e:
                status = "%d %s" % (e.code, e.read()[:300])
            c.check(status == 200, "%s: the collector accepts it" % what, status)
            lines += 1

            def have():
                return os.path.exists(out) and open(out).read().count("\n") >= lines
            wait_for(have, proc, "the exporter's line for %s" % what)
            doc = json.loads(open(out).read().splitlines()[lines - 1])
            got[what] = from_json(doc)
            check_request(got[what], "collector " + what, inputs, manifests, resource)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.close()
    return got


# --------------------------------------------------------------- main -- #

def main():
    fleet, mf = write("fleet", os.path.join(T, "fleet.rpc"))
    main_rpc, mm = write("main", os.path.join(T, "main.rpc"))
    jar, mj = write("fleet-main", os.path.join(T, "jar.rpc"))
    waits, mw = write("waits", os.path.join(T, "waits.rpc"))
    heap, mh = write("heap", os.path.join(T, "heap"))
    common = {"host.name": "hostA", "process.pid": 100}
    cases = []

    def case(what, inputs, manifests, resource, *extra):
        data = convert(os.path.join(T, what + ".otlp"), inputs, *extra)
        cases.append((what, data, decode(data), inputs, manifests, resource))
        return cases[-1][2]

    req = case("fleet", [fleet], [mf], dict(common, **{
        "service.name": "checkout", "env": "prod", "team": "payments", "url": "http://x:1",
        "process.runtime.name": "Test Runtime Environment",
        "process.runtime.version": "17.0.99+1-test",
        "process.runtime.description": "Test Vendor TestVM 17.0.99+1",
        "ringprof.recording.id": "rec-A"}))
    check_time(req, mf, "fleet")
    case("flags", [fleet], [mf], dict(common, **{
        "service.name": "api", "env": "staging", "team": "payments", "region": "eu"}),
        "--service", "api", "--label", "env=staging", "--label", "region=eu")
    case("main", [main_rpc], [mm], dict(common, **{"service.name": "unknown_service:java"}))
    case("jar", [jar], [mj], dict(common, **{"service.name": "billing"}))
    req = case("waits", [waits], [mw], None)
    check_wall(req, mw)
    case("heap", [heap], [mh], None)
    case("merged", [main_rpc, waits], [mm, mw], None)
    c.check(len(cases[-1][2]["resources"]) == 2, "two recordings, two resources")
    if MODE == "decode":
        run_decode(cases)
    else:
        got = run_collector(cases)
        check_wall(got["waits"], mw)
        check_time(got["fleet"], mf, "collector fleet")
    c.close()


main()
