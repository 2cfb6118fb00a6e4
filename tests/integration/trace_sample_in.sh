# In-kernel sampling decisions: --sample-in takes no sample outside the
# function; --sample-slow only once the current call ran past the duration.
. "$(dirname "$0")/lib.sh"
require_bpf

"$SONDE" record -F 999 --trace handle_request --sample-in slow_path -o "$WORK/in.sonde" -- \
	"$TARGETS/requests" 600 >/dev/null
"$SONDE" report "$WORK/in.sonde" --json >"$WORK/in.json"
samples=$(jq .samples "$WORK/in.json")
assert_ge "samples inside slow_path" "$samples" 50
# Every sample must have been taken inside a call of slow_path: by the
# span join (the calls in flight on the thread when it was taken), not by
# its stack, which a frame-pointer walk through libc (no frame pointers)
# can cut short above slow_path. All samples = samples inside slow_path.
# Run as n=$(outside FILE): a report that fails ends the test there (set -e),
# it never reads as "0 outside".
outside() {
	local all in
	all=$("$SONDE" report "$1" --json --show-overhead | jq -e .samples) || fail "report $1"
	in=$("$SONDE" report "$1" --json --show-overhead --in slow_path | jq -e .samples) ||
		fail "report --in slow_path $1"
	[[ $all =~ ^[0-9]+$ && $in =~ ^[0-9]+$ ]] || fail "report $1: '$all' samples, '$in' inside slow_path"
	echo $((all - in))
}
n=$(outside "$WORK/in.sonde")
[ "$n" = 0 ] || fail "--sample-in slow_path: $n samples outside slow_path"
pass "--sample-in: all $samples samples are inside slow_path (or its return probe)"

# slow_path runs ~2 ms of CPU; sampling only once a call has run 1 ms keeps
# the samples of the part of each call past 1 ms: about half of them on an
# idle machine, more on a busy one, where a call takes longer than its CPU
# time. Expected: each call's share of its wall time past 1 ms (its CPU
# spread evenly over it), from the call durations of the same recording.
"$SONDE" record -F 999 --all-calls --sample-slow slow_path:1ms -o "$WORK/slow.sonde" -- \
	"$TARGETS/requests" 600 >/dev/null
"$SONDE" report "$WORK/slow.sonde" --json >"$WORK/slow.json"
s2=$(jq .samples "$WORK/slow.json")
n=$(outside "$WORK/slow.sonde")
[ "$n" = 0 ] || fail "--sample-slow: $n samples outside slow_path"
early=$(sqlite3 "$WORK/slow.sonde" "SELECT count(*) FROM samples s JOIN sample_spans ss ON ss.sample = s.id
	JOIN spans sp ON sp.id = ss.span WHERE s.time_ns - sp.start_ns < 950000")
[ "$early" = 0 ] || fail "--sample-slow slow_path:1ms: $early samples taken in the first 1 ms of a call"
pass "--sample-slow: no sample in the first 1 ms of a call"
past=$(sqlite3 "$WORK/slow.sonde" "SELECT avg(max(duration_ns - 1000000, 0) * 1.0 / duration_ns) FROM spans")
assert_near "samples after 1ms of slow_path vs all of it" "$(awk -v a="$s2" -v b="$samples" 'BEGIN{print a/b}')" "$past" 0.2

expect_error "sample-slow needs FUNC:DURATION" "$WORK/x.sonde" -- "$SONDE" record --sample-slow slow_path -o "$WORK/x.sonde" -- "$TARGETS/requests" 10
