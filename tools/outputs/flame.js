/*
  tools/outputs/flame.js: the flame-graph renderer that the pages of
  `ringprof convert --format html` (flamegraph.html) and `--format heatmap`
  (heatmap.html) share. embed.py compiles it into the binary; the writers put it
  where a page has its FLAME_JS marker, inside the page's own script
  element: a page ends a script element only where its own scripts end, so this
  file never holds the closing tag's text, nor an HTML comment's opening.

  ringprofFlame(els, data, options) draws `data` on els.canvas and returns
  {setData, redraw, search, click, reverse, icicle, reset, state}.

  els: the page's elements: canvas (inside the scrolling element `scroller`),
  search (text input), regex and caseSensitive (checkboxes), matched (the
  matched share), reverse and icicle (checkboxes), reset (button), legend, note
  (what is not drawn), status (the hovered frame in one line), tip (the
  tooltip), and optionally info (the subtitle, reported by state()).
  options: t0 (when the page began, performance.now(), for state().loadMs;
  default: the call), keys (false: no Ctrl+F and Esc on the document).

  data: {"unit", "ns_per_unit", "strings":[names], "markers":[[label, meaning,
  doc, match], ...], "nodes":[name, type, weight, samples, nchildren, ...]} with
  the nodes flat in pre-order (the root first, a node's children right after
  it), so nothing recurses on deep stacks. Types: 0 interpreted, 1 JIT, 2
  inlined, 3 native, 4 C++, 5 kernel, 6 marker, 7 allocated class, 8 thread, 9
  root. "markers" explains the marker frames the nodes hold: the legend names
  them, the tooltip of such a frame says what it is. The renderer starts with
  the search, reversed and icicle settings its inputs hold (set by the page, or
  restored by the browser on a reload); setData(data) draws another profile,
  keeping them and zooming out.

  The graph opens on the root: a flame graph (root at the bottom) of deep
  stacks is taller than its scroller, so every change of view (load, zoom,
  reset, reversed, icicle, resize) scrolls the scroller to bring the zoomed
  frame and its callers into view (reveal); a search, whose result may change
  the height of what is above the graph, keeps the graph where it was against
  its bottom (or, in the icicle, its top).

  Diff mode: the data also holds "diff":{"scale", "base_total", "new_total"}
  and "base":[total, self, ...], two BASE weights per node in the nodes' order.
  The frames keep NEW's shape; each is coloured by the change of its self
  weight, NEW self - BASE self x scale, red where it grew and blue where it
  shrank, deeper the larger the change against the largest one; the tooltip,
  status line and search show BASE, NEW and the change.

  Names are put on the page with textContent and drawn on the canvas only:
  nothing of the data is ever parsed as HTML.
*/
function ringprofFlame(els, data, options) {
  "use strict";
  const opts = options || {};
  const ROW = 17;              // px per frame row
  const MIN_W = 0.4;           // frames narrower than this (px) are not drawn
  const MAX_ROWS = 1800;       // canvas height limit: deeper frames are cut off
  const MAX_CALLERS = 40;      // callers of a zoomed frame drawn below it
  const TYPES = [
    // name, base colour (r, g, b), variation: async-profiler's palette idea
    ["interpreted", [178, 225, 178], 20], ["JIT", [80, 225, 80], 30],
    ["inlined", [80, 204, 204], 30], ["native", [225, 90, 90], 30],
    ["C++", [200, 200, 60], 30], ["kernel", [225, 125, 0], 30],
    ["marker", [170, 170, 190], 10], ["class", [120, 170, 240], 30],
    ["thread", [210, 180, 140], 10], ["all", [200, 200, 200], 0]];
  const MATCH = "#e040e0";
  const t0 = opts.t0 !== undefined ? opts.t0 : performance.now();

  // the profile drawn (setData replaces all of these)
  let S = [], MARKERS = [], DIFF = false, SCALE = 1, unit = "";
  let forward = null, reverse = null, tree = null, zoom = null, nodeCount = 0;
  // the view: kept across setData
  let inverted = false, icicle = false;
  let matchRe = null, matchedPct = null;
  let rows = [];               // per depth row: frames drawn [{x, w, node}]
  let drawnCount = 0, cut = false;
  let zoomRow = 0, hiddenCallers = 0;   // the zoomed frame's row; callers not drawn
  let loadMs = null;

  /* ---- the tree: rebuilt from the flat pre-order array without recursion ---- */
  function Node(name, type, w, n, parent) {
    this.name = name; this.type = type; this.w = w; this.n = n;
    this.parent = parent; this.kids = []; this.depth = parent ? parent.depth + 1 : 0;
    this.match = false;
  }
  function buildForward() {
    const a = data.nodes, base = data.base;
    let root = null;
    const stack = [];          // [node, children still to read]
    for (let i = 0; i + 4 < a.length; i += 5) {
      const top = stack.length ? stack[stack.length - 1] : null;
      const node = new Node(a[i], a[i + 1], a[i + 2], a[i + 3], top ? top[0] : null);
      if (DIFF) { node.b = base[(i / 5) * 2]; node.bs = base[(i / 5) * 2 + 1]; }
      if (top) { top[0].kids.push(node); top[1]--; }
      else root = node;
      // a node with children waits for them; a leaf closes every parent whose
      // last child it was
      if (a[i + 4] > 0) stack.push([node, a[i + 4]]);
      else while (stack.length && stack[stack.length - 1][1] === 0) stack.pop();
      if (!stack.length && root) break;
    }
    if (root) return root;
    const empty = new Node(0, 9, 0, 0, null);
    if (DIFF) { empty.b = 0; empty.bs = 0; }
    return empty;
  }
  // Callers view: every frame with self weight becomes a path leaf -> root,
  // merged by name, so the base row lists where the weight is spent.
  function buildReverse(fwd) {
    const root = new Node(fwd.name, 9, fwd.w, fwd.n, null);
    if (DIFF) root.b = fwd.b;
    const todo = [fwd];
    while (todo.length) {
      const f = todo.pop();
      let sw = f.w, sn = f.n;
      for (const k of f.kids) { sw -= k.w; sn -= k.n; todo.push(k); }
      const sb = DIFF ? f.bs : 0;
      if (f === fwd || (sw <= 0 && sn <= 0 && !(sb > 0))) continue;
      let at = root;
      for (let p = f; p && p !== fwd; p = p.parent) {
        let kid = at.index && at.index.get(p.name);
        if (!kid) {
          kid = new Node(p.name, p.type, 0, 0, at);
          if (DIFF) kid.b = 0;
          at.kids.push(kid);
          (at.index || (at.index = new Map())).set(p.name, kid);
        }
        kid.w += sw; kid.n += sn; at = kid;
        if (DIFF) kid.b += sb;
      }
    }
    const sort = [root];
    while (sort.length) {
      const f = sort.pop();
      f.kids.sort((x, y) => y.w - x.w || (S[x.name] < S[y.name] ? -1 : 1));
      delete f.index;
      if (DIFF) f.bs = f.kids.reduce((v, k) => v - k.b, f.b);
      for (const k of f.kids) sort.push(k);
    }
    return root;
  }

  /* ---- number formatting ---- */
  function fmtCount(v) { return Math.round(v).toLocaleString("en-US"); }
  function fmtTime(v) {
    if (v >= 1e9) return (v / 1e9).toFixed(3) + " s";
    if (v >= 1e6) return (v / 1e6).toFixed(2) + " ms";
    if (v >= 1e3) return (v / 1e3).toFixed(1) + " us";
    return Math.round(v) + " ns";
  }
  function fmtWeight(v) {
    if (unit === "ns") return fmtTime(v);
    if (unit === "bytes") {
      const u = ["B", "KiB", "MiB", "GiB", "TiB"];
      let i = 0;
      while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
      return (i ? v.toFixed(2) : String(v)) + " " + u[i];
    }
    // a count-like unit whose samples stand for a known interval: show both
    const est = data.ns_per_unit > 0 ? " (~" + fmtTime(v * data.ns_per_unit) + ")" : "";
    return fmtCount(v) + (unit ? " " + unit : "") + est;
  }
  function pct(v, of) { return of > 0 ? (100 * v / of).toFixed(2) + "%" : "0%"; }
  function fmtSamples(n) { return fmtCount(n) + (Math.round(n) === 1 ? " sample" : " samples"); }

  /* ---- diff mode: each frame's change of self weight ---- */
  function selfW(n) { return n.kids.reduce((v, k) => v - k.w, n.w); }
  function change(n) { return selfW(n) - n.bs * SCALE; }
  let maxChange = 0;           // the largest |change| of the current tree
  function measureChanges() {
    maxChange = 0;
    for (const todo = [tree]; todo.length;) {
      const n = todo.pop();
      maxChange = Math.max(maxChange, Math.abs(change(n)));
      for (const k of n.kids) todo.push(k);
    }
  }
  function diffColour(n) {
    const d = change(n), t = maxChange > 0 ? Math.min(1, Math.abs(d) / maxChange) : 0;
    const v = Math.round(235 - 190 * t);
    return Math.abs(d) < 0.5 ? "rgb(235,235,235)"
      : d > 0 ? "rgb(255," + v + "," + v + ")" : "rgb(" + v + "," + v + ",255)";
  }
  function signed(v) { return (v > 0 ? "+" : v < 0 ? "-" : "") + fmtWeight(Math.abs(v)); }
  function rel(now, was) {
    return was > 0 ? " (" + (now >= was ? "+" : "") + (100 * (now - was) / was).toFixed(1) +
      "%)" : now > 0 ? " (new)" : "";
  }
  function describeDiff(n, name, t) {
    const bt = data.diff.base_total;
    return name + "\n" + t + "  new " + fmtWeight(n.w) + " (" + pct(n.w, tree.w) +
      "), base " + fmtWeight(n.b) + " (" + pct(n.b, bt) + ")" +
      "\nself: new " + fmtWeight(selfW(n)) + ", base " + fmtWeight(n.bs) +
      (SCALE !== 1 ? " (x" + SCALE.toFixed(3) + " normalised)" : "") + ", change " +
      signed(change(n)) + rel(selfW(n), n.bs * SCALE);
  }

  /* ---- colours: the type's base, varied by a hash of the name ---- */
  let colourCache = new Map();
  function colour(node) {
    if (DIFF) return diffColour(node);
    const key = node.name * 16 + node.type;
    let c = colourCache.get(key);
    if (c) return c;
    const t = TYPES[node.type] || TYPES[6];
    let h = 0;
    const s = S[node.name] || "";
    for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
    const v = ((h >>> 0) % 1000) / 1000 * t[2];
    c = "rgb(" + t[1].map((x) => Math.max(0, Math.min(255, Math.round(x - v)))).join(",") + ")";
    colourCache.set(key, c);
    return c;
  }

  /* ---- drawing ---- */
  const canvas = els.canvas;
  const ctx = canvas.getContext("2d");
  let cssW = 0, charW = 7;

  function layout() {
    rows = []; drawnCount = 0; cut = false;
    const W = cssW;
    const put = (node, x, w, d) => {
      if (d >= MAX_ROWS) { cut = true; return false; }
      (rows[d] || (rows[d] = [])).push({ x: x, w: w, node: node });
      drawnCount++;
      return true;
    };
    // the zoomed frame's callers: full width, drawn faded; in a deep stack only
    // the nearest MAX_CALLERS, so the zoomed frame is always on the canvas
    const chain = [];
    for (let p = zoom.parent; p && chain.length < MAX_CALLERS; p = p.parent) chain.push(p);
    chain.reverse();
    hiddenCallers = zoom.depth - chain.length;
    zoomRow = chain.length;
    for (let d = 0; d < chain.length; d++) put(chain[d], 0, W, d);
    const scale = zoom.w > 0 ? W / zoom.w : 0;
    const todo = [[zoom, 0, zoomRow]];
    while (todo.length) {
      const [node, x, d] = todo.pop();
      const w = node.w * scale;
      if (!put(node, x, w, d)) continue;
      let cx = x;
      for (const k of node.kids) {
        const kw = k.w * scale;
        if (kw >= MIN_W) todo.push([k, cx, d + 1]);
        cx += kw;
      }
    }
  }

  function draw() {
    cssW = canvas.parentElement.clientWidth || 1000;
    layout();
    const dpr = window.devicePixelRatio || 1;
    const h = Math.max(rows.length, 1) * ROW;
    canvas.style.height = h + "px";
    canvas.width = Math.round(cssW * dpr);
    canvas.height = Math.round(h * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssW, h);
    ctx.font = "12px ui-monospace, Menlo, Consolas, monospace";
    ctx.textBaseline = "middle";
    charW = ctx.measureText("m").width || 7;
    for (let d = 0; d < rows.length; d++) {
      const y = icicle ? d * ROW : h - (d + 1) * ROW;
      for (const r of rows[d] || []) {
        const n = r.node;
        ctx.globalAlpha = d < zoomRow ? 0.55 : 1;
        ctx.fillStyle = n.match ? MATCH : colour(n);
        ctx.fillRect(r.x, y, Math.max(r.w - 0.5, 0.5), ROW - 1);
        if (r.w > charW * 3) {
          let s = S[n.name] || "";
          if (n.type === 9 && !s) s = "all";
          const fit = Math.floor((r.w - 6) / charW);
          if (s.length > fit) s = fit > 2 ? s.slice(0, fit - 2) + ".." : "";
          if (s) { ctx.fillStyle = "#000"; ctx.fillText(s, r.x + 3, y + ROW / 2); }
        }
      }
    }
    ctx.globalAlpha = 1;
    const notes = [];
    if (hiddenCallers > 0) notes.push(hiddenCallers + " more callers below are not drawn.");
    if (cut) notes.push("Stacks deeper than " + MAX_ROWS + " frames are cut off in this " +
                        "view; zoom in to see their tops.");
    els.note.textContent = notes.join(" ");
  }

  // Scroll the zoomed frame's row (and the callers drawn next to it) into view:
  // in a flame graph they sit at the canvas bottom, in an icicle at its top.
  const scroller = els.scroller;
  function reveal() {
    scroller.scrollTop = icicle ? 0 : scroller.scrollHeight;
  }
  // Where canvas row d is on the screen (viewport px), for the test hook.
  function rowBox(d) {
    const b = canvas.getBoundingClientRect();
    const top = b.top + (icicle ? d * ROW : rows.length * ROW - (d + 1) * ROW);
    return { top: Math.round(top), bottom: Math.round(top + ROW - 1),
             left: Math.round(b.left), right: Math.round(b.right) };
  }

  function frameAt(px, py) {
    const h = rows.length * ROW;
    const d = icicle ? Math.floor(py / ROW) : Math.floor((h - py) / ROW);
    const row = rows[d];
    if (!row) return null;
    for (const r of row) if (px >= r.x && px < r.x + Math.max(r.w, 1)) return r.node;
    return null;
  }

  /* ---- search: test each distinct name once, then mark the frames ---- */
  function applySearch() {
    const all = [tree];
    if (!matchRe) {
      while (all.length) {
        const n = all.pop();
        n.match = false;
        for (const k of n.kids) all.push(k);
      }
      matchedPct = null;
      els.matched.textContent = "";
      return;
    }
    const hit = new Uint8Array(S.length);
    for (let i = 0; i < S.length; i++) hit[i] = matchRe.test(S[i]) ? 1 : 0;
    // matched weight counts each stack once: a matching frame's subtree is not
    // counted again for matches inside it
    let sum = 0, sumB = 0;
    const todo = [[tree, false]];
    while (todo.length) {
      const [n, inside] = todo.pop();
      n.match = n.type !== 9 && hit[n.name] === 1;
      if (n.match && !inside) { sum += n.w; if (DIFF) sumB += n.b; }
      for (const k of n.kids) todo.push([k, inside || n.match]);
    }
    matchedPct = pct(sum, tree.w);
    els.matched.textContent = "Matched: " + matchedPct + " (" + fmtWeight(sum) + ")" +
      (DIFF ? "; base " + pct(sumB, data.diff.base_total) + " (" + fmtWeight(sumB) +
              "), change " + signed(sum - sumB * SCALE) : "");
  }
  // the search's expression, null for none (or a bad one, marked so)
  function searchRegex(text, isRegex, caseSensitive) {
    els.search.classList.remove("bad");
    if (!text) return null;
    const src = isRegex ? text : text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    try { return new RegExp(src, caseSensitive ? "" : "i"); }
    catch (e) { els.search.classList.add("bad"); return null; }
  }
  function setSearch(text, isRegex, caseSensitive) {
    matchRe = searchRegex(text, isRegex, caseSensitive);
    // The result's text may change the height of what is above the graph, and
    // so the graph's: the view keeps its place against the graph's bottom (the
    // root, in a flame graph), or its top in an icicle.
    const fromBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight;
    applySearch();
    draw();
    if (!icicle)
      scroller.scrollTop = scroller.scrollHeight - scroller.clientHeight - fromBottom;
  }
  function searchFromInputs() {
    setSearch(els.search.value, els.regex.checked, els.caseSensitive.checked);
  }

  /* ---- views ---- */
  function setZoom(n) { zoom = n || tree; draw(); reveal(); }
  function setReverse(on) {
    inverted = !!on;
    els.reverse.checked = inverted;
    if (inverted && !reverse) reverse = buildReverse(forward);
    tree = inverted ? reverse : forward;
    zoom = tree;
    if (DIFF) measureChanges();
    applySearch();
    draw();
    reveal();
  }
  function setIcicle(on) {
    icicle = !!on;
    els.icicle.checked = icicle;
    draw();
    reveal();
  }

  /* ---- markers: what a frame that is not code means ---- */
  // A marker entry matches by name, by a family's prefix ("[agct:error_"), or
  // (match "") every native, C++ or kernel frame named in brackets.
  function markerOf(n) {
    const s = S[n.name] || "";
    if (n.type === 9 || s[0] !== "[" || s[s.length - 1] !== "]") return null;
    for (const m of MARKERS) {
      const p = m[3];
      if (p === "" ? n.type >= 3 && n.type <= 5
          : p[p.length - 1] === "]" ? s === p : s.startsWith(p)) return m;
    }
    return null;
  }

  /* ---- tooltip and status ---- */
  const tip = els.tip;
  function describe(n) {
    let self = n.w, selfN = n.n;
    for (const k of n.kids) { self -= k.w; selfN -= k.n; }
    const t = TYPES[n.type] ? TYPES[n.type][0] : "?";
    const name = n.type === 9 ? "all" : S[n.name];
    const m = markerOf(n);
    const note = m ? "\n" + m[1] + " (" + m[2] + ")" : "";
    if (DIFF) return describeDiff(n, name, t) + note;
    return name + "\n" + t + "  " + fmtWeight(n.w) + "  " + pct(n.w, tree.w) +
      " of all" + (zoom !== tree ? ", " + pct(n.w, zoom.w) + " of zoom" : "") +
      "\n" + fmtSamples(n.n) + "; self " + fmtWeight(self) +
      " (" + pct(self, tree.w) + "), " + fmtSamples(selfN) + note;
  }
  canvas.addEventListener("mousemove", (e) => {
    const b = canvas.getBoundingClientRect();
    const n = frameAt(e.clientX - b.left, e.clientY - b.top);
    if (!n) { tip.style.display = "none"; els.status.textContent = ""; return; }
    tip.textContent = describe(n);
    tip.style.display = "block";
    const tx = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 4);
    const ty = e.clientY + 18 + tip.offsetHeight > window.innerHeight
      ? e.clientY - tip.offsetHeight - 8 : e.clientY + 18;
    tip.style.left = Math.max(0, tx) + "px";
    tip.style.top = Math.max(0, ty) + "px";
    els.status.textContent = describe(n).replace(/\n/g, "  |  ");
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  canvas.addEventListener("click", (e) => {
    const b = canvas.getBoundingClientRect();
    const n = frameAt(e.clientX - b.left, e.clientY - b.top);
    if (n) setZoom(n);
  });
  els.search.addEventListener("input", searchFromInputs);
  els.regex.addEventListener("change", searchFromInputs);
  els.caseSensitive.addEventListener("change", searchFromInputs);
  els.reverse.addEventListener("change", (e) => setReverse(e.target.checked));
  els.icicle.addEventListener("change", (e) => setIcicle(e.target.checked));
  els.reset.addEventListener("click", () => setZoom(tree));
  if (opts.keys !== false)
    document.addEventListener("keydown", (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key === "f") { e.preventDefault(); els.search.focus(); }
      else if (e.key === "Escape") { setZoom(tree); }
    });
  window.addEventListener("resize", () => { draw(); reveal(); });

  /* ---- the legend: the frame types drawn (diff mode: the colour scale), the
     markers ---- */
  function legendItem(cls, text, colourCss, title) {
    const s = document.createElement("span");
    if (cls) s.className = cls;
    if (colourCss) s.style.setProperty("--c", colourCss);
    s.textContent = text;
    if (title) s.title = title;
    els.legend.appendChild(s);
  }
  function buildLegend() {
    els.legend.textContent = "";
    const used = new Set();
    for (const todo = [forward]; todo.length;) {
      const n = todo.pop();
      used.add(n.type);
      for (const k of n.kids) todo.push(k);
    }
    if (DIFF)
      for (const [c, text] of [["rgb(45,45,255)", "less in new: -" + fmtWeight(maxChange)],
                               ["rgb(235,235,235)", "self unchanged"],
                               ["rgb(255,45,45)", "more in new: +" + fmtWeight(maxChange)]])
        legendItem("type", text, c);
    for (let t = 0; t < TYPES.length - 1; t++)
      if (!DIFF && used.has(t))
        legendItem("type", TYPES[t][0], "rgb(" + TYPES[t][1].join(",") + ")");
    if (MARKERS.length) legendItem("", "markers (hover for what they are):");
    for (const m of MARKERS) legendItem("marker", m[0], null, m[1] + " (" + m[2] + ")");
  }

  /* ---- a profile to draw ---- */
  function setData(d) {
    data = d;
    S = data.strings;
    MARKERS = data.markers || [];
    DIFF = !!data.diff;
    SCALE = DIFF ? data.diff.scale : 1;
    unit = data.unit || "";
    nodeCount = data.nodes.length / 5;
    colourCache = new Map();
    forward = buildForward();
    reverse = inverted ? buildReverse(forward) : null;
    tree = inverted ? reverse : forward;
    zoom = tree;
    if (DIFF) measureChanges();
    buildLegend();
    if (matchRe) applySearch();
    draw();
    reveal();
  }

  /* ---- test hook ---- */
  function find(name) {
    // the heaviest frame named `name` (exactly) in the current view
    let best = null;
    const todo = [tree];
    while (todo.length) {
      const n = todo.pop();
      if (n.type !== 9 && S[n.name] === name && (!best || n.w > best.w)) best = n;
      for (const k of n.kids) todo.push(k);
    }
    return best;
  }
  function state() {
    const top = rows[zoomRow] ? rows[zoomRow].find((r) => r.node === zoom) : null;
    const info = els.info;
    return {
      zoom: zoom.type === 9 ? "all" : S[zoom.name],
      zoomWidth: top ? Math.round(top.w) : 0,
      canvasWidth: Math.round(cssW),
      frames: drawnCount,
      rows: rows.length,
      matched: matchedPct,
      matchedText: els.matched.textContent,
      reversed: inverted,
      icicle: icicle,
      // the widest frames of the base row (the root's children)
      baseRow: (rows[1] || []).slice().sort((x, y) => y.w - x.w).slice(0, 5)
        .map((r) => S[r.node.name]),
      zoomTotal: zoom.w,
      total: tree.w,
      nodes: nodeCount,
      cut: cut,
      hiddenCallers: hiddenCallers,
      // on screen: the base row (the root, or the zoomed frame's farthest caller
      // drawn), the zoomed frame's row, the scroller's part of the window
      baseBox: rowBox(0),
      zoomBox: rowBox(zoomRow),
      baseColour: rows[0] ? colour(rows[0][0].node) : null,
      view: { top: Math.round(scroller.getBoundingClientRect().top),
              bottom: Math.round(scroller.getBoundingClientRect().bottom),
              width: window.innerWidth, windowHeight: window.innerHeight },
      loadMs: loadMs,
      // what the tooltip says of the zoomed frame; diff mode's largest change
      zoomText: describe(zoom),
      maxChange: DIFF ? maxChange : null,
      // the header: the title, whether the subtitle shows whole, the legend's
      // markers with their tooltips
      title: document.title,
      info: info ? info.textContent : null,
      infoWhole: info ? info.scrollWidth <= info.clientWidth &&
        info.scrollHeight <= info.clientHeight + 1 : null,
      markers: Array.from(els.legend.querySelectorAll("span.marker"))
        .map((s) => [s.textContent, s.title]),
    };
  }

  // the view the inputs hold
  inverted = els.reverse.checked;
  icicle = els.icicle.checked;
  matchRe = searchRegex(els.search.value, els.regex.checked, els.caseSensitive.checked);
  setData(data);
  loadMs = Math.round(performance.now() - t0);   // parse, build, first draw

  return {
    setData: setData,
    redraw: () => { draw(); reveal(); },
    search: (text, isRegex) => {
      els.search.value = text; els.regex.checked = !!isRegex;
      searchFromInputs(); return state();
    },
    click: (name) => { const n = find(name); if (n) setZoom(n); return state(); },
    reverse: (on) => { setReverse(on === undefined ? true : on); return state(); },
    icicle: (on) => { setIcicle(on === undefined ? true : on); return state(); },
    reset: () => { setZoom(tree); return state(); },
    state: state,
  };
}
