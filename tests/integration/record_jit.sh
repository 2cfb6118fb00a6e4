# JIT code named while recording: tests/targets/jit generates a hot loop in
# anonymous memory and names it in /tmp/perf-PID.map (as Node, the JVM and
# Python 3.12 do), then recompiles it in place under a new name and
# generates a second function in a new mapping (see jit.c). The recording
# must name >= 90% of each phase's samples exactly as the map names the
# code, as JIT frames, under their C callers (frame-pointer walks go
# through the generated code); a sample under run_jit_later never keeps the
# old name of the recompiled code for long; the phases' samples follow the
# CPU time the target measured; the recording counts the map's lines.
. "$(dirname "$0")/lib.sh"
require_bpf
[ "$(uname -m)" = x86_64 ] || skip "the jit target generates x86-64 code"

HZ=999
"$SONDE" record -F $HZ -o "$WORK/r.sonde" -- "$TARGETS/jit" 3 >"$WORK/target.out"
pid=$(kv "$WORK/target.out" pid)
[ -n "$pid" ] || fail "the target printed no pid: $(cat "$WORK/target.out")"
rm -f "/tmp/perf-$pid.map"
"$SONDE" report "$WORK/r.sonde" --folded >"$WORK/r.folded"

# Samples of folded lines (of the target) matching extended regex R.
count() { RE="$1" awk '/^jit;/ && $0 ~ ENVIRON["RE"] { s += $NF } END { print s + 0 }' "$WORK/r.folded"; }
share() { awk -v g="$1" -v a="$2" 'BEGIN { print a ? g / a : 0 }'; }

# The recording holds the map's names exactly, as JIT frames of its module.
jit_frames=$(sqlite3 -separator '|' "$WORK/r.sonde" \
	"SELECT name, module FROM frames WHERE kind = 'jit' ORDER BY name")
want=$(printf '%s|/tmp/perf-%s.map\n' "LazyCompile:*jit_second_loop /app/jit.js:7" "$pid" \
	jit_hot_loop "$pid" jit_recompiled_loop "$pid")
[ "$jit_frames" = "$want" ] || fail "JIT frames in the recording: '$jit_frames', expected '$want'"
pass "the recording's JIT frames are the map's three names, module /tmp/perf-$pid.map"

# Phase 1: main;run_jit;jit_hot_loop.
all1=$(count ';run_jit(;| )')
good1=$(count ';main;run_jit;jit_hot_loop_\[j\](;| )')
assert_samples_match_cpu "phase 1 samples (under run_jit)" "$all1" "$(kv "$WORK/target.out" phase1_cpu_s)" $HZ
assert_ge "share of phase 1 named main;run_jit;jit_hot_loop ($good1 of $all1)" "$(share "$good1" "$all1")" 0.9

# Phase 2: the recompiled code under its new name, and the function added
# to the map (and mapped) after the recording began.
all2=$(count ';run_jit_later(;| )')
re2=$(count ';main;run_jit_later;jit_recompiled_loop_\[j\](;| )')
second=$(count ';main;run_jit_later;LazyCompile:\*jit_second_loop /app/jit\.js:7_\[j\](;| )')
assert_samples_match_cpu "phase 2 samples (under run_jit_later)" "$all2" "$(kv "$WORK/target.out" phase2_cpu_s)" $HZ
assert_ge "share of phase 2 named by the rewritten map ($re2 + $second of $all2)" \
	"$(share $((re2 + second)) "$all2")" 0.9
assert_ge "share of phase 2 in jit_recompiled_loop (half the calls)" "$(share "$re2" "$all2")" 0.3
assert_ge "share of phase 2 in jit_second_loop (half the calls)" "$(share "$second" "$all2")" 0.3
stale=$(count ';run_jit_later;jit_hot_loop_\[j\]')
assert_le "phase 2 samples under the recompiled code's old name" "$stale" "$((all2 / 20))"
unnamed=$(count ';run_jit(_later)?;\[unknown\]')
assert_le "JIT samples left [unknown]" "$unnamed" "$(((all1 + all2) / 50))"

[ "$(meta "$WORK/r.sonde" jit_map_lines)" = 3 ] || fail "meta jit_map_lines $(meta "$WORK/r.sonde" jit_map_lines), expected 3"
[ "$(meta "$WORK/r.sonde" jit_map_bad_lines)" = 0 ] || fail "meta jit_map_bad_lines is not 0"
assert_ge "meta jit_frames (one per JIT frame of a sample)" "$(meta "$WORK/r.sonde" jit_frames)" \
	"$((good1 + re2 + second))"
