# sonde's own cost out of the measurements: on calls of ~5 us, a sample
# (~10 us of interrupt) and a nested traced call (~1.5 us of traps) are as
# long as the calls. Durations must be corrected for them, or the sampled
# calls all look slow and "slow calls" means "calls sonde interrupted".
# microcalls: handle() does ~5 us of work in fast_work(); every 100th call
# (index 99, 199, ...) also runs slow_fn() (~60 us). One thread, in order.
. "$(dirname "$0")/lib.sh"
require_bpf
RT=(chrt -f 10)
"${RT[@]}" true 2>/dev/null || RT=()

N=150000
# Real-time priority (inherited by the target): on a busy machine other
# processes would preempt the 5 us calls, and a preempted call is slow on
# the wall clock for a reason that is not sonde's. What is tested here is
# sonde's own cost.
# (--all-calls sends 300,000 records in ~1.5 s: a 64 MiB buffer holds them
# all should sonde's reader be held up on a busy machine; 16 MiB lost 47,000.)
"${RT[@]}" "$SONDE" record -F 999 --buffer-mb 64 --all-calls --trace handle --trace fast_work -o "$WORK/r.sonde" -- \
	"$TARGETS/microcalls" "$N" >"$WORK/out.txt"
slow_truth=$(kv "$WORK/out.txt" slow)
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/all.json"

# Exact counts, and every call's record received (the join below needs them).
for f in handle fast_work; do
	j=".probes[] | select(.name == \"$f\")"
	[ "$(jq "$j | .calls" "$WORK/all.json")" = "$N" ] || fail "$f calls received: $(jq "$j | .calls" "$WORK/all.json")"
	[ "$(jq "$j | .kernel_calls" "$WORK/all.json")" = "$N" ] || fail "$f kernel calls"
	[ "$(jq "$j | .entered" "$WORK/all.json")" = "$N" ] || fail "$f entered"
done
pass "handle and fast_work: $N calls each, counted in the kernel and received"

# The nested traced call (fast_work) costs handle its traps and handlers
# (0.8-3 us, as calibrated at the start: calib_call_full_ns); the corrected
# durations take it out: handle's median is fast_work's, give or take the
# few instructions handle adds and what is left of the traps' jitter (raw
# medians differ by the whole cost).
p50_h=$(jq '.probes[] | select(.name == "handle") | .p50_ns' "$WORK/all.json")
p50_f=$(jq '.probes[] | select(.name == "fast_work") | .p50_ns' "$WORK/all.json")
raw_p50_h=$(sqlite3 "$WORK/r.sonde" "SELECT raw_duration_ns FROM spans WHERE probe = (SELECT id FROM probes WHERE name = 'handle') ORDER BY raw_duration_ns LIMIT 1 OFFSET $((N / 2))")
call_cost=$(meta "$WORK/r.sonde" calib_call_full_ns)
assert_ge "handle raw p50 - corrected p50 (ns): the nested call's traps (calibrated: $call_cost)" \
	"$((raw_p50_h - p50_h))" "$(awk -v c="$call_cost" 'BEGIN { print 0.6 * c }')"
assert_near "handle p50 - fast_work p50 (ns), corrected" "$((p50_h - p50_f))" 0 1000

# The headline question on these calls: slow calls are slow_fn's. Before
# durations were corrected, auto put 18% of slow_fn in the slow view here:
# the threshold fell between fast calls and fast calls with a sample in them.
# Then, until auto took the deepest valley above the main mode, it fell
# between the fast calls and humps of fast calls lengthened by interrupts
# (53-77%). Now 84-93% (auto) and 76-94% (p99) over eight runs on a busy
# 2-CPU VM: a slow call here is fast_work's 5 us and slow_fn's 60 us, so
# ~8% of its samples are rightly fast_work's, and a sample the VM takes
# right after the host stalled it lands in whatever (fast) call was
# stalled. With exactly 1% slow calls, p99 sits on the slow mode's lower
# edge and loses the slow calls a sample's correction left a little short.
# Since the sample cost is measured in the run (its median, never the 90th
# percentile that made every sampled call look fast), the rest is the host:
# the fast calls it stalls past the threshold are slow, and samples land in
# them. Their share is read from the calls no sample landed in
# (assert_slow_fn_share, lib.sh, as slow_microcalls.sh does; slow_fn's 60 us
# are 60/65 of a slow call): the views held -0.08..+0.08 around it over six
# runs on a busy 2-CPU VM, -0.13..+0.06 over twelve on one whose samples
# cost 50 us (calibrated). p99 is not asserted here: with exactly 1% slow
# calls and the host's stalls of 40-60 us beside them it lies inside the
# slow calls' own mode (CI's run: 0.41 against 0.74 predicted), where the
# share turns on how each slow call's correction falls around it;
# slow_microcalls.sh, whose slow calls stand far from the stalls, asserts it.
# (Checked after the calls' own truth below, which says first whether a
# failure here is sampled fast calls the correction left slow.)

