// measure_page.js — size and time to first paint of HTML report pages in
// headless Chromium, for docs/performance.md. For each page: the file size,
// the first contentful paint, and the moment page.js has drawn every part
// (its "rperf-drawn" performance mark), both from navigation start; the
// median of RUNS loads, each in a fresh tab.
//
//   node measure_page.js [--runs N] PAGE.html...
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const puppeteer = require("puppeteer-core");

async function main() {
  const args = process.argv.slice(2);
  let runs = 5;
  if (args[0] === "--runs") {
    runs = Number(args[1]);
    args.splice(0, 2);
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "rperf-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: process.env.RPERF_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    userDataDir: profile,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
  const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  try {
    for (const page of args) {
      const fcp = [], drawn = [];
      for (let i = 0; i < runs; i++) {
        const tab = await browser.newPage();
        await tab.setViewport({ width: 1280, height: 900 });
        await tab.goto("file://" + path.resolve(page), { waitUntil: "load" });
        const t = await tab.evaluate(() => new Promise((resolve) => {
          const read = () => {
            const paint = performance.getEntriesByName("first-contentful-paint")[0];
            const mark = performance.getEntriesByName("rperf-drawn")[0];
            if (paint && mark) resolve({ fcp: paint.startTime, drawn: mark.startTime });
            else setTimeout(read, 50);
          };
          read();
        }));
        fcp.push(t.fcp);
        drawn.push(t.drawn);
        await tab.close();
      }
      const mb = fs.statSync(page).size / 1e6;
      console.log(`${page}: ${mb.toFixed(2)} MB, first contentful paint ${median(fcp).toFixed(0)} ms, ` +
        `all drawn ${median(drawn).toFixed(0)} ms (median of ${runs})`);
    }
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
