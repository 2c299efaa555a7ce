#!/usr/bin/env bash
# cli_test.sh — end-to-end tests of the rperf-gvl CLI.
# usage: cli_test.sh PATH/TO/rperf-gvl PATH/TO/rga_gen_report
# Runs the binary on synthetic reports and on broken ones, checking output,
# exit codes and that every error is one line naming file, position and problem.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

R=$WORK/report.json
"$GEN" --threads 8 --ractors 2 --labels 5 --slices 400 --seed 5 -o "$R" || { echo "generator failed"; exit 1; }

# --- help, version, usage errors ------------------------------------------
run --help;    check "--help exits 0 with usage" test "$rc" -eq 0 -a "$(grep -c '^Usage:' "$WORK/out")" -ge 1
run --version; check "--version" grep -q '^rperf-gvl [0-9]' "$WORK/out"
expect_fail 64 'no report given' 
expect_fail 64 'invalid option|unrecognized' --frobnicate "$R"
expect_fail 64 '--width abc' --width abc "$R"
expect_fail 64 '--from 10parsecs' --from 10parsecs "$R"
expect_fail 64 '--to must be after --from' --from 20ms --to 10ms "$R"
expect_fail 64 '--by fiber' --by fiber "$R"
expect_fail 64 '--min-share 2' --min-share 2 "$R"
expect_fail 64 '--color=sometimes' --color=sometimes "$R"
expect_fail 64 'matches no thread' --thread nobody "$R"

# --- inputs and filters: the same rules for every view ------------------------
"$CLI" - <"$R" >"$WORK/out" 2>"$WORK/err"; rc=$?
check "- reads the report from standard input" test "$rc" -eq 0
check "- gives the same summary as the file" bash -c "diff <('$CLI' '$R') '$WORK/out' >/dev/null"
printf 'garbage' | "$CLI" - >"$WORK/out" 2>"$WORK/err"; rc=$?
check "- names standard input in errors (rc $rc)" bash -c "test $rc -eq 2 && grep -q '^rperf-gvl: standard input:1:1: ' '$WORK/err'"
expect_fail 64 'standard input\) can be given once' - -
expect_fail 64 '^rperf-gvl: --ractor 99: the report has no Ractor 99$' --ractor 99 "$R"
expect_fail 64 'matches no thread of Ractor 2' --thread 1 --ractor 2 "$R"
expect_fail 64 'at or past the end of the report' --timeline --from 999s "$R"
expect_fail 64 'at or past the end of the report' --perfetto "$WORK/late.json" --from 999s "$R"
check "no trace written for a window past the report" test ! -e "$WORK/late.json"

# --- summary ----------------------------------------------------------------
run "$R"
check "summary exits 0" test "$rc" -eq 0
for section in Threads Ractors 'Label sets' 'Top waiters' 'Top holders' 'Top wait stacks' 'Top blame stacks'; do
  check "summary has section $section" grep -q "^$section" "$WORK/out"
done
check "no colour when piped" bash -c "! grep -q \$'\\e\\[' '$WORK/out'"
check "8 thread rows" test "$(grep -cE '^  (main|worker-[0-9]+|#[0-9]+)( \(#[0-9]+\))? ' "$WORK/out")" -ge 8
run --color=always "$R"
check "--color=always colours" grep -q $'\e\[' "$WORK/out"
check "units are readable" grep -Eq '[0-9.]+(µs|ms|s) ' "$WORK/out"
run "$R"
for section in 'Top wait stacks' 'Top blame stacks'; do
  dups=$(sed -n "/^$section/,/^\$/p" "$WORK/out" | sed -n '3,$p' | sed 's/^ *[^ ]* *[^ ]*%  //' | sort | uniq -d)
  check "$section: every row reads differently ($dups)" test -z "$dups"
done
COLUMNS=90 "$CLI" "$R" >"$WORK/narrow" 2>&1
long=$(sed -n '/^Top wait stacks/,$p' "$WORK/narrow" | perl -CSD -ne 'chomp; $n++ if length($_) > 90; END { print $n + 0 }')
check "stack rows fit COLUMNS=90 ($long longer)" test "$long" -eq 0

"$GEN" --threads 3 --slices 30 --drops -o "$WORK/drops.json"
run "$WORK/drops.json"
check "drop counters shown in proportion" grep -Eq '^  intervals +1234 of [0-9]+ timeline intervals \([0-9.]+%\)' "$WORK/out"
check "a material drop calls the report incomplete" grep -q '^incomplete report' "$WORK/out"
run --json "$WORK/drops.json"
check "JSON drops carry their share" perl -0ne 'exit !/"what": "intervals",\s*"dropped": 1234,[^}]*"material": true,\s*"of": [0-9]{4}/' "$WORK/out"

# --- timeline -----------------------------------------------------------------
run --timeline --width 50 --ascii "$R"
check "timeline exits 0" test "$rc" -eq 0
rows=$(grep -E '^\S.* \|.{50}\|$' "$WORK/out" | wc -l)
check "timeline: one 50-column row per thread (got $rows)" test "$rows" -eq 8
check "timeline legend" grep -q '^legend:' "$WORK/out"
run --timeline --width 30 --from 5ms --to 15ms --thread 1 "$R"
check "timeline window" grep -q '5.00ms .. 15.0ms' "$WORK/out"
check "timeline --thread 1: one row" test "$(grep -c '|$' "$WORK/out")" -eq 1

