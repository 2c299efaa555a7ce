#!/usr/bin/env bash
# profiles_test.sh — end-to-end tests of the CLI's profile outputs (--pprof,
# --collapsed, --speedscope, --top, --state, --root-frames): weights conserve
# the report's sample total, go tool pprof reads the files, bad paths and
# empty reports behave as documented.
# usage: profiles_test.sh PATH/TO/rperf-gvl PATH/TO/rga_gen_report
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
# go tool pprof wants a writable HOME and build cache; it needs no network.
export HOME=$WORK/home GOCACHE=$WORK/gocache GOPROXY=off GOTOOLCHAIN=local PPROF_TMPDIR=$WORK
mkdir -p "$HOME"

R=$WORK/report.json
"$GEN" --threads 6 --ractors 2 --labels 4 --slices 300 --seed 7 -o "$R" || { echo "generator failed"; exit 1; }
# The report's sample total, from its JSON text (the generator writes "samples" on one line).
total=$(grep -o '"samples":\[\[[^]]*\]\(,\[[^]]*\]\)*\]' "$R" | sed 's/"samples":\[//; s/\]\]$//; s/^\[//' |
        tr -s '[]' '\n' | awk -F, 'NF == 4 { s += $2 } END { print s + 0 }')
check "report has samples ($total)" test "$total" -gt 0

# --- folded stacks --------------------------------------------------------------------
run --collapsed "$R"
check "collapsed to stdout exits 0" test "$rc" -eq 0
sum=$(awk '{ s += $NF } END { print s + 0 }' "$WORK/out")
check "collapsed weights sum to the report total ($sum vs $total)" test "$sum" -eq "$total"
check "collapsed lines are 'frames weight'" bash -c "! grep -vqE '^[^ ].* [0-9]+\$' '$WORK/out'"
run --collapsed "$WORK/p.collapsed" "$R"
check "--collapsed FILE writes FILE, nothing on stdout" test -s "$WORK/p.collapsed" -a ! -s "$WORK/out"
check "--collapsed FILE: same lines as stdout" test "$(cat "$WORK/p.collapsed")" = "$("$CLI" --collapsed "$R")"
run --collapsed --root-frames thread,label "$R"
n_lines=$(wc -l <"$WORK/out")
n_rooted=$(grep -cE '^[^;]+ \((#[0-9]+, )?Ractor [0-9]+\);(\(no labels\)|[a-z]+=[^;]*);' "$WORK/out")
check "--root-frames thread,label: every line starts with thread and label frames ($n_rooted of $n_lines)" \
  test "$n_rooted" -eq "$n_lines" -a "$n_lines" -gt 0
sum=$(awk '{ s += $NF } END { print s + 0 }' "$WORK/out")
check "rooted weights still sum to the total" test "$sum" -eq "$total"

# A snapshot series merges before export: the folded weights are both reports' samples.
"$GEN" --threads 4 --slices 100 --seed 1 --start-ns 1000000000 -o "$WORK/s1.json"
"$GEN" --threads 4 --slices 100 --seed 2 --start-ns 1100000000 -o "$WORK/s2.json"
series=0
for f in "$WORK/s1.json" "$WORK/s2.json"; do
  series=$((series + $("$CLI" --collapsed "$f" | awk '{ s += $NF } END { print s + 0 }')))
done
run --collapsed "$WORK/s1.json" "$WORK/s2.json"
merged=$(awk '{ s += $NF } END { print s + 0 }' "$WORK/out")
check "a merged series exports both reports' samples ($merged vs $series)" test "$rc" -eq 0 -a "$merged" -eq "$series" -a "$series" -gt 0

# --- states partition the samples -------------------------------------------------------
parts=0
for st in running gvl_wait blocked gc; do
  run --collapsed --state "$st" "$R"
  check "--state $st exits 0" test "$rc" -eq 0
  parts=$((parts + $(awk '{ s += $NF } END { print s + 0 }' "$WORK/out")))
done
check "the four states sum to the total ($parts vs $total)" test "$parts" -eq "$total"
run --collapsed --state gvl_wait "$R"
check "--state gvl_wait: every stack ends in [GVL wait]" bash -c "! grep -vq ';\\[GVL wait\\] [0-9]*\$' '$WORK/out'"
check "--state gvl_wait: not empty" test -s "$WORK/out"

# --- top --------------------------------------------------------------------------------
run --top "$R"
check "--top prints the flat view" grep -q '^Flat profile: wall time' "$WORK/out"
check "--top: 20 rows by default" test "$(grep -cE '^ +[0-9.]+(ns|µs|ms|s) ' "$WORK/out")" -eq 20
run --top --top 3 "$R"
check "--top --top 3: 3 rows" test "$(grep -cE '^ +[0-9.]+(ns|µs|ms|s) ' "$WORK/out")" -eq 3
run --top 3 "$R"
check "--top 3 alone still sets the summary's rows" grep -q '^Threads' "$WORK/out"
check "--top 3 alone prints no flat view" bash -c "! grep -q '^Flat profile' '$WORK/out'"
run --top --state blocked "$R"
check "--top --state blocked: [GVL blocked] is all the self time" \
  grep -qE '^ +[0-9.]+(ns|µs|ms|s) +100\.0% +100\.0% .*\[GVL blocked\]' "$WORK/out"