# A sample must not make a call slow. Each call's truth is its index (the
# calls run in order on one thread). Among the calls that were fast by
# construction and had a sample in them, the share above a threshold
# between the modes (20 us: this measures the correction, not where auto
# puts its threshold), with corrected durations and with raw ones (raw: the
# threshold at the same percentile of raw durations).
thr=20000
h="(SELECT id FROM probes WHERE name = 'handle')"
# (h is MATERIALIZED: computed once, not once for each use; 70 s -> 1 s)
sqlite3 "$WORK/r.sonde" >"$WORK/misclass.txt" <<SQL
WITH h AS MATERIALIZED (SELECT sp.id, sp.duration_ns AS d, sp.raw_duration_ns AS r,
	(row_number() OVER (ORDER BY sp.start_ns) - 1) % 100 = 99 AS truly_slow,
	EXISTS (SELECT 1 FROM sample_spans ss WHERE ss.span = sp.id) AS sampled
	FROM spans sp WHERE sp.probe = $h),
q AS (SELECT avg(d <= $thr) AS below FROM h),
raw_thr AS (SELECT r AS t FROM h ORDER BY r LIMIT 1 OFFSET (SELECT CAST(below * count(*) AS INT) FROM q, h))
SELECT sampled, count(*), avg(d > $thr), avg(r > (SELECT t FROM raw_thr)) FROM h
WHERE NOT truly_slow GROUP BY sampled ORDER BY sampled;
SQL
cat "$WORK/misclass.txt"
unsampled_share=$(sed -n 1p "$WORK/misclass.txt" | cut -d'|' -f3)
sampled_n=$(sed -n 2p "$WORK/misclass.txt" | cut -d'|' -f2)
sampled_share=$(sed -n 2p "$WORK/misclass.txt" | cut -d'|' -f3)
sampled_raw_share=$(sed -n 2p "$WORK/misclass.txt" | cut -d'|' -f4)
assert_ge "fast calls with a sample in them" "$sampled_n" 100
# An unsampled fast call above 20 us was stalled by the machine (a tick and
# its softirq, a host's stall): 0.2% on a quiet 2-CPU VM, 1.2% on CI's.
assert_le "unsampled fast calls classified slow" "$unsampled_share" 0.03
assert_le "sampled fast calls classified slow (raw durations: $sampled_raw_share)" "$sampled_share" 0.2
assert_le "sampled fast calls classified slow, corrected / raw" \
	"$(awk -v c="$sampled_share" -v r="$sampled_raw_share" 'BEGIN { print (r > 0 ? c / r : 1) }')" 0.34

"$SONDE" report "$WORK/r.sonde" --json --slow "handle:auto" >"$WORK/slow.json"
assert_slow_fn_share "$WORK/r.sonde" "$WORK/all.json" "$WORK/out.txt" "$WORK/slow.json" auto \
	"$(awk 'BEGIN { print 60 / 65 }')"
"$SONDE" report "$WORK/r.sonde" --json --fast handle:auto >"$WORK/fast.json"
assert_le "slow_fn share in fast calls (auto)" "$(function_share "$WORK/fast.json" slow_fn)" 0.03
thr=$(jq '.probes[] | select(.name == "handle") | .auto.threshold_ns' "$WORK/all.json")
jq -e '.probes[] | select(.name == "handle") | .auto.found' "$WORK/all.json" >/dev/null ||
	fail "auto found no valley between ~5 us and ~65 us calls"
assert_ge "auto threshold (ns), between the modes" "$thr" 6000
assert_le "auto threshold (ns), between the modes" "$thr" 60000

# Samples of sonde's own machinery: one frame "[sonde]", left out of views
# unless asked for, and reported.
osamples=$(jq '.overhead.samples' "$WORK/all.json")
assert_ge "samples inside sonde's probe machinery" "$osamples" 1
jq -e '[.functions[].name] | index("[sonde]") == null' "$WORK/all.json" >/dev/null ||
	fail "[sonde] frames in the default view"
"$SONDE" report "$WORK/r.sonde" --json --show-overhead >"$WORK/with.json"
[ "$(jq '.samples' "$WORK/with.json")" = "$(($(jq '.samples' "$WORK/all.json") + osamples))" ] ||
	fail "--show-overhead: $(jq '.samples' "$WORK/with.json") samples, expected all + $osamples"
jq -e '[.functions[] | select(.name == "[sonde]")] | length == 1' "$WORK/with.json" >/dev/null ||
	fail "--show-overhead has no [sonde] frame"
pass "[sonde]: $osamples samples, left out by default, kept with --show-overhead"
"$SONDE" report "$WORK/r.sonde" >"$WORK/report.txt"
grep -q "samples (.*) were taken inside sonde's probe machinery" "$WORK/report.txt" ||
	fail "the text report does not say how much sonde took"
grep -Eq "inside traced calls: .* of .* measured" "$WORK/report.txt" ||
	fail "the text report does not say how much time sonde took inside calls"
pass "the text report states sonde's own cost"

# The uretprobes replace the traced calls' return addresses on the stack with
# their trampoline's; samples put the real ones back, so stacks through
# traced calls reach main (before: [broken stack: uprobes] above fast_work).
"$SONDE" report "$WORK/r.sonde" --folded >"$WORK/r.folded"
in_fast=$(awk '/;fast_work;/ { s += $NF } END { print s + 0 }' "$WORK/r.folded")
whole=$(awk '/^microcalls;(_start;__libc_start_main_impl;)?__libc_start_call_main;main;handle;fast_work;/ { s += $NF } END { print s + 0 }' "$WORK/r.folded")
assert_ge "samples in fast_work" "$in_fast" 200
assert_ge "share of fast_work's samples whose stack reaches main through handle" \
	"$(awk -v a="$whole" -v b="$in_fast" 'BEGIN { print a / b }')" 0.97
