# A multi-threaded target: every worker thread is sampled (threads created
# after attach included), and the two worker functions split evenly.
. "$(dirname "$0")/lib.sh"
require_bpf

"$TARGETS/threads" 3 4 >"$WORK/target.out" &
BG_PIDS+=($!)
pid=$!
sleep 0.05 # attach before the threads are created (they start after 100 ms)
"$SONDE" record -F 199 -p "$pid" -o "$WORK/r.sonde"
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/r.json"

tids=$(jq --argjson p "$pid" '[.threads[] | select(.pid == $p and .tid != $p and .samples > 50)] | length' "$WORK/r.json")
[ "$tids" -eq 4 ] || fail "expected 4 sampled worker threads, got $tids"
pass "4 worker threads sampled"
even=$(function_share "$WORK/r.json" worker_even)
odd=$(function_share "$WORK/r.json" worker_odd)
assert_near "worker_even share" "$even" 0.5 0.07
assert_near "worker_odd share" "$odd" 0.5 0.07
# The recording ended by itself when the process exited (-p without -d).
assert_le "duration" "$(jq .duration_s "$WORK/r.json")" 4.5
