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
  - the quick start's shape (shallow Java stacks, a 150-frame JIT compiler stack)
    opens on its root at 1400x900: the root and the widest frames are on screen,
    in the flame, icicle and reversed views and after a zoom; the screenshot
    shows the root's bar where the page says it is and the search highlight as
    wide as the matched share;
  - the diff page of that shape keeps its root on screen through a search,
    whose result lengthens the header's text;
  - the header: the page is titled by the recording's main class (else the
    input's path), the live heap's subtitle shows whole, the legend names the
    marker frames the page holds (none when it holds none) with their meanings,
    and a marker frame's tooltip says what it is;
  - a profile of 100k call paths loads and stays responsive (pruned drawing);
  - the screenshot is kept when RP_SCREENSHOT names a file.
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
from cdp import chromium_args, decode_png  # noqa

RINGPROF, WRITER, BIGWRITER = sys.argv[1:4]
CHROMIUM = skip_unless("chromium", "chromium")
T = tempdir()
c = Checks("html")
profile_n = 0
WINDOW = (1400, 900)


def chromium(url, *extra):
    """Run headless Chromium on url in a fresh profile directory."""
    global profile_n
    profile_n += 1
    udd = os.path.join(T, "chromium-%d" % profile_n)
    os.mkdir(udd)
    cmd = chromium_args(CHROMIUM, udd, *WINDOW) + list(extra) + [url]
    try:
        return run(cmd, env=dict(os.environ, HOME=T), timeout=180)
    finally:
        shutil.rmtree(udd, ignore_errors=True)


def selftest(page, steps, *extra):
    """Load page, run steps ("op:arg" strings), return the list of states."""
    url = "file://" + urllib.parse.quote(page) + "#selftest=" + \
        urllib.parse.quote(";".join(steps), safe="")
    dom = chromium(url, "--dump-dom", *extra)
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


def rgb(css):
    return bytes(int(v) for v in re.findall(r"\d+", css)[:3])


