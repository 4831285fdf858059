#!/usr/bin/env python3
"""tests/convert/test_heatmap.py RINGPROF RP_BURSTWRITER RP_BIGWRITER

The heatmap page (`ringprof convert --format heatmap`) in a real browser: headless
Chromium driven over the DevTools protocol (cdp.py), with real mouse events
where a user would use the mouse. The truth is rp_burstwriter's manifest (60 s
of two threads sampled every 10 ms, one stack hot only from 30 s to 40 s), summed
here, never the page's own numbers:
  - the page opens without a JavaScript error (its own list and the browser's);
  - a drag over the heatmap from the cell of the burst's start to the cell of its
    last millisecond selects exactly the burst's window: the flame graph's root
    weighs what the manifest's samples in it weigh, the burst's leaf what the
    burst's samples weigh, and the window's start, end and sample count are
    shown; a drag over the telemetry selects whole columns;
  - the thread and include filters give the flame graph of the samples they
    keep;
  - a baseline, by the "the same length before" button and by shift-drag, makes
    the flame graph the differential one: its base total, its largest change of
    self weight and the frames added (the burst's) are the manifest's, and the
    top changes table lists the frames' self changes, largest first;
  - the URL fragment (selection, baseline, reversed view) restores them on
    reload;
  - a screenshot at 1400x900, decoded here, has the heatmap's cells coloured;
  - hostile names (rp_bigwriter names: "</script>", quotes, "<!--", U+2028,
    bytes that are not UTF-8) neither end an element nor make one: the page
    opens without an error, holds its three scripts only, and finds the name.
Plain builds only, like `html`; exit 77 (skipped) without Chromium.
"""
import collections
import json
import os
import re
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, display, load_manifest, run, skip_unless, tempdir  # noqa: E402

RINGPROF, BURST, BIGWRITER = sys.argv[1:4]
CHROMIUM = skip_unless("chromium", "chromium")
from cdp import SHIFT, Browser, decode_png  # noqa: E402

T = tempdir()
c = Checks("heatmap_page")
MS = 1000000
READY = "window.__heatmapReady === true"
WHITE, PAGE_BG = (255, 255, 255), (248, 248, 244)   # the heatmap's ground, the page's


