# JIT names outlive their process: tests/targets/jit (see record_jit.sh)
# removes its perf map and exits a second before the recording ends. The
# names must all be in the recording all the same: the map is read while
# the process runs and kept open, so the last samples, drained after the
# exit, and the function added to the map late are named too. (The unit
# test test_perfmap symbolizes a process that has exited and removed its
# map step by step.)
. "$(dirname "$0")/lib.sh"
require_bpf
[ "$(uname -m)" = x86_64 ] || skip "the jit target generates x86-64 code"

"$SONDE" record -F 999 -o "$WORK/r.sonde" -- sh -c '"$0" 2 unlink; sleep 1' "$TARGETS/jit" \
	>"$WORK/target.out"
pid=$(kv "$WORK/target.out" pid)
[ -n "$pid" ] || fail "the target printed no pid: $(cat "$WORK/target.out")"
[ ! -e "/tmp/perf-$pid.map" ] || { rm -f "/tmp/perf-$pid.map"; fail "the target did not remove its map"; }
pass "the target removed /tmp/perf-$pid.map before it exited"

# The recording went on after the target ended.
last=$(sqlite3 "$WORK/r.sonde" "SELECT max(s.time_ns) FROM samples s JOIN threads t ON t.id = s.thread
	WHERE t.pid = $pid")
end=$(meta "$WORK/r.sonde" end_ns)
assert_ge "seconds recorded after the target's last sample" "$(awk -v l="$last" -v e="$end" 'BEGIN { print (e - l) / 1e9 }')" 0.5

"$SONDE" report "$WORK/r.sonde" --folded >"$WORK/r.folded"
count() { RE="$1" awk '/^jit;/ && $0 ~ ENVIRON["RE"] { s += $NF } END { print s + 0 }' "$WORK/r.folded"; }
share() { awk -v g="$1" -v a="$2" 'BEGIN { print a ? g / a : 0 }'; }

all1=$(count ';run_jit(;| )')
good1=$(count ';main;run_jit;jit_hot_loop_\[j\](;| )')
all2=$(count ';run_jit_later(;| )')
re2=$(count ';main;run_jit_later;jit_recompiled_loop_\[j\](;| )')
second=$(count ';main;run_jit_later;LazyCompile:\*jit_second_loop /app/jit\.js:7_\[j\](;| )')
assert_ge "phase 1 samples" "$all1" 50
assert_ge "phase 2 samples" "$all2" 50
assert_ge "share of phase 1 named main;run_jit;jit_hot_loop ($good1 of $all1)" "$(share "$good1" "$all1")" 0.9
assert_ge "share of phase 2 named by the map's later lines ($re2 + $second of $all2)" \
	"$(share $((re2 + second)) "$all2")" 0.9
assert_ge "share of phase 2 in the function added late (half the calls)" "$(share "$second" "$all2")" 0.3
unnamed=$(count ';run_jit(_later)?;\[unknown\]')
assert_le "JIT samples left [unknown]" "$unnamed" "$(((all1 + all2) / 50))"
[ "$(meta "$WORK/r.sonde" jit_map_lines)" = 3 ] || fail "meta jit_map_lines $(meta "$WORK/r.sonde" jit_map_lines), expected 3"
pass "all three lines of the removed map were read"
