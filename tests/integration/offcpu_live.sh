# Off-CPU time in the live commands: `sonde slow --off-cpu` splits each slow
# call into on-CPU and off-CPU time by state, naming the function it waited
# in; `top --off-cpu` counts off-CPU time; `sample off-cpu` turns it on in a
# running session.
. "$(dirname "$0")/lib.sh"
require_bpf

# slow: every slow call of handle_request (>= 4 ms of waiting; the fast
# ones spin 0.3 ms) has its off-CPU time, and the pipe waits are named.
"$TARGETS/blocking" 80 4 wait >"$WORK/s.out" &
target=$!
BG_PIDS+=("$target")
wait_exec "$target" "$TARGETS/blocking"
"$SONDE" slow --off-cpu -p "$target" --ready-file "$WORK/s.ready" handle_request:2ms >"$WORK/slow.txt" 2>"$WORK/slow.err" &
rec=$!
BG_PIDS+=("$rec")
go_when_sampling "$WORK/s.out" "$target" "$rec" "$WORK/s.ready" "$WORK/slow.err"
wait "$target"
wait "$rec" || { cat "$WORK/slow.err"; fail "slow --off-cpu failed"; }
lines=$(grep -Ec ' handle_request  on-CPU (~|<=)' "$WORK/slow.txt") || fail "slow --off-cpu printed no split"
assert_ge "slow calls printed with their on/off-CPU split" "$lines" 15
grep -Eq 'off-CPU [0-9.]+ms: \[sleeping: read\] [0-9.]+ms in wait_pipe' "$WORK/slow.txt" ||
	{ cat "$WORK/slow.txt"; fail "no slow call waiting in read under wait_pipe"; }
pass "$(grep -m1 'in wait_pipe' "$WORK/slow.txt")"
# Each printed call's split adds up to at most its duration: off-CPU time,
# and on-CPU time (its samples at 1/F each, or the bound "<=" the duration
# left) with it; 1% for the printed figures' three digits.
split_within() {
	awk -v dcol="$1" '/ on-CPU (~|<=)[0-9.]+(ns|us|ms|s) / {
		d = $dcol; o = $0; sub(/.* off-CPU /, "", o); sub(/:.*/, "", o)
		c = $0; sub(/.* on-CPU (~|<=)/, "", c); sub(/ .*/, "", c)
		if (to_ns(o) > to_ns(d) * 1.001) { print "off-CPU " o " > duration " d; bad = 1 }
		if (to_ns(c) + to_ns(o) > to_ns(d) * 1.01) { print "on-CPU " c " + off-CPU " o " > duration " d; bad = 1 }
		n++ }
	function to_ns(s,  v) { v = s + 0; if (s ~ /us$/) return v * 1e3; if (s ~ /ms$/) return v * 1e6;
		if (s ~ /ns$/) return v; return v * 1e9 }
	END { exit bad || !n }' "$2"
}
split_within 2 "$WORK/slow.txt" || fail "a call's split is longer than the call (or no split)"
pass "no call's on-CPU + off-CPU time is longer than the call"

# top --off-cpu: the window counts off-CPU time (snapshots every second
# while the target runs ~2 s); `sample off-cpu` in a session started
# without it.
"$TARGETS/blocking" 40 4 wait >"$WORK/t.out" &
target=$!
BG_PIDS+=("$target")
wait_exec "$target" "$TARGETS/blocking"
"$SONDE" top -b -i 1 --no-ctl -p "$target" --cmd 'sample off-cpu' --ready-file "$WORK/t.ready" >"$WORK/top.txt" 2>"$WORK/top.err" &
rec=$!
BG_PIDS+=("$rec")
go_when_sampling "$WORK/t.out" "$target" "$rec" "$WORK/t.ready" "$WORK/top.err"
wait "$target"
wait "$rec" || { cat "$WORK/top.err"; fail "top failed"; }
grep -q 'recording off-CPU intervals too' "$WORK/top.txt" || { cat "$WORK/top.txt"; fail "sample off-cpu did not answer"; }
pass "sample off-cpu: $(grep -m1 'recording off-CPU' "$WORK/top.txt")"
"$TARGETS/blocking" 1600 4 wait >"$WORK/o.out" &
target=$!
BG_PIDS+=("$target")
wait_exec "$target" "$TARGETS/blocking"
"$SONDE" top -b -i 1 --no-ctl -p "$target" --off-cpu --trace handle_request --cmd "slow handle_request 2ms" \
	--ready-file "$WORK/o.ready" >"$WORK/off.txt" 2>"$WORK/off.err" &
rec=$!
BG_PIDS+=("$rec")
go_when_sampling "$WORK/o.out" "$target" "$rec" "$WORK/o.ready" "$WORK/off.err"
wait "$target"
wait "$rec" || { cat "$WORK/off.err"; fail "top --off-cpu failed"; }
grep -Eq '^window: .* of off-CPU time in view' "$WORK/off.txt" || { cat "$WORK/off.txt"; fail "top --off-cpu does not count off-CPU time"; }
grep -q '\[sleeping: read\]' "$WORK/off.txt" || fail "top --off-cpu shows no [sleeping: read]"
pass "top --off-cpu: $(grep -m1 '^window:' "$WORK/off.txt")"
# The probe block's slow calls (as the TUI's probe panel shows them; slow
# is "over 2 ms": the blocking calls wait >= 4 ms, the others spin 0.3 ms,
# where a percentile threshold can fall among the waits and list none): each
# with its time split, on the CPU and off it by state, the function it
# waited in; on-CPU and off-CPU time never more than the call lasted.
grep -E '^ +[0-9.]+(us|ms|s) +[0-9.]+(us|ms|s) ago +[0-9]+ +[0-9]+ .*  on-CPU (~|<=)[0-9.]+(ns|us|ms|s) off-CPU [0-9.]+(us|ms|s): \[' \
	"$WORK/off.txt" >"$WORK/split.txt" || { cat "$WORK/off.txt"; fail "top --off-cpu: no slow call with its on/off-CPU split"; }
grep -Eq 'off-CPU [0-9.]+ms: .*\[sleeping: (read|futex|clock_nanosleep)\] [0-9.]+(us|ms) in wait_(pipe|lock|sleep)' "$WORK/split.txt" ||
	{ cat "$WORK/split.txt"; fail "no slow call's split names its wait under wait_pipe/wait_lock/wait_sleep"; }
split_within 1 "$WORK/split.txt" || fail "top: a slow call's split is longer than the call"
pass "top --off-cpu: $(wc -l <"$WORK/split.txt") slow-call rows with their split, e.g. $(grep -m1 -o 'on-CPU.*' "$WORK/split.txt")"
