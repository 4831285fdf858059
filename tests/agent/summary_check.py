#!/usr/bin/env python3
"""tests/agent/summary_check.py REC SUMMARY COUNTERS DUMPED DOCS — what
control_tests.sh `interval` asserts of `ringprof summary` on a recording where
`ctl set interval=1ms` and then `ctl set alloc=256k` were sent, each after a
while of sampling, and a flush ended the run.

  - The chunks' headers, read here from the files (not through the tool), name
    what `set` changed (agent.options.set): none, then "interval=1ms", then
    "interval=1ms,alloc=256k", each over a run of chunks (a set finishes the
    chunk written under the settings before it).
  - SUMMARY (`ringprof summary REC`) shows exactly those three runs of options,
    by chunk.seq, in order, covering every chunk once.
  - Its counters are one line per group, naming a page of DOCS and a heading on
    it, the groups' counts adding up to the counters that are not losses, with
    no counter listed; COUNTERS (`summary --counters`) lists each of them with
    the total DUMPED (`rp_agent_dump counters REC`) has.
Prints what it found; exits 1 with the difference.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "convert"))
from consumers import varint  # noqa: E402

REC, SUMMARY, COUNTERS, DUMPED, DOCS = sys.argv[1:6]


def header(path):
    """A chunk header's metadata (docs/format.md, "File header")."""
    with open(path, "rb") as f:
        b = f.read(65536)
    assert b[:8] == b"\x89RPC\r\n\x1a\n", path
    end, at, meta = int.from_bytes(b[12:16], "little") - 4, 16, {}
    while at < end:
        n, at = varint(b, at)
        key = b[at:at + n].decode()
        n, at = varint(b, at + n)
        meta[key] = b[at:at + n].decode()
        at += n
    return meta


def anchors(page):
    """The GitHub anchors of a page's headings."""
    with open(os.path.join(DOCS, page)) as f:
        heads = re.findall(r"(?m)^#+ (.*)$", f.read())
    return {re.sub(r"[^a-z0-9 -]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def main():
    chunks = [header(p) for p in sorted(glob.glob(os.path.join(REC, "*.rpc")))]
    sets = [c.get("agent.options.set") for c in chunks]
    print("# the chunks' agent.options.set: %s" % sets)
    runs = [s for i, s in enumerate(sets) if i == 0 or s != sets[i - 1]]
    assert runs == [None, "interval=1ms", "interval=1ms,alloc=256k"], runs

    with open(SUMMARY) as f:
        text = f.read()
    given = chunks[0]["agent.options"]
    lines = re.findall(r"(?m)^  (?:options|       ) +chunks? ([0-9-]+): (.*)$", text)
    print("# summary's options: %s" % lines)
    want = [given, given + "; ctl set interval=1ms",
            given + "; ctl set interval=1ms,alloc=256k"]
    assert [o for _, o in lines] == want, (lines, want)
    seqs = [c["chunk.seq"] for c in chunks]
    i = 0
    for rng, _ in lines:
        lo, _, hi = rng.partition("-")
        assert seqs[i] == lo, (rng, seqs)
        n = seqs.index(hi or lo) - i + 1
        assert len(set(sets[i:i + n])) == 1, (rng, seqs, sets)
        i += n
    assert i == len(chunks), (i, len(chunks))

    with open(DUMPED) as f:
        total = {k: int(v) for k, v in (l.split("\t")[:2] for l in f.read().splitlines())}
    plain = {k: v for k, v in total.items() if not k.startswith("lost.")}
    groups = re.findall(r"(?m)^    (\S+) +(\d+) counters? +.* \((docs/[a-z]+\.md)#([a-z0-9-]+)\)$",
                        text)
    print("# counter groups: %s" % ", ".join("%s %s (%s#%s)" % g for g in groups))
    assert groups and sum(int(n) for _, n, _, _ in groups) == len(plain), (groups, plain)
    for g, _, page, anchor in groups:
        assert anchor in anchors(page[len("docs/"):]), (g, page, anchor)
    assert not re.search(r"(?m)^      \S+ +\d+$", text), "counters listed without --counters"
    with open(COUNTERS) as f:
        listed = {k: int(v) for k, v in re.findall(r"(?m)^      (\S+) +(\d+)$", f.read())}
    assert listed == plain, (listed, plain)


try:
    main()
except AssertionError as e:
    print("summary_check: %s" % e)
    sys.exit(1)
