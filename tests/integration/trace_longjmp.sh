# Calls left by longjmp and recursion past the kernel's uretprobe nesting
# limit (64) do not break counting on the thread: a call's frame is dropped
# once the thread's stack pointer shows it was left (its return-address slot
# is above the stack pointer of a new call, or of a return), so later calls
# are timed and counted exactly. Calls seen entering but never returning are
# reported apart (entered - completed). Before: after 32 longjmps every later
# traced call on the thread went uncounted (0 of 1000); recursion 100 deep
# counted 0 calls. With predicates only the calls that pass are pushed.
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

# With predicates, only the calls that pass are pushed: of the jumpers that
# longjmp, those (even i) are the orphans, and no other; a recursion 60
# deep whose levels pass one in three (depth % 3 == 0) times all 20 of
# them a round, which the 32 tracked levels would not hold if every level
# were pushed.
"$SONDE" record -F 99 --trace 'jumper i if i % 2 == 0' --trace counted \
	--trace 'recurse depth if depth % 3 == 0' -o "$WORK/p.sonde" -- \
	"$TARGETS/jumps" "$N" 60 "$ROUNDS" >"$WORK/p.txt" 2>"$WORK/p.err" || fail "record with predicates: $(cat "$WORK/p.err")"
"$SONDE" report "$WORK/p.sonde" --json >"$WORK/p.json"
pprobe() { jq --arg f "$1" ".probes[] | select(.name == \$f) | .$2" "$WORK/p.json"; }
[ "$(pprobe jumper entered)" = "$N" ] || fail "jumper if i % 2 == 0: $(pprobe jumper entered) entered, expected $N"
[ "$(meta "$WORK/p.sonde" span_orphans)" = $((N / 2)) ] ||
	fail "jumper if i % 2 == 0: $(meta "$WORK/p.sonde" span_orphans) orphans, expected the $((N / 2)) that passed"
[ "$(pprobe counted kernel_calls)" = "$N" ] || fail "counted: $(pprobe counted kernel_calls) calls timed after jumpers with a predicate, expected $N"
[ "$(pprobe recurse entered)" = $((ROUNDS * 60)) ] || fail "recurse: $(pprobe recurse entered) entered, expected $((ROUNDS * 60))"
[ "$(pprobe recurse kernel_calls)" = $((ROUNDS * 20)) ] ||
	fail "recurse if depth % 3 == 0: $(pprobe recurse kernel_calls) timed, expected $((ROUNDS * 20))"
pass "predicates: $((N / 2)) jumpers that passed orphaned and no other, $N later calls timed; $((ROUNDS * 20)) of $((ROUNDS * 60)) recursive calls passed, all timed"
