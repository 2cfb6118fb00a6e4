# Shared helpers for integration tests. Sourced; expects SONDE and TARGETS
# in the environment (CTest sets them). Exit 77 = skipped.
set -euo pipefail
: "${SONDE:?SONDE must point to the sonde binary}"
: "${TARGETS:?TARGETS must point to the built test targets}"

WORK=$(mktemp -d /tmp/sonde-test.XXXXXX)
BG_PIDS=()
cleanup() {
	for p in "${BG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

require_bpf() {
	[ "$(id -u)" = 0 ] || skip "needs root to load BPF programs (CI runs as root)"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
}

# assert_near NAME ACTUAL EXPECTED TOLERANCE: |actual - expected| <= tolerance
assert_near() {
	awk -v a="$2" -v e="$3" -v t="$4" 'BEGIN { d = a - e; if (d < 0) d = -d; exit !(d <= t) }' ||
		fail "$1: got $2, expected $3 ± $4"
	pass "$1: $2 (expected $3 ± $4)"
}

# assert_ge NAME ACTUAL MIN
assert_ge() {
	awk -v a="$2" -v m="$3" 'BEGIN { exit !(a >= m) }' || fail "$1: got $2, expected >= $3"
	pass "$1: $2 >= $3"
}

# assert_le NAME ACTUAL MAX
assert_le() {
	awk -v a="$2" -v m="$3" 'BEGIN { exit !(a <= m) }' || fail "$1: got $2, expected <= $3"
	pass "$1: $2 <= $3"
}

# The share (0..1) of samples whose stack contains FUNCTION, from report JSON.
function_share() {
	jq -r --arg f "$2" '([.functions[] | select(.name == $f) | .total] | add // 0) / .samples' "$1"
}

# Reads key=value from a target's output line.
kv() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -n1; }

# Expects a command to fail with exit code != 0, exactly one line on stderr
# matching PATTERN, and no file at OUTPUT (if given).
# usage: expect_error PATTERN OUTPUT -- command...
expect_error() {
	local pattern=$1 output=$2
	shift 3
	local rc=0
	"$@" >"$WORK/stdout" 2>"$WORK/stderr" || rc=$?
	[ "$rc" -ne 0 ] || fail "expected failure from: $*"
	local lines
	lines=$(wc -l <"$WORK/stderr")
	[ "$lines" -eq 1 ] || { cat "$WORK/stderr" >&2; fail "expected one error line from: $* (got $lines)"; }
	grep -Eq -- "$pattern" "$WORK/stderr" || { cat "$WORK/stderr" >&2; fail "error of '$*' does not match /$pattern/"; }
	if [ -n "$output" ] && compgen -G "$output*" >/dev/null; then
		fail "'$*' left an output file: $(ls "$output"*)"
	fi
	pass "error (exit $rc): $(cat "$WORK/stderr")"
}
