# record -- CMD: the recorded share of a known function matches the program's
# own measurement within 5 percentage points; frames are in caller->callee
# order; the sample count matches the CPU time at the requested rate.
. "$(dirname "$0")/lib.sh"
require_bpf

"$SONDE" record -F 999 -o "$WORK/r.sonde" -- "$TARGETS/cpusplit" 3 >"$WORK/target.out"
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/r.json"
"$SONDE" report "$WORK/r.sonde" --folded >"$WORK/r.folded"

hot=$(kv "$WORK/target.out" hot_share)
cold=$(kv "$WORK/target.out" cold_share)
cpu=$(kv "$WORK/target.out" cpu_s)
samples=$(jq .samples "$WORK/r.json")

assert_share "work_hot share" "$(function_share "$WORK/r.json" work_hot)" "$hot" "$samples"
assert_share "work_cold share" "$(function_share "$WORK/r.json" work_cold)" "$cold" "$samples"
# 999 Hz over the CPU time the target measured itself.
assert_samples_match_cpu "samples vs CPU time" "$samples" "$cpu" 999
[ "$(jq .lost "$WORK/r.json")" = 0 ] || fail "lost samples at 999 Hz on one target"

# Caller -> callee order, rooted at the process name.
grep -Eq '^cpusplit;(.*;)?main;run;work_hot;spin [0-9]+$' "$WORK/r.folded" ||
	fail "no cpusplit;...;main;run;work_hot;spin stack in folded output"
pass "folded stacks are root-first: $(grep -E ';work_hot;spin ' "$WORK/r.folded" | head -n1)"
# Folded counts add up to the samples.
total=$(awk '{ s += $NF } END { print s }' "$WORK/r.folded")
[ "$total" = "$samples" ] || fail "folded total $total != samples $samples"
pass "folded total equals samples ($samples)"