def longest_run(row, colour):
    """The longest run of pixels of `colour` (3 bytes) in an RGB row, in pixels."""
    if len(colour) != 3:
        return 0
    runs = re.finditer(b"(?:" + re.escape(colour) + b")+", row)
    return max((len(m.group()) // 3 for m in runs), default=0)


# ------------------------------------------------------------------ cpu --
DB_REC = os.path.join(T, "db.rpc")
run([WRITER, "diff-base", DB_REC])
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

# ------------------------------------------- deep: the quick start's shape --
# The JIT compiler's 150-frame C++ stack makes the flame graph far taller than
# the window; the page must open on the root and the widest frames, not on the
# empty top of the compiler's tower.
J = os.path.join(T, "jit.rpc")
run([BIGWRITER, "jit", J])
page, text = convert(os.path.join(T, "jit.html"), J)
# One Chromium run: the steps, then back to the opening view (with the search
# still on) for the screenshot, taken after them.
shot = os.environ.get("RP_SCREENSHOT") or os.path.join(T, "jit.png")
load, search, click, icicle, reverse, flame, back = selftest(
    page, ["search:app.Hash", "click:app.Billing.handle", "icicle", "reverse", "icicle:0",
           "reverse:0"], "--screenshot=" + shot)
ROW = 17


def on_screen(st, box, more=0):
    """The graph's row `box` and `more` rows past it (toward the leaves) are in
    the graph's part of the window."""
    b, v = st.get(box) or {}, st.get("view") or {}
    if not b or not v:
        return False
    up, down = (0, more) if st.get("icicle") else (more, 0)
    return b["top"] - up * ROW >= v["top"] and b["bottom"] + down * ROW <= v["bottom"]


c.check(load.get("rows") == 151 and on_screen(load, "baseBox", 3) and
        load.get("baseRow", [None])[0] == "java.lang.Thread.run",
        "jit: the page opens on the root and the widest frames (flame view)",
        (load.get("rows"), load.get("baseBox"), load.get("view")))
# the writer's weights: 50 parse, 30 hash, 20 compiler samples of 10 ms
c.check(search.get("matched") == "30.00%", "jit: search app.Hash matches 30%",
        search.get("matched"))
c.check(click.get("zoom") == "app.Billing.handle" and
        click.get("zoomWidth") == click.get("canvasWidth") and
        click.get("zoomTotal") == 800000000 and on_screen(click, "zoomBox", 1),
        "jit: a click zooms, the zoomed frame on screen", click.get("zoomBox"))
c.check(icicle.get("icicle") is True and on_screen(icicle, "zoomBox") and
        on_screen(icicle, "baseBox"), "jit: icicle view on the zoomed frame",
        icicle.get("zoomBox"))
c.check(reverse.get("reversed") is True and reverse.get("zoom") == "all" and
        on_screen(reverse, "baseBox", 3) and on_screen(flame, "baseBox", 3),
        "jit: the reversed view opens on its root, as icicle and as flame",
        (reverse.get("baseBox"), flame.get("baseBox")))
c.check(back.get("zoom") == "all" and not back.get("reversed") and not back.get("icicle")
        and back.get("baseBox") == load.get("baseBox") and back.get("matched") == "30.00%",
        "jit: back to the opening view, the search still on", back)
# The screenshot is taken after the steps, at the window size given (the DOM is
# dumped at that size less the window's frame). The graph is scrolled to its
# bottom and the rows below it have a fixed height, so the root's bar is where
# the page says, shifted by the difference in window height.
try:
    with open(shot, "rb") as f:
        w, h, px = decode_png(f.read())
except (OSError, ValueError) as e:
    w, h, px = 0, 0, []
    c.check(False, "jit: the screenshot decodes", e)
if px:
    # Without the page's word (a page that does not report where it drew), the
    # whole window and the palette's root colour (TYPES "all" in the page).
    v, base = back.get("view") or {}, back.get("baseBox") or {}
    shift = h - v.get("windowHeight", h)
    top, bottom = v.get("top", 0), min(h, v.get("bottom", h) + shift)
    bg = px[h - 1][:3]   # the page's background, below the status line
    drawn = sum(w - px[y].count(bg) for y in range(top, bottom))
    area = max(1, (bottom - top) * w)
    c.check(w == WINDOW[0] and drawn > 0.1 * area,
            "jit: the screenshot shows the graph (%.0f%% of the graph area drawn)"
            % (100.0 * drawn / area), (w, h))
    root = rgb(back.get("baseColour") or "rgb(200,200,200)")
    cw = back.get("canvasWidth") or w
    bars = [y for y in range(h) if longest_run(px[y], root) > 0.9 * cw]
    c.check(bars, "jit: the root's bar (%s) is on screen" % root.hex())
    y = base.get("top", -99) + ROW // 2 + shift
    c.check(any(abs(b - y) <= 2 for b in bars),
            "jit: the root's bar is where the page says (y %d)" % y, bars[:3])
    match = bytes((224, 64, 224))   # the page's MATCH colour
    widest = max(longest_run(r, match) for r in px)
    c.check(abs(widest / cw - 0.30) < 0.01,
            "jit: the search highlight spans the matched share of the width",
            (widest, cw))

# The diff page of the same shape: a search's result (base, new and change)
# lengthens the header; the graph keeps the root on screen.
page = os.path.join(T, "jitdiff.html")
run([RINGPROF, "diff", "--quiet", "--overlap", "--format", "html", "-o", page, J, J])
load, search = selftest(page, ["search:app.Hash"])
c.check(on_screen(load, "baseBox", 3) and on_screen(search, "baseBox", 3) and
        "change" in search.get("matchedText", ""),
        "jit diff page: the root on screen after a search",
        (load.get("baseBox"), search.get("baseBox"), search.get("view")))

# ---------------------------------------------------------- the header --
O = os.path.join(T, "o.rpc")
run([WRITER, "overloads", O])
page, text = convert(os.path.join(T, "o.html"), O)
load, click = selftest(page, ["click:[ringprof:alloc]"])
meaning = ("CPU the agent spent sampling an allocation (alloc=), shown under the Java code "
           "that allocated (docs/engines.md, \"The agent's own work\")")
c.check(load.get("title") == "app.db.Main - ringprof flame graph",
        "header: titled by the recording's main class", load.get("title"))
c.check(load.get("markers") == [["[ringprof:alloc]", meaning]],
        "header: the legend names the page's one marker, its meaning on hover",
        load.get("markers"))
c.check(click.get("zoom") == "[ringprof:alloc]" and
        click.get("zoomText", "").endswith("\n" + meaning),
        "a marker frame's tooltip says what it is", click.get("zoomText"))
# (the page's data is enough here: the run above shows how the page uses it)
page, text = convert(os.path.join(T, "nomarker.html"), DB_REC)
data = json.loads(re.search(r'<script id="flame-data" type="application/json">(.*?)</script>',
                            text, re.S).group(1))
c.check(data.get("markers") == [] and data.get("title") == DB_REC,
        "header: no marker, no marker legend; no main class, titled by the input",
        (data.get("markers"), data.get("title")))
H = os.path.join(T, "heap")
run([WRITER, "heap", H])
page, text = convert(os.path.join(T, "live.html"), H, extra=["--event", "live"])
(load,) = selftest(page, [])
c.check(load.get("infoWhole") is True and
        load.get("info", "").endswith("(the last of 12 in the range)"),
        "live heap: the subtitle shows whole", (load.get("infoWhole"), load.get("info")))

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

c.close()