# --- graphs -------------------------------------------------------------------
run --dot "$R"
check "dot to stdout" grep -q '^digraph wait_graph' "$WORK/out"
check "dot has Ractor clusters" grep -q 'subgraph cluster_ractor_2' "$WORK/out"
if command -v dot >/dev/null; then
  check "dot output is valid DOT" dot -Tsvg -o /dev/null "$WORK/out"
fi
run --dot "$WORK/g.dot" --svg "$WORK/g.svg" --png "$WORK/g.png" "$R"
check "graph files written" test "$rc" -eq 0 -a -s "$WORK/g.dot" -a -s "$WORK/g.svg" -a -s "$WORK/g.png"
check "svg is svg" grep -q '<svg' "$WORK/g.svg"
check "png is png" bash -c "head -c 4 '$WORK/g.png' | grep -q PNG"
run --dot --by label --min-share 0.05 "$R"
check "dot --by label" grep -q 'endpoint=' "$WORK/out"
check "dot --by label: nodes carry their label set's running time" bash -c "! grep -Eq 'running 0[,\\\\]' '$WORK/out'"
all=$("$CLI" --dot "$R" | grep -c -- '->')
some=$("$CLI" --dot --min-share 0.05 "$R" | grep -c -- '->')
check "--min-share prunes edges ($some < $all)" test "$some" -lt "$all"
run --dot --by ractor "$R"
check "dot --by ractor" grep -q 'Ractor 2' "$WORK/out"
check "dot --by ractor: nodes carry their threads' running time" bash -c "! grep -Eq 'running 0[,\\\\]' '$WORK/out'"

# --- perfetto and json ---------------------------------------------------------
run --perfetto "$WORK/trace.json" "$R"
check "perfetto written" test "$rc" -eq 0 -a -s "$WORK/trace.json"
n_x=$(grep -c '"ph":"X"' "$WORK/trace.json")
n_iv=$(grep -cE '^,?\[[0-9]+,[0-4],' "$R")
check "perfetto: one complete event per interval ($n_x vs $n_iv)" test "$n_iv" -gt 0 -a "$n_x" -eq "$n_iv"
check "perfetto thread names" grep -q '"thread_name"' "$WORK/trace.json"
check "perfetto Ractor processes" grep -q '"process_name".*"Ractor 2"' "$WORK/trace.json"
run --html "$WORK/page.html" "$R"
check "html page written" test "$rc" -eq 0 -a -s "$WORK/page.html"
check "html page carries its data" grep -q '"format":"rperf-gvl-page"' "$WORK/page.html"
check "html page loads nothing else" bash -c "! grep -Eiq '(src|href)=\"[^\"#]' '$WORK/page.html'"
run --json "$R"
check "json summary" grep -q '"format": "rperf-gvl-summary"' "$WORK/out"
run --json -o "$WORK/s.json" "$R"
check "-o writes the stdout view to a file" grep -q 'rperf-gvl-summary' "$WORK/s.json"

# --- filters --------------------------------------------------------------------
run --thread 2 "$R"
check "--thread 2: one thread row" test "$(sed -n '/^Threads/,/^$/p' "$WORK/out" | grep -c '(#')" -eq 1
run --ractor 2 --json "$R"
check "--ractor 2: Ractor 2 threads" grep -q '"ractor": 2,' "$WORK/out"
check "--ractor 2: only Ractor 2 threads" bash -c "! grep -q '\"ractor\": 1,' '$WORK/out'"
run --label 'endpoint=POST /orders' "$R"
check "--label filter" test "$rc" -eq 0 -a "$(sed -n '/^Label sets/,/^$/p' "$WORK/out" | grep -c 'endpoint=')" -ge 1
check "--label keeps only matching label sets" bash -c "! sed -n '/^Label sets/,/^\$/p' '$WORK/out' | grep -q 'GET /search'"
expect_fail 64 'KEY=VALUE' --label novalue "$R"

# --- several reports, gzip -------------------------------------------------------
"$GEN" --threads 4 --slices 100 --seed 1 --start-ns 1000000000 -o "$WORK/s1.json"
"$GEN" --threads 4 --slices 100 --seed 2 --start-ns 1100000000 -o "$WORK/s2.json"
run --json "$WORK/s1.json" "$WORK/s2.json"
check "merge of a series" test "$rc" -eq 0
check "merged duration spans both" bash -c "grep -q '\"duration_ns\": 1[0-9]\{8\},' '$WORK/out'"
"$GEN" --threads 4 --slices 50 --pid 99 -o "$WORK/other.json"
expect_fail 2 'different processes' "$WORK/s1.json" "$WORK/other.json"
gzip -c "$R" >"$WORK/report.json.gz"
run "$WORK/report.json.gz"
check "gzip report" test "$rc" -eq 0

