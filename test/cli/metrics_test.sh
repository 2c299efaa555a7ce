#!/usr/bin/env bash
# metrics_test.sh — `rperf-gvl metrics DIR` end to end: the exposition of a
# directory of live and dead processes' files (read back by promtool when
# it is installed), folding, the output file, and every bad input with its
# exit code and one-line message.
# usage: metrics_test.sh PATH/TO/rperf-gvl PATH/TO/rga_gen_report
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

# mfile PID COUNT ENDPOINT: a metrics file of process PID with COUNT units of
# ENDPOINT, each waiting 2 ms for the GVL in a 4 ms wall time.
mfile() {
  local pid=$1 n=$2 endpoint=$3
  printf '{"format":"rperf-gvl-metrics","version":1,"pid":%d,"start_ticks":0,' "$pid"
  printf '"process":{"threads":2,"running_ns":%d,"gvl_wait_ns":0,"gc_ns":0,' $((n * 2000000))
  printf '"blocked_ns":[0,0,0,0,0,0,0,0,0,0],"dropped":[0,0,0,0,0,0],"label_sets_folded":0,"units_unmeasured":0},'
  printf '"units":[{"kind":"request","labels":{"endpoint":"%s"},"count":%d,' "$endpoint" "$n"
  printf '"wall_ns":%d,"running_ns":%d,"gvl_wait_ns":%d,"gc_ns":0,' $((n * 4000000)) $((n * 2000000)) $((n * 2000000))
  printf '"blocked_ns":[0,0,0,0,0,0,0,0,0,0],"gvl_wait_buckets":[0,0,0,0,%d,0,0,0,0,0,0,0,0,0,0],' "$n"
  printf '"gvl_wait_ratio_buckets":[0,0,0,0,0,%d,0,0,0],"gvl_wait_ratio_sum_ppm":%d}]}\n' "$n" $((n * 500000))
}

D=$WORK/metrics
mkdir -p "$D"
sleep 60 &
live=$!
trap 'kill $live 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
sh -c 'exit 0' &
gone=$!
wait "$gone"
mfile "$live" 3 'GET /users/:id' >"$D/rperf-$live-0.json"
mfile "$gone" 5 'GET /users/:id' >"$D/rperf-$gone-0.json"

run metrics --no-fold "$D"
check "metrics exits 0 (rc $rc: $(cat "$WORK/err"))" test "$rc" -eq 0
cp "$WORK/out" "$WORK/before.prom"
check "live and dead processes add up" grep -qx 'rperf_unit_gvl_wait_seconds_count{kind="request",endpoint="GET /users/:id"} 8' "$WORK/out"
check "seconds as exact decimals" grep -qx 'rperf_gvl_wait_seconds_total{kind="request",endpoint="GET /users/:id"} 0.016' "$WORK/out"
check "gauges from live processes only" grep -qx 'rperf_threads 2' "$WORK/out"
check "--no-fold keeps the dead file" test -e "$D/rperf-$gone-0.json"
if command -v promtool >/dev/null; then
  check "promtool check metrics accepts it" bash -c "promtool check metrics <'$WORK/out' >'$WORK/promtool.log' 2>&1"
else
  echo "SKIP: promtool not installed (Debian package prometheus)"
fi

run metrics -o "$WORK/textfile/rperf.prom" "$D"
check "an output in a missing directory is an output error (rc $rc)" test "$rc" -eq 74
mkdir -p "$WORK/textfile"
run metrics -o "$WORK/textfile/rperf.prom" "$D"
check "-o writes the file" test "$rc" -eq 0 -a -s "$WORK/textfile/rperf.prom"
check "folded by default" test ! -e "$D/rperf-$gone-0.json" -a -e "$D/rperf-dead.json"
check "the fold changes no counter" bash -c "diff <(grep -v '^rperf_metrics_files' '$WORK/before.prom') <(grep -v '^rperf_metrics_files' '$WORK/textfile/rperf.prom')"
check "nothing beside the output" test "$(ls -A "$WORK/textfile" | wc -l)" -eq 1

run metrics --openmetrics "$D"
check "--openmetrics ends with # EOF" test "$(tail -n 1 "$WORK/out")" = "# EOF"
check "--openmetrics: counter families without _total" grep -qx '# TYPE rperf_gvl_wait_seconds counter' "$WORK/out"

# --- usage errors and bad input -----------------------------------------------
run metrics --help
check "metrics --help" grep -q '^Usage: rperf-gvl metrics' "$WORK/out"
expect_fail 64 'metrics: no directory given' metrics
expect_fail 64 'one directory only' metrics "$D" "$D"
expect_fail 64 "unrecognized option '--frobnicate'" metrics --frobnicate "$D"
expect_fail 2 "^rperf-gvl: $WORK/none: cannot read the metrics directory: No such file or directory\$" metrics "$WORK/none"
expect_fail 2 "^rperf-gvl: $D/rperf-dead.json: not a directory\$" metrics "$D/rperf-dead.json"
mfile "$live" 3 'GET /' | head -c 300 >"$D/rperf-$live-0.json"
expect_fail 2 "^rperf-gvl: $D/rperf-$live-0.json:1:[0-9]+: invalid JSON" metrics "$D"
run metrics --skip-bad "$D"
check "--skip-bad counts the file" grep -qx 'rperf_metrics_files{state="skipped"} 1' "$WORK/out"
mfile "$live" 3 'GET /' | sed 's/"version":1/"version":9/' >"$D/rperf-$live-0.json"
expect_fail 2 "rperf-$live-0.json: version: metrics file version 9; this reader reads version 1\$" metrics "$D"
mfile "$live" 3 'GET /' | sed 's/"count":3/"count":4/' >"$D/rperf-$live-0.json"
expect_fail 2 'units\[0\]: histogram buckets add up to 3 and 3, not the count 4$' metrics "$D"
check "a failed run leaves no output behind" test "$(ls -A "$WORK/textfile" | wc -l)" -eq 1

printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
