#!/usr/bin/env python3
"""tests/push/test_push.py -- `ringprof push` against a backend of the test's own.

usage: test_push.py RINGPROF RP_PUSHWRITER TESTS_CONVERT_DIR

What push sends and how it takes each answer, with no JVM and no real backend
(pushlib.py's server checks ringprof's side of the wire; the real OpenTelemetry
Collector is agent_push_otlp):
  - Pyroscope pprof: one multipart request per chunk and kind, the query
    (name, from, until, spyName), the sample-type config; every stack and its
    weight equal to `convert --format collapsed` of the same chunk and kind;
    --period windows add up to the chunk, each equal to convert --from/--to;
  - Pyroscope jfr: the form field, the query of Pyroscope's Java agent, the
    body equal to `convert --format jfr`, and jfr-parser's conversion of it
    (what Pyroscope ingests, at the sampleRate sent) totalling the CPU and the
    allocated bytes of convert (skipped with a line where tests/fetch-jfr-parser
    has not built it, and in sanitizer builds);
  - --follow: the state file; a second run sends nothing, a new chunk alone;
    a push killed in the middle of a chunk sends the rest and nothing twice;
    chunks deleted before they were sent (retention) are counted missing, the
    one being retried is sent from memory; a .part is not sent until renamed;
    a copy of a chunk, a symlink and a directory with chunk names are not sent;
    a later JVM under the same recording id (recording=) has its chunks sent;
    at SIGTERM the chunks finished by then are sent first (--drain), and a
    second signal stops it at once;
  - failures: 503, 503, 429 with Retry-After, then 200: the same profile four
    times, the waits at least the backoff's; --retry-for gives up (exit 3) on a
    server that answers 503, refuses connections or never answers (--timeout);
    a 400 is reported with the chunk and the server's first line escaped, not
    resent after a restart, and the other chunks still go;
  - a terminal gets one status line, kept up to date, the news above it;
  - TLS: a server whose certificate the system does not trust is refused, one
    that --cacert names is trusted (openssl makes the certificate; skipped with
    a line without it);
  - secrets: the token and the basic-auth password reach the server and appear
    in no output, no state file and no dry-run file, even when the server
    quotes them back; credentials on the command line are refused;
  - usage errors.
"""
import base64
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

RINGPROF, WRITER, CONVERT_DIR = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, CONVERT_DIR)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from consumers import Checks  # noqa: E402
import jfr_readers  # noqa: E402
import pushlib  # noqa: E402
from pushlib import Backend, collapsed, form, pprof, pprof_stacks, run  # noqa: E402

C = Checks("push")
TMP = tempfile.mkdtemp(prefix="rp-push-")
WALL0 = 1795240800000000000          # rp_pushwriter's 2026-11-21T06:00:00Z
SEC = 1000000000
REC = "4242-20261121T060000Z-00000000000000f1"


def writer(d, seq, *args):
    os.makedirs(d, exist_ok=True)
    rc, out, err = run([WRITER, d, str(seq)] + list(args))
    if rc != 0:
        raise RuntimeError("rp_pushwriter: " + err)
    return out.strip()


def newdir(name):
    d = os.path.join(TMP, name)
    os.makedirs(d)
    return d


def push(*args, env=None):
    return run([RINGPROF, "push"] + list(args), env=env)


