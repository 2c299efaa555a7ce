// page_test.js — opens HTML report pages in headless Chromium (Debian's
// chromium, driven over the DevTools protocol by puppeteer-core) and checks
// what a person would see, against numbers read from the report JSON itself:
//   - no console errors and no uncaught exceptions;
//   - no network request at all (request interception records every one);
//   - one lane per thread of the report;
//   - hovering the longest interval shows its state and exact duration (and,
//     for a blocked one of a report with causes, its cause and releaser);
//   - selecting a thread filters the flame graph to exactly that thread's
//     sample weight in the report;
//   - the GVL-wait flame graph holds exactly the samples ending in [GVL wait];
//   - selecting a wait-graph node selects that thread in the lanes and tables;
//   - zooming narrows the visible time range;
//   - with blocked causes, the threads table lists each thread's causes;
//   - selecting a thread outlines its critical path, whose segments cover
//     the thread's time in the report; the root-cause table is there when
//     the report has a timeline, the release stacks table when it has
//     release stacks; on the chains fixture, the known path, hand-off
//     arrows and root causes;
//   - drops are named with their share of their kind, called incomplete
//     only when one is material.
//
//   node page_test.js [--screenshots DIR] NAME=PAGE.html=REPORT.json[,REPORT.json...] ...
// A series of reports is merged the way the CLI merges them: each one's times
// shift by its meta.start_monotonic_ns minus the earliest.
// Prints one line per check and ends with a test-unit style count line
// ("N tests, N assertions, N failures, N errors") that bin/test counts.
"use strict";
const fs = require("fs");
const path = require("path");
const os = require("os");
const puppeteer = require("puppeteer-core");

const CHROMIUM = process.env.RPERF_CHROMIUM || "/usr/bin/chromium";
const STATE_NAMES = ["running", "GVL wait", "blocked", "GC mark", "GC sweep"];
const MAX_KEPT = 150000, WIDTH_PX = 2000; // RGA_HTML_MAX_INTERVALS, RGA_HTML_WIDTH_PX

let tests = 0, assertions = 0, failures = 0, errors = 0;

function loadSeries(files) {
  const reports = files.map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
  const t0 = Math.min(...reports.map((r) => r.meta.start_monotonic_ns));
  const threads = new Set(), weight = new Map(), span = new Map(); // span: seq => [first, last] on the axis
  let releaseStacks = false, intervals = 0;
  let gvlWaitWeight = 0; // samples whose leaf is the synthetic [GVL wait] frame
  let longest = null, count = 0, axis = 0;
  const causes = new Map(); // thread seq => { cause: ns } (report minor 1)
  const drops = {}; // stats key without "dropped_" => count, summed over the series
  let samplingCount = 0;
  for (const r of reports) {
    samplingCount += r.stats.sampling_count;
    for (const [k, v] of Object.entries(r.stats))
      if (k.startsWith("dropped_") && v > 0) drops[k.slice(8)] = (drops[k.slice(8)] || 0) + v;
    for (const t of r.threads) {
      if (!t.blocked_by_cause) continue;
      const sum = causes.get(t.seq) || {};
      for (const [cause, ns] of Object.entries(t.blocked_by_cause)) sum[cause] = (sum[cause] || 0) + ns;
      causes.set(t.seq, sum);
    }
    const shift = r.meta.start_monotonic_ns - t0;
    axis = Math.max(axis, shift + r.meta.duration_ns);
    for (const t of r.threads) threads.add(t.seq);
    releaseStacks ||= (r.blocked_edges || []).some((e) => e.releaser_stack !== undefined);
    intervals += r.intervals.length;
    for (const t of r.threads) {
      const s = span.get(t.seq) || [Infinity, -Infinity];
      span.set(t.seq, [Math.min(s[0], t.first_seen_ns + shift), Math.max(s[1], t.last_seen_ns + shift)]);
    }
    for (const [seq, , start, end] of r.intervals) {
      const s = span.get(seq);
      span.set(seq, [Math.min(s[0], start + shift), Math.max(s[1], end + shift)]);
    }
    for (const [stack, w, seq] of r.samples) {
      weight.set(seq, (weight.get(seq) || 0) + w);
      const leaf = r.stacks[stack] && r.stacks[stack].length ? r.frames[r.stacks[stack][0]][1] : null;
      if (leaf === "[GVL wait]") gvlWaitWeight += w;
    }
    // interval_causes (report minor 1): [seq, start, cause id, releaser seq] of blocked intervals.
    const causeOf = new Map((r.interval_causes || []).map(([seq, start, id, by]) => [seq + ":" + start, { cause: r.causes[id], by }]));
    for (const [seq, state, start, end] of r.intervals) {
      count++;
      axis = Math.max(axis, shift + end);
      if (!longest || end - start > longest.end - longest.start)
        longest = { seq, state, start: start + shift, end: end + shift, cause: state === 2 ? causeOf.get(seq + ":" + start) : undefined };
    }
  }
  // The page draws every interval of a report with at most MAX_KEPT of them;
  // beyond that, those shorter than a pixel's worth at the default zoom
  // (axis / WIDTH_PX) are aggregated (analysis/html_data.h).
  if (longest) longest.aggregated = count > MAX_KEPT && longest.end - longest.start < axis / WIDTH_PX;
  return { threads, weight, longest, gvlWaitWeight, causes, span, releaseStacks, intervals, drops, samplingCount, merged: reports.length > 1 };
}

