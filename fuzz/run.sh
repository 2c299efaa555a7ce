#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] — builds the report-reader fuzzer with clang
# (ASan + UBSan + libFuzzer) in build-fuzz/ and runs it for SECONDS (default
# 60) on a copy of the seed corpus. Crashing inputs are written to
# build-fuzz/artifacts/; the exit status is libFuzzer's (0 = nothing found).
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
CC=${CC:-clang} cmake -S "$root" -B "$build" -DRPERF_FUZZ=ON -DRPERF_BUILD_EXT=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target fuzz_report -j"$(nproc)" >/dev/null
mkdir -p "$build/corpus" "$build/artifacts"
cp -n "$root"/fuzz/corpus/* "$build/corpus/" 2>/dev/null || true
export LSAN_OPTIONS="suppressions=$root/test/c/lsan.supp:print_suppressions=0"
exec "$(find "$build" -name fuzz_report -type f -perm -u+x | head -n1)" \
  -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$build/artifacts/" -dict="$root/fuzz/report.dict" \
  "$build/corpus"
