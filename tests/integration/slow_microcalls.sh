# The slow calls of a handler of a few microseconds, as a user asks for them:
# `sonde record -F 999 --trace handle` then `report --slow handle:auto`,
# `--slow handle:p99` and `--fast handle:auto`. sonde's own cost is as large
# as the calls here (a sample takes 5-45 us from the thread it interrupts on
# this kind of virtual machine, the probe traps ~1.5 us), so this is where
# it must be out of the durations: a sample must not make a call slow, nor
# a correction make a slow call fast.
# microcalls: handle() runs fast_work() (5 us) in every call and slow_fn()
# in every 100th (1%), one thread, in order; it counts its slow calls and
# times all its calls itself.
# slow_fn takes 100 us: at the 60 us of own_cost.sh, the 5 us of fast_work
# inside every slow call (rightly in the slow view) and the samples a
# virtual machine takes right after the host stalled its CPU in a fast call
# (a stalled call is slow, and the sample that fires on resume lands in it:
# 2-5% of the view) leave slow_fn 83-95% of the view, too near 85% to
# assert; at 100 us they leave 90-96% (12 runs on a busy 2-CPU VM).
. "$(dirname "$0")/lib.sh"
require_bpf
# Real-time priority (inherited by the target): other processes on a busy
# machine would preempt the 5 us calls and make them slow for a reason that
# is not sonde's; what is tested here is sonde's own cost.
RT=(chrt -f 10)
"${RT[@]}" true 2>/dev/null || RT=()

N=300000
"${RT[@]}" "$SONDE" record -F 999 --trace handle -o "$WORK/r.sonde" -- \
	"$TARGETS/microcalls" "$N" 5 100 >"$WORK/out.txt"
cat "$WORK/out.txt"
slow_truth=$(kv "$WORK/out.txt" slow)
[ "$slow_truth" = $((N / 100)) ] || fail "the target made $slow_truth calls slow, expected $((N / 100))"
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/all.json"
j='.probes[] | select(.name == "handle")'
[ "$(jq "$j | .kernel_calls" "$WORK/all.json")" = "$N" ] ||
	fail "handle: $(jq "$j | .kernel_calls" "$WORK/all.json") calls counted in the kernel, expected $N"
jq -e "$j | .auto.found" "$WORK/all.json" >/dev/null ||
	fail "auto found no valley between ~5 us and ~105 us calls: $(jq -c "$j | .auto" "$WORK/all.json")"
pass "handle: $N calls; $(jq -r "$j | .auto.reason" "$WORK/all.json")"

# The slow calls are slow_fn's: the samples in them are slow_fn's but for
# fast_work's 5 us in each (5%) and the fast calls the host stalled past
# the threshold. Those are slow (the target's own clock says so too), and a
# sample lands in one as often as in any call as long; how many there were
# is read from the calls no sample landed in (expected_slow_share, lib.sh).
# With the host busy (steal ~10% of both CPUs) it predicted 0.65-0.82 for
# auto and 0.82-0.90 for p99 over 16 runs; the views held their prediction
# -0.02 to +0.09 (a sample landing in a stall runs late, and lateness is
# charged: the stall is partly taken out). The bound is the prediction less
# its sampling error (assert_slow_fn_share). A sample that made fast calls slow takes the view far below
# it: a correction gone wrong left 0.34 against 0.78. Enough samples that
# the share is a measurement: at 150 a share of 0.9 has a standard
# deviation of 0.025.
for t in auto p99; do
	"$SONDE" report "$WORK/r.sonde" --json --slow "handle:$t" >"$WORK/slow-$t.json"
	assert_ge "samples in slow calls ($t)" "$(jq .samples "$WORK/slow-$t.json")" 150
	assert_slow_fn_share "$WORK/r.sonde" "$WORK/all.json" "$WORK/out.txt" "$WORK/slow-$t.json" "$t" \
		"$(awk 'BEGIN { print 100 / 105 }')"
