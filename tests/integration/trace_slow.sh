# The headline question: samples inside slow calls of handle_request are
# dominated by the slow-path function; fast calls are nearly free of it; the
# auto threshold falls between the two modes; the differential flame graph
# shows it.
. "$(dirname "$0")/lib.sh"
require_bpf

REQUESTS_TIMES="$WORK/times" "$SONDE" record -F 999 --all-calls --trace handle_request -o "$WORK/r.sonde" -- "$TARGETS/requests" 1500 >/dev/null
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/all.json"

calls=$(jq '.probes[0].calls' "$WORK/all.json")
[ "$calls" = 1500 ] || fail "handle_request calls: $calls"
thr=$(jq '.probes[0].auto.threshold_ns' "$WORK/all.json")
# How long the calls took by the target's own clock (every 10th is a
# slow-path call): ~100 us and ~2.1 ms on an idle machine, longer when other
# processes take the CPU away.
[ "$(wc -l <"$WORK/times")" = 1500 ] || fail "the target timed $(wc -l <"$WORK/times") calls, expected 1500"
fast_med=$(awk '$2 % 10 != 9 { print $3 }' "$WORK/times" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
slow_min=$(awk '$2 % 10 == 9 { print $3 }' "$WORK/times" | sort -n | head -n1)
slow_max=$(awk '$2 % 10 == 9 { print $3 }' "$WORK/times" | sort -n | tail -n1)
pass "the target timed its fast calls at a median $fast_med ns, its slow-path calls at $slow_min..$slow_max ns"
# The valley lies between: well above the fast calls, below every slow-path call.
assert_ge "auto threshold (ns), over twice the fast calls' median" "$thr" $((2 * fast_med))
assert_le "auto threshold (ns), under the fastest slow-path call - 0.1 ms" "$thr" $((slow_min - 100000))
# A mode among the slow-path calls' durations, and the threshold separating
# the 10% slow-path calls (150 of 1500) from the rest. Modes can split when
# calls are preempted, so the count above the threshold is what is asserted,
# not one mode's share: the calls the target itself timed above it (on a busy
# machine, fast calls preempted long enough are among them). sonde's duration
# of a call lies between the target's inner and outer times (the probe traps,
# and a preemption on leaving one, are only in the outer), less its own cost:
# at least the calls whose inner time is over the threshold + 0.1 ms, at most
# those whose outer time is over it.
# (Modes are estimated from binned durations: 15% / 25% leeway, as the
# 1.8..2.6 ms this asked for around the idle machine's 2.1 ms.)
jq -e --argjson lo $((slow_min * 85 / 100)) --argjson hi $((slow_max * 125 / 100)) \
	'.probes[0].auto.found and any(.probes[0].auto.modes[]; .ns >= $lo and .ns <= $hi)' \
	"$WORK/all.json" >/dev/null || fail "auto: no mode among the slow-path calls: $(jq -c .probes[0].auto "$WORK/all.json")"
pass "auto: a mode among the slow-path calls' durations"
above=$(sqlite3 "$WORK/r.sonde" "SELECT count(*) FROM spans WHERE duration_ns > $thr")
sure=$(awk -v t="$thr" '$3 > t + 100000' "$WORK/times" | wc -l)
maybe=$(awk -v t="$thr" '$4 > t' "$WORK/times" | wc -l)
assert_ge "calls the target timed (inner) over the threshold + 0.1 ms (the slow path's included)" "$sure" 150
assert_ge "calls above the auto threshold" "$above" "$sure"
assert_le "calls above the auto threshold" "$above" "$maybe"
"$SONDE" report "$WORK/r.sonde" --json --slow handle_request:auto >"$WORK/slow.json"
"$SONDE" report "$WORK/r.sonde" --json --fast handle_request:auto >"$WORK/fast.json"
assert_ge "slow_path share in slow calls" "$(function_share "$WORK/slow.json" slow_path)" 0.85
assert_le "slow_path share in fast calls" "$(function_share "$WORK/fast.json" slow_path)" 0.02
# The rest of a fast call is the uprobe round trip in the kernel and libc.
assert_ge "parse_request share in fast calls" "$(function_share "$WORK/fast.json" parse_request)" 0.7

# p95 (default): the slowest 5% are all slow-path calls, and the ones the
# machine disturbed most (in a Debian 12 chroot's run the 2.1 ms slow paths
# took up to 5.8 ms; a sample the VM takes after a stall lands in whatever
# the call ran): 0.80 there, where the auto view held 0.95.
# p95 is read at the top of its histogram bucket, and here it falls in
# the slow-path mode: the view holds the few calls above it (10-28 samples
# over 5 runs; none when every slow-path call is in p95's bucket), so a
# stray sample weighs 0.1. At most a quarter of the samples, and two more,
# are elsewhere (CI's 0.67 was 6 of 9).
"$SONDE" report "$WORK/r.sonde" --json --slow handle_request >"$WORK/p95.json"
n95=$(jq .samples "$WORK/p95.json")
p95=$(jq '.probes[0].p95_ns' "$WORK/all.json")
need_numbers "samples above p95" "$n95" "$p95"
if [ "$n95" = 0 ]; then
	over=$(sqlite3 "$WORK/r.sonde" "SELECT count(*) FROM spans WHERE duration_ns > $p95 AND EXISTS (SELECT 1 FROM sample_spans x WHERE x.span = spans.id)")
	[ "$over" = 0 ] || fail "no samples above p95 ($p95 ns), but $over sampled calls are longer"
	pass "no sampled call above p95 ($p95 ns), none in its view"
else
	in95=$(jq '[.functions[] | select(.name == "slow_path") | .total] | add // 0' "$WORK/p95.json")
	assert_le "samples above p95 outside slow_path (of $n95)" "$(awk -v n="$n95" -v i="$in95" 'BEGIN { print n - i }')" \
		"$(awk -v n="$n95" 'BEGIN { print 0.25 * n + 2 }')"
fi
# An absolute threshold, and --in.
"$SONDE" report "$WORK/r.sonde" --json --slow handle_request:1ms >"$WORK/ms.json"
assert_ge "slow_path share above 1ms" "$(function_share "$WORK/ms.json" slow_path)" 0.85
"$SONDE" report "$WORK/r.sonde" --json --in handle_request >"$WORK/in.json"
# Every sample whose stack holds handle_request is joined to one of its
# calls (the join is by span, so it holds even where a stack through libc is
# cut short), but for a sample at the probe's own trap before the call's
# span begins. What --in leaves out is the target's time between calls:
# timing them and writing their lines to REQUESTS_TIMES, 3-7% of its samples
# on a busy CI machine's disk, so no share of the whole is asserted.
in_stack=$(jq '[.functions[] | select(.name == "handle_request") | .total] | add // 0' "$WORK/all.json")
joined=$(jq '[.functions[] | select(.name == "handle_request") | .total] | add // 0' "$WORK/in.json")
need_numbers "samples with handle_request on the stack, in all and in --in" "$in_stack" "$joined"
assert_ge "samples with handle_request on the stack (of $in_stack) joined to a call" "$joined" $((in_stack - 2 - in_stack / 100))
assert_ge "samples with handle_request on the stack" "$in_stack" $(($(jq .samples "$WORK/all.json") / 2))

"$SONDE" flame "$WORK/r.sonde" --diff-slow handle_request:auto -o "$WORK/diff.svg"
xmllint --noout "$WORK/diff.svg" || fail "differential flame graph is not well-formed"
grep -q 'slow_path' "$WORK/diff.svg" || fail "slow_path missing from the differential graph"
"$SONDE" flame "$WORK/r.sonde" --slow handle_request -o "$WORK/slow.svg"
xmllint --noout "$WORK/slow.svg" || fail "slow-call flame graph is not well-formed"
pass "flame graphs of slow calls and slow vs fast"

# Bad queries: one line, non-zero exit.
expect_error "'nosuch' was not traced in this recording; traced: handle_request" "" -- \
	"$SONDE" report "$WORK/r.sonde" --slow nosuch
expect_error "bad threshold|threshold" "" -- "$SONDE" report "$WORK/r.sonde" --slow handle_request:p101
