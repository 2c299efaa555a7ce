# harness.sh — sourced by the CLI test scripts: the binaries under test
# (CLI, GEN from the two arguments), a scratch directory WORK removed at exit
# (kept with KEEP=1), and the counters and checks (ok, bad, check, run) whose
# totals the script prints at the end. It runs no test itself.
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
