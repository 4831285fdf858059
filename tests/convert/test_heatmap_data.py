#!/usr/bin/env python3
"""tests/convert/test_heatmap_data.py RINGPROF RP_BURSTWRITER RP_TESTWRITER

`ringprof convert --format heatmap` checked through the page's data, decoded here
(heatmap_data.py: base64, zlib and varints by Python, not by the page), against
rp_burstwriter's manifest (60 s of two threads, one stack hot only from 30 s to
40 s):
  - every sample's stack (thread, frames, an alloc's class) and time bucket is
    in the data, exactly: the (kind, bucket, path) counts and weights the data
    holds equal the manifest's;
  - the heatmap's cells (per bucket sums) equal the samples in each bucket, and
    so does the density (per bucket and thread, without the stacks), and
    the burst's stack has weight in 30 s <= t < 40 s only, all of it;
  - the gc lane holds the pauses; the telemetry holds the RSS level and the
    CPU rate of each second (300 MiB and 200 % in the burst);
  - --resolution 1s gives 1 s buckets with the same totals; -o x.heatmap.html
    picks the format; the page is self-contained and escapes hostile names
    (rp_testwriter's main recording holds a name with ';' and a newline);
  - errors: --resolution with another format or a bad value (exit 2), no kind
    the heatmap shows (exit 1, no file left).
"""
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, display, run, tempdir  # noqa: E402
from heatmap_data import Page  # noqa: E402

RINGPROF, BURST, TESTWRITER = sys.argv[1:4]
T = tempdir()
c = Checks("heatmap_data")


