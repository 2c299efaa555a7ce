/* page.js — draws the rperf-gvl HTML report from its embedded data block
 * (built by analysis/html_data.c; the layout of that object is documented
 * there). Plain browser JavaScript, no library, no network.
 *
 * Parts, in the order of the page: header facts, the timeline (canvas, one
 * lane per thread grouped by Ractor, zoom and pan; the selected thread's or
 * label set's critical path outlined on the lanes that explain it, with an
 * arrow at each hand-off, and its shares by root cause below), the wait
 * graph (SVG drawn here), the icicle flame graph (folded here from the
 * samples or the blame rows), and the sortable tables (root causes and
 * release stacks among them). One selection (a thread, a Ractor or a label
 * set) is shared by every part.
 *
 * It does NOT compute profiler numbers: totals come from the data block; the
 * page only sums what it draws.
 */
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("rperf-data").textContent);
  const summary = data.summary;
  const STATES = ["running", "gvl_wait", "blocked", "gc_mark", "gc_sweep"];
  const STATE_NAMES = ["running", "GVL wait", "blocked", "GC mark", "GC sweep"];
  const SYNTHETIC = { "[GVL blocked]": "blocked", "[GVL wait]": "gvl_wait", "[GC marking]": "gc", "[GC sweeping]": "gc" };
  const $ = (id) => document.getElementById(id);

  // ---- utilities -------------------------------------------------------------------------

  /* Durations as the CLI prints them: "850ns", "12.3µs", "4.56ms", "1.23s", "2m05s". */
  function fmtDur(ns) {
    if (ns === 0) return "0";
    const a = Math.abs(ns);
    const three = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
    if (a < 1e3) return ns.toFixed(0) + "ns";
    if (a < 1e6) return three(ns / 1e3) + "µs";
    if (a < 1e9) return three(ns / 1e6) + "ms";
    if (a < 60e9) return three(ns / 1e9) + "s";
    const m = Math.floor(ns / 60e9), s = Math.round((ns - m * 60e9) / 1e9);
    return m + "m" + String(s).padStart(2, "0") + "s";
  }
  const pct = (part, whole) => (whole > 0 ? ((100 * part) / whole).toFixed(1) + "%" : "-");
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  const SVG_NS = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }
  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }
  const stateColor = (s) => cssVar("--" + STATES[s]);

  const threads = summary.threads;
  const threadBySeq = new Map(threads.map((t) => [t.seq, t]));
  const labelText = new Map(data.label_sets.map(([id, text]) => [id, text]));
  const threadName = (seq) => {
    const t = threadBySeq.get(seq);
    return t && t.name ? t.name + " #" + seq : "thread #" + seq;
  };
  const frames = data.frames;
  const stacks = data.stacks;
  function stackLines(stack, max) {
    if (stack < 0 || !stacks[stack]) return [];
    const ids = stacks[stack];
    const lines = ids.slice(0, max).map((f) => frames[f][1] + "  " + frames[f][0]);
    if (ids.length > max) lines.push("… " + (ids.length - max) + " more frames");
    return lines;
  }

  // ---- selection: one thread, Ractor or label set, shared by every part ---------------------

  const selection = { kind: null, id: null };
  const listeners = [];
  // A Ractor by its summary row: an unidentified one is a single thread's row.
  const ractorInfo = new Map(summary.ractors.map((r) => [r.id, r]));
  function ractorName(id) {
    const info = ractorInfo.get(id);
    if (info && info.identified === false) return "Ractor ? (unidentified)";
    return "Ractor " + id + (info && info.main ? " (main)" : "");
  }
  function select(kind, id) {
    if (kind && selection.kind === kind && selection.id === id) kind = null; // clicking again clears
    selection.kind = kind;
    selection.id = kind ? id : null;
    let text = "all threads";
    if (kind === "thread") text = "thread " + threadName(id);
    else if (kind === "ractor") text = ractorName(id);
    else if (kind === "label") text = "label set " + (labelText.get(id) || id);
    $("selection").textContent = "Showing: " + text + "." + (kind ? " Press Esc or click it again to show all." : "");
    for (const f of listeners) f();
  }
  function threadSelected(seq) {
    if (selection.kind === "thread") return selection.id === seq;
    if (selection.kind === "ractor") {
      const t = threadBySeq.get(seq);
      return !!t && t.ractor === selection.id;
    }
    return true;
  }
  const labelSelected = (ls) => selection.kind !== "label" || selection.id === ls;

  // ---- header -----------------------------------------------------------------------------

  function drawHeader() {
    const m = summary.meta, tot = summary.totals;
    $("program").textContent = m.program;
    document.title = "rperf-gvl: " + m.program;
    const facts = [
      ["Ruby", m.ruby_version], ["mode", m.mode], ["duration", fmtDur(m.duration_ns)],
      ["threads", String(threads.length)], ["Ractors", String(summary.ractors.filter((r) => r.identified !== false).length)],
      ["GVL wait", pct(tot.gvl_wait_ns, tot.lifetime_ns) + " of thread time"],
      ["samples", String(data.samples.length) + " stacks"], ["pid", String(m.pid)],
    ];
    for (const [k, v] of facts) $("facts").append(el("div", {}, el("dt", {}, k), el("dd", {}, v)));
    const drops = summary.drops || [];
    if (drops.length) {
      const share = (ppm) => ppm >= 1000 ? (ppm / 1e4).toFixed(1) + "%" : ppm >= 100 ? (ppm / 1e4).toFixed(2) + "%" : "<0.01%";
      $("drops").hidden = false;
      $("drops").classList.toggle("material", drops.some((d) => d.material));
      $("drops").textContent = (drops.some((d) => d.material) ? "Incomplete report: the profiler dropped " :
        "The profiler dropped a small share (the figures hold): ") +
        drops.map((d) => d.what.replace("_", " ") + " " + d.dropped + (d.of ? " of " + d.of + " " + d.unit + " (" + share(d.ppm) + ")" :
          " " + d.unit + " (at most " + share(d.ppm) + " of blocked time)") + ", " + d.effect).join("; ") + ".";
    }
    const theme = $("theme-toggle");
    const modes = ["auto", "light", "dark"];
    theme.addEventListener("click", () => {
      const cur = document.documentElement.dataset.theme || "auto";
      const next = modes[(modes.indexOf(cur) + 1) % modes.length];
      if (next === "auto") delete document.documentElement.dataset.theme;
      else document.documentElement.dataset.theme = next;
      theme.textContent = "Theme: " + next;
      for (const f of listeners) f();
    });
  }

  // ---- timeline ---------------------------------------------------------------------------

  const ROW_H = 22, AXIS_H = 24;
  const axisNs = data.axis_ns;
  const iv = data.intervals;
  const buckets = iv.buckets;
  const view = { from: 0, to: axisNs };
  const rows = []; // {kind: "group"|"thread", seq, ractor}
  const laneOfSeq = new Map();
  const lanes = []; // per thread row: {seq, row, idx: [interval indices sorted by start], levels: [5 × Uint8Array|null] | null}
  const ivStart = new Float64Array(iv.thread.length);
  let hover = null;

  function buildRows() {
    let s = 0;
    for (let i = 0; i < iv.thread.length; i++) {
      s += iv.start_delta[i];
      ivStart[i] = s;
    }
    const ractors = [...new Set(threads.map((t) => t.ractor))].sort((a, b) => a - b);
    const grouped = ractors.length > 1;
    for (const r of ractors) {
      if (grouped) {
        rows.push({ kind: "group", ractor: r });
      }
      for (const t of threads.filter((x) => x.ractor === r).sort((a, b) => a.seq - b.seq)) {
        laneOfSeq.set(t.seq, lanes.length);
        lanes.push({ seq: t.seq, row: rows.length, idx: [], levels: null });
        rows.push({ kind: "thread", seq: t.seq, ractor: r });
      }
    }
    for (let i = 0; i < iv.thread.length; i++) {
      const l = laneOfSeq.get(iv.thread[i]);
      if (l !== undefined) lanes[l].idx.push(i);
    }
    for (const lane of lanes) lane.idx.sort((a, b) => ivStart[a] - ivStart[b]);
    const DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const value = new Uint8Array(128);
    for (let k = 0; k < 64; k++) value[DIGITS.charCodeAt(k)] = k;
    for (const [seq, , levels] of buckets.rows) {
      const l = laneOfSeq.get(seq);
      if (l === undefined) continue;
      lanes[l].levels = levels.map((text) => {
        if (!text) return null;
        const a = new Uint8Array(text.length);
        for (let k = 0; k < text.length; k++) a[k] = value[text.charCodeAt(k)];
        return a;
      });
    }
  }

  function drawLaneLabels() {
    const box = $("lane-labels");
    box.append(el("div", { class: "axis-spacer", style: "height:" + AXIS_H + "px" }));
    for (const row of rows) {
      if (row.kind === "group") {
        box.append(el("div", { class: "group-label", style: "height:" + ROW_H + "px;line-height:" + ROW_H + "px",
          role: "listitem" }, ractorName(row.ractor)));
        continue;
      }
      const t = threadBySeq.get(row.seq);
      const label = el("button", { type: "button", class: "lane-label", "data-seq": String(row.seq), "aria-pressed": "false",
        role: "listitem", style: "height:" + ROW_H + "px;line-height:" + ROW_H + "px",
        title: threadName(row.seq) + ": GVL wait " + fmtDur(t.gvl_wait_ns) + " (" + pct(t.gvl_wait_ns, t.lifetime_ns) + ")",
        onclick: () => select("thread", row.seq) }, threadName(row.seq));
      box.append(label);
    }
    if (!rows.length) box.append(el("div", { class: "empty", style: "padding:4px 8px" }, "no threads"));
  }

  const canvas = $("timeline-canvas");
  const ctx = canvas.getContext("2d");
  let cssWidth = 0;
  const timeToX = (ns) => ((ns - view.from) / (view.to - view.from)) * cssWidth;
  const xToTime = (x) => view.from + (x / cssWidth) * (view.to - view.from);

  /* First index in lane.idx whose interval ends after t (intervals of one thread do not overlap). */
  function firstEndingAfter(lane, t) {
    let lo = 0, hi = lane.idx.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1, i = lane.idx[mid];
      if (ivStart[i] + iv.duration[i] <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /* The lanes are painted into an offscreen canvas when the view, the
   * selection, the colours or the size change; hovering only copies it and
   * outlines one interval, so it stays fast with many lanes. */
  const base = document.createElement("canvas");
  const bctx = base.getContext("2d");
  let baseDirty = true;
  const invalidate = () => {
    baseDirty = true;
  };

  function drawTimeline() {
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(200, canvas.parentElement.clientWidth);
    const h = AXIS_H + Math.max(rows.length, 1) * ROW_H;
    if (width !== cssWidth || canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(h * dpr)) {
      cssWidth = width;
      canvas.width = base.width = Math.round(cssWidth * dpr);
      canvas.height = base.height = Math.round(h * dpr);
      canvas.style.height = h + "px";
      baseDirty = true;
    }
    if (baseDirty) renderBase(dpr, h);
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(base, 0, 0);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    if (hover && hover.kind === "interval") {
      const i = hover.index, lane = lanes[laneOfSeq.get(iv.thread[i])];
      const x0 = timeToX(ivStart[i]), x1 = timeToX(ivStart[i] + iv.duration[i]);
      ctx.strokeStyle = cssVar("--fg");
      ctx.lineWidth = 1.5;
      ctx.strokeRect(x0, AXIS_H + lane.row * ROW_H + 2, Math.max(x1 - x0, 2), ROW_H - 4);
    }
  }

  function renderBase(dpr, h) {
    baseDirty = false;
    const g = bctx;
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, base.width, base.height);
    const colors = STATES.map((_, s) => stateColor(s));
    const fg = cssVar("--fg"), line = cssVar("--line"), muted = cssVar("--muted"), sel = cssVar("--select");
    if (lanes.some((l) => l.levels)) paintBuckets(g, dpr, colors);
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    drawAxis(g, fg, line);
    if (!rows.length) {
      g.fillStyle = muted;
      g.fillText("This report has no threads.", 8, AXIS_H + 15);
    }
    const span = view.to - view.from;
    for (const lane of lanes) {
      const y = AXIS_H + lane.row * ROW_H;
      const dim = selection.kind && !threadSelected(lane.seq);
      g.globalAlpha = dim ? 0.3 : 1;
      if (selection.kind === "thread" && selection.id === lane.seq) {
        g.globalAlpha = 0.35;
        g.fillStyle = sel;
        g.fillRect(0, y, cssWidth, ROW_H);
        g.globalAlpha = 1;
      }
      const first = firstEndingAfter(lane, view.from);
      for (let k = first; k < lane.idx.length; k++) {
        const i = lane.idx[k];
        if (ivStart[i] >= view.to) break;
        if (!labelSelected(iv.label_set[i])) continue;
        const x0 = timeToX(ivStart[i]), x1 = timeToX(ivStart[i] + iv.duration[i]);
        g.fillStyle = colors[iv.state[i]];
        g.fillRect(x0, y + 3, Math.max(x1 - x0, 0.75), ROW_H - 6);
      }
      g.globalAlpha = 1;
      g.fillStyle = line;
      g.fillRect(0, y + ROW_H - 0.5, cssWidth, 0.5);
    }
    for (const row of rows) {
      if (row.kind !== "group") continue;
      g.fillStyle = cssVar("--panel");
      g.fillRect(0, AXIS_H + row.row * ROW_H, cssWidth, ROW_H);
    }
    drawPath(g, fg);
    const range = $("timeline-range");
    range.textContent = "showing " + fmtDur(view.from) + " – " + fmtDur(view.to) + " (" + fmtDur(span) + ")";
    range.dataset.fromNs = String(Math.round(view.from));
    range.dataset.toNs = String(Math.round(view.to));
  }

  // ---- critical path: the selected thread's or label set's, on the lanes that explain it ---------

  const paths = data.paths;
  const pathDrawn = { segments: 0, arrows: 0 };
  function selectedPath() {
    if (!paths.available) return null;
    if (selection.kind === "thread") return paths.threads[String(selection.id)] || null;
    if (selection.kind === "label") return paths.labels[String(selection.id)] || null;
    return null;
  }
  /* The kept segments of a path with absolute starts. */
  function pathSegments(p) {
    const out = [];
    let s = 0;
    for (let i = 0; i < p.start.length; i++) {
      s += p.start[i];
      out.push({ start: s, end: s + p.dur[i], lane: p.lane[i], root: p.root[i], text: p.text[i],
        thread: p.thread ? p.thread[i] : null });
    }
    return out;
  }
  /* Each segment outlined on its lane; where the next one of the same
   * thread starts on another lane, an arrow between the lanes: a hand-off. */
  function drawPath(g, fg) {
    pathDrawn.segments = pathDrawn.arrows = 0;
    const p = selectedPath();
    if (!p) return;
    const sel = cssVar("--select");
    const laneY = (seq) => (laneOfSeq.has(seq) ? AXIS_H + lanes[laneOfSeq.get(seq)].row * ROW_H : null);
    const segs = pathSegments(p);
    g.lineWidth = 2;
    g.strokeStyle = sel;
    g.fillStyle = sel;
    let prevBySubject = new Map();
    for (const s of segs) {
      const y = laneY(s.lane);
      const key = s.thread === null ? 0 : s.thread;
      const prev = prevBySubject.get(key);
      prevBySubject.set(key, s);
      if (y === null || s.end <= view.from || s.start >= view.to) continue;
      const x0 = Math.max(timeToX(s.start), 0), x1 = Math.min(timeToX(s.end), cssWidth);
      g.globalAlpha = 0.25;
      g.fillRect(x0, y + 2, Math.max(x1 - x0, 1), ROW_H - 4);
      g.globalAlpha = 1;
      g.strokeRect(x0, y + 2, Math.max(x1 - x0, 1), ROW_H - 4);
      pathDrawn.segments++;
      const py = prev ? laneY(prev.lane) : null;
      if (!prev || py === null || prev.end !== s.start || prev.lane === s.lane) continue;
      // The arrow points from the lane the path leaves to the one it reaches.
      const x = timeToX(s.start), y0 = py + ROW_H / 2, y1 = y + ROW_H / 2, dir = y1 > y0 ? 1 : -1;
      g.beginPath();
      g.moveTo(x, y0);
      g.lineTo(x, y1 - dir * 4);
      g.stroke();
      g.beginPath();
      g.moveTo(x - 4, y1 - dir * 7);
      g.lineTo(x + 4, y1 - dir * 7);
      g.lineTo(x, y1);
      g.closePath();
      g.fill();
      pathDrawn.arrows++;
    }
    g.lineWidth = 1;
    g.strokeStyle = fg;
  }

  const rootCauses = summary.root_causes || { available: false };
  /* A root of the path tables as [kind, seq, what] (null: the smaller roots together); its name for people. */
  const OTHER_ROOTS = ["other", 0, "smaller roots together"];
  function rootName(root) {
    if (root === OTHER_ROOTS) return "(others)";
    return root[1] ? threadName(root[1]) : "(no GVL holder)";
  }
  /* The root's largest stack from the summary's root causes (its stacks over the whole report). */
  function rootStack(root) {
    const row = (rootCauses.roots || []).find((r) => r.kind === root[0] && r.thread === root[1] && r.what === root[2]);
    return row && row.stacks && row.stacks.length ? row.stacks[0].text : "";
  }
  function drawPathPanel() {
    const box = $("path-panel");
    box.replaceChildren();
    const p = selectedPath();
    if (!paths.available) {
      box.append(el("p", { class: "note" }, "No critical paths: " + paths.reason + "."));
      return;
    }
    if (!p) {
      box.append(el("p", { class: "note" }, selection.kind === "thread" || selection.kind === "label"
        ? "No critical path for this selection (nothing of it in the timeline, or a label set beyond the largest 50)."
        : "Select a thread or a label set to see its critical path: what its time went to, each wait followed to its root."));
      return;
    }
    const subject = selection.kind === "thread" ? threadName(selection.id) : "label set " + (labelText.get(selection.id) || selection.id);
    box.append(el("h3", {}, "Critical path of " + subject),
      el("p", { class: "note" }, fmtDur(p.from) + " – " + fmtDur(p.to) + ": " + fmtDur(p.covered) +
        (selection.kind === "label" ? " of thread time" : "") + "; own time " + fmtDur(p.own) + " (" + pct(p.own, p.covered) +
        "), behind other threads " + fmtDur(p.covered - p.own) + " (" + pct(p.covered - p.own, p.covered) + "); " +
        p.handoffs + " hand-offs, drawn as arrows" + (p.kept < p.segments ? "; the " + p.kept + " longest of " + p.segments +
        " segments are outlined (the shares count them all)" : "") + "."));
    const rowsData = p.shares.map(([root, own, ns]) => ({ root: root < 0 ? OTHER_ROOTS : paths.roots[root], own, ns }));
    box.append(table("Shares by root cause", [
      { title: "root", value: (r) => rootName(r.root), text: true },
      { title: "what", value: (r) => r.root[2] + (r.own ? " (own time)" : ""), text: true },
      { title: "time", value: (r) => r.ns, show: (r) => fmtDur(r.ns) },
      { title: "share", value: (r) => r.ns, show: (r) => pct(r.ns, p.covered) },
      { title: "stack (leaf first)", value: (r) => rootStack(r.root), text: true }],
    rowsData, (r) => r.root[1] && select("thread", r.root[1])));
  }

  /* "#rrggbb" (or any CSS colour) → [r, g, b], through the canvas's own parser. */
  function rgb(color) {
    const c = document.createElement("canvas").getContext("2d");
    c.fillStyle = color;
    const hex = c.fillStyle;
    if (hex[0] === "#") return [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));
    const m = hex.match(/\d+/g) || [0, 0, 0];
    return m.slice(0, 3).map(Number);
  }

  /* Aggregated intervals, straight into pixels: for each device-pixel column
   * of a lane, the buckets under it are averaged per state and stacked from
   * the bottom, each state as high as its share of the time. */
  function paintBuckets(g, dpr, colors) {
    const W = base.width, n = buckets.count;
    const img = g.createImageData(W, base.height);
    const px = img.data;
    const rgbs = colors.map(rgb);
    const span = view.to - view.from;
    const inner = Math.round((ROW_H - 6) * dpr);
    for (const lane of lanes) {
      if (!lane.levels) continue;
      // Buckets hold all label sets together: a label-set selection dims them too.
      const alpha = (selection.kind && !threadSelected(lane.seq)) || selection.kind === "label" ? 77 : 255;
      const bottom = Math.round((AXIS_H + lane.row * ROW_H + ROW_H - 3) * dpr);
      for (let x = 0; x < W; x++) {
        const t0 = view.from + (x / W) * span, t1 = view.from + ((x + 1) / W) * span;
        if (t0 >= axisNs) break;
        const b0 = Math.min(n - 1, Math.floor((t0 / axisNs) * n));
        const b1 = Math.max(b0, Math.min(n - 1, Math.ceil((t1 / axisNs) * n) - 1));
        let y = bottom;
        for (let s = 0; s < STATES.length; s++) {
          const lv = lane.levels[s];
          if (!lv) continue;
          let sum = 0;
          for (let b = b0; b <= b1; b++) sum += lv[b];
          const hgt = Math.round((sum / (b1 - b0 + 1) / 63) * inner);
          const [r, gg, bb] = rgbs[s];
          for (let k = 0; k < hgt && y > bottom - inner; k++, y--) {
            const o = ((y - 1) * W + x) * 4;
            px[o] = r;
            px[o + 1] = gg;
            px[o + 2] = bb;
            px[o + 3] = alpha;
          }
        }
      }
    }
    g.putImageData(img, 0, 0);
  }

  function niceStep(spanNs, px) {
    const raw = (spanNs / Math.max(px, 1)) * 110;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  function drawAxis(g, fg, line) {
    const ctx = g;
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    const step = niceStep(view.to - view.from, cssWidth);
    ctx.fillStyle = line;
    ctx.fillRect(0, AXIS_H - 1, cssWidth, 1);
    for (let t = Math.ceil(view.from / step) * step; t <= view.to; t += step) {
      const x = timeToX(t);
      ctx.fillStyle = line;
      ctx.fillRect(x, AXIS_H - 6, 1, 6 + Math.max(rows.length, 1) * ROW_H);
      ctx.fillStyle = fg;
      ctx.fillText(fmtDur(Math.round(t)), x + 3, 9);
    }
  }

  function setView(from, to) {
    const minSpan = 1000; // 1 µs: below the clock's useful resolution
    let span = Math.max(to - from, minSpan);
    span = Math.min(span, axisNs);
    from = Math.max(0, Math.min(from, axisNs - span));
    view.from = from;
    view.to = from + span;
    invalidate();
    drawTimeline();
  }
  function zoom(factor, atX) {
    const x = atX === undefined ? cssWidth / 2 : atX;
    const t = xToTime(x);
    const span = (view.to - view.from) * factor;
    const from = t - (x / cssWidth) * span;
    setView(from, from + span);
  }
  const pan = (fraction) => setView(view.from + (view.to - view.from) * fraction, view.to + (view.to - view.from) * fraction);

  function hitTest(x, y) {
    const rowIndex = Math.floor((y - AXIS_H) / ROW_H);
    const row = rows[rowIndex];
    if (!row || row.kind !== "thread") return null;
    const lane = lanes[laneOfSeq.get(row.seq)];
    const t = xToTime(x), slack = (view.to - view.from) / cssWidth * 2;
    let k = firstEndingAfter(lane, t - slack);
    let best = null, bestDist = Infinity;
    for (; k < lane.idx.length; k++) {
      const i = lane.idx[k];
      if (ivStart[i] > t + slack) break;
      const end = ivStart[i] + iv.duration[i];
      const dist = t < ivStart[i] ? ivStart[i] - t : t > end ? t - end : 0;
      if (dist < bestDist && labelSelected(iv.label_set[i])) {
        best = i;
        bestDist = dist;
      }
    }
    if (best !== null) return { kind: "interval", index: best };
    if (lane.levels) {
      const b = Math.floor((t / axisNs) * buckets.count);
      const ns = lane.levels.map((lv) => (lv && b >= 0 && b < lv.length ? (lv[b] / 63) * (axisNs / buckets.count) : 0));
      if (ns.some((v) => v > 0)) return { kind: "bucket", seq: lane.seq, bucket: b, ns };
    }
    return null;
  }

  const tooltip = $("tooltip");
  function showTooltip(hit, clientX, clientY) {
    tooltip.replaceChildren();
    delete tooltip.dataset.state;
    delete tooltip.dataset.durationNs;
    delete tooltip.dataset.cause;
    if (hit.kind === "interval") {
      const i = hit.index, s = iv.state[i];
      tooltip.dataset.state = STATES[s];
      tooltip.dataset.durationNs = String(iv.duration[i]);
      tooltip.append(
        el("div", {}, el("span", { class: "swatch", style: "background:" + stateColor(s) }), el("strong", {}, STATE_NAMES[s]),
          " for " + fmtDur(iv.duration[i])),
        el("div", {}, threadName(iv.thread[i]) + ", from " + fmtDur(ivStart[i]) + " to " + fmtDur(ivStart[i] + iv.duration[i])),
        el("div", {}, "labels: " + (labelText.get(iv.label_set[i]) || "(no labels)")));
      if (iv.cause && STATES[s] === "blocked") {
        const cause = iv.cause_names[iv.cause[i]] || "unknown", by = iv.releaser[i];
        tooltip.dataset.cause = cause;
        tooltip.append(el("div", {}, "blocked on " + cause + (by ? ", woken by " + threadName(by) : "")));
      }
      const lines = stackLines(iv.stack[i], 8);
      if (lines.length) tooltip.append(el("div", { class: "stack" }, lines.join("\n")));
    } else if (hit.kind === "bucket") {
      const n = buckets.count, t0 = (axisNs * hit.bucket) / n;
      tooltip.append(el("div", {}, el("strong", {}, "aggregated short intervals"), " of " + threadName(hit.seq)),
        el("div", {}, fmtDur(t0) + " – " + fmtDur(t0 + axisNs / n)));
      hit.ns.forEach((v, s) => {
        if (v > 0) tooltip.append(el("div", {}, el("span", { class: "swatch", style: "background:" + stateColor(s) }), STATE_NAMES[s] + ": about " + fmtDur(Math.round(v))));
      });
    }
    tooltip.hidden = false;
    const w = tooltip.offsetWidth, h = tooltip.offsetHeight;
    tooltip.style.left = Math.min(clientX + 14, window.innerWidth - w - 4) + "px";
    tooltip.style.top = (clientY + 16 + h > window.innerHeight ? clientY - h - 10 : clientY + 16) + "px";
  }
  function hideTooltip() {
    tooltip.hidden = true;
    if (hover) {
      hover = null;
      drawTimeline();
    }
  }

  function wireTimeline() {
    let drag = null;
    canvas.addEventListener("mousemove", (e) => {
      const r = canvas.getBoundingClientRect();
      const x = e.clientX - r.left, y = e.clientY - r.top;
      if (drag) {
        const dt = ((drag.x - x) / cssWidth) * (drag.to - drag.from);
        setView(drag.from + dt, drag.to + dt);
        return;
      }
      const hit = hitTest(x, y);
      const changed = JSON.stringify(hit) !== JSON.stringify(hover);
      hover = hit;
      if (hit) showTooltip(hit, e.clientX, e.clientY);
      else tooltip.hidden = true;
      if (changed) drawTimeline();
    });
    canvas.addEventListener("mouseleave", () => {
      drag = null;
      hideTooltip();
    });
    canvas.addEventListener("mousedown", (e) => {
      const r = canvas.getBoundingClientRect();
      drag = { x: e.clientX - r.left, from: view.from, to: view.to, moved: false };
    });
    window.addEventListener("mouseup", () => {
      drag = null;
    });
    canvas.addEventListener("click", (e) => {
      const r = canvas.getBoundingClientRect();
      const row = rows[Math.floor((e.clientY - r.top - AXIS_H) / ROW_H)];
      if (row && row.kind === "thread" && (!drag || !drag.moved)) select("thread", row.seq);
    });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      const r = canvas.getBoundingClientRect();
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) pan(((e.deltaX || e.deltaY) > 0 ? 1 : -1) * 0.1);
      else zoom(e.deltaY > 0 ? 1.25 : 0.8, e.clientX - r.left);
    }, { passive: false });
    canvas.addEventListener("keydown", (e) => {
      const keys = {
        "+": () => zoom(0.8), "=": () => zoom(0.8), "-": () => zoom(1.25), "_": () => zoom(1.25),
        "0": () => setView(0, axisNs), Home: () => setView(0, axisNs),
        ArrowLeft: () => pan(-0.1), ArrowRight: () => pan(0.1),
        ArrowUp: () => stepThread(-1), ArrowDown: () => stepThread(1), Escape: () => select(null),
      };
      if (keys[e.key]) {
        e.preventDefault();
        keys[e.key]();
      }
    });
    $("zoom-in").addEventListener("click", () => zoom(0.5));
    $("zoom-out").addEventListener("click", () => zoom(2));
    $("zoom-reset").addEventListener("click", () => setView(0, axisNs));
    window.addEventListener("resize", drawTimeline);
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && selection.kind) select(null);
    });
  }
  function stepThread(dir) {
    if (!lanes.length) return;
    const cur = selection.kind === "thread" ? laneOfSeq.get(selection.id) : dir > 0 ? -1 : lanes.length;
    const next = Math.max(0, Math.min(lanes.length - 1, cur + dir));
    if (selection.kind !== "thread" || selection.id !== lanes[next].seq) select("thread", lanes[next].seq);
  }

  function drawLegend() {
    const box = $("legend");
    STATES.forEach((_, s) => box.append(el("span", {}, el("span", { class: "swatch", style: "background:var(--" + STATES[s] + ")" }), STATE_NAMES[s])));
    box.append(el("span", {}, "blank: thread not alive, or no interval recorded"));
    if (paths.available) {
      box.append(el("span", {}, el("span", { class: "swatch", style: "background:var(--select)" }),
        "outlined: the selection's critical path, on the lanes that explain it (arrows: hand-offs)"));
    }
    const note = $("timeline-note");
    const parts = [];
    if (iv.aggregated > 0) {
      parts.push(iv.kept + " of " + iv.total + " intervals are drawn one by one (those of at least " + fmtDur(iv.min_kept_ns) +
        "); the other " + iv.aggregated + " are aggregated into " + buckets.count + " buckets of " + fmtDur(axisNs / buckets.count) +
        " per thread, drawn as stacked columns whose height is each state's share of the bucket" +
        " (they mix all label sets, so selecting a label set only dims them).");
    } else {
      parts.push("All " + iv.total + " intervals are drawn one by one.");
    }
    if (summary.dropped.intervals > 0) parts.push("The profiler dropped " + summary.dropped.intervals + " intervals: gaps may be missing data.");
    note.textContent = parts.join(" ");
  }

  function refreshLaneLabels() {
    for (const b of document.querySelectorAll("#lane-labels .lane-label")) {
      const seq = Number(b.dataset.seq);
      b.setAttribute("aria-pressed", String(selection.kind === "thread" && selection.id === seq));
    }
  }

  // ---- wait graph -------------------------------------------------------------------------

  const MAX_NODES = 10, MAX_EDGES = 12, EDGE_SHARE = 0.8;
  function holderKey(kind, seq) {
    return kind === "thread" ? "t" + seq : kind;
  }
  function holderName(key) {
    if (key[0] === "t") return threadName(Number(key.slice(1)));
    return { gc: "GC", handoff: "GVL hand-off", unknown: "unknown holder", other: "other holders" }[key] || key;
  }

  function drawWaitGraph() {
    const box = $("waitgraph");
    box.replaceChildren();
    const byPair = new Map(), waitOf = new Map(), causedOf = new Map();
    let total = 0;
    for (const [waiter, kind, holder, ns] of data.edges) {
      const w = "t" + waiter, h = holderKey(kind, holder);
      const k = w + ">" + h;
      byPair.set(k, (byPair.get(k) || 0) + ns);
      waitOf.set(w, (waitOf.get(w) || 0) + ns);
      causedOf.set(h, (causedOf.get(h) || 0) + ns);
      total += ns;
    }
    if (total === 0) {
      box.append(el("p", { class: "empty" }, "No thread waited for the GVL in this report."));
      return;
    }
    // Keep the biggest nodes per side; the rest become one "other" node.
    const side = (m, otherKey) => {
      const list = [...m.entries()].sort((a, b) => b[1] - a[1]);
      if (list.length <= MAX_NODES) return list;
      const kept = list.slice(0, MAX_NODES - 1);
      kept.push([otherKey, list.slice(MAX_NODES - 1).reduce((a, [, v]) => a + v, 0)]);
      return kept;
    };
    const left = side(waitOf, "other"), right = side(causedOf, "other");
    const leftKeys = new Set(left.map(([k]) => k)), rightKeys = new Set(right.map(([k]) => k));
    const mapL = (k) => (leftKeys.has(k) ? k : "other"), mapR = (k) => (rightKeys.has(k) ? k : "other");
    const pairs = new Map();
    for (const [k, ns] of byPair) {
      const [w, h] = k.split(">");
      const key = mapL(w) + ">" + mapR(h);
      pairs.set(key, (pairs.get(key) || 0) + ns);
    }
    // The edges that carry most of the wait: largest first until EDGE_SHARE of it, at most MAX_EDGES.
    const sorted = [...pairs.entries()].sort((a, b) => b[1] - a[1]);
    const shown = [];
    let acc = 0;
    for (const e of sorted) {
      if (shown.length >= MAX_EDGES || (acc >= EDGE_SHARE * total && shown.length > 0)) break;
      shown.push(e);
      acc += e[1];
    }
    const W = 1000, nodeW = 14, gap = 14, top = 28;
    const H = Math.max(left.length, right.length) * 46 + top;
    const scale = (H - top - gap * Math.max(left.length, right.length)) / total;
    const root = svg("svg", { viewBox: "0 0 " + W + " " + (H + 8), width: W, height: H + 8, role: "group", "aria-label": "Wait graph" });
    const title = svg("text", { x: 330, y: 14, "text-anchor": "end" });
    title.textContent = "waited (total " + fmtDur(total) + ")";
    root.append(title);
    const title2 = svg("text", { x: W - 330, y: 14 });
    title2.textContent = "held the GVL meanwhile";
    root.append(title2);
    const place = (list, x) => {
      const pos = new Map();
      let y = top;
      for (const [k, ns] of list) {
        const h = Math.max(ns * scale, 2);
        pos.set(k, { x, y, h, ns, used: 0, usedNs: 0 });
        y += h + gap;
      }
      return pos;
    };
    const L = place(left, 330), R = place(right, W - 330 - nodeW);
    const bands = svg("g");
    root.append(bands);
    for (const [k, ns] of shown) {
      const [w, h] = k.split(">");
      const a = L.get(w), b = R.get(h), th = Math.max(ns * scale, 1);
      const y0 = a.y + a.used, y1 = b.y + b.used;
      a.used += th;
      b.used += th;
      a.usedNs += ns;
      b.usedNs += ns;
      const x0 = a.x + nodeW, x1 = b.x, mx = (x0 + x1) / 2;
      const path = svg("path", { class: "band", d: `M${x0},${y0} C${mx},${y0} ${mx},${y1} ${x1},${y1} L${x1},${y1 + th} C${mx},${y1 + th} ${mx},${y0 + th} ${x0},${y0 + th} Z`,
        "data-waiter": w, "data-holder": h });
      const tip = svg("title");
      tip.textContent = holderName(w) + " waited " + fmtDur(ns) + " (" + pct(ns, total) + ") for " + holderName(h);
      path.append(tip);
      bands.append(path);
      if (th >= 12) {
        const lbl = svg("text", { x: mx, y: (y0 + y1) / 2 + th / 2 + 4, "text-anchor": "middle" });
        lbl.textContent = pct(ns, total);
        bands.append(lbl);
      }
    }
    const drawNode = (k, p, anchorLeft, what) => {
      const g = svg("g", { class: "node", tabindex: "0", role: "button", "data-key": k });
      g.append(svg("rect", { class: "total", x: p.x, y: p.y, width: nodeW, height: p.h }));
      if (p.used > 0) g.append(svg("rect", { x: p.x, y: p.y, width: nodeW, height: Math.min(p.used, p.h), class: "drawn" }));
      const tx = anchorLeft ? p.x - 6 : p.x + nodeW + 6, anchor = anchorLeft ? "end" : "start";
      const ty = p.y + Math.min(p.h / 2, 12) + 4;
      const t = svg("text", { x: tx, y: ty, "text-anchor": anchor });
      t.textContent = holderName(k) + "  " + fmtDur(p.ns) + " " + what + " (" + pct(p.ns, total) + ")";
      g.append(t);
      const folded = p.ns - p.usedNs;
      if (folded > p.ns * 0.01 && p.h >= 24) {
        const t2 = svg("text", { x: tx, y: ty + 14, "text-anchor": anchor, class: "muted" });
        t2.textContent = fmtDur(folded) + " in smaller edges";
        g.append(t2);
      }
      const tip = svg("title");
      tip.textContent = holderName(k) + ": " + what + " " + fmtDur(p.ns) + " = " + pct(p.ns, total) + " of all GVL wait" +
        (folded > 0 ? "; " + fmtDur(folded) + " of it in edges too small to draw" : "");
      g.append(tip);
      if (k[0] === "t") {
        const seq = Number(k.slice(1));
        g.dataset.seq = String(seq);
        g.addEventListener("click", () => select("thread", seq));
        g.addEventListener("keydown", (e) => {
          if (e.key === "Enter" || e.key === " ") {
            e.preventDefault();
            select("thread", seq);
          }
        });
      }
      root.append(g);
    };
    for (const [k, p] of L) drawNode(k, p, true, "waited");
    for (const [k, p] of R) drawNode(k, p, false, "caused");
    box.append(root);
    const foldedEdges = sorted.length - shown.length;
    box.append(el("p", { class: "note" }, shown.length + " of " + sorted.length + " edges drawn, carrying " + pct(acc, total) +
      " of the wait" + (foldedEdges > 0 ? "; " + foldedEdges + " smaller edges are folded into the grey part of their nodes." : ".")));
    refreshWaitGraph();
  }
  function refreshWaitGraph() {
    for (const g of document.querySelectorAll("#waitgraph .node")) {
      const seq = g.dataset.seq === undefined ? null : Number(g.dataset.seq);
      g.classList.toggle("selected", selection.kind === "thread" && seq === selection.id);
    }
    for (const p of document.querySelectorAll("#waitgraph .band")) {
      const on = selection.kind === "thread" && (p.dataset.waiter === "t" + selection.id || p.dataset.holder === "t" + selection.id);
      p.classList.toggle("selected", on);
    }
  }

  // ---- flame graph ------------------------------------------------------------------------

  const FLAME_MODES = [
    ["all", "All samples"], ["running", "Running"], ["gvl_wait", "GVL wait"], ["blocked", "Blocked"], ["gc", "GC"],
    ["blame", "Blame (holders, weighted by the wait they caused)"],
  ];
  let flameMode = "all";
  let flameRoot = []; // path of names zoomed into

  function sampleState(stack) {
    const ids = stack >= 0 ? stacks[stack] : null;
    if (!ids || !ids.length) return "running";
    return SYNTHETIC[frames[ids[0]][1]] || "running";
  }

  /* Folds the selected rows into a tree: node = {name, path, value, children: Map}. */
  function foldFlame() {
    const root = { name: "all", path: "", value: 0, children: new Map() };
    const rowsIn = flameMode === "blame" ? data.blame.map(([st, holder, ls, ns]) => [st, ns, holder, ls]) : data.samples;
    for (const [stack, weight, seq, ls] of rowsIn) {
      if (!threadSelected(seq) || !labelSelected(ls)) continue;
      if (flameMode !== "all" && flameMode !== "blame" && sampleState(stack) !== flameMode) continue;
      root.value += weight;
      let node = root;
      const ids = stack >= 0 && stacks[stack] ? stacks[stack] : [];
      if (!ids.length) {
        node = child(node, "(no Ruby frame)", "");
        node.value += weight;
      }
      for (let k = ids.length - 1; k >= 0; k--) {
        const [path, label] = frames[ids[k]];
        node = child(node, label, path);
        node.value += weight;
      }
    }
    return root;
  }
  function child(node, name, path) {
    const key = name + "\u0000" + path;
    let c = node.children.get(key);
    if (!c) {
      c = { name, path, value: 0, children: new Map() };
      node.children.set(key, c);
    }
    return c;
  }
  function hashHue(text) {
    let h = 0;
    for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
    return Math.abs(h) % 50;
  }
  function frameColor(node) {
    const state = SYNTHETIC[node.name];
    if (state === "gvl_wait") return "var(--gvl_wait)";
    if (state === "blocked") return "var(--blocked)";
    if (state === "gc") return "var(--gc_mark)";
    return "hsl(" + (20 + hashHue(node.name)) + ", 80%, " + (62 + (hashHue(node.path) % 12)) + "%)";
  }

  function drawFlameModes() {
    const box = $("flame-modes");
    for (const [mode, label] of FLAME_MODES) {
      box.append(el("button", { type: "button", role: "radio", "data-mode": mode, "aria-checked": String(mode === flameMode),
        onclick: () => {
          flameMode = mode;
          flameRoot = [];
          for (const b of box.querySelectorAll("button")) b.setAttribute("aria-checked", String(b.dataset.mode === mode));
          drawFlame();
        } }, label));
    }
  }

  function drawFlame() {
    const box = $("flame");
    box.replaceChildren();
    const tree = foldFlame();
    const total = tree.value;
    const totalEl = $("flame-total");
    totalEl.dataset.ns = String(total);
    const what = flameMode === "blame" ? "blame" : "sample weight";
    totalEl.textContent = "Total " + what + ": " + fmtDur(total) + (selection.kind ? " (selection only)" : "") +
      ". Click a frame to zoom in" + (flameRoot.length ? "; click the top bar to zoom out." : ".");
    if (total === 0) {
      box.style.height = "auto";
      box.append(el("p", { class: "empty", style: "padding:4px 8px" }, "No samples for this choice."));
      return;
    }
    let base = tree;
    for (const key of flameRoot) {
      const next = base.children.get(key);
      if (!next) break;
      base = next;
    }
    const width = Math.max(box.clientWidth, 300), RH = 18;
    let maxDepth = 0;
    const frag = document.createDocumentFragment();
    const place = (node, depth, x, w, keyPath) => {
      if (w < 2) return;
      maxDepth = Math.max(maxDepth, depth);
      const title = node.name + (node.path ? "  " + node.path : "") + "\n" + fmtDur(node.value) + " = " + pct(node.value, total) + " of the total";
      const div = el("div", { class: "frame", role: "treeitem", tabindex: "0", title,
        style: `left:${x}px;top:${depth * RH}px;width:${w}px;background:${depth === 0 ? "var(--folded)" : frameColor(node)}` },
        depth === 0 && flameRoot.length ? "↑ " + node.name : node.name);
      const go = () => {
        flameRoot = depth === 0 ? flameRoot.slice(0, -1) : keyPath;
        drawFlame();
      };
      div.addEventListener("click", go);
      div.addEventListener("keydown", (e) => {
        if (e.key === "Enter") go();
      });
      frag.append(div);
      let cx = x;
      const kids = [...node.children.entries()].sort((a, b) => b[1].value - a[1].value);
      for (const [key, c] of kids) {
        const cw = (c.value / node.value) * w;
        place(c, depth + 1, cx, cw, keyPath.concat([key]));
        cx += cw;
      }
    };
    place(base, 0, 0, width, flameRoot);
    box.style.height = (maxDepth + 1) * RH + "px";
    box.append(frag);
  }

  // ---- tables -----------------------------------------------------------------------------

  function table(caption, columns, rowsData, onRow, isSelected) {
    if (!rowsData.length) return el("p", { class: "empty" }, caption + ": none.");
    const t = el("table", {}, el("caption", {}, caption));
    const tbody = el("tbody");
    let sortCol = -1, sortDir = 1;
    const headRow = el("tr");
    columns.forEach((c, ci) => {
      const th = el("th", { class: c.text ? "text" : "", scope: "col" });
      th.append(el("button", { type: "button", onclick: () => {
        sortDir = sortCol === ci ? -sortDir : c.text ? 1 : -1;
        sortCol = ci;
        for (const h of headRow.children) h.removeAttribute("aria-sort");
        th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
        fill();
      } }, c.title));
      headRow.append(th);
    });
    t.append(el("thead", {}, headRow), tbody);
    const fill = () => {
      const list = rowsData.slice();
      if (sortCol >= 0) {
        const key = columns[sortCol].sort || columns[sortCol].value;
        list.sort((a, b) => {
          const x = key(a), y = key(b);
          return (x < y ? -1 : x > y ? 1 : 0) * sortDir;
        });
      }
      tbody.replaceChildren(...list.map((r) => {
        const tr = el("tr", { tabindex: onRow ? "0" : "-1" });
        if (isSelected && isSelected(r)) tr.classList.add("selected");
        for (const c of columns) tr.append(el("td", { class: c.text ? "text" : "" }, String(c.show ? c.show(r) : c.value(r))));
        if (onRow) {
          tr.addEventListener("click", () => onRow(r));
          tr.addEventListener("keydown", (e) => {
            if (e.key === "Enter") onRow(r);
          });
        }
        return tr;
      }));
    };
    t.refresh = fill;
    fill();
    return t;
  }
  const dur = (key, title) => ({ title, value: (r) => r[key], show: (r) => fmtDur(r[key]) });
  const stateCols = [dur("running_ns", "running"), dur("gvl_wait_ns", "GVL wait"),
    { title: "wait %", value: (r) => (r.lifetime_ns ? r.gvl_wait_ns / r.lifetime_ns : 0), show: (r) => pct(r.gvl_wait_ns, r.lifetime_ns) },
    dur("blocked_ns", "blocked"), { title: "GC", value: (r) => r.gc_mark_ns + r.gc_sweep_ns, show: (r) => fmtDur(r.gc_mark_ns + r.gc_sweep_ns) }];
  // Blocked causes (report minor 1): each row's causes, largest first, as shares of its blocked time.
  const causeText = (r) => Object.entries(r.blocked_by_cause || {}).sort((a, b) => b[1] - a[1])
    .map(([cause, ns]) => cause + " " + pct(ns, r.blocked_ns)).join(", ");
  const causeCols = threads.some((t) => t.blocked_by_cause) ? [{ title: "blocked by", value: causeText, sort: (r) => r.blocked_ns, text: true }] : [];
  const tables = [];
  function drawTables() {
    const box = $("tables");
    const add = (t) => {
      box.append(t);
      if (t.refresh) tables.push(t);
    };
    add(table("Threads", [{ title: "thread", value: (r) => r.seq, show: (r) => threadName(r.seq), text: true },
      { title: "Ractor", value: (r) => r.ractor, show: (r) => (ractorInfo.get(r.ractor)?.identified === false ? "?" : String(r.ractor)) }, dur("lifetime_ns", "lifetime"), ...stateCols, ...causeCols,
      { title: "acquisitions", value: (r) => r.acquisitions }, { title: "waits", value: (r) => r.waits }],
    threads, (r) => select("thread", r.seq), (r) => selection.kind === "thread" && selection.id === r.seq));
    add(table("Ractors", [{ title: "Ractor", value: (r) => r.id, show: (r) => ractorName(r.id).slice("Ractor ".length), text: true },
      { title: "threads", value: (r) => r.threads }, dur("lifetime_ns", "thread time"), ...stateCols],
    summary.ractors, (r) => select("ractor", r.id), (r) => selection.kind === "ractor" && selection.id === r.id));
    add(table("Label sets", [{ title: "labels", value: (r) => labelText.get(r.label_set) || "", text: true },
      { title: "threads", value: (r) => r.threads }, ...stateCols, ...causeCols],
    summary.label_sets, (r) => select("label", r.label_set), (r) => selection.kind === "label" && selection.id === r.label_set));
    add(table("Top waiters", [{ title: "thread", value: (r) => r.seq, show: (r) => threadName(r.seq), text: true },
      dur("gvl_wait_ns", "GVL wait"), { title: "share of lifetime", value: (r) => r.gvl_wait_ns / (r.lifetime_ns || 1), show: (r) => pct(r.gvl_wait_ns, r.lifetime_ns) },
      { title: "waits", value: (r) => r.waits }],
    summary.top_waiters, (r) => select("thread", r.seq), (r) => selection.kind === "thread" && selection.id === r.seq));
    const holderTotal = summary.top_holders.reduce((a, h) => a + h.wait_ns, 0);
    add(table("Top holders (who held the GVL while others waited)", [
      { title: "holder", value: (r) => (r.kind === "thread" ? threadName(r.seq) : holderName(r.kind)), text: true },
      dur("wait_ns", "wait caused"), { title: "share", value: (r) => r.wait_ns, show: (r) => pct(r.wait_ns, holderTotal) },
      { title: "waits", value: (r) => r.count }],
    summary.top_holders, (r) => r.kind === "thread" && select("thread", r.seq), (r) => r.kind === "thread" && selection.kind === "thread" && selection.id === r.seq));
    if (rootCauses.available) {
      add(table("Root causes (who, at the end of each wait chain, made threads wait: GVL and locks)", [
        { title: "root", value: (r) => (r.thread ? threadName(r.thread) : "(no GVL holder)"), text: true },
        { title: "what", value: (r) => r.what, text: true },
        dur("ns", "caused wait"), { title: "share", value: (r) => r.ns, show: (r) => pct(r.ns, rootCauses.waited_ns) },
        { title: "via others", value: (r) => r.chain_ns / (r.ns || 1), show: (r) => pct(r.chain_ns, r.ns) },
        { title: "stack (leaf first)", value: (r) => (r.stacks.length ? r.stacks[0].text : ""), text: true }],
      rootCauses.roots, (r) => r.thread && select("thread", r.thread), (r) => selection.kind === "thread" && selection.id === r.thread));
    } else {
      box.append(el("p", { class: "empty" }, "Root causes: " + rootCauses.reason + "."));
    }
    if (summary.top_release_stacks) {
      const total = summary.top_release_stacks.reduce((a, r) => a + r.ns, 0);
      add(table("Top release stacks (what releasers ran when they woke a waiter)", [
        dur("ns", "time"), { title: "share", value: (r) => r.ns, show: (r) => pct(r.ns, total) },
        { title: "stack (leaf first)", value: (r) => r.text, text: true }],
      summary.top_release_stacks));
    }
  }

  // ---- wiring -----------------------------------------------------------------------------

  drawHeader();
  buildRows();
  drawLaneLabels();
  drawLegend();
  wireTimeline();
  drawTimeline();
  drawWaitGraph();
  drawFlameModes();
  drawFlame();
  drawTables();
  drawPathPanel();
  listeners.push(() => {
    refreshLaneLabels();
    invalidate();
    drawTimeline();
    drawPathPanel();
    refreshWaitGraph();
    flameRoot = [];
    drawFlame();
    for (const t of tables) t.refresh();
  });

  performance.mark("rperf-drawn"); // everything drawn once: test/browser/measure_page.js reads it

  /* For the browser tests and for people poking at the page from the console. */
  window.rperfPage = {
    view: () => ({ from: view.from, to: view.to }),
    timeToX: (ns) => timeToX(ns),
    laneTop: (seq) => (laneOfSeq.has(seq) ? AXIS_H + lanes[laneOfSeq.get(seq)].row * ROW_H : null),
    rowHeight: ROW_H,
    selection: () => ({ kind: selection.kind, id: selection.id }),
    /* What the timeline outlines of the selection's critical path, as last drawn. */
    criticalPath: () => {
      const p = selectedPath();
      return p ? { covered: p.covered, own: p.own, handoffs: p.handoffs, kept: p.kept, total: p.segments, segments: pathSegments(p),
        drawnSegments: pathDrawn.segments, arrows: pathDrawn.arrows,
        shares: p.shares.map(([root, own, ns]) => ({ root: root < 0 ? OTHER_ROOTS : paths.roots[root], own, ns })) } : null;
    },
  };
})();
