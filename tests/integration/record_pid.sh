# record -p PID attaches to an already running process; -d ends it. The
# number of samples is what 499 Hz gives over the CPU time the target
# actually got while recording (on a busy machine, less than 2 s of it).
. "$(dirname "$0")/lib.sh"
require_bpf

"$TARGETS/cpusplit" 3 wait >"$WORK/target.out" &
BG_PIDS+=($!)
pid=$!
wait_exec "$pid" "$TARGETS/cpusplit"
watch_cpu "$WORK/cpu" "$pid"
"$SONDE" record -F 499 -p "$pid" -d 2 -o "$WORK/r.sonde" --ready-file "$WORK/r.ready" &
sonde=$!
go_when_sampling "$WORK/target.out" "$pid" "$sonde" "$WORK/r.ready"
wait "$sonde" || fail "sonde record failed"
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/r.json"
wait "$pid"

assert_samples_match_cpu "samples" "$(jq .samples "$WORK/r.json")" "$(cpu_in_recording "$WORK/cpu" "$pid" "$WORK/r.sonde")" 499
assert_near "duration" "$(jq .duration_s "$WORK/r.json")" 2 0.3
assert_share "work_hot share" "$(function_share "$WORK/r.json" work_hot)" "$(kv "$WORK/target.out" hot_share)" "$(jq .samples "$WORK/r.json")"
[ "$(jq --argjson p "$pid" '[.threads[] | select(.pid == $p)] | length' "$WORK/r.json")" -ge 1 ] ||
	fail "no samples attributed to PID $pid"
pass "samples attributed to PID $pid"
