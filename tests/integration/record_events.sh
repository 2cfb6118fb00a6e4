# Other events: software events by count, tracepoints, system-wide mode.
. "$(dirname "$0")/lib.sh"
require_bpf

# page-faults, every fault (-c 1): a fresh process faults in its pages.
"$SONDE" record -e page-faults -c 1 -o "$WORK/pf.sonde" -- "$TARGETS/cpusplit" 0.2 >/dev/null
"$SONDE" report "$WORK/pf.sonde" --json >"$WORK/pf.json"
[ "$(jq -r .event "$WORK/pf.json")" = page-faults ] || fail "event name not recorded"
assert_ge "page-fault samples" "$(jq .samples "$WORK/pf.json")" 20
# Faults are taken in the kernel on behalf of user code: user frames exist.
jq -e '.functions[] | select(.name == "main")' "$WORK/pf.json" >/dev/null ||
	fail "no user frames (main) in page-fault stacks"
pass "page-fault stacks reach main"

# A tracepoint: sched:sched_switch, every context switch of the target.
"$SONDE" record -e sched:sched_switch -o "$WORK/sw.sonde" -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.01; done'
"$SONDE" report "$WORK/sw.sonde" --json >"$WORK/sw.json"
assert_ge "sched_switch samples" "$(jq .samples "$WORK/sw.json")" 10
"$SONDE" report "$WORK/sw.sonde" --folded >"$WORK/sw.folded"
grep -q '__schedule_\[k\]' "$WORK/sw.folded" || fail "no kernel frame __schedule_[k] in sched_switch stacks"
pass "kernel stacks of sched_switch end in __schedule_[k]"

# System-wide: two busy processes that sonde was not told about are both seen,
# each as often as 99 Hz gives over the CPU time it got while recorded. They
# start once sonde samples (on a busy machine starting can take a while).
"$TARGETS/cpusplit" 4 wait >"$WORK/busy1.out" &
BG_PIDS+=($!)
busy1=$!
"$TARGETS/cpusplit" 4 wait >"$WORK/busy2.out" &
BG_PIDS+=($!)
busy2=$!
watch_cpu "$WORK/cpu" "$busy1" "$busy2"
"$SONDE" record -a -F 99 -d 2 -o "$WORK/all.sonde" --ready-file "$WORK/all.ready" &
sonde=$!
go_when_sampling "$WORK/busy1.out" "$busy1" "$sonde" "$WORK/all.ready"
go_when_sampling "$WORK/busy2.out" "$busy2" "$sonde" "$WORK/all.ready"
wait "$sonde" || fail "sonde record -a failed"
"$SONDE" report "$WORK/all.sonde" --json >"$WORK/all.json"
for p in "$busy1" "$busy2"; do
	assert_samples_match_cpu "system-wide samples of busy PID $p" \
		"$(jq --argjson p "$p" '[.threads[] | select(.pid == $p) | .samples] | add // 0' "$WORK/all.json")" \
		"$(cpu_in_recording "$WORK/cpu" "$p" "$WORK/all.sonde")" 99
done