# --- pprof, read by go tool pprof ----------------------------------------------------------
run --pprof "$WORK/p.pb.gz" --speedscope "$WORK/p.speedscope.json" "$R"
check "--pprof and --speedscope exit 0" test "$rc" -eq 0 -a -s "$WORK/p.pb.gz" -a -s "$WORK/p.speedscope.json"
check "pprof file is gzip" bash -c "gzip -t '$WORK/p.pb.gz'"
if go tool pprof -raw "$WORK/p.pb.gz" >"$WORK/raw" 2>"$WORK/raw.err"; then
  ok
  psum=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /^ +[0-9]+ +[0-9]+:/ { sub(":", "", $2); s += $2 } END { print s + 0 }' "$WORK/raw")
  check "go tool pprof -raw: weights sum to the report total ($psum vs $total)" test "$psum" -eq "$total"
else
  bad "go tool pprof -raw failed: $(cat "$WORK/raw.err")"
fi
go tool pprof -top -nodecount=5 "$WORK/p.pb.gz" >"$WORK/top" 2>&1
check "go tool pprof -top reads the file" grep -q 'flat%' "$WORK/top"
run --pprof "$WORK/w.pb.gz" --state gvl_wait "$R"
go tool pprof -raw "$WORK/w.pb.gz" >"$WORK/raw" 2>&1
check "--state gvl_wait pprof: every sample's leaf is [GVL wait]" \
  test "$(go tool pprof -top "$WORK/w.pb.gz" 2>/dev/null | grep -cE '^ *[0-9.]+[a-z]+ +100% +100% .*\[GVL wait\]')" -eq 1

# --- speedscope: the schema the speedscope package ships (test/speedscope, installed by bin/setup) ---
VALIDATE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../speedscope" && pwd)/validate.cjs
if [ -d "$(dirname "$VALIDATE")/node_modules/speedscope" ]; then
  run --speedscope "$WORK/t.speedscope.json" --thread 1 --state running "$R"
  check "filtered speedscope written" test "$rc" -eq 0 -a -s "$WORK/t.speedscope.json"
  if node "$VALIDATE" "$WORK/p.speedscope.json" "$WORK/t.speedscope.json" >"$WORK/v" 2>&1; then ok; else
    bad "speedscope files fail speedscope's schema: $(cat "$WORK/v")"; fi
  n_prof=$(grep -o '"type":"sampled"' "$WORK/p.speedscope.json" | wc -l)
  check "speedscope: one profile per thread (6, got $n_prof)" test "$n_prof" -eq 6
  sed 's/"unit":"nanoseconds"/"unit":"parsecs"/' "$WORK/p.speedscope.json" >"$WORK/broken.speedscope.json"
  check "the validator rejects a broken file" bash -c "! node '$VALIDATE' '$WORK/broken.speedscope.json' >/dev/null 2>&1"
else
  bad "test/speedscope/node_modules is missing: run bin/setup (npm ci of test/speedscope)"
fi

# --- bad input and outputs ----------------------------------------------------------------
run --state sleeping --top "$R"
check "--state sleeping: usage error 64 (got $rc)" test "$rc" -eq 64
check "--state sleeping: message" grep -q 'expected running, gvl_wait, blocked or gc' "$WORK/err"
run --root-frames fiber --collapsed "$R"
check "--root-frames fiber: usage error 64 (got $rc)" test "$rc" -eq 64
run --state gc "$R"
check "--state without a profile view: usage error 64 (got $rc)" test "$rc" -eq 64
check "--state without a profile view: says where it applies" grep -q 'applies to the profile views' "$WORK/err"
run --root-frames thread --top "$R"
check "--root-frames without --collapsed: usage error 64 (got $rc)" test "$rc" -eq 64
run --pprof "$WORK/no/such/dir/p.pb.gz" "$R"
check "unwritable pprof path: exit 74 (got $rc)" test "$rc" -eq 74
check "unwritable pprof path: one error line" grep -q '^rperf-gvl: .*no/such/dir/p.pb.gz.*cannot open for writing' "$WORK/err"
check "unwritable pprof path: nothing written" test ! -e "$WORK/no/such/dir/p.pb.gz"
if [ -w /dev/full ]; then
  "$CLI" --collapsed "$R" >/dev/full 2>"$WORK/err"; rc=$?
  check "collapsed to a full device: exit 74 (got $rc)" test "$rc" -eq 74
fi

# A report without samples: valid empty profiles, and a warning.
sed 's/"samples":\[\[[^]]*\]\(,\[[^]]*\]\)*\]/"samples":[]/' "$R" >"$WORK/nosamples.json"
check "no-samples report made" grep -q '"samples":\[\]' "$WORK/nosamples.json"
run --pprof "$WORK/e.pb.gz" --collapsed "$WORK/e.collapsed" "$WORK/nosamples.json"
check "empty profile: exit 0 (got $rc)" test "$rc" -eq 0
check "empty profile: warning names the file" grep -q 'warning: the report has no samples; .*e.pb.gz is an empty profile' "$WORK/err"
check "empty profile: go tool pprof reads it" go tool pprof -raw "$WORK/e.pb.gz" >/dev/null 2>&1
check "empty folded stacks: empty file" test -e "$WORK/e.collapsed" -a ! -s "$WORK/e.collapsed"
if [ -d "$(dirname "$VALIDATE")/node_modules/speedscope" ]; then
  "$CLI" --speedscope "$WORK/e.speedscope.json" "$WORK/nosamples.json" 2>/dev/null
  check "empty speedscope file is valid" bash -c "node '$VALIDATE' '$WORK/e.speedscope.json' >/dev/null"
fi

printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