function check(cond, message) {
  assertions++;
  if (!cond) throw new Error(message);
}

async function runCase(browser, name, page, reports, shotDir) {
  const expect = loadSeries(reports);
  const tab = await browser.newPage();
  await tab.setViewport({ width: 1280, height: 900 });
  const consoleErrors = [], requests = [];
  const pageUrl = "file://" + path.resolve(page);
  tab.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  tab.on("pageerror", (e) => consoleErrors.push(String(e)));
  await tab.setRequestInterception(true);
  tab.on("request", (req) => {
    if (req.url() === pageUrl) return req.continue();
    requests.push(req.url());
    return req.abort();
  });
  await tab.goto(pageUrl, { waitUntil: "load" });

  const checks = [
    ["no console errors", async () => check(consoleErrors.length === 0, "console errors: " + consoleErrors.join(" | "))],
    ["one lane per thread", async () => {
      const seqs = await tab.$$eval("#lane-labels .lane-label", (els) => els.map((e) => Number(e.dataset.seq)));
      check(seqs.length === expect.threads.size, `lanes ${seqs.length}, threads ${expect.threads.size}`);
      check(seqs.every((s) => expect.threads.has(s)) && new Set(seqs).size === seqs.length, "lanes " + seqs + " do not match the threads");
    }],
    ["the threads table names each thread's blocked causes", async () => {
      const table = await tab.$$eval("#tables table", (ts) => {
        const t = ts.find((x) => x.caption && x.caption.textContent === "Threads");
        const head = [...t.querySelectorAll("thead th")].map((th) => th.textContent);
        return { head, rows: [...t.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((td) => td.textContent)) };
      });
      const col = table.head.indexOf("blocked by");
      if (expect.causes.size === 0) return check(col < 0, "a 'blocked by' column for a report without causes");
      check(col >= 0, "no 'blocked by' column: " + table.head.join(", "));
      for (const [seq, byCause] of expect.causes) {
        const names = Object.entries(byCause).filter(([, ns]) => ns > 0).sort((a, b) => b[1] - a[1]).map(([c]) => c);
        const row = table.rows.find((cells) => cells[0].endsWith("#" + seq) || cells[0].endsWith("(#" + seq + ")"));
        check(row, `no table row for thread ${seq}`);
        const shown = row[col] === "" ? [] : row[col].split(", ").map((part) => part.split(" ")[0]);
        check(JSON.stringify(shown) === JSON.stringify(names), `thread ${seq}: 'blocked by' shows ${row[col]}, the report has ${names}`);
      }
    }],
    ["hovering the longest interval shows its state and duration", async () => {
      const iv = expect.longest;
      check(iv !== null, "the report has no interval to hover");
      const pos = await tab.evaluate((iv) => ({ x: window.rperfPage.timeToX((iv.start + iv.end) / 2), top: window.rperfPage.laneTop(iv.seq), h: window.rperfPage.rowHeight }), iv);
      await tab.$eval("#timeline-canvas", (c) => c.scrollIntoView({ block: "center" }));
      const box = await (await tab.$("#timeline-canvas")).boundingBox();
      await tab.mouse.move(box.x + pos.x, box.y + pos.top + pos.h / 2);
      const tip = await tab.$eval("#tooltip", (t) => ({ hidden: t.hidden, state: t.dataset.state, ns: t.dataset.durationNs, cause: t.dataset.cause, text: t.firstElementChild ? t.firstElementChild.textContent : "", all: t.textContent }));
      check(!tip.hidden, "no tooltip shown");
      if (iv.aggregated) {
        check(tip.text.startsWith("aggregated") && tip.all.includes(STATE_NAMES[iv.state]), `tooltip "${tip.all}" is not the bucket's`);
        await tab.mouse.move(0, 0);
        return;
      }
      check(Number(tip.ns) === iv.end - iv.start, `tooltip duration ${tip.ns}, interval ${iv.end - iv.start}`);
      check(tip.text.includes(STATE_NAMES[iv.state]), `tooltip "${tip.text}" lacks the state "${STATE_NAMES[iv.state]}"`);
      if (iv.cause) {
        check(tip.cause === iv.cause.cause, `tooltip cause ${tip.cause}, interval_causes say ${iv.cause.cause}`);
        const by = iv.cause.by ? ", woken by " : "";
        check(tip.all.includes("blocked on " + iv.cause.cause + by), `tooltip "${tip.all}" lacks "blocked on ${iv.cause.cause}${by}"`);
      } else {
        check(tip.cause === undefined, `tooltip shows a cause (${tip.cause}) the report does not have`);
      }
      const m = tip.text.match(/ for ([0-9.]+)(ns|µs|ms|s)$/);
      const unit = { ns: 1, "µs": 1e3, ms: 1e6, s: 1e9 };
      check(m && Math.abs(Number(m[1]) * unit[m[2]] - (iv.end - iv.start)) <= 0.01 * (iv.end - iv.start) + 1, `tooltip text "${tip.text}" does not show the duration`);
      await tab.mouse.move(0, 0);
    }],
    ["selecting a thread filters the flame graph to its sample weight", async () => {
      const all = await tab.$eval("#flame-total", (e) => Number(e.dataset.ns));
      const sum = [...expect.weight.values()].reduce((a, b) => a + b, 0);
      check(all === sum, `flame total ${all}, report sample weight ${sum}`);
      if (expect.weight.size === 0) return;
      const [seq, weight] = [...expect.weight.entries()].sort((a, b) => b[1] - a[1])[0];
      await tab.click(`#lane-labels .lane-label[data-seq="${seq}"]`);
      const one = await tab.$eval("#flame-total", (e) => Number(e.dataset.ns));
      check(one === weight, `thread ${seq}: flame total ${one}, sample weight ${weight}`);
      const sel = await tab.evaluate(() => window.rperfPage.selection());
      check(sel.kind === "thread" && sel.id === seq, "the lane click did not select the thread");
      await tab.keyboard.press("Escape");
      const back = await tab.$eval("#flame-total", (e) => Number(e.dataset.ns));
      check(back === sum, "Escape did not clear the selection");
    }],
    ["the GVL-wait flame graph holds exactly the [GVL wait] samples", async () => {
      await tab.click('#flame-modes button[data-mode="gvl_wait"]');
      const total = await tab.$eval("#flame-total", (e) => Number(e.dataset.ns));
      check(total === expect.gvlWaitWeight, `GVL-wait flame total ${total}, report ${expect.gvlWaitWeight}`);
      await tab.click('#flame-modes button[data-mode="all"]');
    }],
    ["selecting a wait-graph node selects its thread everywhere", async () => {
      const node = await tab.$("#waitgraph .node[data-seq]");
      if (!node) {
        check(expect.gvlWaitWeight === 0 || (await tab.$("#waitgraph .empty")) === null, "no wait-graph node to select");
        return;
      }
      const seq = Number(await node.evaluate((n) => n.dataset.seq));
      await node.evaluate((n) => n.scrollIntoView({ block: "center" }));
      await (await node.$("rect.total")).click(); // the bar: the label's glyphs leave gaps
      const sel = await tab.evaluate(() => window.rperfPage.selection());
      check(sel.kind === "thread" && sel.id === seq, `node click selected ${JSON.stringify(sel)}, not thread ${seq}`);
      const pressed = await tab.$eval(`#lane-labels .lane-label[data-seq="${seq}"]`, (b) => b.getAttribute("aria-pressed"));
      check(pressed === "true", "the thread's lane is not marked selected");
      const rows = await tab.$$eval("#tables tbody tr.selected", (trs) => trs.length);
      check(rows > 0, "no table row marked selected");
      await tab.keyboard.press("Escape");
    }],
    ["zoom narrows the visible range", async () => {
      const before = await tab.evaluate(() => window.rperfPage.view());
      await tab.focus("#timeline-canvas");
      await tab.keyboard.press("+");
      const key = await tab.evaluate(() => window.rperfPage.view());
      check(key.to - key.from < before.to - before.from, "the + key did not zoom in");
      await tab.$eval("#timeline-canvas", (c) => c.scrollIntoView({ block: "center" }));
      const box = await (await tab.$("#timeline-canvas")).boundingBox();
      await tab.mouse.move(box.x + box.width / 3, box.y + 10);
      await tab.mouse.wheel({ deltaY: -300 });
      const wheel = await tab.evaluate(() => window.rperfPage.view());
      check(wheel.to - wheel.from < key.to - key.from, "the wheel did not zoom in");
      const shown = await tab.$eval("#timeline-range", (e) => [Number(e.dataset.fromNs), Number(e.dataset.toNs)]);
      check(Math.abs(shown[0] - wheel.from) <= 1 && Math.abs(shown[1] - wheel.to) <= 1, "the range shown is not the view");
      await tab.keyboard.press("0");
      const reset = await tab.evaluate(() => window.rperfPage.view());
      check(reset.to - reset.from === before.to - before.from, "0 did not reset the zoom");
    }],
    ["every name in the page is capped (a whole 1 MiB name once crashed the tab)", async () => {
      const longest = await tab.evaluate(() => Math.max(0, ...[...document.querySelectorAll("#lane-labels .lane-label, #tables td, #waitgraph text")].map((e) => e.textContent.length)));
      check(longest <= 700, `an element shows ${longest} characters`);
    }],
    ["selecting a thread outlines its critical path over the thread's time", async () => {
      const tables = await tab.$$eval("#tables table caption, #tables p.empty", (cs) => cs.map((c) => c.textContent));
      const rootTable = tables.some((c) => c.startsWith("Root causes (who"));
      check(rootTable === expect.intervals > 0, `root-cause table ${rootTable}, report intervals ${expect.intervals}`);
      const captions = await tab.$$eval("#tables table caption", (cs) => cs.map((c) => c.textContent));
      const releaseTable = captions.some((c) => c.startsWith("Top release stacks"));
      check(releaseTable === expect.releaseStacks, `release stacks table ${releaseTable}, report release stacks ${expect.releaseStacks}`);
      if (expect.intervals === 0) {
        const note = await tab.$eval("#path-panel", (e) => e.textContent);
        return check(note.includes("need a full recording") || note.includes("no timeline"), `path panel says "${note}"`);
      }
      const [seq, [first, last]] = [...expect.span.entries()].sort((a, b) => (b[1][1] - b[1][0]) - (a[1][1] - a[1][0]))[0];
      await tab.click(`#lane-labels .lane-label[data-seq="${seq}"]`);
      const p = await tab.evaluate(() => window.rperfPage.criticalPath());
      check(p !== null, `no critical path for thread ${seq}`);
      check(p.covered === last - first, `thread ${seq}: the path covers ${p.covered}, its time is ${last - first}`);
      check(p.drawnSegments > 0, "no segment outlined");
      if (p.kept === p.total) {
        const sum = p.segments.reduce((a, s) => a + (s.end - s.start), 0);
        check(sum === p.covered, `segments sum to ${sum}, covered ${p.covered}`);
      }
      check(p.shares.reduce((a, s) => a + s.ns, 0) === p.covered, "the shares do not sum to the covered time");
      const panel = await tab.$eval("#path-panel", (e) => e.textContent);
      check(panel.includes("Critical path of"), `path panel says "${panel.slice(0, 120)}"`);
      await tab.keyboard.press("Escape");
    }],
    ...(name === "chains" ? chainsChecks(tab) : []),
    ["drops are shown each against its kind, alarming only when material", async () => {
      const shown = await tab.$eval("#drops", (p) => ({ hidden: p.hidden, text: p.textContent, material: p.classList.contains("material") }));
      const kinds = Object.keys(expect.drops);
      if (kinds.length === 0) return check(shown.hidden, "a drops note for a report without drops: " + shown.text);
      check(!shown.hidden, "no drops note for a report that dropped " + kinds.join(", "));
      // The page and the CLI share one count of each kind (summary.c); these two the report states directly.
      const of = { samples: expect.samplingCount + (expect.drops.samples || 0), intervals: expect.intervals + (expect.drops.intervals || 0) };
      let material = false;
      for (const k of kinds) {
        const head = k.replace("_", " ") + " " + expect.drops[k] + (of[k] ? " of " + of[k] + " " : " ");
        check(shown.text.includes(head), `drops note "${shown.text}" lacks "${head}"`);
        if (of[k]) material ||= expect.drops[k] / of[k] >= 0.01;
      }
      if (kinds.every((k) => of[k])) {
        check(shown.material === material, `drops note material=${shown.material}, shares say ${material}`);
        check(shown.text.startsWith(material ? "Incomplete report" : "The profiler dropped a small share"), "drops note: " + shown.text);
      }
    }],
    ["no network request", async () => check(requests.length === 0, "requests: " + requests.join(", "))],
    ["still no console errors after interaction", async () => check(consoleErrors.length === 0, "console errors: " + consoleErrors.join(" | "))],
  ];
  if (shotDir) {
    if (name === "chains") {
      await tab.click('#lane-labels .lane-label[data-seq="5"]');
      await shoot(tab, shotDir, name, "criticalpath", "#timeline-section");
      await tab.keyboard.press("Escape");
    }
    await shoot(tab, shotDir, name, "timeline", "#timeline-section");
    await shoot(tab, shotDir, name, "waitgraph", "#waitgraph-section");
    await shoot(tab, shotDir, name, "flamegraph", "#flame-section");
  }
  for (const [title, fn] of checks) {
    tests++;
    try {
      await fn();
      console.log(`ok   ${name}: ${title}`);
    } catch (e) {
      failures++;
      console.log(`FAIL ${name}: ${title}: ${e.message}`);
    }
  }
  await tab.close();
}