# --- bad input: exit 2, one line naming file, position, problem -------------------
expect_fail 2 "^rperf-gvl: $WORK/missing.json: cannot open: No such file" "$WORK/missing.json"
printf 'hello world\n' >"$WORK/text.json"
expect_fail 2 'text.json:1:1: .*expected' "$WORK/text.json"
head -c 3000 "$R" >"$WORK/trunc.json"
expect_fail 2 'trunc.json:[0-9]+:[0-9]+: .*(end of|truncated)' "$WORK/trunc.json"
sed 's/"version":1,/"version":2,/' "$R" >"$WORK/v2.json"
expect_fail 2 'v2.json:1:[0-9]+: version: unsupported report version 2 \(this reader supports 1\)' "$WORK/v2.json"
sed '0,/"gvl_wait_ns":[0-9]*/s//"gvl_wait_ns":"lots"/' "$R" >"$WORK/type.json"
expect_fail 2 'type.json:[0-9]+:[0-9]+: threads\[0\]\.gvl_wait_ns: expected an integer, got a string' "$WORK/type.json"
sed '0,/"blocked_ns":[0-9]*/s//"blocked_ns":-7/' "$R" >"$WORK/neg.json"
expect_fail 2 'threads\[0\]\.blocked_ns: negative value -7' "$WORK/neg.json"
sed '0,/"running_ns":[0-9]*/s//"running_ns":123456789012345678901234/' "$R" >"$WORK/huge.json"
expect_fail 2 'huge.json:[0-9]+:[0-9]+: invalid JSON: too big integer' "$WORK/huge.json"
sed '0,/"waiter":[0-9]*/s//"waiter":999/' "$R" >"$WORK/ref.json"
expect_fail 2 'ref.json: edges\[0\]\.waiter: thread seq 999 is not in the report' "$WORK/ref.json"
sed 's/^\[1,\([0-4]\),/[77,\1,/' "$R" >"$WORK/ivref.json"
expect_fail 2 'intervals\[[0-9]+\]\[0\]: thread seq 77' "$WORK/ivref.json"
: >"$WORK/empty.json"
expect_fail 2 'empty.json:1:1: empty input' "$WORK/empty.json"
expect_fail 2 'is a directory' "$WORK"
head -c 100 "$WORK/report.json.gz" >"$WORK/cut.json.gz"
expect_fail 2 'cut.json.gz: .*gzip' "$WORK/cut.json.gz"

# --- numbers the analysis cannot add up, and shapes the format rules out ------------
sed '0,/"gvl_wait_ns":[0-9]*/s//"gvl_wait_ns":9223372036854775807/' "$R" >"$WORK/sum.json"
expect_fail 2 'sum.json: threads\[[0-9]+\]\.[a-z_]+: value too large' "$WORK/sum.json"
sed '0,/"gvl_wait_ns":[0-9]*/s//"gvl_wait_ns":1000000000000000000/' "$R" >"$WORK/big.json"
run "$WORK/big.json"
check "a large value that fits: summary exits 0 (got $rc)" test "$rc" -eq 0
check "a large value that fits: no negative time or share" bash -c "! grep -Eq -- '(^| )-[0-9]' '$WORK/out'"
sed '0,/"wait_ns":[0-9]*/s//"wait_ns":9223372036854775807/' "$R" >"$WORK/esum.json"
expect_fail 2 'edges\[[0-9]+\]\.wait_ns: value too large' "$WORK/esum.json"
sed 's/"start_monotonic_ns":[0-9]*/"start_monotonic_ns":9223372036854775000/' "$R" >"$WORK/axis.json"
expect_fail 2 'meta\.start_monotonic_ns: value too large' "$WORK/axis.json"
sed '0,/"seq":1,/s//"seq":1,"label_set":999,/' "$R" >"$WORK/tls.json"
expect_fail 2 'threads\[0\]\.label_set: label set id 999 is not in the report' "$WORK/tls.json"
awk '!done && /^\[[0-9]+,[0-4],/ { sub(/\]/, ",0,0,0]"); done = 1 } { print }' "$R" >"$WORK/nine.json"
expect_fail 2 'nine.json:[0-9]+:[0-9]+: intervals\[0\]: expected 6 items, got 9' "$WORK/nine.json"
awk '!done && /^\[[0-9]+,[0-4],/ { print; done = 1 } { print }' "$R" >"$WORK/overlap.json"
expect_fail 2 'overlap.json: intervals\[1\]: overlaps intervals\[0\] of the same thread' "$WORK/overlap.json"
sed '0,/"acquisitions":[0-9]*,/s///' "$R" >"$WORK/nokey.json"
expect_fail 2 'nokey.json:[0-9]+:[0-9]+: threads\[0\]\.acquisitions: missing required key' "$WORK/nokey.json"
sed 's/"ractors":\[[^]]*\],//' "$R" >"$WORK/noractors.json"
expect_fail 2 'noractors.json: ractors: missing required key' "$WORK/noractors.json"
# A series merges; the same report twice, or overlapping cuts, count time twice.
expect_fail 2 'reports 1 and 2 cover the same time of process [0-9]+ \(the same report twice\?\)' "$R" "$R"
"$GEN" --threads 4 --slices 100 --seed 2 --start-ns 1000001000 -o "$WORK/s1b.json"
expect_fail 2 'reports 1 and 2 overlap in time' "$WORK/s1.json" "$WORK/s1b.json"
# gzip: a bomb of what is not JSON stops at once; the inflated size is capped; trailing data is refused.
head -c 50000000 /dev/zero | gzip -1 >"$WORK/zeros.json.gz"
expect_fail 2 'zeros.json.gz: gzip content is not JSON text: control byte 0x00 at inflated offset 0' "$WORK/zeros.json.gz"
expect_fail 2 'report.json.gz: gzip data inflates beyond the limit of 1024 bytes' --max-inflated 1K "$WORK/report.json.gz"
RPERF_GVL_MAX_INFLATED=2K run "$WORK/report.json.gz"
check "RPERF_GVL_MAX_INFLATED caps the inflated size (got $rc)" grep -q 'beyond the limit of 2048 bytes' "$WORK/err"
expect_fail 64 '--max-inflated lots' --max-inflated lots "$R"
{ cat "$WORK/report.json.gz"; printf 'garbage'; } >"$WORK/trailing.json.gz"
expect_fail 2 'trailing.json.gz: 7 bytes of unexpected data after the gzip stream' "$WORK/trailing.json.gz"
{ cat "$WORK/report.json.gz" "$WORK/report.json.gz"; } >"$WORK/twice.json.gz"
expect_fail 2 'twice.json.gz:[0-9]+:[0-9]+: .*unexpected data after the report object' "$WORK/twice.json.gz"