done
"$SONDE" report "$WORK/r.sonde" --json --fast handle:auto >"$WORK/fast.json"
assert_ge "samples in fast calls (auto)" "$(jq .samples "$WORK/fast.json")" 500
assert_le "slow_fn share in fast calls (auto)" "$(function_share "$WORK/fast.json" slow_fn)" 0.03

# A sample must not decide whether its call is slow. Calls with a sample in
# them are classified slow as often as their share of the time predicts (a
# sample lands in a call with a chance in proportion to its length): the
# share of time the target spent in its slow calls, by its own clock. Calls
# without one, as often as the target made slow calls. Both within 2x. (On
# redis, before durations were corrected, 93% of the sampled calls were
# above p99 where their length predicted 7%.)
thr=$(jq "$j | .auto.threshold_ns" "$WORK/all.json")
h="(SELECT id FROM probes WHERE name = 'handle')"
# Every call a sample landed in has a record; all calls are in the kernel's
# histogram (log-linear buckets; the one holding the threshold is split
# evenly, and in the valley it holds next to nothing).
read -r sampled sampled_slow < <(sqlite3 -separator ' ' "$WORK/r.sonde" \
	"SELECT count(*), total(duration_ns > $thr) FROM spans sp WHERE probe = $h AND EXISTS (SELECT 1 FROM sample_spans x WHERE x.span = sp.id)")
read -r all all_slow < <(hist_ranges "$WORK/r.sonde" handle |
	awk -v t="$thr" '{
		lo = $1; hi = $2; c = $3
		n += c; if (lo > t) a += c; else if (hi > t) a += c * (hi - t) / (hi - lo)
	} END { printf "%d %.1f\n", n, a }')
[ "$all" = "$N" ] || fail "the kernel's histogram holds $all calls, expected $N"
# auto's threshold separates the calls the target made slow from the rest:
# above it, those, and the few fast calls stalled longer than it (a tick
# and its softirq, a host's stall: 0.1-0.3% of the fast calls on a 2-CPU
# VM, 0.1-0.3x the slow calls). (Before, auto took a hump of fast calls
# lengthened by interrupts for the slow mode: 3-5x as many calls above a
# threshold of ~7 us.)
assert_ge "calls above the auto threshold / the target's slow calls" \
	"$(awk -v a="$all_slow" -v s="$slow_truth" 'BEGIN { print a / s }')" 0.97
assert_le "calls above the auto threshold / the target's slow calls" \
	"$(awk -v a="$all_slow" -v s="$slow_truth" 'BEGIN { print a / s }')" 1.5
assert_ge "calls with a sample in them" "$sampled" 1000
share_sampled=$(awk -v s="$sampled_slow" -v n="$sampled" 'BEGIN { printf "%.4f", s / n }')
share_unsampled=$(awk -v s="$all_slow" -v ss="$sampled_slow" -v n="$all" -v sn="$sampled" 'BEGIN { printf "%.5f", (s - ss) / (n - sn) }')
time_share=$(awk -v s="$(kv "$WORK/out.txt" slow_ns)" -v a="$(kv "$WORK/out.txt" all_ns)" 'BEGIN { printf "%.4f", s / a }')
assert_ge "sampled calls classified slow ($share_sampled) / the slow calls' share of the target's time ($time_share)" \
	"$(awk -v a="$share_sampled" -v b="$time_share" 'BEGIN { print a / b }')" 0.5
assert_le "sampled calls classified slow ($share_sampled) / the slow calls' share of the target's time ($time_share)" \
	"$(awk -v a="$share_sampled" -v b="$time_share" 'BEGIN { print a / b }')" 2
assert_ge "unsampled calls classified slow ($share_unsampled) / the target's slow calls' share (0.01)" \
	"$(awk -v a="$share_unsampled" -v s="$slow_truth" -v n="$N" 'BEGIN { print a / (s / n) }')" 0.5
assert_le "unsampled calls classified slow ($share_unsampled) / the target's slow calls' share (0.01)" \
	"$(awk -v a="$share_unsampled" -v s="$slow_truth" -v n="$N" 'BEGIN { print a / (s / n) }')" 2
