# A target that exits mid-recording: the recording ends cleanly, and its
# frames are still symbolized although the process is gone.
. "$(dirname "$0")/lib.sh"
require_bpf

"$TARGETS/cpusplit" 1.5 >"$WORK/target.out" &
BG_PIDS+=($!)
pid=$!
sleep 0.2
start=$(date +%s.%N)
"$SONDE" record -F 999 -p "$pid" -d 20 -o "$WORK/r.sonde"
elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
assert_le "record ended after the target exited (s)" "$elapsed" 4
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/r.json"
# ~1.3 s of one CPU at 999 Hz; at least half of that even on a loaded machine.
assert_ge "samples" "$(jq .samples "$WORK/r.json")" 650
assert_near "work_hot share" "$(function_share "$WORK/r.json" work_hot)" "$(kv "$WORK/target.out" hot_share)" 0.05
unknown=$(jq '[.functions[] | select(.name | startswith("[")) | .self] | add // 0' "$WORK/r.json")
assert_le "unresolved leaf samples" "$unknown" "$(jq '.samples * 0.02' "$WORK/r.json")"