# --- terminal safety: control bytes escaped, columns by display width ------------------
sed -e 's/"name":"worker-1"/"name":"Zo\\u00eb"/' \
    -e 's/"name":"worker-2"/"name":"\\u65e5\\u672c\\u8a9e"/' \
    -e 's/"name":"worker-3"/"name":"\\u001b]0;pwned\\u0007\\u001b[31mred\\r\\nforged \\u007f\\u009b"/' \
    -e 's/"name":"worker-5"/"name":"evil\\u202etxt.exe\\u2028next\\u2066x"/' \
    -e 's/"Handler#m0"/"Handler\\u001b[2J#m0"/' \
    -e 's|"endpoint":"POST /orders"|"endpoint":"POST /\\u001b[1morders\\r"|' "$R" >"$WORK/hostile.json"
# bytes a terminal acts on: C0 but tab and newline, DEL, the C1 range as UTF-8 (U+0080..U+009F),
# and as UTF-8 the bidi controls U+202A..U+202E and U+2066..U+2069 and the separators U+2028/U+2029
controls() { LC_ALL=C grep -c $'[\x01-\x08\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]\|\xe2\x80[\xa8-\xae]\|\xe2\x81[\xa6-\xa9]' "$1"; }
for view in --summary --timeline "--collapsed --root-frames thread,label"; do
  run $view --color=never --top 100 "$WORK/hostile.json"
  check "$view exits 0 on hostile names (got $rc)" test "$rc" -eq 0
  check "$view: no control byte reaches the terminal ($(controls "$WORK/out") lines)" test "$(controls "$WORK/out")" -eq 0
  check "$view: control bytes are shown escaped" grep -qF 'pwned\x07\x1b[31m' "$WORK/out"
done
run --summary --color=never --top 100 "$WORK/hostile.json"
check "summary: the whole name is escaped" grep -qF '\x1b]0;pwned\x07\x1b[31mred\x0d\x0aforged \x7f\xc2\x9b' "$WORK/out"
check "summary: label values escaped" grep -qF 'endpoint=POST /\x1b[1morders\x0d' "$WORK/out"
check "summary: frame labels escaped" grep -qF 'Handler\x1b[2J#m0' "$WORK/out"
check "summary: bidi controls and separators escaped" grep -qF 'evil\xe2\x80\xaetxt.exe\xe2\x80\xa8next\xe2\x81\xa6x' "$WORK/out"

