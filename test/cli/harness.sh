# harness.sh — sourced by the CLI test scripts: the binaries under test
# (CLI, GEN from the two arguments), a scratch directory WORK removed at exit
# (kept with KEEP=1), and the counters and checks (ok, bad, check, run,
# expect_fail) whose totals the script prints at the end. It runs no test
# itself.
set -u
CLI=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
GEN=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
WORK=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "work dir: $WORK"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0

ok()   { passed=$((passed + 1)); }
bad()  { failed=$((failed + 1)); printf 'FAIL: %s\n' "$*" >&2; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }

# run ARGS...: runs the CLI, capturing stdout, stderr and the exit code.
run() {
  "$CLI" "$@" >"$WORK/out" 2>"$WORK/err"
  rc=$?
}

# expect_fail CODE PATTERN ARGS...: exit code CODE, one stderr line matching PATTERN.
expect_fail() {
  local code=$1 pattern=$2; shift 2
  run "$@"
  if [ "$rc" -ne "$code" ]; then bad "rperf-gvl $* exited $rc, expected $code: $(cat "$WORK/err")"; return; fi
  if [ "$(wc -l <"$WORK/err")" -lt 1 ] || ! grep -Eq -- "$pattern" "$WORK/err"; then
    bad "rperf-gvl $*: stderr does not match '$pattern': $(cat "$WORK/err")"; return
  fi
  if [ "$code" -eq 2 ] && [ "$(wc -l <"$WORK/err")" -ne 1 ]; then
    bad "rperf-gvl $*: expected one error line, got: $(cat "$WORK/err")"; return
  fi
  ok
}
