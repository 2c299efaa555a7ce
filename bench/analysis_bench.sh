#!/usr/bin/env bash
# bench/analysis_bench.sh [SIZE_MB] [all|views|profiles] — analysis throughput and peak memory.
#
# Builds the CLI (Release) in build-bench/, writes a synthetic report of
# SIZE_MB (default 200) with bench/analysis_gen_report.c, then times
# `rperf-gvl REPORT` (summary) and `rperf-gvl --dot REPORT` with glibc malloc
# (the default build), with jemalloc, and with the jansson-only parser
# ("views"), and the profile exports --pprof, --collapsed, --speedscope and
# --top ("profiles"); "all" (the default) runs both sets.
# Each figure is the median of 3 runs; peak RSS comes from /usr/bin/time -v.
# Prints a Markdown table for docs/performance.md ("Analysis").
set -euo pipefail
size=${1:-200}
set=${2:-all}
case $set in all|views|profiles) ;; *) echo "usage: $0 [SIZE_MB] [all|views|profiles]" >&2; exit 64 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-bench
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DRPERF_BUILD_EXT=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target rperf-gvl rperf-gvl-jemalloc rga_gen_report >/dev/null
bin=$(dirname "$(find "$build" -name rga_gen_report -type f -perm -u+x | head -n1)")
report=$build/bench-report-${size}mb.json
if [ ! -s "$report" ]; then
  "$bin/rga_gen_report" --threads 32 --ractors 2 --labels 8 --size "$size" --seed 1 -o "$report"
fi
bytes=$(stat -c %s "$report")
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
cat "$report" >/dev/null # warm the page cache so the first run is not an outlier

# measure LABEL CMD...: median wall time and peak RSS of 3 runs.
measure() {
  local label=$1; shift
  local times=() rss=0 t r
  for _ in 1 2 3; do
    /usr/bin/time -v "$@" >/dev/null 2>"$build/time.txt"
    t=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$build/time.txt")
    r=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$build/time.txt")
    times+=("$t")
    [ "$r" -gt "$rss" ] && rss=$r
  done
  local median
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
  awk -v l="$label" -v t="$median" -v b="$bytes" -v r="$rss" \
    'BEGIN { printf "| %s | %.2f s | %.0f MB/s | %.0f MB | %.2f× |\n", l, t, b / 1e6 / t, r / 1024, r * 1024 / b }'
}

samples=$(grep -o '"samples":\[\[[^]]*\]\(,\[[^]]*\]\)*\]' "$report" | grep -o '\],\[' | wc -l)
echo "Report: ${mb} MB ($(grep -o '"seq":' "$report" | wc -l) threads, $((samples + 1)) samples), $(nproc) cores, $(date -u +%Y-%m-%d)"
echo
echo "| run | wall time | throughput | peak RSS | RSS / report |"
echo "| --- | --- | --- | --- | --- |"
if [ "$set" != views ]; then
  out=$build/bench-out
  mkdir -p "$out"
  measure "pprof export" "$bin/rperf-gvl" --pprof "$out/p.pb.gz" "$report"
  measure "folded stacks export" "$bin/rperf-gvl" --collapsed "$out/p.collapsed" "$report"
  measure "speedscope export" "$bin/rperf-gvl" --speedscope "$out/p.speedscope.json" "$report"
  measure "top view" "$bin/rperf-gvl" --top "$report"
  [ "$set" = profiles ] && exit 0
fi
measure "summary, glibc malloc (default)" "$bin/rperf-gvl" "$report"
measure "summary, jemalloc" "$bin/rperf-gvl-jemalloc" "$report"
measure "summary, jansson-only parser" "$bin/rperf-gvl" --jansson-only "$report"
measure "DOT, glibc malloc (default)" "$bin/rperf-gvl" --dot "$report"
measure "DOT, jemalloc" "$bin/rperf-gvl-jemalloc" --dot "$report"
measure "timeline, glibc malloc" "$bin/rperf-gvl" --timeline --width 120 "$report"