# Accented names are one column a character, CJK two: the wait % column ends at one display column.
cols=$(sed -n '/^Threads/,/^$/p' "$WORK/out" | grep '%' | perl -CSD -ne '
  s/%.*//s; my $w = length($_) + (() = /[\p{Ea=W}\p{Ea=F}]/g); print "$w\n"' | sort -u | wc -l)
check "summary: columns aligned by display width ($cols distinct)" test "$cols" -eq 1
run --collapsed --root-frames thread "$WORK/hostile.json"
check "collapsed: one line per stack, frames escaped" bash -c "! grep -v ' [0-9]*\$' '$WORK/out' && grep -qF 'Handler\x1b[2J#m0' '$WORK/out'"
run --timeline --width 40 --ascii "$WORK/hostile.json"
cols=$(grep ' |' "$WORK/out" | perl -CSD -ne 's/ \|.*//s; my $w = length($_) + (() = /[\p{Ea=W}\p{Ea=F}]/g); print "$w\n"' | sort -u | wc -l)
check "timeline: rows aligned by display width ($cols distinct)" test "$cols" -eq 1
expect_fail 64 'thread \\x1b\[2J' --thread $'\e[2J' "$R"
check "error messages escape what they echo" test "$(controls "$WORK/err")" -eq 0
expect_fail 2 'no-\\x1b\[31m\.json: cannot open' "$WORK/no-"$'\e[31m'".json"
check "error messages escape file names" test "$(controls "$WORK/err")" -eq 0

# --- DOT: names cannot leave their quoted label (Graphviz escString rules) ----------
# A name with \" once closed the label agwrite quoted, and the rest was read as DOT:
# here it would add a node with a javascript: URL. A label value does the same
# through --by label; \N would show the node's id; a name may end in a backslash.
sed -e 's/"name":"worker-1"/"name":"\\\\\\"];I[URL=<javascript:alert(1)>];z[\\n#"/' \
    -e 's/"name":"worker-2"/"name":"ends\\\\"/' \
    -e 's/"name":"worker-3"/"name":"\\\\N\\\\G"/' \
    -e 's|"endpoint":"POST /orders"|"endpoint":"\\\\\\"];J[URL=<javascript:alert(2)>];y[\\n#"|' "$R" >"$WORK/dotty.json"
for by in thread label; do
  run --dot --by $by --min-share 0 "$WORK/dotty.json"
  cp "$WORK/out" "$WORK/dotty-$by.dot"
  check "dot --by $by of hostile names exits 0" test "$rc" -eq 0
  check "dot --by $by: Graphviz reads it" dot -Tsvg -o "$WORK/dotty-$by.svg" "$WORK/dotty-$by.dot"
  check "dot --by $by: no link of its own" bash -c "! grep -Eq '<a |href=' '$WORK/dotty-$by.svg'"
  check "dot --by $by: no node of its own" bash -c "! grep -Eq '^[[:space:]]*[IJyz][[:space:];[]' '$WORK/dotty-$by.dot'"
done
check "dot: the name is shown as written" grep -qF '\&quot;];I[URL=&lt;javascript:alert(1)&gt;];z[\x0a#' "$WORK/dotty-thread.svg"
check "dot: a trailing backslash stays in its label" grep -qF '>ends\ #' "$WORK/dotty-thread.svg"
check "dot: \\N is text, not the node id" grep -qF '>\N\G #' "$WORK/dotty-thread.svg"
check "dot --by label: the value is shown as written" grep -qF 'javascript:alert(2)' "$WORK/dotty-label.svg"
run --svg "$WORK/dotty-mem.svg" --min-share 0 "$WORK/dotty.json"
check "svg drawn in memory shows the same text" grep -qF '>ends\ #' "$WORK/dotty-mem.svg"

# --- command line: messages name rperf-gvl, one view per standard output -----------
expect_fail 64 "^rperf-gvl: unrecognized option '--frobnicate'" --frobnicate "$R"
expect_fail 64 "^rperf-gvl: unrecognized option '-x'" -x "$R"
expect_fail 64 "^rperf-gvl: option '--width' needs a value" "$R" --width
expect_fail 64 "^rperf-gvl: unrecognized option '--bogus'" record --bogus -- true
expect_fail 64 'more than one view for standard output' --json --json "$R"
expect_fail 64 'more than one view for standard output' --timeline --json "$R"
expect_fail 64 'more than one view for standard output' --summary --dot "$R"
expect_fail 64 'more than one view for standard output' --summary --timeline -o "$WORK/x.txt" "$R"

# --- output errors ----------------------------------------------------------------
expect_fail 74 'cannot open for writing' --svg "$WORK/no/such/dir/g.svg" "$R"
expect_fail 74 'cannot open for writing' --perfetto "$WORK/no/such/dir/t.json" "$R"
expect_fail 74 'cannot open for writing' --html "$WORK/no/such/dir/p.html" "$R"
if [ -w /dev/full ]; then
  "$CLI" "$R" >/dev/full 2>"$WORK/err"; rc=$?
  check "write error on stdout exits 74 (got $rc)" test "$rc" -eq 74
fi

# --- outputs never destroy what they did not create ---------------------------------
OUTS=$WORK/outs
mkdir -p "$OUTS"
printf 'precious\n' >"$OUTS/keep.txt"
# A view that fails after its output was opened must leave an existing file alone.
run --timeline --from 100000s -o "$OUTS/keep.txt" "$R"
check "failed view: exit 64 (got $rc)" test "$rc" -eq 64
check "failed view leaves the existing file as it was" grep -qx precious "$OUTS/keep.txt"
check "failed view leaves no temporary file" test "$(ls -A "$OUTS")" = keep.txt
run --json -o "$OUTS/keep.txt" "$R"
check "a successful write replaces the file" grep -q rperf-gvl-summary "$OUTS/keep.txt"
check "a successful write leaves no temporary file" test "$(ls -A "$OUTS")" = keep.txt
cp "$R" "$OUTS/in.json"
ln -s in.json "$OUTS/alias.json"
sum=$(cksum <"$OUTS/in.json")
expect_fail 2 'alias.json: the output is the input report' --json -o "$OUTS/alias.json" "$OUTS/in.json"
expect_fail 2 'in.json: the output is the input report' --perfetto "$OUTS/in.json" "$OUTS/in.json"
check "an input is never overwritten" test "$(cksum <"$OUTS/in.json")" = "$sum"
# A private full device (root only): a failed write exits 74 naming it and never unlinks it.
if mknod "$OUTS/full" c 1 7 2>/dev/null; then
  expect_fail 74 "^rperf-gvl: $OUTS/full: write failed: No space left" -o "$OUTS/full" "$R"
  check "a device output is never removed" test -c "$OUTS/full"
  expect_fail 74 "^rperf-gvl: $OUTS/full: write failed" --perfetto "$OUTS/full" "$R"
  check "a device output is never removed (perfetto)" test -c "$OUTS/full"
  expect_fail 74 "^rperf-gvl: $OUTS/full: write failed" --svg "$OUTS/full" "$R"
  check "a device output is never replaced by a file (svg)" test -c "$OUTS/full"
  printf 'unrelated\n' >"$OUTS/-"
  (cd "$OUTS" && "$CLI" --perfetto - "$R" >"$OUTS/full" 2>"$WORK/err"); rc=$?
  check "--perfetto - on a full stdout exits 74 (got $rc)" test "$rc" -eq 74
  check "--perfetto - never touches a file named -" grep -qx unrelated "$OUTS/-"
fi

# Names of up to 255 bytes (NAME_MAX) are valid: the temporary beside them still fits.
LONGS=$WORK/long
mkdir -p "$LONGS"
long250=$(printf 'n%.0s' $(seq 245)).json
long255=$(printf 'é%.0s' $(seq 125)).json
for name in "$long250" "$long255"; do
  run --json -o "$LONGS/$name" --perfetto "$LONGS/${name%.json}.pft" --html "$LONGS/${name%.json}.html" "$R"
  check "a $(printf %s "$name" | wc -c)-byte name: the views are written (got $rc)" \
    test "$rc" -eq 0 -a -s "$LONGS/$name" -a -s "$LONGS/${name%.json}.html"
  run --json -o "$LONGS/$name" "$R"
  check "a $(printf %s "$name" | wc -c)-byte name is replaced in place (got $rc)" test "$rc" -eq 0
done
check "long names: no temporary file is left" test -z "$(ls -A "$LONGS" | grep '^\.')"

# --- record -----------------------------------------------------------------------
LIB=$WORK/lib
mkdir -p "$LIB/rperf"
: >"$LIB/rperf/autorecord.rb"
# A stand-in program: records what the profiler hook would see, writes a report, exits 3.
cat >"$WORK/fake-ruby" <<FAKE
#!/usr/bin/env bash
printf '%s\n' "\$RUBYOPT" >"$WORK/rubyopt"
printf '%s\n' "\${RUBYLIB:-}" >"$WORK/rubylib"
printf '%s\n' "\${RPERF_GVL_FREQUENCY:-}" >"$WORK/frequency"
cp "$R" "\$RPERF_GVL_OUTPUT"
exit 3
FAKE
chmod +x "$WORK/fake-ruby"
(cd "$WORK" && RPERF_GVL_LIBDIR=$LIB "$CLI" record -o rec.json --frequency 250 -- "$WORK/fake-ruby" app.rb >"$WORK/out" 2>"$WORK/err"); rc=$?
check "record passes the exit status through (got $rc)" test "$rc" -eq 3
check "record prints the summary" grep -q '^Threads' "$WORK/out"
check "record writes the report" test -s "$WORK/rec.json"
check "record loads autorecord through RUBYOPT" grep -q -- "^-rrperf/autorecord" "$WORK/rubyopt"
check "record puts the library directory on RUBYLIB" grep -q -- "^$LIB" "$WORK/rubylib"
check "record sets the frequency" grep -qx 250 "$WORK/frequency"
check "record leaves no temporary file" test -z "$(ls -A "$WORK" | grep '^\.rperf-gvl-')"
for name in "$long250" "$long255"; do
  rm -rf "$LONGS" && mkdir -p "$LONGS"
  (cd "$LONGS" && RPERF_GVL_LIBDIR=$LIB "$CLI" record -o "$name" -- "$WORK/fake-ruby" >"$WORK/out" 2>"$WORK/err"); rc=$?
  check "record -o a $(printf %s "$name" | wc -c)-byte name (got $rc)" test "$rc" -eq 3 -a -s "$LONGS/$name"
  check "record -o a $(printf %s "$name" | wc -c)-byte name: no temporary file is left" test -z "$(ls -A "$LONGS" | grep '^\.')"
done
(cd "$WORK" && RPERF_GVL_LIBDIR=$LIB "$CLI" record -o none.json -- true >"$WORK/out" 2>"$WORK/err"); rc=$?
check "record without a report says so" grep -q 'wrote no report' "$WORK/err"
check "record of a program that wrote no report exits with its status (got $rc)" test "$rc" -eq 0
check "record without a report writes no file" test ! -e "$WORK/none.json"
(cd "$WORK" && RPERF_GVL_LIBDIR=$LIB "$CLI" record -o none.json -- sh -c 'exit 5' >"$WORK/out" 2>"$WORK/err"); rc=$?
check "record of a non-Ruby program exits with its status (got $rc)" test "$rc" -eq 5
(cd "$WORK" && RPERF_GVL_LIBDIR=$LIB "$CLI" record -o none.json -- sh -c 'kill -KILL $$' >"$WORK/out" 2>"$WORK/err"); rc=$?
check "record of a killed program exits 128+9 (got $rc)" test "$rc" -eq 137
# An existing output stays as it was until a new report replaces it.
printf 'old report\n' >"$WORK/kept.json"
(cd "$WORK" && RPERF_GVL_LIBDIR=$LIB "$CLI" record -o kept.json -- true >"$WORK/out" 2>"$WORK/err")
check "record keeps an existing output when no report came" grep -qx 'old report' "$WORK/kept.json"
(cd "$WORK" && RPERF_GVL_LIBDIR=$LIB "$CLI" record -o kept.json -- "$WORK/fake-ruby" >"$WORK/out" 2>"$WORK/err")
check "record replaces an existing output with the new report" grep -q rperf-gvl-report "$WORK/kept.json"
# An unwritable output is refused before the program starts.
cat >"$WORK/marker-prog" <<MARK
#!/usr/bin/env bash
: >"$WORK/ran"
MARK
chmod +x "$WORK/marker-prog"
rm -f "$WORK/ran"
(cd "$WORK" && RPERF_GVL_LIBDIR=$LIB "$CLI" record -o "$WORK/no/such/dir/r.json" -- "$WORK/marker-prog" >"$WORK/out" 2>"$WORK/err"); rc=$?
check "record to a missing directory exits 74 (got $rc)" test "$rc" -eq 74
check "record names the unwritable output" grep -q "no/such/dir/r.json: cannot write the report" "$WORK/err"
check "record does not start the program when the output is unwritable" test ! -e "$WORK/ran"
(cd "$WORK" && RPERF_GVL_LIBDIR=$LIB "$CLI" record -o "$WORK" -- "$WORK/marker-prog" >"$WORK/out" 2>"$WORK/err"); rc=$?
check "record to a directory exits 74 (got $rc)" test "$rc" -eq 74 -a ! -e "$WORK/ran"
# A device output (a private null device; root only) is written into, never replaced.
if mknod "$WORK/null" c 1 3 2>/dev/null; then
  (cd "$WORK" && RPERF_GVL_LIBDIR=$LIB "$CLI" record -o "$WORK/null" -- "$WORK/fake-ruby" >"$WORK/out" 2>"$WORK/err"); rc=$?
  check "record -o a device: the program's status (got $rc)" test "$rc" -eq 3
  check "record -o a device keeps the device" test -c "$WORK/null"
  check "record -o a device still prints the summary" grep -q '^Threads' "$WORK/out"
fi
# Signals sent to record reach the program; record waits for its report and
# exits with its status.
cat >"$WORK/slow-prog" <<SLOW
#!/usr/bin/env bash
trap 'kill \$! 2>/dev/null; cp "$R" "\$RPERF_GVL_OUTPUT"; exit 7' TERM HUP
: >"$WORK/started"
sleep 30 &
wait
exit 0
SLOW
chmod +x "$WORK/slow-prog"
for sig in TERM HUP; do
  rm -f "$WORK/started"
  (cd "$WORK" && exec env RPERF_GVL_LIBDIR=$LIB "$CLI" record -o sig.json -- "$WORK/slow-prog" >"$WORK/out" 2>"$WORK/err") &
  recpid=$!
  for _ in $(seq 100); do [ -e "$WORK/started" ] && break; sleep 0.05; done
  kill -s "$sig" "$recpid"
  wait "$recpid"; rc=$?
  check "SIG$sig to record reaches the program, record exits with its status (got $rc)" test "$rc" -eq 7
  check "SIG$sig: record still writes the report and the summary" grep -q '^Threads' "$WORK/out"
done
# A script's background job starts with SIGINT and SIGQUIT ignored: record keeps them ignored, and so
# does the program (SigIgn bits 0x2 and 0x4 of /proc/PID/status).
cat >"$WORK/sigign-prog" <<SIGIGN
#!/usr/bin/env bash
awk '/^SigIgn/ { print \$2 }' /proc/\$PPID/status /proc/\$\$/status >"$WORK/sigign"
SIGIGN
chmod +x "$WORK/sigign-prog"
(cd "$WORK" && RPERF_GVL_LIBDIR=$LIB sh -c '"$1" record -o bg.json -- "$2" & wait' sh "$CLI" "$WORK/sigign-prog" \
   >"$WORK/out" 2>"$WORK/err")
ignored=0
while read -r mask; do [ $((0x$mask & 0x6)) -eq 6 ] && ignored=$((ignored + 1)); done <"$WORK/sigign"
check "a background record and its program keep SIGINT and SIGQUIT ignored ($(tr '\n' ' ' <"$WORK/sigign"))" \
  test "$ignored" -eq 2
(cd "$WORK" && RPERF_GVL_LIBDIR=$LIB "$CLI" record -- "$WORK/does-not-exist" >"$WORK/out" 2>"$WORK/err"); rc=$?
check "record of a missing program exits 127 (got $rc)" test "$rc" -eq 127
expect_fail 64 'no command' record
expect_fail 64 'frequency' record --frequency 0 -- true
expect_fail 64 'frequency 50000: expected an integer from 1 to 10000' record --frequency 50000 -- true

# --- blocked causes (report minor 1) -------------------------------------------
C=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fixtures" && pwd)/causes_report.json
run "$C"
check "causes: summary exits 0" test "$rc" -eq 0
for section in 'Blocked by cause (per thread)' 'Blocked by cause (per label set)' 'Blocked in other methods' \
               'Top releasers (who woke blocked threads)'; do
  check "causes: summary has section $section" grep -qF "$section" "$WORK/out"
done
check "causes: the releaser of the join" grep -Eq '^  holder \(#2\) +main \(#1\) +join +800ms +1$' "$WORK/out"
run "$R"
check "minor 0: no cause sections" bash -c "! grep -Eq 'Blocked by cause|releasers|other methods' '$WORK/out'"
run --json "$C"
tr -d ' \n' <"$WORK/out" >"$WORK/flat.json"
check "causes: JSON top_releasers" grep -qF '"top_releasers":[{"releaser":2,"waiter":1,"cause":"join","idle":false,"blocked_ns":800000000,"count":1}' "$WORK/flat.json"
check "causes: JSON blocked_by_cause" grep -qF '"blocked_by_cause":{"sleep":500000000,"other":400000000}' "$WORK/flat.json"
run --timeline --ascii --width 50 "$C"
check "causes: timeline marks the mutex wait" grep -Eq '^waiter #3 +\|#####m{10}#####q{15}W{3}#{12}\|$' "$WORK/out"
check "causes: timeline legend names the causes" grep -q '^blocked by cause: i io  z sleep  m mutex' "$WORK/out"
run --perfetto "$WORK/causes-trace.json" "$C"
check "causes: perfetto names the join slice and its releaser" \
  grep -q '"name":"blocked: join".*"args":{"cause":"join","releaser":"holder #2","releaser_seq":2}' "$WORK/causes-trace.json"
run --dot --edges all --min-share 0 "$C"
check "causes: --edges all draws the join release edge" grep -q 'cause=join' "$WORK/out"
check "causes: --edges all: release edges dashed" test "$(grep -c 'style=dashed\]' "$WORK/out")" -eq 2
if command -v dot >/dev/null; then
  check "causes: --edges all output is valid DOT" dot -Tsvg -o /dev/null "$WORK/out"
fi
run --dot "$C"
check "causes: --dot defaults to GVL edges only" bash -c "! grep -q 'cause=' '$WORK/out'"
run --svg "$WORK/causes.svg" --edges blocked "$C"
check "causes: --edges blocked renders" grep -q 'join 800ms' "$WORK/causes.svg"
expect_fail 64 '--edges bogus: expected gvl, blocked or all' --dot --edges bogus "$C"
sed 's/\[3, 100000000, 3, 2\]/[3, 100000001, 3, 2]/' "$C" >"$WORK/badcause.json"
expect_fail 2 'badcause.json: interval_causes\[2\]: matches no blocked interval' "$WORK/badcause.json"

# --- root causes and critical paths ------------------------------------------------
K=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fixtures" && pwd)/chains_report.json
run "$K"
check "chains: summary has root causes" grep -qF 'Root causes (who, at the end of each wait chain' "$WORK/out"
check "chains: the holder's sleep is the first root" \
  grep -Eq '^  holder \(#2\) +blocked: sleep +564ms +71\.2% +66\.5% +Kernel#sleep < block in Object#hold' "$WORK/out"
check "chains: critical path by label set" grep -Eq '^  endpoint=/req +224ms +hog \(#7\) +running +200ms +89\.3%$' "$WORK/out"
run --critical-path w2 "$K"
check "critical path exits 0" test "$rc" -eq 0
check "critical path: the 3-hop segment" \
  grep -Eq '^  13\.0ms +187ms +mutex → w1 \(#4\) mutex → w0 \(#3\) mutex → holder \(#2\): blocked: sleep$' "$WORK/out"
check "critical path: own time and hand-offs" grep -q '^  own time 2.00ms (1.0%), behind other threads 194ms (99.0%), 4 hand-offs$' "$WORK/out"
run --critical-path 5 --json "$K"
check "critical path --json" grep -q '"format": "rperf-gvl-critical-path"' "$WORK/out"
check "critical path --json covers its window" python3 -c "
import json,sys; d=json.load(open('$WORK/out'))
assert sum(s['end_ns']-s['start_ns'] for s in d['segments']) == d['covered_ns'] == d['to_ns']-d['from_ns']
assert sum(x['ns'] for x in d['shares']) == d['covered_ns']"
run --critical-path label=endpoint=/req --from 250ms --to 300ms "$K"
check "critical path of a label in a window" grep -q '^Critical path of label endpoint=/req, 250ms .. 300ms (100ms of thread time on 2 threads)$' "$WORK/out"
run --dot --blame root --min-share 0 "$K"
check "--blame root: waiter -> root edges" bash -c "grep -A8 't5 -> t2' '$WORK/out' | grep -q 'root=blocked'"
if command -v dot >/dev/null; then
  check "--blame root DOT is valid" dot -Tsvg -o /dev/null "$WORK/out"
fi
run --top --blame root "$K"
check "--top --blame root names the hog's method" grep -Eq '^  200ms +25\.3% .* Object#compute +hog\.rb:3$' "$WORK/out"
expect_fail 64 '--critical-path nobody: no thread has that seq or name' --critical-path nobody "$K"
expect_fail 64 '--critical-path label=x: expected' --critical-path label=x "$K"
expect_fail 64 'holds none of its time' --critical-path 2 --from 300ms "$K"
expect_fail 64 '--blame sideways: expected direct or root' --dot --blame sideways "$K"
expect_fail 64 '--blame applies to the wait graph' --blame root "$K"
expect_fail 64 'more than one view for standard output' --critical-path 2 --summary "$K"
sed 's/"intervals": \[/"intervals": [], "old_intervals": [/; s/"interval_causes": \[/"old_causes": [/' "$K" >"$WORK/notimeline.json"
expect_fail 2 'critical-path 2: the report has no timeline' --critical-path 2 "$WORK/notimeline.json"
run "$WORK/notimeline.json"
check "no timeline: the summary says root causes need one" grep -q 'root causes need a full recording' "$WORK/out"

printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
