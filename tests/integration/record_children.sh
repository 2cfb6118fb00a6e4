# A command that forks: the child process is followed and sampled too.
. "$(dirname "$0")/lib.sh"
require_bpf

"$SONDE" record -F 499 -o "$WORK/r.sonde" -- "$TARGETS/forker" 2
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/r.json"
pids=$(jq '[.threads[].pid] | unique | length' "$WORK/r.json")
[ "$pids" -ge 2 ] || fail "expected samples from the parent and the child, got $pids process(es)"
pass "parent and child sampled"
assert_near "child_work share" "$(function_share "$WORK/r.json" child_work)" 0.5 0.08
assert_near "parent_work share" "$(function_share "$WORK/r.json" parent_work)" 0.5 0.08
