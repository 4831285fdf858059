#!/usr/bin/env python3
"""tests/convert/test_html.py RINGPROF RP_TESTWRITER RP_BIGWRITER

`ringprof convert --format html` run by a real browser: headless Chromium loads
each page with a "#selftest=..." hash, the page performs the steps through its
test hook (window.__flame) and writes its state after each into
<pre id="selftest">, and --dump-dom hands that back. Checked against the truth in
rp_testwriter's manifest:
  - the page renders frames; a click zooms (the frame spans the width); a
    substring and a regex search report the matched percentage the truth gives;
    the reversed (callers) view has the heaviest self function at its base;
    reset zooms out; alloc pages count bytes; per-thread pages have thread frames;
  - the file is self-contained: no http:// or https:// anywhere, valid UTF-8;
  - hostile names ("</script>", quotes, "<!--", U+2028, bytes that are not UTF-8)
    neither end the data element nor break the page, and are found by search;
  - a 3000-frame stack is cut at the page's row limit, with a note;
  - a profile of 100k call paths loads and stays responsive (pruned drawing);
  - a screenshot is taken (kept when RP_SCREENSHOT names a file).
"""
import html
import json
import os
import re
import shutil
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, Truth, load_manifest, run, skip_unless, tempdir  # noqa

RINGPROF, WRITER, BIGWRITER = sys.argv[1:4]
CHROMIUM = skip_unless("chromium", "chromium")
T = tempdir()
c = Checks("html")
profile_n = 0


def chromium(url, *extra):
    """Run headless Chromium on url in a fresh profile directory."""
    global profile_n
    profile_n += 1
    udd = os.path.join(T, "chromium-%d" % profile_n)
    os.mkdir(udd)
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--disable-extensions",
           "--user-data-dir=" + udd, "--window-size=1280,900"] + list(extra) + [url]
    try:
        return run(cmd, env=dict(os.environ, HOME=T), timeout=180)
    finally:
        shutil.rmtree(udd, ignore_errors=True)


def selftest(page, steps):
    """Load page, run steps ("op:arg" strings), return the list of states."""
    url = "file://" + urllib.parse.quote(page) + "#selftest=" + \
        urllib.parse.quote(";".join(steps), safe="")
    dom = chromium(url, "--dump-dom")
    m = re.search(r'<pre id="selftest" data-done="1">(.*?)</pre>', dom, re.S)
    if not c.check(m is not None, "%s: the page ran its self-test" % os.path.basename(page),
                   dom[-2000:]):
        return [{}] * (len(steps) + 1)
    states = []
    for line in html.unescape(m.group(1)).split("\n"):
        states.append(json.loads(line)["state"])
    c.check(len(states) == len(steps) + 1, "one state per step", len(states))
    return states + [{}] * (len(steps) + 1 - len(states))


def convert(out, *inputs, extra=()):
    run([RINGPROF, "convert", "--quiet"] + list(extra) + ["-o", out] + list(inputs))
    with open(out, "rb") as f:
        data = f.read()
    text = None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        c.check(False, "%s is valid UTF-8" % os.path.basename(out), e)
    if text is not None:
        c.check(not re.search(r"https?://", text, re.I),
                "%s fetches nothing (no http:// or https://)" % os.path.basename(out))
        c.check(len(re.findall(r"</script", text, re.I)) == 2,
                "%s: '</script' only where the page's two scripts end"
                % os.path.basename(out))
    return out, text or ""


def pct(x):
    return "%.2f%%" % x


# ------------------------------------------------------------------ cpu --
A = os.path.join(T, "a.rpc")
run([WRITER, "main", A, "--manifest", A + ".json"])
MA = load_manifest(A + ".json")
cpu = Truth([MA], "cpu")
page, text = convert(os.path.join(T, "a.html"), A)

steps = ["click:app.Server.handle", "search:json", r"regex:^app\.Math\.", "reset",
         "reverse", "icicle"]
load, click, search, regex, reset, reverse, icicle = selftest(page, steps)
c.check(load.get("frames", 0) >= 15 and load.get("zoom") == "all",
        "load: the whole profile is drawn", load)
c.check(load.get("total") == cpu.total, "load: total weight", (load.get("total"), cpu.total))
c.check(click.get("zoom") == "app.Server.handle" and
        click.get("zoomWidth") == click.get("canvasWidth") and
        0 < click.get("frames", 0) < load.get("frames", 0),
        "click zooms: the frame spans the width, fewer frames drawn", click)
# Frames are call paths: the heaviest app.Server.handle is the one under
# Thread.run > Worker.run (the truncated stacks have another).
path = ["java.lang.Thread.run", "app.Worker.run", "app.Server.handle"]
want = sum(v for frames, v in cpu.samples if frames[:3] == path)
c.check(click.get("zoomTotal") == want, "zoomed frame's weight", (click.get("zoomTotal"), want))
want = pct(cpu.share_matching(lambda f: "json" in f.lower()))
c.check(search.get("matched") == want and want in search.get("matchedText", ""),
        "substring search: matched percentage", (search.get("matched"), want))
want = pct(cpu.share_matching(lambda f: re.search(r"^app\.Math\.", f, re.I)))
c.check(regex.get("matched") == want, "regex search: matched percentage",
        (regex.get("matched"), want))
