#!/usr/bin/env python3
# bench/test_overhead.py — the test suite's check of bench/overhead (meson test
# 'bench_overhead', suite 'bench', plain builds only). It runs
# `bench/overhead --quick --rounds 1` on two workloads and checks that the output is well formed: results.md
# has the configuration table, the overview and one table per workload, each with
# a row of figures for every configuration; overhead.svg is an SVG with a bar for
# every workload and configuration in both panels; runs.tsv has every run. It
# asserts no figure: these are benchmarks, and a slow figure fails nothing. A run
# that failed (a workload that computed a wrong result under a profiler) does fail
# it, since bench/overhead then exits 1.
#
#   bench/test_overhead.py BUILD_DIR OUT_DIR
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("test_overhead: FAIL: " + msg)
    sys.exit(1)


def table(lines, start):
    """The rows (lists of cells) of the Markdown table starting at lines[start]."""
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    if len(rows) < 2 or not all(set(c) <= set("-") for c in rows[1]):
        fail(f"no Markdown table at line {start + 1}: {lines[start]!r}")
    return rows[0], rows[2:]


def number(cell):
    """A figure: a number with an optional unit or %, or – where it does not apply."""
    if cell == "–":
        return True
    first = cell.split()[0].rstrip("%")
    try:
        float(first.split("–")[0])
        return True
    except ValueError:
        return False


def check_markdown(path):
    lines = open(path).read().splitlines()
    at = lambda head: next((i for i, l in enumerate(lines) if l.startswith(head)), None)
    i = at("| config | what |")
    if i is None:
        fail("results.md has no configuration table")
    _, rows = table(lines, i)
    configs = [r[0] for r in rows]
    if len(configs) < 3 or configs[0] != "none":
        fail(f"configurations {configs}: want none first and at least 3")
    i = at("## Overhead on iteration time")
    if i is None:
        fail("results.md has no overview")
    head, overview = table(lines, i + 4)
    if head[1:] != configs[1:]:
        fail(f"overview columns {head[1:]}, configurations {configs[1:]}")
    workloads = [r[0] for r in overview]
    if not workloads:
        fail("the overview has no workload")
    for w in workloads:
        i = at(f"## {w}: ")
        if i is None:
            fail(f"results.md has no section for {w}")
        head, rows = table(lines, i + 4)
        if [r[0] for r in rows] != configs:
            fail(f"{w}: rows {[r[0] for r in rows]}, want {configs}")
        for r in rows:
            if len(r) != len(head) or not all(number(c) for c in r[1:]):
                fail(f"{w}: malformed row {r}")
        if rows[0][2] != "1.000":
            fail(f"{w}: the no-agent row's ratio is {rows[0][2]}, not 1.000")
        size, share = head.index("bytes/min"), head.index("agent CPU")
        if any(r[size] == "–" or r[share] == "–" for r in rows if r[0].startswith("rp-")):
            fail(f"{w}: a ringprof row has no recording size or no agent CPU")
    return workloads, configs


def check_svg(path, workloads, configs):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail(f"overhead.svg does not parse: {e}")
    if root.tag != SVG + "svg":
        fail(f"overhead.svg's root is {root.tag}")
    bars = {(g.get("data-workload"), g.get("data-config"), g.get("data-panel")): g
            for g in root.iter(SVG + "g") if g.get("class") == "bar"}
    for w in workloads:
        for c in configs[1:]:
            for panel in ("ratio", "steady_cpu_ratio"):
                g = bars.get((w, c, panel))
                if g is None or g.find(SVG + "rect") is None:
                    fail(f"overhead.svg has no {panel} bar for {w} {c}")
    texts = " ".join(t.text or "" for t in root.iter(SVG + "text"))
    for c in configs[1:]:
        if c not in texts:
            fail(f"overhead.svg's legend does not name {c}")


def main():
    build, out = sys.argv[1], sys.argv[2]
    shutil.rmtree(out, ignore_errors=True)
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "overhead")
    # One round of two workloads (a Java one, a JNI one) and two profilers
    # besides none: this checks the harness end to end, not the figures
    # (bench/run runs the real thing), and the default test run has a
    # 15-minute budget.
    p = subprocess.run([script, "--quick", "--rounds", "1", "--workloads", "cpu,jni",
                        "--configs", "rp-default,jfr-default", "--out", out, build])
    if p.returncode != 0:
        fail(f"bench/overhead --quick exited {p.returncode}")
    for f in ("results.md", "overhead.svg", "runs.tsv"):
        if not os.path.isfile(os.path.join(out, f)):
            fail(f"no {f} in {out}")
    workloads, configs = check_markdown(os.path.join(out, "results.md"))
    check_svg(os.path.join(out, "overhead.svg"), workloads, configs)
    runs = open(os.path.join(out, "runs.tsv")).read().splitlines()[1:]
    if len(runs) != len(workloads) * len(configs):
        fail(f"runs.tsv has {len(runs)} runs, want {len(workloads)} x {len(configs)} x 1 round")
    print(f"test_overhead: ok: {len(workloads)} workloads x {len(configs)} configurations")


if __name__ == "__main__":
    main()
