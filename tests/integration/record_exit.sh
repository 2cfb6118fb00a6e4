# A target that exits mid-recording: the recording ends cleanly soon after
# (not at -d 20), and its frames are still symbolized although the process
# is gone.
. "$(dirname "$0")/lib.sh"
require_bpf

"$TARGETS/cpusplit" 1.5 wait >"$WORK/target.out" &
BG_PIDS+=($!)
pid=$!
wait_exec "$pid" "$TARGETS/cpusplit"
watch_cpu "$WORK/cpu" "$pid"
"$SONDE" record -F 999 -p "$pid" -d 20 -o "$WORK/r.sonde" --ready-file "$WORK/r.ready" &
sonde=$!
go_when_sampling "$WORK/target.out" "$pid" "$sonde" "$WORK/r.ready"
wait "$sonde" || fail "sonde record failed"
# The recording ended within a second of the target's own end (its last
# CLOCK_MONOTONIC reading, the recording's clock), long before -d 20.
exited=$(kv "$WORK/target.out" end_ns)
[ -n "$exited" ] || fail "the target did not say when it ended"
assert_le "recording end after the target's end (s)" \
	"$(awk -v e="$(meta "$WORK/r.sonde" end_ns)" -v x="$exited" 'BEGIN { print (e - x) / 1e9 }')" 1
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/r.json"
# The samples are what 999 Hz gives over the CPU time it got while recorded.
assert_samples_match_cpu "samples" "$(jq .samples "$WORK/r.json")" "$(cpu_in_recording "$WORK/cpu" "$pid" "$WORK/r.sonde")" 999
assert_share "work_hot share" "$(function_share "$WORK/r.json" work_hot)" "$(kv "$WORK/target.out" hot_share)" "$(jq .samples "$WORK/r.json")"
unknown=$(jq '[.functions[] | select(.name | startswith("[")) | .self] | add // 0' "$WORK/r.json")
assert_le "unresolved leaf samples" "$unknown" "$(jq '.samples * 0.02' "$WORK/r.json")"