c.check(reset.get("zoom") == "all" and reset.get("frames") == load.get("frames"),
        "reset zooms out", reset)
heaviest = max(cpu.flat, key=lambda fn: cpu.flat[fn])
c.check(reverse.get("reversed") is True and reverse.get("baseRow", [None])[0] == heaviest
        and reverse.get("total") == cpu.total,
        "reversed view: the heaviest self function at the base", reverse.get("baseRow"))
c.check(icicle.get("icicle") is True and icicle.get("frames", 0) > 0, "icicle view", icicle)
c.check(text.count("app.Worker.run") == 1, "names are interned: one copy each")

# --cutoff drops frames under that share; their weight stays in the callers.
page, text = convert(os.path.join(T, "cut.html"), A, extra=["--cutoff", "5"])
(cut,) = selftest(page, [])
small = [fn for fn in cpu.cum if 0 < cpu.cum[fn] < cpu.total * 0.05]
c.check(cut.get("total") == cpu.total and 0 < cut.get("nodes", 0) < load.get("nodes", 0)
        and small and not any(json.dumps(fn)[1:-1] in text for fn in small),
        "--cutoff 5: smaller page, same total", (cut.get("nodes"), load.get("nodes")))

# --------------------------------------------------------------- alloc --
page, text = convert(os.path.join(T, "alloc.html"), A, extra=["--event", "alloc"])
space = Truth([MA], "alloc")
load, search = selftest(page, ["search:byte[]"])
c.check(load.get("total") == space.total, "alloc: total bytes", load.get("total"))
c.check(search.get("matched") == pct(100.0 * space.flat["byte[]"] / space.total) and
        "MiB" in search.get("matchedText", ""),
        "alloc: search byte[] (class frames), shown in MiB", search)

# ----------------------------------------------------------- per thread --
page, text = convert(os.path.join(T, "threads.html"), A, extra=["--per-thread"])
load, click = selftest(page, ["click:[worker-2]"])
c.check(click.get("zoom") == "[worker-2]" and
        click.get("zoomTotal") == cpu.thread["worker-2"],
        "per-thread: a thread frame holds its thread's weight", click)

# -------------------------------------------------------- hostile names --
N = os.path.join(T, "names.rpc")
run([BIGWRITER, "names", N])
page, text = convert(os.path.join(T, "names.html"), N)
c.check("alert(1)" in text and "<script>alert" not in text,
        "names: '<script>' in a name is escaped")
c.check(text.count("<!--") == 1, "names: '<!--' in a name is escaped (only the "
        "template's own comment opens one)")
c.check("\u2028" not in text, "names: U+2028 is escaped")
load, s1, s2, s3, s4 = selftest(page, ["search:</script><script>", 'search:say"hi"',
                                       "search:\ufffd", "click:app.Deep.bottom"])
c.check(load.get("total") == 1000000000, "names: the page loads whole", load.get("total"))
c.check(s1.get("matched") == "40.00%", "names: search finds '</script>'", s1.get("matched"))
c.check(s2.get("matched") == "30.00%", "names: search finds quotes", s2.get("matched"))
c.check(s3.get("matched") == "20.00%", "names: bad bytes shown as U+FFFD", s3.get("matched"))
c.check(load.get("rows") == 1800 and load.get("cut") is True,
        "names: a 3000-frame stack is cut at 1800 rows, with a note", load.get("rows"))
c.check(s4.get("zoom") == "app.Deep.bottom" and s4.get("hiddenCallers") == 3000 - 40 and
        s4.get("zoomWidth") == s4.get("canvasWidth") and s4.get("cut") is False,
        "names: the deep leaf zooms, its nearest 40 callers drawn below it", s4)

# ------------------------------------------------------------------ big --
W = os.path.join(T, "wide.rpc")
run([BIGWRITER, "wide", W, "100000"])
page, text = convert(os.path.join(T, "wide.html"), W)
load, search, click = selftest(page, ["search:m7", "click:pkg.L0.m3"])
print("wide: %d nodes, %d bytes of HTML; parse+first draw %s ms, %s frames drawn"
      % (load.get("nodes", 0), len(text), load.get("loadMs"), load.get("frames")))
c.check(load.get("nodes", 0) > 100000, "wide: over 100k nodes", load.get("nodes"))
c.check(0 < load.get("frames", 0) < load.get("nodes", 0),
        "wide: tiny frames are pruned from drawing", load.get("frames"))
c.check(load.get("loadMs", 1e9) < 10000, "wide: loads in under 10 s", load.get("loadMs"))
c.check(search.get("matched") not in (None, "0.00%"), "wide: search works", search)
c.check(click.get("zoom") == "pkg.L0.m3", "wide: click zooms", click.get("zoom"))

# ----------------------------------------------------------- screenshot --
shot = os.environ.get("RP_SCREENSHOT") or os.path.join(T, "shot.png")
chromium("file://" + urllib.parse.quote(os.path.join(T, "a.html")) + "#selftest=search:json",
         "--screenshot=" + shot)
with open(shot, "rb") as f:
    png = f.read()
c.check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000, "a screenshot was taken",
        len(png))

c.close()
