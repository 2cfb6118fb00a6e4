# JIT naming on real runtimes (optional: each part skips, saying why, where
# its runtime is missing).
# Node (--perf-basic-prof): tests/targets/jit.js spends its time in hotLoop,
# which V8 optimizes and names in /tmp/perf-PID.map ("JS:*hotLoop
# .../jit.js:LINE:COL", "LazyCompile:*hotLoop ..." on Node < 18); >= 85% of
# the samples the CPU time of runHot (measured by the script) accounts for
# must be in JIT frames of the script so named, and hardly any JIT code left
# unnamed.
# Python 3.12+ (-X perf): each Python call goes through a trampoline named
# "py::FUNCTION:FILE" in the map. CPython's eval loop is built without frame
# pointers, so a frame-pointer walk from it never reaches the trampolines:
# the Python part asserts the names only once stacks get through the eval
# loop to Py_RunMain (the CFI unwinder of issue 12), and says so otherwise.
. "$(dirname "$0")/lib.sh"
require_bpf
: "${SRC:?SRC must point to the source tree}"

HZ=499
ran=0

if command -v node >/dev/null; then
	ran=1
	"$SONDE" record -F $HZ -o "$WORK/node.sonde" -- node --perf-basic-prof "$SRC/tests/targets/jit.js" 1 \
		>"$WORK/node.out"
	pid=$(kv "$WORK/node.out" pid)
	rm -f "/tmp/perf-$pid.map"
	"$SONDE" report "$WORK/node.sonde" --folded >"$WORK/node.folded"
	names=$(sqlite3 "$WORK/node.sonde" "SELECT name FROM frames WHERE kind = 'jit' AND name LIKE '%hotLoop%'")
	grep -Eq '^(JS|LazyCompile):\*hotLoop .*jit\.js(:[0-9]+)+$' <<<"$names" ||
		fail "no JIT frame named for the optimized hotLoop: '$names'"
	pass "Node's optimized hotLoop is a JIT frame: $(grep -E '^(JS|LazyCompile):\*hotLoop' <<<"$names" | head -n1)"
	# V8 may inline hotLoop into runHot once it optimizes runHot too (on
	# stack replacement): the script's time is in either, both named.
	hot=$(folded_count "$WORK/node.folded" node ';(JS|LazyCompile):[*~^]?(hotLoop|runHot) [^;]*jit\.js[^;]*_\[j\](;| )')
	cpu=$(kv "$WORK/node.out" cpu_s)
	assert_ge "Node: CPU time of runHot (s)" "$cpu" 0.2
	expected=$(awk -v c="$cpu" -v f=$HZ 'BEGIN { print c * f }')
	assert_ge "Node: samples in JIT frames named hotLoop or runHot ($hot) per sample runHot's CPU time accounts for ($expected)" \
		"$(ratio "$hot" "$expected")" 0.85
	unnamed=$(folded_count "$WORK/node.folded" node 'JSEntryTrampoline;.*\[unknown\]')
	assert_le "Node: samples under JavaScript in unnamed code" "$unnamed" "$((hot / 50))"
else
	echo "SKIP (part): node is not installed"
fi

# A Python whose -X perf works: 3.12 or later, built with trampolines.
py=
for cand in python3 python3.13 python3.12 "$(pyenv root 2>/dev/null)"/versions/3.1[2-9]*/bin/python3; do
	# (-X perf writes a map even here: removed)
	rc=0
	out=$("$cand" -X perf -c 'import os, sys; print(os.getpid(), os.path.realpath(sys.executable))
sys.exit(not sys.is_stack_trampoline_active())' 2>/dev/null) || rc=$?
	[ -n "$out" ] && rm -f "/tmp/perf-${out%% *}.map"
	if [ "$rc" = 0 ] && [ -n "$out" ]; then
		py=${out#* }
		break
	fi
done
if [ -n "$py" ]; then
	ran=1
	"$SONDE" record -F $HZ -o "$WORK/py.sonde" -- "$py" -X perf "$SRC/tests/targets/jit.py" 3 >"$WORK/py.out"
	pid=$(kv "$WORK/py.out" pid)
	rm -f "/tmp/perf-$pid.map"
	"$SONDE" report "$WORK/py.sonde" --folded >"$WORK/py.folded"
	comm=$(basename "$py")
	comm=${comm:0:15}
	hot=$(folded_count "$WORK/py.folded" "$comm" ';_PyEval_EvalFrameDefault')
	whole=$(folded_count "$WORK/py.folded" "$comm" ';Py_RunMain;.*;_PyEval_EvalFrameDefault')
	if awk -v w="$whole" -v h="$hot" 'BEGIN { exit !(h > 0 && w / h >= 0.5) }'; then
		named=$(folded_count "$WORK/py.folded" "$comm" ';Py_RunMain;.*;py::run_hot:[^;]*jit\.py_\[j\];.*;py::hot_loop:[^;]*jit\.py_\[j\];')
		assert_ge "Python: share of stacks through the eval loop with run_hot and hot_loop named ($named of $whole)" \
			"$(ratio "$named" "$whole")" 0.9
	else
		echo "SKIP (part): $py -X perf: $whole of $hot samples in CPython's eval loop have a whole stack" \
			"(it has no frame pointers; frame-pointer walks stop in it, short of the py:: trampolines)"
	fi
else
	echo "SKIP (part): no Python 3.12+ whose -X perf works (pyenv versions 3.12+, python3)"
fi
[ "$ran" = 1 ] || skip "neither Node nor Python 3.12+ is installed"
