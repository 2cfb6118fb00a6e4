# The own-cost correction's property on targets whose calls are known: the
# calls a sample landed in last, once corrected, what the calls none landed
# in last, per mode (assert_mode_medians, lib.sh: medians within 10% or
# 0.5 us). On microseconds (microcalls: 5 us calls, 1% of 105 us, 999 Hz:
# a sample costs a call as much as the call lasts) and milliseconds
# (requests: 0.1 ms calls, 10% of 2.1 ms, 99 Hz so that most slow calls
# have no sample), each quiet and with a CPU-bound process on every core
# (where a start-up calibration once made every sampled call fast). The
# residual is read from the fast mode; the slow mode is the check that a
# sample costs a long call what it costs a short one.
. "$(dirname "$0")/lib.sh"
require_bpf
# Real-time priority (inherited by the targets): other processes would
# preempt the calls, and a preempted call draws no sample while it waits,
# which is not what is measured here.
RT=(chrt -f 10)
"${RT[@]}" true 2>/dev/null || RT=()

run() {
	local name=$1
	"${RT[@]}" "$SONDE" record -F 999 --buffer-mb 64 --all-calls --trace handle \
		-o "$WORK/$name-us.sonde" -- "$TARGETS/microcalls" 300000 5 100 >"$WORK/$name-us.out"
	assert_mode_medians "$name: microcalls" "$WORK/$name-us.sonde" handle 30000
	"${RT[@]}" "$SONDE" record -F 99 --buffer-mb 64 --all-calls --trace handle_request \
		-o "$WORK/$name-ms.sonde" -- "$TARGETS/requests" 6000 >"$WORK/$name-ms.out"
	assert_mode_medians "$name: requests" "$WORK/$name-ms.sonde" handle_request 500000
}

run_quiet_and_loaded run