def convert(*args):
    return subprocess.run([RINGPROF, "convert"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, check=False)


def manifest_paths(m, bucket_of):
    """(kind, bucket, path) -> [samples, weight] from the manifest's samples."""
    want = collections.defaultdict(lambda: [0, 0])
    for s in m["samples"]:
        frames = [display(f) for f in m["stacks"][s["stack"]]["frames"]]
        if s["kind"] == "alloc":
            frames.append(s["class"])
        key = (s["kind"], bucket_of(s["t"]), tuple(["[%s]" % s["thread"]] + frames))
        want[key][0] += 1
        want[key][1] += s["weight"]
    return want


def page_paths(page, kinds):
    got = collections.defaultdict(lambda: [0, 0])
    for k in kinds:
        for bucket, leaf, thread, n, w in page.entries[k]:
            key = (k, bucket, tuple([page.thread_names[thread]] + page.path(leaf)))
            got[key][0] += n
            got[key][1] += w
    return got


def check_samples(page, m, label):
    want = manifest_paths(m, page.bucket_of)
    got = page_paths(page, ["cpu", "alloc"])
    c.check(dict(got) == dict(want), "%s: every sample's stack and bucket" % label,
            "%d keys decoded, %d in the manifest; first differing: %s" % (
                len(got), len(want),
                next((k for k in set(got) | set(want) if got.get(k) != want.get(k)), None)))
    for k in ("cpu", "alloc"):
        meta = next(x for x in page.meta["kinds"] if x["name"] == k)
        ms = [s for s in m["samples"] if s["kind"] == k]
        c.check(meta["samples"] == len(ms) and meta["weight"] == sum(s["weight"] for s in ms),
                "%s: kind %s's totals" % (label, k), meta)


def check_cells(page, m):
    """Per bucket sums, and where the burst's stack is."""
    cells = collections.Counter()
    for bucket, leaf, thread, n, w in page.entries["cpu"]:
        cells[bucket] += n
    want = collections.Counter(page.bucket_of(s["t"]) for s in m["samples"]
                               if s["kind"] == "cpu")
    c.check(cells == want, "cpu cells equal the samples in each bucket",
            len(set(cells.items()) ^ set(want.items())))
    axis = page.meta["density"]
    for k in ("cpu", "alloc"):
        dens = collections.Counter()
        for bucket, thread, n, w in page.density[k]:
            dens[(bucket, page.thread_names[thread])] += w
        want = collections.Counter()
        for s in m["samples"]:
            if s["kind"] == k:
                want[(page.bucket_of(s["t"], axis), "[%s]" % s["thread"])] += s["weight"]
        c.check(dens == want, "the %s density: each thread's weight in each bucket" % k,
                len(set(dens.items()) ^ set(want.items())))
    burst = m["burst"]
    hot = [display(f) for f in m["stacks"][burst["stack"]]["frames"]]
    lo, hi = page.bucket_of(burst["from"]), page.bucket_of(burst["to"])
    inside = outside = 0
    for bucket, leaf, thread, n, w in page.entries["cpu"]:
        if page.path(leaf) == hot:
            if lo <= bucket < hi:
                inside += w
            else:
                outside += w
    truth = sum(s["weight"] for s in m["samples"]
                if s["kind"] == "cpu" and s["stack"] == burst["stack"])
    c.check(inside == truth and outside == 0 and truth > 0,
            "the burst's stack only in its window, all of its weight",
            (inside, outside, truth))


def check_lanes(page):
    gc = next((k for k in page.meta["kinds"] if k["name"] == "gc"), None)
    c.check(gc is not None and gc["lane"] == 1, "gc is a lane", gc)
    if gc:
        c.check(gc["samples"] == 13 and gc["weight"] == (12 * 5 + 40) * 1000000,
                "the gc lane's pauses", gc)
    t0 = page.meta["t0_ms"]
    for name, base, burst in (("proc.rss_bytes", 100, 300), ("proc.cpu_user_ns.total", 100, 200)):
        series = page.telemetry(name)
        if not c.check(len(series) == 1, "one %s series" % name, len(series)):
            continue
        s = series[0]
        bad = []
        for i, v in enumerate(s["v"]):
            if v is None:
                continue
            at = (t0 + s["start_ms"] + i * s["bin_ms"] - 1795240920000) / 1000.0
            # a rate's bin holds the interval that ends in it: the second before
            sec = at - 1 if name.endswith(".total") else at
            want = burst if 30 <= sec < 40 else base
            if abs(v - want) > 0.01 * want:
                bad.append((at, v, want))
        c.check(not bad and sum(v is not None for v in s["v"]) >= 55,
                "%s's bins: %d%s in the burst, %d outside" % (name, burst,
                                                              "%" if base == 100 and
                                                              name.startswith("proc.cpu")
                                                              else "", base), bad[:5])


def check_page(path, label):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
        utf8 = True
    except UnicodeDecodeError:
        text, utf8 = raw.decode("utf-8", "replace"), False
    c.check(utf8, "%s: valid UTF-8" % label)
    c.check("http://" not in text and "https://" not in text,
            "%s: self-contained (no http:// or https://)" % label)
    counts = [text.count('id="heatmap-meta"'), text.count('id="heatmap-blob"'),
              text.count("function ringprofFlame(")]
    c.check(counts == [1, 1, 1], "%s: the data and the renderer once each" % label, counts)
    return Page(text)


def main():
    rec, man = os.path.join(T, "b.rpc"), os.path.join(T, "b.json")
    run([BURST, rec, man])
    with open(man) as f:
        m = json.load(f)

    out = os.path.join(T, "day.heatmap.html")
    r = convert("-o", out, rec)
    c.check(r.returncode == 0, "convert -o x.heatmap.html", r.stderr)
    page = check_page(out, "default")
    c.check(page.meta["bucket_ms"] == 20 and "20 ms" in page.meta["resolution"],
            "20 ms buckets by default", page.meta["resolution"])
    c.check("heatmap: buckets of 20 ms" in r.stderr, "convert says the bucket width", r.stderr)
    c.check(page.meta["title"] == "app.BurstMain", "titled by the main class",
            page.meta["title"])
    check_samples(page, m, "20 ms")
    check_cells(page, m)
    check_lanes(page)
    c.check(all(page.parent[i] < i for i in range(1, len(page.parent))),
            "every node's parent comes before it")
    roots = {page.name(i) for i in range(1, len(page.parent)) if page.parent[i] == 0}
    c.check("java.lang.Thread.run" in roots and not any(r.startswith("[worker") for r in roots),
            "the tree merges threads: the root's children are frames", roots)
    c.check(sorted(page.thread_names) == ["[no thread]", "[worker-1]", "[worker-2]"],
            "the threads table (gc pauses have none)", page.thread_names)

    out1 = os.path.join(T, "one.html")
    r = convert("--format", "heatmap", "--resolution", "1s", "-o", out1, rec)
    c.check(r.returncode == 0, "--resolution 1s", r.stderr)
    p1 = check_page(out1, "1 s")
    c.check(p1.meta["bucket_ms"] == 1000, "1 s buckets", p1.meta["bucket_ms"])
    check_samples(p1, m, "1 s")
    per_s = collections.Counter(b for b, l, t, n, w in p1.entries["cpu"] for _ in range(n))
    c.check(set(per_s.values()) == {200} and len(per_s) == 60, "200 cpu samples a second",
            sorted(set(per_s.values())))

    # hostile names: ';' and a newline in a method name (rp_testwriter main)
    main_rec = os.path.join(T, "a.rpc")
    run([TESTWRITER, "main", main_rec])
    outh = os.path.join(T, "a.heatmap.html")
    r = convert("-o", outh, main_rec)
    c.check(r.returncode == 0, "the main recording", r.stderr)
    ph = check_page(outh, "main")
    c.check("app.Odd.weird;name\nx" in ph.meta["strings"], "a name with ';' and a newline",
            [s for s in ph.meta["strings"] if "Odd" in s])
    c.check(ph.text.count("</script>") == 3, "no data ends its element early",
            ph.text.count("</script>"))

    r = convert("--format", "tree", "--resolution", "1s", rec)
    c.check(r.returncode == 2 and "--resolution" in r.stderr, "--resolution with tree: usage",
            (r.returncode, r.stderr))
    r = convert("--format", "heatmap", "--resolution", "fast", "-o", out1, rec)
    c.check(r.returncode == 2 and "--resolution 'fast'" in r.stderr, "a bad --resolution",
            (r.returncode, r.stderr))
    heap = os.path.join(T, "heap.rpc")
    run([TESTWRITER, "heap", heap])
    none = os.path.join(T, "none.heatmap.html")
    r = convert("--event", "live", "-o", none, heap)
    c.check(r.returncode == 1 and "no sample of a kind it shows" in r.stderr
            and not os.path.exists(none), "live only: an error, no file",
            (r.returncode, r.stderr))
    c.close()


main()
