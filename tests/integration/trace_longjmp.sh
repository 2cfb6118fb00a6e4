# Calls left by longjmp and recursion past the kernel's uretprobe nesting
# limit (64) do not break counting on the thread: a call's frame is dropped
# once the thread's stack pointer shows it was left (its return-address slot
# is above the stack pointer of a new call, or of a return), so later calls
# are timed and counted exactly. Calls seen entering but never returning are
# reported apart (entered - completed). Before: after 32 longjmps every later
# traced call on the thread went uncounted (0 of 1000); recursion 100 deep
# counted 0 calls.
. "$(dirname "$0")/lib.sh"
require_bpf

N=1000 DEPTH=100 ROUNDS=10
"$SONDE" record -F 99 --trace jumper --trace counted --trace recurse -o "$WORK/j.sonde" -- \
	"$TARGETS/jumps" "$N" "$DEPTH" "$ROUNDS" >"$WORK/out.txt" 2>"$WORK/err.txt"
"$SONDE" report "$WORK/j.sonde" --json >"$WORK/j.json"
probe() { jq --arg f "$1" ".probes[] | select(.name == \$f) | .$2" "$WORK/j.json"; }

[ "$(probe counted kernel_calls)" = "$N" ] || fail "counted: $(probe counted kernel_calls) calls timed, expected $N (after $N longjmps)"
[ "$(probe counted entered)" = "$N" ] || fail "counted: $(probe counted entered) entered, expected $N"
[ "$(probe jumper entered)" = "$N" ] || fail "jumper: $(probe jumper entered) entered, expected $N"
[ "$(probe jumper kernel_calls)" = 0 ] || fail "jumper: $(probe jumper kernel_calls) returns, expected 0 (it longjmps)"
pass "$N calls left by longjmp: the $N calls after them counted and timed exactly"

# Recursion DEPTH deep: the outer 32 levels per round are timed (the span
# stack's depth); every level is counted at entry.
entered=$(probe recurse entered)
timed=$(probe recurse kernel_calls)
[ "$entered" = $((ROUNDS * DEPTH)) ] || fail "recurse: $entered entered, expected $((ROUNDS * DEPTH))"
[ "$timed" = $((ROUNDS * 32)) ] || fail "recurse: $timed timed, expected $((ROUNDS * 32)) (32 levels x $ROUNDS rounds)"
grep -q "untimed" "$WORK/err.txt" || fail "the summary does not report the untimed calls: $(cat "$WORK/err.txt")"
"$SONDE" report "$WORK/j.sonde" >"$WORK/j.txt"
grep -q "Traced calls of recurse: .* of $entered entered" "$WORK/j.txt" || fail "report: $(grep -A1 'calls of recurse' "$WORK/j.txt")"
pass "recursion $DEPTH deep: $entered calls entered, $timed timed, the rest reported untimed"
