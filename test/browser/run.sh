#!/usr/bin/env bash
# test/browser/run.sh — the browser tests: profiles real workloads (the demo's
# examples/contended.rb, a Ractor run, a snapshot series, an empty profile),
# adds a synthetic report large enough for the page to aggregate and the
# hand-written reports with blocked causes and with wait chains (test/fixtures), writes each
# as an HTML page with the CLI (the series merged by it), and checks the
# pages in headless Chromium (page_test.js). Screenshots of every page go to
# BUILD/browser/screenshots.
#
#   test/browser/run.sh [BUILD]     (default: build; needs bin/setup's npm ci)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out="$build/browser"
cli="$build/bin/rperf-gvl"
[ -d test/browser/node_modules/puppeteer-core ] || { echo "browser tests: run bin/setup (npm ci in test/browser)" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"

ruby -I lib -I "$build/ext" examples/contended.rb "$out/demo.json" >"$out/demo.log" 2>&1 ||
  { tail -n 20 "$out/demo.log"; exit 1; }
ruby -I lib -I "$build/ext" test/browser/make_reports.rb "$out" >"$out/make_reports.log" 2>&1 ||
  { tail -n 20 "$out/make_reports.log"; exit 1; }
"$build/bin/rga_gen_report" --threads 8 --ractors 2 --slices 30000 --seed 7 --drops -o "$out/synthetic.json"

cp test/fixtures/causes_report.json "$out/causes.json" # blocked causes (report minor 1)
cp test/fixtures/chains_report.json "$out/chains.json" # wait chains with known roots
for name in demo ractors empty synthetic causes longnames chains; do
  "$cli" "$out/$name.json" --html "$out/$name.html"
done
series="$out/snapshot-1.json,$out/snapshot-2.json,$out/snapshot-3.json"
"$cli" ${series//,/ } --html "$out/snapshot.html"

node test/browser/page_test.js --screenshots "$out/screenshots" \
  "demo=$out/demo.html=$out/demo.json" \
  "ractors=$out/ractors.html=$out/ractors.json" \
  "snapshot=$out/snapshot.html=$series" \
  "empty=$out/empty.html=$out/empty.json" \
  "synthetic=$out/synthetic.html=$out/synthetic.json" \
  "causes=$out/causes.html=$out/causes.json" \
  "chains=$out/chains.html=$out/chains.json" \
  "longnames=$out/longnames.html=$out/longnames.json"
