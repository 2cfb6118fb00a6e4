# JIT code named while recording: tests/targets/jit generates a hot loop in
# anonymous memory and names it in /tmp/perf-PID.map (as Node, the JVM and
# Python 3.12 do), then recompiles it in place under a new name and
# generates a second function in a new mapping (see jit.c). In each run
# the recording must name >= 90% of each phase's samples exactly as the map
# names the code, as JIT frames, under their C callers (frame-pointer walks
# go through the generated code):
#  1. plain: also the phases' samples follow the CPU time the target
#     measured, a sample under run_jit_later hardly ever keeps the old name
#     of the recompiled code, and the recording counts the map's lines
#     (and the one bad line, which record reports);
#  2. the target removes its map and exits a second before sonde stops
#     (the map read while it ran is kept open: the late lines and the
#     samples drained after the exit are named all the same);
#  3. a container: the target in its own PID and mount namespaces, with a
#     /tmp of its own, writes /tmp/perf-1.map there (sonde opens it through
#     /proc/PID/root, named with the PID in the namespace).
. "$(dirname "$0")/lib.sh"
require_bpf
[ "$(uname -m)" = x86_64 ] || skip "the jit target generates x86-64 code"

HZ=999
JIT2='LazyCompile:\*jit_second_loop /app/jit\.js:7_\[j\]'

# check_phases NAME FOLDED: the names of both phases, in the target's
# folded stacks; sets all1 good1 all2 re2 second for further checks.
check_phases() {
	local f=$2
	all1=$(folded_count "$f" jit ';run_jit(;| )')
	good1=$(folded_count "$f" jit ';main;run_jit;jit_hot_loop_\[j\](;| )')
	all2=$(folded_count "$f" jit ';run_jit_later(;| )')
	re2=$(folded_count "$f" jit ';main;run_jit_later;jit_recompiled_loop_\[j\](;| )')
	second=$(folded_count "$f" jit ";main;run_jit_later;$JIT2(;| )")
	assert_ge "$1: phase 1 samples" "$all1" 50
	assert_ge "$1: phase 2 samples" "$all2" 50
	assert_ge "$1: share of phase 1 named main;run_jit;jit_hot_loop ($good1 of $all1)" \
		"$(ratio "$good1" "$all1")" 0.9
	assert_ge "$1: share of phase 2 named by the map's later lines ($re2 + $second of $all2)" \
		"$(ratio $((re2 + second)) "$all2")" 0.9
	assert_ge "$1: share of phase 2 in jit_recompiled_loop (half the calls)" "$(ratio "$re2" "$all2")" 0.3
	assert_ge "$1: share of phase 2 in the function added late (half the calls)" \
		"$(ratio "$second" "$all2")" 0.3
	assert_le "$1: JIT samples left [unknown]" "$(folded_count "$f" jit ';run_jit(_later)?;\[unknown\]')" \
		"$(((all1 + all2) / 50))"
}

# The host PID of the recording's process named jit.
jit_pid() { sqlite3 "$1" "SELECT DISTINCT pid FROM threads WHERE comm = 'jit'"; }

# 1. plain
"$SONDE" record -F $HZ -o "$WORK/r.sonde" -- "$TARGETS/jit" 3 >"$WORK/target.out" 2>"$WORK/record.err"
pid=$(kv "$WORK/target.out" pid)
[ -n "$pid" ] || fail "the target printed no pid: $(cat "$WORK/target.out")"
rm -f "/tmp/perf-$pid.map"
"$SONDE" report "$WORK/r.sonde" --folded >"$WORK/r.folded"
jit_frames=$(sqlite3 -separator '|' "$WORK/r.sonde" \
	"SELECT name, module FROM frames WHERE kind = 'jit' ORDER BY name")
want=$(printf '%s|/tmp/perf-%s.map\n' "LazyCompile:*jit_second_loop /app/jit.js:7" "$pid" \
	jit_hot_loop "$pid" jit_recompiled_loop "$pid")
[ "$jit_frames" = "$want" ] || fail "JIT frames in the recording: '$jit_frames', expected '$want'"
pass "the recording's JIT frames are the map's three names, module /tmp/perf-$pid.map"
check_phases plain "$WORK/r.folded"
assert_samples_match_cpu "phase 1 samples (under run_jit)" "$all1" "$(kv "$WORK/target.out" phase1_cpu_s)" $HZ
assert_samples_match_cpu "phase 2 samples (under run_jit_later)" "$all2" "$(kv "$WORK/target.out" phase2_cpu_s)" $HZ
assert_le "phase 2 samples under the recompiled code's old name" \
	"$(folded_count "$WORK/r.folded" jit ';run_jit_later;jit_hot_loop_\[j\]')" "$((all2 / 20))"