def convert(name, *inputs):
    """Convert to a heatmap page; its path and text, after the file checks."""
    out = os.path.join(T, name)
    run([RINGPROF, "convert", "--quiet", "--format", "heatmap", "-o", out] + list(inputs))
    with open(out, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        c.check(False, "%s is valid UTF-8" % name, e)
        text = data.decode("utf-8", "replace")
    c.check(not re.search(r"https?://", text, re.I), "%s fetches nothing" % name)
    c.check(len(re.findall(r"</script", text, re.I)) == 3,
            "%s: '</script' only where its three scripts end" % name)
    return out, text


# ---------------------------------------------------------------- truth --
run([BURST, os.path.join(T, "burst.rpc"), os.path.join(T, "burst.json")])
M = load_manifest(os.path.join(T, "burst.json"))
FRAMES = [[display(fr) for fr in s["frames"]] for s in M["stacks"]]
CPU = [(s["t"] // MS, s["thread"], s["stack"], s["weight"]) for s in M["samples"]
       if s["kind"] == "cpu"]
BURST_WIN = (M["burst"]["from"] // MS, M["burst"]["to"] // MS)
LEN = BURST_WIN[1] - BURST_WIN[0]
BEFORE = (BURST_WIN[0] - LEN, BURST_WIN[0])


def in_win(win, pred=lambda s: True):
    return [s for s in CPU if win[0] <= s[0] < win[1] and pred(s)]


def weight(samples):
    return sum(s[3] for s in samples)


def self_by_path(samples):
    """Self weight per call path (frame names, root first), as a flame graph's nodes."""
    out = collections.Counter()
    for s in samples:
        out[tuple(FRAMES[s[2]])] += s[3]
    return out


def self_by_name(samples):
    """Self weight per frame name: what the top changes table ranks."""
    out = collections.Counter()
    for s in samples:
        out[FRAMES[s[2]][-1]] += s[3]
    return out


def prefixes(paths):
    """Every call path that leads to one of `paths`: the flame graph's nodes."""
    return {p[:i] for p in paths for i in range(1, len(p) + 1)}


def diff_truth(new, base):
    """The largest |change| of a node's self weight (scale 1, ringprof diff's
    default), the frames on paths only NEW has, each frame's self change."""
    pn, pb = self_by_path(new), self_by_path(base)
    biggest = max(abs(pn[p] - pb[p]) for p in set(pn) | set(pb))
    added = {p[-1] for p in prefixes(pn) - prefixes(pb)}
    nn, nb = self_by_name(new), self_by_name(base)
    changes = {k: nn[k] - nb[k] for k in set(nn) | set(nb) if nn[k] != nb[k]}
    return biggest, added, changes


def hms(ms):
    return time.strftime("%H:%M:%S", time.gmtime(ms / 1000))


def weight_text(text):
    """A weight as the page prints it ("+10.000 s", "-2.50 ms") in ns."""
    m = re.match(r"^([+-]?)([\d.,]+) (s|ms|us)$", text.strip())
    if not m:
        return None
    v = float(m.group(2).replace(",", "")) * {"s": 1e9, "ms": 1e6, "us": 1e3}[m.group(3)]
    return -v if m.group(1) == "-" else v


# ------------------------------------------------------------ the page --
page, _ = convert("burst.html", os.path.join(T, "burst.rpc"))
URL = "file://" + urllib.parse.quote(page)
H = "window.__heatmap"


def state(p):
    return p.evaluate(H + ".state()")


def centre(p, ms):
    box = p.evaluate("%s.cellBox(%d)" % (H, ms))
    return (box["x"], box["y"]) if box else (-1, -1)


def box_of(p, selector):
    """The centre of an element, in viewport px (for a real click)."""
    return tuple(p.evaluate("(() => { const r = document.querySelector(%s)"
                            ".getBoundingClientRect(); return [r.x + r.width / 2, "
                            "r.y + r.height / 2]; })()" % json.dumps(selector)))


def check_window(st, win, what, keep=lambda s: True):
    want = in_win(win, keep)
    fl = st.get("flame") or {}
    c.check(fl.get("root") == weight(want) and fl.get("samples") == len(want) and
            (st.get("flameState") or {}).get("total") == weight(want),
            "%s: the flame graph's root weighs the window's samples" % what,
            (fl.get("root"), fl.get("samples"), weight(want), len(want)))


def check_baseline(p, st, base, what):
    sel = BURST_WIN
    biggest, added, changes = diff_truth(in_win(sel), in_win(base))
    fl, fs = st.get("flame") or {}, st.get("flameState") or {}
    c.check(st.get("base") == list(base) and
            (fl.get("base") or {}).get("weight") == weight(in_win(base)),
            "%s: the baseline is the window before, its weight the manifest's" % what,
            (st.get("base"), fl.get("base")))
    c.check(fs.get("maxChange") == biggest and set(fl.get("added") or []) == added,
            "%s: the diff's largest change and the frames added (the burst's)" % what,
            (fs.get("maxChange"), biggest, fl.get("added"), sorted(added)))
    rows = p.evaluate("Array.from(document.querySelectorAll('#changes tr')).slice(1)"
                      ".map((r) => Array.from(r.cells).map((x) => x.textContent))")
    got = [(r[-1], weight_text(r[-2])) for r in rows]
    ranked = sorted(changes.items(), key=lambda kv: -abs(kv[1]))
    c.check(got and got[0][0] == ranked[0][0] and abs(got[0][1] - ranked[0][1]) < 1e6 and
            all(changes.get(n) is not None and abs(changes[n] - v) < 1e6 for n, v in got) and
            len(got) == min(len(changes), 15) and
            all(abs(got[i][1]) >= abs(got[i + 1][1]) for i in range(len(got) - 1)),
            "%s: the top changes table: each frame's self change, largest first" % what,
            (got, ranked))


with Browser(CHROMIUM, width=1400, height=900, timeout=60) as b:
    p = b.new_page()
    p.navigate(URL, wait_for=READY)
    st = state(p)
    c.check(st.get("errors") == [] and not p.errors, "the page opens without a JS error",
            (st.get("errors"), p.errors))
    print("heatmap_page: burst page %d bytes, ready in %s ms" %
          (os.path.getsize(page), st.get("readyMs")))

    # A drag over the burst, cell to cell: exactly its window, its flame graph.
    p.mouse_drag(centre(p, BURST_WIN[0]), centre(p, BURST_WIN[1] - 1))
    st = state(p)
    c.check(st.get("sel") == list(BURST_WIN), "a drag over the burst selects its window",
            (st.get("sel"), BURST_WIN))
    check_window(st, BURST_WIN, "burst")
    burst_leaf = FRAMES[M["burst"]["stack"]][-1]
    hot = in_win(BURST_WIN, lambda s: s[2] == M["burst"]["stack"])
    z = p.evaluate("%s.flame.click(%s)" % (H, json.dumps(burst_leaf)))
    c.check(z.get("zoom") == burst_leaf and z.get("zoomTotal") == weight(hot) > 0,
            "burst: its leaf weighs the burst's samples", (z.get("zoomTotal"), weight(hot)))
    p.evaluate(H + ".flame.reset()")
    info = st.get("selinfo", "")
    c.check(re.search(r"%s\b.*\.\..*\b%s\b" % (hms(BURST_WIN[0]), hms(BURST_WIN[1])), info) and
            "{:,} samples".format(len(in_win(BURST_WIN))) in info,
            "burst: the window's start, end and samples are shown", st.get("selinfo"))

    # The filters: the flame graph of what they keep.
    st = p.evaluate(H + ".setFilter({thread: 'worker-2'})")
    check_window(st, BURST_WIN, "thread worker-2", lambda s: s[1] == "worker-2")
    st = p.evaluate(H + ".setFilter({thread: '', inc: 'Report\\\\.layout'})")
    check_window(st, BURST_WIN, "include Report.layout", lambda s: s[2] == M["burst"]["stack"])
    p.evaluate(H + ".setFilter({inc: ''})")

    # A drag over the telemetry selects whole columns.
    g = st.get("grid") or {}
    top = p.evaluate("document.getElementById('chart').getBoundingClientRect().top")
    y = top + (16 + g.get("top", 0)) / 2
    x0, x1 = centre(p, BEFORE[0])[0], centre(p, BEFORE[0] + 4000)[0]
    p.mouse_drag((x0, y), (x1, y))
    col = g.get("colMs", 0)
    tele = (BEFORE[0] // col * col, (BEFORE[0] + 4000) // col * col + col) if col else (0, 0)
    st = state(p)
    c.check(st.get("sel") == list(tele), "a drag over the telemetry selects its columns",
            (st.get("sel"), tele))
    check_window(st, tele, "telemetry columns")

    # Baselines: the button, then shift-drag; the differential flame graph.
    p.mouse_drag(centre(p, BURST_WIN[0]), centre(p, BURST_WIN[1] - 1))
    p.click(*box_of(p, "#before"))
    check_baseline(p, state(p), BEFORE, "the same length before")
    p.click(*box_of(p, "#clearbase"))
    earlier = (BEFORE[0] - LEN, BEFORE[0])
    p.mouse_drag(centre(p, earlier[0]), centre(p, earlier[1] - 1), modifiers=SHIFT)
    st = state(p)
    c.check(st.get("sel") == list(BURST_WIN), "shift-drag leaves the selection",
            st.get("sel"))
    check_baseline(p, st, earlier, "shift-drag")

    # The fragment: selection, baseline and the reversed view, after a reload.
    p.click(*box_of(p, "#reverse"))
    frag = state(p).get("hash", "")
    p.reload(wait_for=READY)
    st = state(p)
    c.check(st.get("sel") == list(BURST_WIN) and st.get("base") == list(earlier) and
            (st.get("flameState") or {}).get("reversed") is True and st.get("errors") == [],
            "the fragment restores selection, baseline and view on reload", (frag, st.get("sel"),
                                                                            st.get("base")))
    check_window(st, BURST_WIN, "after reload")

    # The screenshot: the heatmap's cells are drawn (every cell of this
    # recording holds samples: two threads every 10 ms).
    w, h, rows = decode_png(p.screenshot())
    g = st.get("grid") or {}
    chart = p.evaluate("(() => { const r = document.getElementById('chart')"
                       ".getBoundingClientRect(); return [r.left, r.top]; })()")
    x0, y0 = int(chart[0] + g.get("left", 0)), int(chart[1] + g.get("top", 0))
    x1 = min(w, x0 + g.get("cols", 0) * g.get("cellW", 0))
    y1 = min(h, y0 + g.get("rows", 0) * g.get("cellH", 0))
    area = max(1, (x1 - x0) * (y1 - y0))
    ground = {bytes(WHITE), bytes(PAGE_BG)}
    coloured = sum(rows[y][3 * x:3 * x + 3] not in ground
                   for y in range(max(0, y0), y1) for x in range(max(0, x0), x1, 2)) * 2
    c.check(w == 1400 and h == 900 and coloured > 0.5 * area,
            "the 1400x900 screenshot shows the heatmap's cells (%.0f%% coloured)"
            % (100.0 * coloured / area), (w, h, x0, y0, x1, y1))
    shot = os.environ.get("RP_SCREENSHOT")
    if shot:
        with open(shot, "wb") as f:
            f.write(p.screenshot())

    # Hostile names.
    run([BIGWRITER, "names", os.path.join(T, "names.rpc")])
    names, text = convert("names.html", os.path.join(T, "names.rpc"))
    c.check("\u2028" not in text and text.count("<!--") == 1,
            "names: U+2028 and '<!--' in names are escaped")
    p = b.new_page()
    p.navigate("file://" + urllib.parse.quote(names), wait_for=READY)
    st = state(p)
    s = p.evaluate(H + ".flame.search('</script><script>')")
    c.check(st.get("errors") == [] and not p.errors and
            p.evaluate("document.scripts.length") == 3 and s.get("matched") == "40.00%",
            "names: the page opens, makes no element of a name, and finds '</script>'",
            (st.get("errors"), p.errors, s.get("matched")))

c.close()
