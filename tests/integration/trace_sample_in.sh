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
outside() {
	local all in
	all=$("$SONDE" report "$1" --json --show-overhead | jq .samples) || fail "report $1"
	in=$("$SONDE" report "$1" --json --show-overhead --in slow_path | jq .samples) || fail "report --in $1"
	echo $((all - in))
}
[ "$(outside "$WORK/in.sonde")" = 0 ] || fail "--sample-in slow_path: samples outside slow_path"
pass "--sample-in: all $samples samples are inside slow_path (or its return probe)"

# slow_path runs ~2ms; sampling only after 1ms of it keeps about half of its samples.
"$SONDE" record -F 999 --sample-slow slow_path:1ms -o "$WORK/slow.sonde" -- \
	"$TARGETS/requests" 600 >/dev/null
"$SONDE" report "$WORK/slow.sonde" --json >"$WORK/slow.json"
s2=$(jq .samples "$WORK/slow.json")
[ "$(outside "$WORK/slow.sonde")" = 0 ] || fail "--sample-slow: samples outside slow_path"
assert_near "samples after 1ms of slow_path vs all of it" "$(awk -v a="$s2" -v b="$samples" 'BEGIN{print a/b}')" 0.5 0.2

expect_error "sample-slow needs FUNC:DURATION" "$WORK/x.sonde" -- "$SONDE" record --sample-slow slow_path -o "$WORK/x.sonde" -- "$TARGETS/requests" 10
