# One-shot live commands: lat (histograms, intervals, -p) and slow (each slow
# call as it ends, the slow-vs-fast summary, the differential SVG).
. "$(dirname "$0")/lib.sh"
require_bpf

"$SONDE" lat handle_request slow_path -- "$TARGETS/requests" 300 >"$WORK/lat.out" 2>"$WORK/lat.err"
grep -q '^handle_request: 300 calls, mean' "$WORK/lat.out" || { cat "$WORK/lat.out"; fail "lat: handle_request line"; }
grep -q '^slow_path: 30 calls, mean' "$WORK/lat.out" || fail "lat: slow_path line"
grep -Eq '^ +[0-9.]+[num]?s -> +[0-9.]+[num]?s +: +[0-9]+ \|\*+ *\|$' "$WORK/lat.out" || fail "lat: no histogram rows"
pass "lat: exact counts and histograms"

# Intervals, on a running process that exits: every interval prints, the
# totals add up, and the command ends with the process.
# (It starts once lat's probe is in its memory: no sleep decides the count.)
REQUESTS_WAIT_TRACED=1 "$TARGETS/requests" 5000 >/dev/null &
BG_PIDS+=($!)
pid=$!
wait_exec "$pid" "$TARGETS/requests"
"$SONDE" lat -i 0.2 -p "$pid" handle_request >"$WORK/int.out" 2>/dev/null
intervals=$(grep -c '^\[[0-9:]*\]$' "$WORK/int.out")
assert_ge "interval reports" "$intervals" 2
total=$(awk '/^All calls:/ { all = 1 } all && /^handle_request:/ { print $2 }' "$WORK/int.out")
sum=$(awk '/^All calls:/ { exit } /^handle_request:/ { s += $2 } END { print s }' "$WORK/int.out")
[ "$total" = "$sum" ] || fail "interval counts ($sum) do not add up to the total ($total)"
pass "interval counts add up to the total ($total)"

REQUESTS_TIMES="$WORK/times" "$SONDE" slow -o "$WORK/diff.svg" handle_request:1ms -- "$TARGETS/requests" 300 >"$WORK/slow.out" 2>/dev/null
lines=$(grep -c '^[0-9]\+ \+[0-9.]\+ms  handle_request  \[' "$WORK/slow.out")
# The calls slower than 1 ms are those the target itself timed over 1 ms: the
# 30 slow-path calls, and on a busy machine the fast ones preempted for long
# enough. sonde's duration lies between the target's inner and outer times
# (the probe traps, and a preemption on leaving one, are only in the outer),
# less its own cost: at least the calls whose inner time is over 1.1 ms, at
# most those whose outer time is over 1 ms.
[ "$(wc -l <"$WORK/times")" = 300 ] || fail "the target timed $(wc -l <"$WORK/times") calls, expected 300"
sure=$(awk '$3 > 1100000' "$WORK/times" | wc -l)
maybe=$(awk '$4 > 1000000' "$WORK/times" | wc -l)
assert_ge "calls the target timed (inner) over 1.1 ms (the slow path's included)" "$sure" 30
assert_ge "slow calls printed" "$lines" "$sure"
assert_le "slow calls printed" "$lines" "$maybe"
grep -q 'in: slow_path' "$WORK/slow.out" || fail "slow: samples of slow calls not attributed to slow_path"
first=$(awk '/grew most in slow calls/ { getline; getline; print $NF; exit }' "$WORK/slow.out")
[ "$first" = slow_path ] || fail "slow: top growth frame is '$first', expected slow_path"
pass "slow: summary puts slow_path first"
xmllint --noout "$WORK/diff.svg" || fail "slow -o: SVG not well-formed"

expect_error "name at least one function" "" -- "$SONDE" lat -- "$TARGETS/requests" 10
expect_error "no function 'nosuch'" "" -- "$SONDE" slow nosuch -- "$TARGETS/requests" 10