[ "$(meta "$WORK/r.sonde" jit_map_lines)" = 3 ] || fail "meta jit_map_lines $(meta "$WORK/r.sonde" jit_map_lines), expected 3"
[ "$(meta "$WORK/r.sonde" jit_map_bad_lines)" = 1 ] || fail "meta jit_map_bad_lines $(meta "$WORK/r.sonde" jit_map_bad_lines), expected 1"
grep -q '; perf maps: 1 bad lines skipped (not START SIZE NAME)' "$WORK/record.err" ||
	fail "record does not say it skipped the map's bad line: $(cat "$WORK/record.err")"
pass "the map's bad line is counted (meta jit_map_bad_lines 1) and reported by record"
assert_ge "meta jit_frames (one per JIT frame of a sample)" "$(meta "$WORK/r.sonde" jit_frames)" \
	"$((good1 + re2 + second))"

# 2. the target removes its map and exits before sonde stops
"$SONDE" record -F $HZ -o "$WORK/x.sonde" -- sh -c '"$0" 2 unlink; sleep 1' "$TARGETS/jit" \
	>"$WORK/exit.out"
pid=$(kv "$WORK/exit.out" pid)
[ -n "$pid" ] || fail "the target printed no pid: $(cat "$WORK/exit.out")"
[ ! -e "/tmp/perf-$pid.map" ] || { rm -f "/tmp/perf-$pid.map"; fail "the target did not remove its map"; }
last=$(sqlite3 "$WORK/x.sonde" "SELECT max(s.time_ns) FROM samples s JOIN threads t ON t.id = s.thread
	WHERE t.pid = $pid")
assert_ge "exit: seconds recorded after the target's last sample" \
	"$(awk -v l="$last" -v e="$(meta "$WORK/x.sonde" end_ns)" 'BEGIN { print (e - l) / 1e9 }')" 0.5
"$SONDE" report "$WORK/x.sonde" --folded >"$WORK/x.folded"
check_phases exit "$WORK/x.folded"
[ "$(meta "$WORK/x.sonde" jit_map_lines)" = 3 ] || fail "exit: meta jit_map_lines $(meta "$WORK/x.sonde" jit_map_lines), expected 3"
pass "exit: all three lines of the removed map were read"

# 3. a container: own PID namespace, own /tmp
if unshare --mount --pid --fork --propagation private true 2>/dev/null; then
	# The container's own /tmp hides the host's: the build (and $WORK) may
	# be under /tmp, so the target runs from a copy outside it.
	outside=$(mktemp -d /var/tmp/sonde-jit.XXXXXX)
	cp "$TARGETS/jit" "$outside/jit"
	rc=0
	"$SONDE" record -F $HZ -o "$WORK/c.sonde" -- unshare --mount --pid --fork --propagation private \
		sh -c 'mount -t tmpfs sonde-jit-tmp /tmp && exec "$0" 2' "$outside/jit" >"$WORK/ct.out" || rc=$?
	rm -rf "$outside"
	[ "$rc" = 0 ] || fail "container: record exited $rc"
	nspid=$(kv "$WORK/ct.out" pid)
	host=$(jit_pid "$WORK/c.sonde")
	[ -n "$nspid" ] && [ -n "$host" ] && [ "$nspid" != "$host" ] ||
		fail "container: PID $nspid in the namespace, $host outside: expected two PIDs"
	pass "container: the target is PID $nspid in its namespace, $host outside"
	"$SONDE" report "$WORK/c.sonde" --folded >"$WORK/c.folded"
	check_phases container "$WORK/c.folded"
	module=$(sqlite3 "$WORK/c.sonde" "SELECT DISTINCT module FROM frames WHERE kind = 'jit'")
	[ "$module" = "/tmp/perf-$host.map" ] || fail "container: JIT frames' module '$module', expected /tmp/perf-$host.map"
	pass "container: JIT frames' module is /tmp/perf-$host.map"
else
	echo "SKIP (part): unshare cannot make mount and PID namespaces here"
fi
