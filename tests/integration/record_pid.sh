# record -p PID attaches to an already running process; -d ends it.
. "$(dirname "$0")/lib.sh"
require_bpf

"$TARGETS/cpusplit" 5 >"$WORK/target.out" &
BG_PIDS+=($!)
pid=$!
sleep 0.5
"$SONDE" record -F 499 -p "$pid" -d 2 -o "$WORK/r.sonde"
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/r.json"
wait "$pid"

samples=$(jq .samples "$WORK/r.json")
assert_near "samples in 2 s at 499 Hz" "$samples" 998 150
assert_near "duration" "$(jq .duration_s "$WORK/r.json")" 2 0.3
assert_near "work_hot share" "$(function_share "$WORK/r.json" work_hot)" "$(kv "$WORK/target.out" hot_share)" 0.05
[ "$(jq --argjson p "$pid" '[.threads[] | select(.pid == $p)] | length' "$WORK/r.json")" -ge 1 ] ||
	fail "no samples attributed to PID $pid"
pass "samples attributed to PID $pid"
