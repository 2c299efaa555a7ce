#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [report|metrics] — builds a fuzzer with clang
# (ASan + UBSan + libFuzzer) in build-fuzz/ and runs it for SECONDS (default
# 60) on a copy of its seed corpus: the report reader (default; corpus/,
# report.dict) or the metrics file reader (corpus_metrics/, metrics.dict).
# Crashing inputs are written to build-fuzz/artifacts/; the exit status is
# libFuzzer's (0 = nothing found).
set -euo pipefail
seconds=${1:-60}
target=${2:-report}
case $target in
  report) corpus=corpus dict=report.dict ;;
  metrics) corpus=corpus_metrics dict=metrics.dict ;;
  *) echo "fuzz/run.sh: unknown target $target (report or metrics)" >&2; exit 64 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
CC=${CC:-clang} cmake -S "$root" -B "$build" -DRPERF_FUZZ=ON -DRPERF_BUILD_EXT=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target "fuzz_$target" -j"$(nproc)" >/dev/null
mkdir -p "$build/$corpus" "$build/artifacts"
cp -n "$root/fuzz/$corpus"/* "$build/$corpus/" 2>/dev/null || true
export LSAN_OPTIONS="suppressions=$root/test/c/lsan.supp:print_suppressions=0"
exec "$(find "$build" -name "fuzz_$target" -type f -perm -u+x | head -n1)" \
  -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$build/artifacts/" -dict="$root/fuzz/$dict" \
  "$build/$corpus"
