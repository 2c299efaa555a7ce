#!/usr/bin/env bash
# bench/html_page_bench.sh — the HTML page of a 1-million-interval report:
# its size, the time the CLI takes to write it, and its first paint and
# full drawing in headless Chromium (test/browser/measure_page.js), for
# docs/performance.md. Two synthetic reports from bench/analysis_gen_report.c:
#   narrow: 16 threads, 2 Ractors (every interval shorter than a pixel's worth)
#   wide:   500 threads, 4 Ractors (150,000 intervals kept, the rest aggregated)
#
#   bench/html_page_bench.sh [BUILD]     (default: build; needs bin/setup's npm ci)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$build/bin/rga_gen_report" --threads 16 --ractors 2 --slices 81000 -o "$dir/narrow.json"
"$build/bin/rga_gen_report" --threads 500 --ractors 4 --slices 2600 -o "$dir/wide.json"
for name in narrow wide; do
  intervals=$(ruby -rjson -e 'puts JSON.parse(File.read(ARGV[0]))["intervals"].size' "$dir/$name.json")
  /usr/bin/time -f "%e %M" -o "$dir/time" "$build/bin/rperf-gvl" "$dir/$name.json" --html "$dir/$name.html"
  read -r secs kb <"$dir/time"
  awk -v n="$name" -v i="$intervals" -v b="$(stat -c %s "$dir/$name.json")" -v s="$secs" -v k="$kb" \
    'BEGIN { printf "%s: %d intervals, report %.1f MB; rperf-gvl --html %.2f s, peak RSS %d MB\n", n, i, b / 1e6, s, k / 1024 }'
done
node test/browser/measure_page.js "$dir/narrow.html" "$dir/wide.html"
