#!/usr/bin/env bash
# bench/analysis_bench.sh [SIZE_MB] [all|views|profiles|roots] — analysis throughput and peak memory.
#
# Builds the CLI (Release) in build-bench/, writes a synthetic report of
# SIZE_MB (default 200) with bench/analysis_gen_report.c, then times
# `rperf-gvl REPORT` (summary) and `rperf-gvl --dot REPORT` with glibc malloc
# (the default build), with jemalloc, and with the jansson-only parser
# ("views"), and the profile exports --pprof, --collapsed, --speedscope and
# --top ("profiles"); "all" (the default) runs both sets. "roots" ignores
# SIZE_MB: a 1-million-interval report with blocked causes and releasers
# (the generator's --causes), the summary (root causes included), the
# critical paths, the root-cause graph and profile, and the HTML page, with
# CPU time beside wall time (this machine is shared); RPERF_BENCH_BASE=CLI
# also times the summary of another build (the one before root causes).
# Each figure is the median of 3 runs; peak RSS comes from /usr/bin/time -v.
# Prints a Markdown table for docs/performance.md ("Analysis").
set -euo pipefail
size=${1:-200}
set=${2:-all}
case $set in all|views|profiles|roots) ;; *) echo "usage: $0 [SIZE_MB] [all|views|profiles|roots]" >&2; exit 64 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-bench
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DRPERF_BUILD_EXT=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target rperf-gvl rperf-gvl-jemalloc rga_gen_report >/dev/null
bin=$(dirname "$(find "$build" -name rga_gen_report -type f -perm -u+x | head -n1)")
report=$build/bench-report-${size}mb.json
gen=(--threads 32 --ractors 2 --labels 8 --size "$size" --seed 1)
if [ "$set" = roots ]; then # 212,000 slices of merged stretches: about 1.06 million intervals
  report=$build/bench-report-causes-1m.json
  gen=(--threads 32 --ractors 2 --labels 8 --slices 212000 --seed 1 --causes)
fi
if [ ! -s "$report" ]; then
  "$bin/rga_gen_report" "${gen[@]}" -o "$report"
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

# measure_cpu LABEL CMD...: median CPU (user + system) and wall time of 5 runs, peak RSS.
measure_cpu() {
  local label=$1; shift
  local cpus=() walls=() rss=0 c w r
  for _ in 1 2 3 4 5; do
    /usr/bin/time -f "%U %S %e %M" -o "$build/time.txt" "$@" >/dev/null
    read -r u s w r <"$build/time.txt"
    cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')")
    walls+=("$w")
    [ "$r" -gt "$rss" ] && rss=$r
  done
  c=$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n 3p)
  w=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n 3p)
  awk -v l="$label" -v c="$c" -v w="$w" -v r="$rss" 'BEGIN { printf "| %s | %.2f s | %.2f s | %.0f MB |\n", l, c, w, r / 1024 }'
}

if [ "$set" = roots ]; then
  intervals=$(ruby -rjson -e 'puts JSON.parse(File.read(ARGV[0]))["intervals"].size' "$report")
  echo "Report: ${mb} MB, about $intervals intervals (32 threads, 2 Ractors, 8 label sets, --causes), $(nproc) cores, $(date -u +%Y-%m-%d)"
  echo
  echo "| run | CPU time | wall time | peak RSS |"
  echo "| --- | --- | --- | --- |"
  if [ -n "${RPERF_BENCH_BASE:-}" ]; then
    measure_cpu "summary, the build before root causes" "$RPERF_BENCH_BASE" "$report"
  fi
  out=$build/bench-out
  mkdir -p "$out"
  measure_cpu "summary with root causes" "$bin/rperf-gvl" "$report"
  measure_cpu "--critical-path main (a thread)" "$bin/rperf-gvl" --critical-path main "$report"
  measure_cpu "--critical-path label=endpoint=POST /orders" "$bin/rperf-gvl" --critical-path "label=endpoint=POST /orders" "$report"
  measure_cpu "--dot --blame root" "$bin/rperf-gvl" --dot --blame root "$report"
  measure_cpu "--top --blame root" "$bin/rperf-gvl" --top --blame root "$report"
  if [ -n "${RPERF_BENCH_BASE:-}" ]; then
    measure_cpu "--html, the build before root causes" "$RPERF_BENCH_BASE" --html "$out/base.html" "$report"
  fi
  measure_cpu "--html (with the critical paths)" "$bin/rperf-gvl" --html "$out/page.html" "$report"
  exit 0
fi

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