def start_push(*args, env=None):
    return subprocess.Popen([RINGPROF, "push"] + list(args), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(p):
    out, err = p.communicate(timeout=pushlib.WAIT)
    return p.returncode, out.decode(), err.decode()


TRUTHS = {}


def truth(chunk, kind, *extra):
    key = (chunk, kind) + extra
    if key not in TRUTHS:
        TRUTHS[key] = convert_collapsed(chunk, kind, *extra)
    return TRUTHS[key]


def convert_collapsed(chunk, kind, *extra):
    rc, out, err = run([RINGPROF, "convert", "--format", "collapsed", "--event", kind,
                        "--quiet"] + list(extra) + [chunk])
    if rc != 0:
        raise RuntimeError("convert: " + err)
    return collapsed(out)


def profile_of(req):
    """The pprof profile a Pyroscope request carries."""
    return form(req)["profile"][1]


def root_frame(req):
    _, stacks = pprof_stacks(profile_of(req))
    return sorted({s.split(";")[0] for s in stacks})


def state_lines(path):
    if not os.path.exists(path):
        return ["(no state file)"]
    with open(path) as f:
        return f.read().splitlines()


# -------------------------------------------------------------- pprof -- #

def test_pyroscope_pprof():
    d = newdir("pprof")
    chunks = [writer(d, s, "--kinds", "cpu,alloc,wall,live") for s in (0, 1)]
    b = Backend()
    rc, _, err = push("--follow", d, "--once", b.url("/ingest"))
    C.check(rc == 0, "pprof: exit 0", err)
    C.check("2 chunks sent (8 requests" in err, "pprof: the summary counts 2 chunks, 8 "
            "requests", err)
    reqs = b.requests
    order = ["cpu", "alloc", "live", "wall"]
    C.check(len(reqs) == 8, "pprof: one request per chunk and kind", len(reqs))
    expect_types = {"cpu": [("samples", "count"), ("cpu", "nanoseconds")],
                    "alloc": [("samples", "count"), ("alloc_objects", "count"),
                              ("alloc_space", "bytes")],
                    "live": [("samples", "count"), ("inuse_objects", "count"),
                             ("inuse_space", "bytes")],
                    "wall": [("samples", "count"), ("wall", "nanoseconds")]}
    for i, r in enumerate(reqs[:8]):
        seq, kind = i // 4, order[i % 4]
        what = "pprof: chunk %d %s" % (seq, kind)
        C.check(r.path == "/ingest", what + ": path /ingest", r.path)
        C.check(r.query.get("name") == "unknown_service_java{host=hostF}",
                what + ": name (OpenTelemetry's unknown service, in Pyroscope's "
                "grammar)", r.query)
        C.check(r.query.get("spyName") == "javaspy" and "format" not in r.query,
                what + ": spyName javaspy and no format (a form)", r.query)
        begin = WALL0 + seq * 60 * SEC
        C.check(r.query.get("from") == str(begin), what + ": from is the chunk's start",
                r.query.get("from"))
        until = int(r.query.get("until", "0"))
        C.check(begin + 59 * SEC < until <= begin + 60 * SEC, what + ": until is the "
                "chunk's last event", until)
        C.check(r.headers.get("Content-Type", "").startswith("multipart/form-data; boundary="),
                what + ": multipart", r.headers.get("Content-Type"))
        f = form(r)
        C.check(f.get("profile", (None,))[0] == "profile.pprof", what + ": the profile is "
                "a file field", list(f))
        stc = json.loads(f["sample_type_config"][1]) if "sample_type_config" in f else {}
        C.check("contentions" in stc and "samples" not in stc, what + ": the sample-type "
                "config names lock types and not 'samples'", stc)
        types, stacks = pprof_stacks(f["profile"][1])
        C.check(types == expect_types[kind], what + ": sample types", types)
        want = truth(chunks[seq], kind)
        C.check(stacks == want, what + ": every stack and weight equal to convert "
                "--format collapsed", (stacks, want))
        _, samples = pprof(f["profile"][1])
        labels = set().union(*(set(s[2]) for s in samples))
        C.check("thread" not in labels, what + ": merged threads (no thread label: "
                "Pyroscope would make a series of each)", labels)
        if kind == "wall":
            states = {s[2].get("state") for s in samples}
            C.check(states == {"running", "parked"}, what + ": the state label", states)
    st = state_lines(os.path.join(d, ".ringprof-push.state"))
    C.check(st[0] == "ringprof-push-state 1" and
            ("rec %s 2 0 0 2 0 0" % REC) in " ".join(st),
            "pprof: the state file says both chunks were sent", st)

    # A second run sends nothing; a new chunk alone is sent by the third.
    n = len(b.requests)
    rc, _, err = push("--follow", d, "--once", b.url("/ingest"))
    C.check(rc == 0 and len(b.requests) == n, "again: nothing sent twice",
            (rc, len(b.requests) - n, err))
    writer(d, 2, "--kinds", "cpu")
    rc, _, err = push("--follow", d, "--once", b.url("/ingest"))
    new = b.requests[n:]
    C.check(rc == 0 and len(new) == 1 and root_frame(new[0]) == ["push.Chunk2.run"],
            "again: only the new chunk is sent", (rc, len(new), err))

    # --per-thread keeps the thread label.
    b2 = Backend()
    rc, _, err = push("--per-thread", "--event", "cpu", b2.url("/ingest"), chunks[0])
    _, samples = pprof(profile_of(b2.requests[0])) if b2.requests else (None, [])
    C.check(rc == 0 and {s[2].get("thread") for s in samples} == {"main", "worker"},
            "--per-thread: thread labels", err)
    # The agent's service= and labels=, the main jar, --service, --label,
    # --tenant, --header.
    e = newdir("named")
    named = writer(e, 0, "--kinds", "cpu", "--service", "billing", "--labels",
                   "env:stage;team-x:a{b};zone:eu")
    jar = writer(e, 1, "--kinds", "cpu", "--main", "/opt/app/checkout.jar")
    rc, _, err = push("--label", "env=prod", b2.url("/ingest"), named, jar)
    names = [r.query.get("name") for r in b2.requests[-2:]]
    C.check(rc == 0 and names == ["billing{host=hostF,team_x=a_b_,zone=eu,env=prod}",
                                  "checkout{host=hostF,env=prod}"],
            "name: the agent's service and labels (in Pyroscope's grammar), --label "
            "winning; else the main jar", (names, err))
    rc, _, err = push("--service", "checkout", "--label", "env=prod", "--label",
                      "host=h2", "--tenant", "team-a", "--header", "X-Extra: 1",
                      "--event", "cpu", b2.url("/ingest"), chunks[0])
    r = b2.requests[-1]
    C.check(rc == 0 and r.query.get("name") == "checkout{env=prod,host=h2}",
            "--service and --label make the name (a given host wins)", r.query)
    C.check(r.headers.get("X-Scope-OrgID") == "team-a" and r.headers.get("X-Extra") == "1",
            "--tenant and --header", dict(r.headers))
    b.close()
    b2.close()


def test_period():
    d = newdir("period")
    chunk = writer(d, 0, "--kinds", "cpu")
    b = Backend()
    rc, _, err = push("--period", "10s", b.url("/ingest"), chunk)
    C.check(rc == 0 and len(b.requests) == 6, "--period 10s: six windows of a 60 s "
            "chunk", (rc, len(b.requests), err))
    total = {}
    for k, r in enumerate(b.requests):
        frm, until = int(r.query["from"]), int(r.query["until"])
        C.check(frm == WALL0 + k * 10 * SEC, "--period: window %d starts at its "
                "boundary" % k, frm)
        C.check(until == WALL0 + (k + 1) * 10 * SEC or (k == 5 and until < WALL0 + 60 * SEC),
                "--period: window %d ends at its boundary (the last at the chunk's "
                "end)" % k, until)
        _, stacks = pprof_stacks(profile_of(r))
        t = truth(chunk, "cpu", "--from", "2026-11-21T06:00:%02dZ" % (10 * k),
                  "--to", "2026-11-21T06:0%d:%02dZ" % ((10 * k + 10) // 60, (10 * k + 10) % 60))
        C.check(stacks == t, "--period: window %d equals convert --from --to" % k,
                (stacks, t))
        for s, v in stacks.items():
            total[s] = total.get(s, 0) + v
    C.check(total == truth(chunk, "cpu"), "--period: the windows add up to the chunk",
            total)
    rc, _, err = push("--period", "500ms", b.url("/ingest"), chunk)
    C.check(rc == 2 and "at least 1s" in err, "--period below 1s refused", err)
    b.close()


def test_jfr():
    d = newdir("jfr")
    chunk = writer(d, 0, "--kinds", "cpu,alloc")
    b = Backend()
    rc, _, err = push("--format", "jfr", b.url("/ingest"), chunk)
    C.check(rc == 0 and len(b.requests) == 1, "jfr: one request for every kind",
            (rc, len(b.requests), err))
    if not b.requests:
        return
    r = b.requests[0]
    q = r.query
    C.check(q.get("format") == "jfr" and q.get("spyName") == "javaspy" and
            q.get("units") == "samples" and q.get("aggregationType") == "sum" and
            q.get("sampleRate") == "100",
            "jfr: the query Pyroscope's Java agent sends (sampleRate from interval=10ms)", q)
    f = form(r)
    C.check(f.get("jfr", (None,))[0] == "jfr" and set(f) == {"jfr"},
            "jfr: one file field 'jfr'", list(f))
    body = gzip.decompress(f["jfr"][1]) if "jfr" in f else b""
    out = os.path.join(TMP, "jfr.jfr")
    run([RINGPROF, "convert", "--format", "jfr", "--quiet", "-o", out, chunk])
    with open(out, "rb") as fh:
        C.check(body == fh.read(), "jfr: the body is convert --format jfr's file, gzipped")
    # What Pyroscope makes of it: jfr-parser's conversion, with the sampleRate
    # push sent (tests/convert/jfrparser, built by tests/fetch-jfr-parser).
    exe = jfr_readers.readers(os.environ.get("RP_CACHE", "/var/cache/ringprof"))
    for line in exe["why"]:
        if "jfr-parser" in line or "jfrparser" in line or "sanitizer" in line:
            print(line)
    if exe["jfrparser"]:
        jfr = os.path.join(TMP, "sent.jfr")
        with open(jfr, "wb") as fh:
            fh.write(body)
        rc, out, err = run([exe["jfrparser"], "-rate", q.get("sampleRate", "0"), jfr])
        got = jfr_readers.parse_jfrparser(out)["total"]
        want_cpu = sum(truth(chunk, "cpu").values())
        want_alloc = sum(truth(chunk, "alloc").values())
        C.check(rc == 0 and got.get("cpu/nanoseconds") == want_cpu and
                got.get("alloc_sample_bytes/bytes") == want_alloc,
                "jfr: Pyroscope's parser, at the sampleRate sent, totals the CPU and "
                "the allocated bytes of convert", (rc, got, want_cpu, want_alloc, err))
    rc, _, err = push("--format", "jfr", "--event", "cpu", b.url("/ingest"), chunk)
    C.check(rc == 2 and "holds every kind" in err, "jfr: --event refused", err)
    b.close()


def pb_varint(v):
    out = b""
    while True:
        out += bytes([(v & 0x7f) | (0x80 if v > 0x7f else 0)])
        v >>= 7
        if not v:
            return out


def pb_field(num, data):
    """A field of a protobuf message: varint for an int, bytes otherwise."""
    if isinstance(data, int):
        return pb_varint(num << 3) + pb_varint(data)
    return pb_varint(num << 3 | 2) + pb_varint(len(data)) + data


def test_otlp():
    d = newdir("otlp")
    chunk = writer(d, 0, "--kinds", "cpu,alloc,wall", "--service", "billing",
                   "--labels", "env:stage")
    b = Backend()
    rc, _, err = push("--protocol", "otlp", "--service", "checkout", "--label", "zone=eu",
                      "http://127.0.0.1:%d/" % b.port, chunk)
    C.check(rc == 0 and len(b.requests) == 1, "otlp: one request for every kind",
            (rc, len(b.requests), err))
    if not b.requests:
        return
    r = b.requests[0]
    C.check(r.path == "/v1development/profiles", "otlp: the path", r.path)
    C.check(r.headers.get("Content-Type") == "application/x-protobuf" and
            r.headers.get("Content-Encoding") == "gzip", "otlp: protobuf, gzipped",
            dict(r.headers))
    out = os.path.join(TMP, "otlp.pb")
    run([RINGPROF, "convert", "--format", "otlp", "--quiet", "--service", "checkout",
         "--label", "zone=eu", "-o", out, chunk])
    with open(out, "rb") as fh:
        C.check(gzip.decompress(r.body) == fh.read(), "otlp: the body is convert "
                "--format otlp's, with --service and --label")

    # A 200 that refuses profiles, and a 400 with a google.rpc.Status.
    partial = pb_field(1, pb_field(1, 2) + pb_field(2, b"dictionary index out of range"))
    status = pb_field(1, 3) + pb_field(2, b"proto: cannot parse invalid wire-format data")
    script = [(200, {"Content-Type": "application/x-protobuf"}, partial),
              (400, {"Content-Type": "application/x-protobuf"}, status)]
    b2 = Backend(lambda i, r: script[min(i, 1)])
    url = "http://127.0.0.1:%d/v1development/profiles" % b2.port
    rc, _, err = push(url, chunk)
    C.check(rc == 1 and "HTTP 200, but 2 profiles rejected: dictionary index out of "
            "range" in err, "otlp: a partial success that rejects is a rejection", err)
    rc, _, err = push(url, chunk)
    C.check(rc == 1 and "HTTP 400: proto: cannot parse invalid wire-format data" in err,
            "otlp: a Status's message is the server's words", err)
    b.close()
    b2.close()


# ------------------------------------------------------------ follow -- #

def test_restart_mid_chunk():
    """A push killed after a chunk's first request sends the rest, once."""
    d = newdir("restart")
    for s in (0, 1):
        writer(d, s, "--kinds", "cpu,alloc,wall")
    flag = {"down": True}

    def answer(i, r):
        if i == 0 or not flag["down"]:
            return 200, {}, b""
        return 503, {}, b"busy"
    b = Backend(answer)
    p = start_push("--follow", d, "--backoff-min", "20ms", "--backoff-max", "100ms",
                   b.url("/ingest"))
    C.check(b.wait(lambda rs: len(rs) >= 3, p), "restart: the first request answered, "
            "the second retried")
    p.kill()
    p.wait()
    st = " ".join(state_lines(os.path.join(d, ".ringprof-push.state")))
    C.check(("rec %s 0 1 0" % REC) in st, "restart: the state says chunk 0's first "
            "request was answered", st)
    flag["down"] = False
    rc, _, err = push("--follow", d, "--once", b.url("/ingest"))
    got = [(root_frame(r)[0], pprof(profile_of(r))[0][-1][0]) for r in b.ok()]
    want = [("push.Chunk%d.run" % s, k) for s in (0, 1) for k in ("cpu", "alloc_space", "wall")]
    C.check(rc == 0 and got == want, "restart: every request of both chunks delivered "
            "exactly once, in order", (got, err))


def test_reused_id():
    """A later JVM under the same recording id (the agent's recording=) counts its
    chunks from 0 again: they are sent, not taken for those already sent."""
    d = newdir("reused")
    for s in (0, 1):
        writer(d, s, "--kinds", "cpu")
    b = Backend()
    rc, _, err = push("--follow", d, "--once", b.url("/ingest"))
    C.check(rc == 0 and len(b.requests) == 2, "reused id: the first JVM's chunks", err)
    for s in (0, 1):
        writer(d, s, "--kinds", "cpu", "--at", str(600 + 60 * s), "--pid", "1")
    rc, _, err = push("--follow", d, "--once", b.url("/ingest"))
    got = [int(r.query["from"]) for r in b.requests[2:]]
    C.check(rc == 0 and got == [WALL0 + 600 * SEC, WALL0 + 660 * SEC] and
            "a later JVM with the same recording id" in err,
            "reused id: the later JVM's chunks 0 and 1 are sent, and said", (got, err))
    rc, _, err = push("--follow", d, "--once", b.url("/ingest"))
    C.check(rc == 0 and len(b.requests) == 4, "reused id: and not again", (rc, err))
    b.close()


def test_retention():
    """Chunks deleted while push retries are missing; the one retried is sent
    from memory."""
    d = newdir("retention")
    paths = [writer(d, s, "--kinds", "cpu") for s in range(5)]
    flag = {"down": True}
    b = Backend(lambda i, r: (503, {}, b"") if flag["down"] else (200, {}, b""))
    p = start_push("--follow", d, "--once", "--backoff-min", "20ms", "--backoff-max",
                   "100ms", b.url("/ingest"))
    C.check(b.wait(lambda rs: len(rs) >= 2, p), "retention: push retries chunk 0")
    for path in paths[:3]:
        os.unlink(path)
    flag["down"] = False
    rc, _, err = finish(p)
    got = [root_frame(r)[0] for r in b.ok()]
    C.check(got == ["push.Chunk0.run", "push.Chunk3.run", "push.Chunk4.run"],
            "retention: chunk 0 sent from memory, 3 and 4 after it", got)
    C.check(rc == 1, "retention: exit 1 (not everything was delivered)", rc)
    C.check("chunks 1 to 2 were not in" in err and "counted missing" in err and
            "2 missing" in err, "retention: the two deleted chunks are said and "
            "counted", err)
    st = " ".join(state_lines(os.path.join(d, ".ringprof-push.state")))
    C.check(("rec %s 5 0 0 3 0 2" % REC) in st, "retention: the state counts 3 sent, "
            "2 missing", st)


def test_follow_live():
    """Chunks are sent as they are finished, never as .part; copies, symlinks and
    directories with chunk names are not chunks."""
    d = newdir("live")
    b_rec = "77-20261121T060000Z-00000000000000b7"
    done = writer(d, 0, "--kinds", "cpu", "--part", "--pid", "66",
                  "--recording", "66-20261121T060000Z-00000000000000a6")
    first = writer(d, 0, "--kinds", "cpu", "--pid", "77", "--recording", b_rec)
    shutil.copy(first, os.path.join(d, "20261121T070000Z-77-000005.rpc"))
    os.symlink(first, os.path.join(d, "20261121T080000Z-78-000000.rpc"))
    os.mkdir(os.path.join(d, "20261121T090000Z-79-000000.rpc"))
    b = Backend()
    p = start_push("--follow", d, "-v", b.url("/ingest"))
    C.check(b.wait(lambda rs: len(rs) >= 1, p), "follow: the finished chunk is sent")
    pids = lambda: [pprof(profile_of(r))[1][0][2].get("pid") for r in b.requests]
    C.check(pids() == ["77"], "follow: only the finished chunk, not the .part", pids())
    os.rename(done + ".part", done)
    C.check(b.wait(lambda rs: len(rs) >= 2, p), "follow: the renamed .part is sent")
    writer(d, 1, "--kinds", "cpu", "--pid", "77", "--recording", b_rec)
    C.check(b.wait(lambda rs: len(rs) >= 3, p), "follow: a new chunk is sent")
    p.send_signal(signal.SIGTERM)
    rc, _, err = finish(p)
    C.check(rc == 0 and "(stopped)" in err, "follow: SIGTERM ends it, exit 0", (rc, err))
    C.check(pids() == ["77", "66", "77"] and len(b.requests) == 3,
            "follow: the copy (same recording and seq), the symlink and the directory "
            "were not sent", pids())


def test_drain():
    """SIGTERM: the chunks finished by then are sent first (--drain); a second
    signal stops at once."""
    d = newdir("drain")
    writer(d, 0, "--kinds", "cpu")
    first = {}

    def answer(i, r):
        root = root_frame(r)[0]
        if root == "push.Chunk1.run" and root not in first:
            first[root] = i
            return 503, {}, b"busy"
        return 200, {}, b""
    b = Backend(answer)
    err_path = os.path.join(TMP, "drain.err")
    with open(err_path, "w") as ef:
        p = subprocess.Popen([RINGPROF, "push", "--follow", d, "--backoff-min", "20ms",
                              b.url("/ingest")], stdout=subprocess.DEVNULL, stderr=ef)
    C.check(b.wait(lambda rs: len(rs) >= 1, p), "drain: chunk 0 sent")
    writer(d, 1, "--kinds", "cpu")
    C.check(b.wait(lambda rs: len(rs) >= 2, p), "drain: chunk 1 answered 503")
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=pushlib.WAIT)
    with open(err_path) as ef:
        err = ef.read()
    got = [root_frame(r)[0] for r in b.ok()]
    C.check(p.returncode == 0 and got == ["push.Chunk0.run", "push.Chunk1.run"] and
            "stopping: the chunks finished by now are sent first" in err,
            "drain: at SIGTERM the finished chunk retried is sent before push exits",
            (p.returncode, got, err))

    e = newdir("drain2")
    writer(e, 0, "--kinds", "cpu")
    b2 = Backend(lambda i, r: (503, {}, b"down"))
    with open(err_path, "w") as ef:
        p = subprocess.Popen([RINGPROF, "push", "--follow", e, "--backoff-min", "20ms",
                              "--backoff-max", "50ms", "--drain", "1h", b2.url("/ingest")],
                             stdout=subprocess.DEVNULL, stderr=ef)
    C.check(b2.wait(lambda rs: len(rs) >= 1, p), "drain: a backend that is down")
    p.send_signal(signal.SIGTERM)
    n = len(b2.requests)
    C.check(b2.wait(lambda rs: len(rs) > n + 1, p), "drain: retries go on while it drains")
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=pushlib.WAIT)
    with open(err_path) as ef:
        err = ef.read()
    C.check(p.returncode == 0 and "(stopped)" in err and "1 pending" in err,
            "drain: a second signal stops it at once (--drain 1h)", (p.returncode, err))
    b.close()
    b2.close()


# ---------------------------------------------------------- failures -- #

def test_backoff():
    d = newdir("backoff")
    chunk = writer(d, 0, "--kinds", "cpu")
    script = [(503, {}, b"busy"), (503, {}, b"busy"), (429, {"Retry-After": "1"}, b""),
              (200, {}, b"")]
    b = Backend(lambda i, r: script[min(i, 3)])
    rc, _, err = push("--backoff-min", "100ms", "--backoff-max", "2s", b.url("/ingest"),
                      chunk)
    rs = b.requests
    C.check(rc == 0 and len(rs) == 4, "backoff: delivered at the fourth try", (rc, len(rs), err))
    if len(rs) == 4:
        bodies = {profile_of(r) for r in rs}
        C.check(len(bodies) == 1, "backoff: the same profile each time")
        gaps = [rs[i + 1].time - rs[i].time for i in range(3)]
        C.check(gaps[0] >= 0.05 and gaps[1] >= 0.1 and gaps[2] >= 1.0,
                "backoff: the waits are at least half the doubling step, and "
                "Retry-After's second", gaps)
    C.check("HTTP 503: busy; retry 1" in err and "delivered after 3 retries" in err,
            "backoff: each retry said, and the recovery", err)

    b2 = Backend(lambda i, r: (503, {}, b"down"))
    rc, _, err = push("--retry-for", "300ms", "--backoff-min", "50ms", b2.url("/ingest"),
                      chunk)
    C.check(rc == 3 and "giving up" in err and "(gave up)" in err,
            "give up: exit 3 after --retry-for", (rc, err))
    rc, _, err = push("--retry-for", "200ms", "--backoff-min", "50ms",
                      "http://127.0.0.1:%d/ingest" % pushlib.closed_port(), chunk)
    C.check(rc == 3 and "no answer: Failed to connect" in err,
            "refused: retried, then given up", (rc, err))
    s = pushlib.Silent()
    rc, _, err = push("--retry-for", "500ms", "--timeout", "200ms", "--backoff-min",
                      "50ms", "http://127.0.0.1:%d/ingest" % s.port, chunk)
    C.check(rc == 3 and "timed out" in err, "silent server: --timeout ends each try",
            (rc, err))
    s.close()
    b.close()
    b2.close()


def test_reject():
    d = newdir("reject")
    chunks = [writer(d, s, "--kinds", "cpu") for s in (0, 1)]

    def answer(i, r):
        if root_frame(r) == ["push.Chunk0.run"]:
            return 400, {"Content-Type": "text/plain"}, \
                b"bad profile: \x1b[31mstacks missing\nsecond line"
        return 200, {}, b""
    b = Backend(answer)
    rc, _, err = push("--follow", d, "--once", b.url("/ingest"))
    C.check(rc == 1, "reject: exit 1", rc)
    C.check(chunks[0] in err and "rejected: HTTP 400: bad profile: \\x1b[31mstacks missing"
            in err and "second line" not in err and "\x1b" not in err,
            "reject: the chunk and the server's first line, escaped", err)
    C.check(len(b.requests) == 2 and len(b.ok()) == 1, "reject: the next chunk still "
            "goes", len(b.requests))
    rc, _, err = push("--follow", d, "--once", b.url("/ingest"))
    C.check(rc == 0 and len(b.requests) == 2, "reject: not sent again after a restart",
            (rc, len(b.requests), err))
    st = " ".join(state_lines(os.path.join(d, ".ringprof-push.state")))
    C.check(("rec %s 2 0 0 1 1 0" % REC) in st, "reject: the state counts it", st)
    b.close()


def test_tls():
    """https: the server is verified, against the system's store or --cacert."""
    openssl = shutil.which("openssl")
    if not openssl:
        print("SKIP (tls): no openssl to make a certificate with")
        return
    cert, key = os.path.join(TMP, "cert.pem"), os.path.join(TMP, "key.pem")
    rc, _, err = run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                      "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                      "-keyout", key, "-out", cert])
    if rc != 0:
        print("SKIP (tls): openssl could not make a certificate: " + err.strip())
        return
    d = newdir("tls")
    chunk = writer(d, 0, "--kinds", "cpu")
    b = Backend()
    b.tls(cert, key)
    rc, _, err = push("--retry-for", "200ms", "--backoff-min", "50ms", b.url("/ingest"), chunk)
    C.check(rc == 3 and "no answer" in err and "certificate" in err and not b.requests,
            "tls: a certificate the system does not trust is refused", (rc, err))
    rc, _, err = push("--cacert", cert, b.url("/ingest"), chunk)
    C.check(rc == 0 and len(b.requests) == 1, "tls: --cacert trusts it", (rc, err))
    rc, _, err = push("--cacert", os.path.join(TMP, "none.pem"), b.url("/ingest"), chunk)
    C.check(rc == 1 and "--cacert" in err and "none.pem" in err,
            "tls: a --cacert that cannot be read is one line", (rc, err))
    b.close()


def test_status_line():
    """On a terminal, one status line kept up to date; the news above it."""
    import pty
    d = newdir("status")
    chunks = [writer(d, s, "--kinds", "cpu") for s in (0, 1)]
    b = Backend(lambda i, r: (503, {}, b"busy") if i == 0 else (200, {}, b""))
    master, slave = pty.openpty()
    p = subprocess.Popen([RINGPROF, "push", "--backoff-min", "20ms", b.url("/ingest")] +
                         chunks, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
    p.wait()
    os.close(master)
    text = out.decode("utf-8", "replace")
    C.check(p.returncode == 0 and "\r\x1b[K" in text and
            "2 chunks sent (2 requests" in text and "last: HTTP 503: busy" in text,
            "a terminal gets the status line, with the last error", text[-600:])
    lines = [l for l in text.replace("\r\x1b[K", "\n").splitlines() if l.strip()]
    C.check(any("retry 1 in" in l for l in lines) and
            lines[-1].startswith("ringprof push: 2 chunks sent"),
            "the news on lines of their own, the summary last", lines[-4:])
    b.close()


# ----------------------------------------------------------- secrets -- #

def test_secrets():
    d = newdir("secrets")
    chunk = writer(d, 0, "--kinds", "cpu")
    token = "tok-SECRET-1234567"
    tf = os.path.join(TMP, "token")
    with open(tf, "w") as f:
        f.write(token + "\n")
    outputs = []

    def echo(i, r):                      # a server that quotes the request back
        return 401, {}, ("bad credentials: %s" % r.headers.get("Authorization")).encode()
    b = Backend(lambda i, r: (200, {}, b"") if i < 1 else echo(i, r))
    rc, out, err = push("--follow", d, "--once", "--token-file", tf, b.url("/ingest"))
    outputs += [out, err]
    C.check(rc == 0 and b.requests and b.requests[0].headers.get("Authorization") ==
            "Bearer " + token, "token: sent as a bearer token", (rc, err))
    writer(d, 1, "--kinds", "cpu")
    rc, out, err = push("--follow", d, "--once", "--token-file", tf, b.url("/ingest"))
    outputs += [out, err]
    C.check(rc == 1 and "bad credentials: Bearer ****" in err,
            "token: a reply that quotes it has it overwritten", err)
    dry = os.path.join(TMP, "dry")
    os.mkdir(dry)
    rc, out, err = push("--dry-run", dry, "--token-file", tf, b.url("/ingest"), chunk)
    outputs += [out, err]
    for name in os.listdir(dry):
        with open(os.path.join(dry, name), "rb") as f:
            outputs.append(f.read().decode("latin-1"))
    C.check(any("Authorization: Bearer (the token)" in o for o in outputs),
            "dry run: the request says a token goes, not which")
    dry2 = os.path.join(TMP, "dry2")
    os.mkdir(dry2)
    rc, out, err = push("--dry-run", dry2, b.url("/ingest"), chunk,
                        env=dict(os.environ, RINGPROF_PUSH_TOKEN=token))
    outputs += [out, err]
    for name in os.listdir(dry2):
        with open(os.path.join(dry2, name), "rb") as f:
            outputs.append(f.read().decode("latin-1"))
    C.check(any("Authorization: Bearer (the token)" in o for o in outputs[-2:]),
            "dry run: a token from $RINGPROF_PUSH_TOKEN is said too")

    password = "pw-SECRET-98765"
    env = dict(os.environ, RINGPROF_PUSH_BASIC_AUTH="ann:" + password)
    b2 = Backend(lambda i, r: echo(i, r))
    rc, out, err = push("--event", "cpu", b2.url("/ingest"), chunk, env=env)
    outputs += [out, err]
    want = "Basic " + base64.b64encode(("ann:" + password).encode()).decode()
    C.check(b2.requests and b2.requests[0].headers.get("Authorization") == want,
            "basic: from $RINGPROF_PUSH_BASIC_AUTH", err)
    C.check(rc == 1 and "bad credentials: Basic ****" in err, "basic: the quoted "
            "header overwritten", err)
    rc, out, err = push("--header", "Authorization: Bearer " + token, b2.url("/ingest"),
                        chunk)
    outputs += [out, err]
    C.check(rc == 2 and "never go on the command line" in err,
            "--header Authorization refused", err)
    rc, out, err = push("http://ann:%s@127.0.0.1:%d/ingest" % (password, b2.port), chunk)
    outputs += [out, err]
    C.check(rc == 2 and "a user or password in the URL" in err,
            "a password in the URL refused", err)
    for name in os.listdir(d):
        if not name.endswith(".rpc"):
            with open(os.path.join(d, name)) as f:
                outputs.append(f.read())
    leaks = [o for o in outputs if token in o or password in o]
    C.check(not leaks, "no output, state or dry-run file holds a secret", leaks)
    with open(tf, "w") as f:
        f.write("two\nlines\n")
    rc, out, err = push("--token-file", tf, b2.url("/ingest"), chunk)
    C.check(rc == 1 and "control character" in err and "lines" not in err,
            "a malformed token file: one line naming the file, not its content", err)
    b.close()
    b2.close()


def test_usage():
    d = newdir("usage")
    chunk = writer(d, 0, "--kinds", "cpu")
    cases = [
        (["http://127.0.0.1:9/x", chunk], "cannot tell the protocol"),
        (["--protocol", "zipkin", "http://h/x", chunk], "otlp or pyroscope"),
        (["--format", "html", "http://h:4040", chunk], "pprof or jfr"),
        (["--state", "s", "http://h:4040", chunk], "--state applies to --follow"),
        (["--follow", d, "http://h:4040", chunk], "takes no INPUT"),
        (["http://h:4040"], "no INPUT given"),
        (["--label", "a b=c", "http://h:4040", chunk], "--label"),
        (["--label", "env=a,b", "http://h:4040", chunk], "','"),
        (["--label", "service.name=x", "http://h:4040", chunk], "--service"),
        (["--label", "a=1", "--label", "a=2", "http://h:4040", chunk], "twice"),
        (["--service", "my app", "http://h:4040", chunk], "--service"),
        (["ftp://h:4040", chunk], "http:// and https://"),
    ]
    for args, words in cases:
        rc, _, err = push(*args)
        C.check(rc == 2 and words in err, "usage: %s" % " ".join(args[:-1] or args), err)
    rc, _, err = push("--protocol", "otlp", "--format", "pprof", "http://h/", chunk)
    C.check(rc == 2 and "always OTLP protobuf" in err, "otlp takes no --format", err)
    st = os.path.join(d, ".ringprof-push.state")
    with open(st, "w") as f:
        f.write("ringprof-push-state 1\nrec broken\n")
    os.chmod(st, 0o600)
    rc, _, err = push("--follow", d, "--once", "http://h:4040")
    C.check(rc == 1 and "line 2" in err and "remove the file" in err,
            "a damaged state file is an error, not a fresh start", err)


def main():
    try:
        for t in (test_pyroscope_pprof, test_period, test_jfr, test_otlp,
                  test_restart_mid_chunk, test_reused_id, test_retention, test_follow_live,
                  test_drain,
                  test_backoff, test_reject, test_tls, test_status_line,
                  test_secrets, test_usage):
            t()
    finally:
        if not os.environ.get("RP_KEEP_TMP"):
            shutil.rmtree(TMP, True)
    C.close()


main()
