#!/usr/bin/env python3
"""tests/push/check_collector.py -- what an OpenTelemetry Collector's file
exporter wrote of a recording `ringprof push` delivered, against the truth.

usage: check_collector.py RINGPROF REC_DIR SERVICE K=V[,K=V...] EXPORTED.json...

Each line of the exporter's files is one request as the Collector decoded it
(pdata's JSON, read by tests/convert/otlp_read.py). The truth is ringprof's own:
every chunk in REC_DIR, once (its profiles' time is the chunk's start, as
`ringprof convert --format otlp` of that chunk alone gives it), and the stacks of
each kind equal to `ringprof convert --format collapsed` of all the chunks: every
stack and its weight, so the totals; the sample types and their units; the
resource's service.name and labels. Prints one line per failed check and
"check_collector: N passed, N failed"; exit 1 on any failure.
"""
import collections
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "convert"))
sys.path.insert(0, HERE)

from consumers import Checks  # noqa: E402
from otlp_read import decode, from_json, stacks_of, type_of  # noqa: E402
from pushlib import SUFFIX, collapsed, run  # noqa: E402

RINGPROF, REC, SERVICE, LABELS = sys.argv[1:5]
FILES = sys.argv[5:]
C = Checks("check_collector")

# The sample type that holds each kind's weight (tools/outputs/out_otlp.c).
WEIGHT_TYPE = {"cpu": ("cpu", "nanoseconds"), "wall": ("wall", "nanoseconds"),
               "alloc": ("alloc_space", "bytes"), "lock": ("delay", "nanoseconds")}


def requests():
    out = []
    for path in FILES:
        if os.path.exists(path):
            with open(path) as f:
                out += [from_json(json.loads(line)) for line in f if line.strip()]
    return out


def chunk_times(chunk):
    """The profile times `convert --format otlp` gives the chunk alone."""
    path = chunk + ".otlp"
    rc, _, err = run([RINGPROF, "convert", "--format", "otlp", "--quiet", "-o", path, chunk])
    if rc != 0:
        raise RuntimeError(err)
    with open(path, "rb") as f:
        req = decode(f.read())
    os.unlink(path)
    return {p["time"] for r in req["resources"] for p in r["profiles"]}


def main():
    chunks = sorted(glob.glob(os.path.join(REC, "*.rpc")))
    reqs = requests()
    C.check(len(reqs) == len(chunks), "one request per chunk", (len(reqs), len(chunks)))
    got = collections.Counter()
    for req in reqs:
        times = {p["time"] for r in req["resources"] for p in r["profiles"]}
        C.check(len(times) == 1, "a request holds one chunk's profiles", times)
        got.update(times)
    for chunk in chunks:
        t = chunk_times(chunk)
        C.check(len(t) == 1 and got[next(iter(t))] == 1,
                "%s arrived exactly once" % os.path.basename(chunk),
                (t, [got[x] for x in t]))

    # The stacks of every kind, summed over the requests.
    stacks = collections.defaultdict(collections.Counter)
    types = set()
    want_labels = dict(kv.split("=", 1) for kv in LABELS.split(","))
    for req in reqs:
        for r in req["resources"]:
            attrs = r["attrs"]
            C.check(attrs.get("service.name") == SERVICE, "service.name", attrs)
            for k, v in want_labels.items():
                C.check(attrs.get(k) == v, "the label %s" % k, attrs)
            for p in r["profiles"]:
                t = type_of(req, p)
                types.add(t)
                for frames, _, value in stacks_of(req, p):
                    key = ";".join(SUFFIX.sub("", f[0]) for f in frames)
                    stacks[t][key] += value
    for kind, t in WEIGHT_TYPE.items():
        rc, out, err = run([RINGPROF, "convert", "--format", "collapsed", "--event", kind,
                            "--quiet"] + chunks)
        truth = collapsed(out) if rc == 0 else {}
        if not truth:
            C.check(t not in types, "no %s profile for a recording without %s samples"
                    % (t[0], kind), types)
            continue
        C.check(t in types, "%s: the sample type %s/%s" % (kind, t[0], t[1]), types)
        have = dict(stacks[t])
        C.check(have == truth, "%s: every stack and its weight equal to convert --format "
                "collapsed" % kind, {"missing": {k: v for k, v in truth.items()
                                                 if have.get(k) != v},
                                     "extra": {k: v for k, v in have.items()
                                               if truth.get(k) != v}})
        C.check(sum(have.values()) == sum(truth.values()), "%s: the total" % kind,
                (sum(have.values()), sum(truth.values())))
    C.close()


main()