/* test/fixtures/chains_report.json: a convoy behind a holder that sleeps in
 * the lock, and a request waiting for the GVL behind a hog; the answers are
 * known (test/c/test_rootcause_views.c checks the same numbers in C). */
function chainsChecks(tab) {
  const MS = 1e6;
  return [
    ["chains: w2's path runs through w1 and w0 to the holder, with an arrow per hand-off", async () => {
      await tab.click('#lane-labels .lane-label[data-seq="5"]');
      const p = await tab.evaluate(() => window.rperfPage.criticalPath());
      check(p.covered === 196 * MS && p.handoffs === 4, `covered ${p.covered}, hand-offs ${p.handoffs}`);
      check(p.arrows === 4, `${p.arrows} arrows drawn, 4 hand-offs`);
      const deep = p.segments.find((s) => s.end - s.start === 187 * MS);
      check(deep && deep.lane === 2, "the 187 ms segment is not on the holder's lane");
      check(p.shares[0].root[1] === 2 && p.shares[0].root[2] === "blocked: sleep" && p.shares[0].ns === 187 * MS,
        "first share " + JSON.stringify(p.shares[0]));
      const rows = await tab.$$eval("#path-panel tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
      check(rows[0][0] === "holder #2" && rows[0][1] === "blocked: sleep" && rows[0][2] === "187ms", "panel row " + rows[0]);
      check(rows[0][4].startsWith("Kernel#sleep"), "the root's stack: " + rows[0][4]);
      await tab.keyboard.press("Escape");
    }],
    ["chains: a label set's path runs behind the hog", async () => {
      await tab.evaluate(() => {
        const t = [...document.querySelectorAll("#tables table")].find((x) => x.caption.textContent === "Label sets");
        [...t.querySelectorAll("tbody tr")].find((tr) => tr.textContent.includes("endpoint=/req")).click();
      });
      const p = await tab.evaluate(() => window.rperfPage.criticalPath());
      check(p && p.covered === 224 * MS, "label path covered " + (p && p.covered));
      check(p.shares[0].root[1] === 7 && p.shares[0].ns === 200 * MS, "first share " + JSON.stringify(p.shares[0]));
      check(p.drawnSegments === p.segments.length, `${p.drawnSegments} of ${p.segments.length} outlined`);
      await tab.keyboard.press("Escape");
    }],
    ["chains: the root-cause table names the holder's sleep and the hog", async () => {
      const rows = await tab.$$eval("#tables table", (ts) => {
        const t = ts.find((x) => x.caption.textContent.startsWith("Root causes"));
        return [...t.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((td) => td.textContent));
      });
      check(rows[0].slice(0, 4).join("|") === "holder #2|blocked: sleep|564ms|71.2%", "row " + rows[0]);
      check(rows[1].slice(0, 3).join("|") === "hog #7|running|200ms" && rows[1][5].startsWith("Object#compute"), "row " + rows[1]);
      const release = await tab.$$eval("#tables table", (ts) => {
        const t = ts.find((x) => x.caption.textContent.startsWith("Top release stacks"));
        return [...t.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((td) => td.textContent));
      });
      check(release[0][0] === "577ms" && release[0][2].startsWith("Thread::Mutex#synchronize"), "release row " + release[0]);
    }],
  ];
}

async function shoot(tab, dir, name, what, selector) {
  fs.mkdirSync(dir, { recursive: true });
  const elHandle = await tab.$(selector);
  await elHandle.screenshot({ path: path.join(dir, `${name}-${what}.png`) });
}

async function main() {
  const args = process.argv.slice(2);
  let shotDir = null;
  if (args[0] === "--screenshots") {
    shotDir = args[1];
    args.splice(0, 2);
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "rperf-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
  try {
    for (const spec of args) {
      const [name, page, reports] = spec.split("=");
      try {
        await runCase(browser, name, page, reports.split(","), shotDir);
      } catch (e) {
        tests++;
        errors++;
        console.log(`ERROR ${name}: ${e.stack || e}`);
      }
    }
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  console.log(`${tests} tests, ${assertions} assertions, ${failures} failures, ${errors} errors`);
  process.exit(failures + errors === 0 && tests > 0 ? 0 : 1);
}

main().catch((e) => {
  console.log(`ERROR: ${e.stack || e}`);
  console.log(`${tests} tests, ${assertions} assertions, ${failures} failures, ${errors + 1} errors`);
  process.exit(1);
});
