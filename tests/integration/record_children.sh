# A command that forks: the child process is followed and sampled too, each
# process as often as its own CPU time gives at 499 Hz, and the two functions
# split as the two processes' CPU times do (evenly on an idle machine).
. "$(dirname "$0")/lib.sh"
require_bpf

"$SONDE" record -F 499 -o "$WORK/r.sonde" -- "$TARGETS/forker" 2 >"$WORK/target.out"
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/r.json"
pids=$(jq '[.threads[].pid] | unique | length' "$WORK/r.json")
[ "$pids" -ge 2 ] || fail "expected samples from the parent and the child, got $pids process(es)"
pass "parent and child sampled"
for who in child parent; do
	line=$(grep "^$who " "$WORK/target.out") || fail "the $who did not report its CPU time"
	pid=$(sed -n 's/.* pid=\([0-9]*\).*/\1/p' <<<"$line")
	cpu=$(sed -n 's/.* cpu_s=\([0-9.]*\).*/\1/p' <<<"$line")
	assert_samples_match_cpu "samples of the $who ($pid)" \
		"$(jq --argjson p "$pid" '[.threads[] | select(.pid == $p) | .samples] | add // 0' "$WORK/r.json")" "$cpu" 499
done
child_cpu=$(awk -F'cpu_s=' '/^child / { c = $2 } /^parent / { p = $2 } END { print c / (c + p) }' "$WORK/target.out")
assert_near "child_work share" "$(function_share "$WORK/r.json" child_work)" "$child_cpu" 0.05
assert_near "parent_work share" "$(function_share "$WORK/r.json" parent_work)" "$(awk -v c="$child_cpu" 'BEGIN { print 1 - c }')" 0.05
