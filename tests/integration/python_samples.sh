# Python frames in samples (issue 27), walked in the kernel and put in place
# of the interpreter loop's frames: pyenv's 3.10.13, 3.11.7, 3.12.1, 3.13.0
# and Debian's python3.11. The truth is the script's own: at the first call
# of each phase it writes the stack Python gives (traceback.walk_stack, each
# frame's module __name__ and qualified name, and line), then spins in the
# same function. Phases: plain calls, a generator resumed by sum() (C), a
# coroutine under asyncio, a function called in an except block, and a
# function the C json encoder (_json) calls back.
#  - >= 95% of the samples in the script's code (a work.* frame, or an
#    interpreter loop frame left without its Python frames) carry the whole
#    chain as Python gives it: the same frames, outermost first, the same
#    lines for the callers, the leaf at a line of its loop;
#  - each phase has such samples, and the json phase's have a frame of the
#    _json extension between json's iterencode and the callback;
#  - with -X perf (3.12, 3.13), >= 90% of them also have their whole
#    native stack, through the trampolines;
#  - off the CPU (--off-cpu), >= 90% of the started threads' waits carry
#    their Python frames: the GIL's futex waits show the function waiting;
#  - sonde threads: every thread's stack has its Python frames (the
#    workers' GIL waits in gil.worker, the sleeper, the main thread's join);
#  - 150 threads: >= 95% of their samples in Python code carry their
#    Python frames;
#  - a process that execs python after running bash is looked at again:
#    >= 95% of its samples in Python code carry their frames;
#  - a stripped libpython (strip --strip-all): the layout from the table,
#    >= 95% of its samples in Python code with their frames;
#  - a version sonde does not read: one line, native stacks;
#  - --no-python: no Python frame; the summary counts the Python stacks;
#  - report --json's functions and speedscope's frames say kind python.
. "$(dirname "$0")/lib.sh"
require_bpf
[ "$(uname -m)" = x86_64 ] || skip "the Python layouts are x86-64 only"
pyenv_pythons "samples are"
[ -x /usr/bin/python3.11 ] || skip "Debian's python3.11 is not installed (scripts/bootstrap.sh test installs it)"
pythons+=(/usr/bin/python3.11)

cat >"$WORK/work.py" <<'EOF'
import asyncio, json, sys, time, traceback

TRUTH = {}

def note(phase):
    # The stack as Python gives it, outermost first, from note()'s caller.
    if phase in TRUTH:
        return
    names = []
    for fr, line in traceback.walk_stack(sys._getframe(1)):
        code = fr.f_code
        mod = fr.f_globals.get("__name__", "?")
        if mod == "__main__":
            mod = "work"
        names.append("%s.%s %d" % (mod, getattr(code, "co_qualname", code.co_name), line))
    TRUTH[phase] = ";".join(reversed(names))

def spin(phase, n):
    note(phase)
    s = 0
    for i in range(n):  # LEAF
        s += i * i      # LEAF
    return s

class Point:
    def __init__(self, x):
        self.x = x

def to_jsonable(p):
    return {"x": spin("json", 2000)}

def plain():
    return spin("plain", 20000)

def gen_values(n):
    for i in range(n):
        yield spin("generator", 2000)

def generator():
    return sum(gen_values(10))

async def acompute():
    await asyncio.sleep(0)
    return spin("coroutine", 20000)

def coroutine():
    return asyncio.run(acompute())

def raised():
    try:
        raise ValueError("x")
    except ValueError:
        return spin("exception", 20000)

def encoded():
    return json.dumps([Point(i) for i in range(10)], default=to_jsonable)

def main():
    end = time.time() + float(sys.argv[2])
    rounds = 0
    while time.time() < end:
        plain()
        generator()
        coroutine()
        raised()
        encoded()
        rounds += 1
    with open(sys.argv[1], "w") as f:
        for k, v in sorted(TRUTH.items()):
            f.write("%s %s\n" % (k, v))
    print("rounds", rounds)

main()
EOF
leaf_lines=" $(grep -n '# LEAF' "$WORK/work.py" | cut -d: -f1 | tr '\n' ' ')"

# paths REC: each sample's stack, outermost first: a Python frame as "NAME
# LINE", a run of native frames as "C" ("C:_json" when one of them is of
# the _json extension), a native frame of the interpreter's loop as "LOOP".
paths() {
	sqlite3 "$1" "WITH RECURSIVE walk(sample, node, path) AS (
		SELECT id, stack, '' FROM samples
		UNION ALL
		SELECT walk.sample, st.parent,
		       CASE WHEN f.kind = 'python' THEN f.name || ' ' || f.line
			    WHEN f.name = '_PyEval_EvalFrameDefault' THEN 'LOOP'
			    WHEN f.module LIKE '%/_json%' THEN 'C:_json'
			    ELSE 'C' END || ';' || walk.path
		FROM walk JOIN stacks st ON st.id = walk.node JOIN frames f ON f.id = st.frame)
		SELECT path FROM walk WHERE node IS NULL;" | sed -E 's/(C;)+/C;/g; s/(C;)?C:_json;(C;)?/C:_json;/g'
}

for py in "${pythons[@]}"; do
	name=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
	rec=$WORK/py-$name-${py//\//_}.sonde
	"$SONDE" record -F 999 -o "$rec" -- "$py" "$WORK/work.py" "$WORK/truth.txt" 3 >"$WORK/rec.out" 2>&1 ||
		{ cat "$WORK/rec.out" >&2; fail "$py: record failed"; }
	[ "$(wc -l <"$WORK/truth.txt")" = 5 ] || fail "$py: the script wrote $(wc -l <"$WORK/truth.txt") of its 5 phases"
	grep -q "Python: 1 process" "$WORK/rec.out" || { cat "$WORK/rec.out" >&2; fail "$py: the summary names no Python process"; }
	paths "$rec" >"$WORK/paths.txt"
	# Per sample in the script's code: whether it has its whole Python
	# chain (from the module's frame, at any of its lines: its imports
	# too, every loop frame replaced), and for those in spin, whether the
	# chain is its phase's as Python gave it.
	awk -v leaf="$leaf_lines" '
		FNR == NR { phase = $1; $1 = ""; sub(/^ /, ""); n = split($0, f, ";")
			want[phase] = ""; for (i = 1; i < n; i++) want[phase] = want[phase] f[i] ";"
			root = f[1]; sub(/ [0-9]+$/, " ", root); next }
		{ chain = ""; in_code = 0; loop = 0; jsonc = 0; n = split($0, f, ";")
		  for (i = 1; i <= n; i++) {
			if (f[i] == "LOOP") loop = 1
			if (f[i] ~ /^work\./) in_code = 1
			if (f[i] == "C:_json" && chain ~ /iterencode [0-9]+;$/) jsonc = 1
			if (f[i] ~ / [0-9]+$/) { last = f[i]; chain = chain f[i] ";" } }
		  if (!in_code && !loop) next
		  total++
		  if (loop || index(chain, root) != 1) next
		  whole++
		  split(last, lf, " ")
		  if (lf[1] != "work.spin") next
		  inspin++
		  sub(last ";$", "", chain)
		  for (p in want)
			if (chain == want[p] && index(leaf, " " lf[2] " ")) {
				good++; per[p]++; if (p == "json" && jsonc) jsonok++ }
		}
		END { printf "%d %d %d %d %d", whole + 0, total + 0, good + 0, inspin + 0, jsonok + 0
		      for (p in want) printf " %s=%d", p, per[p] + 0; printf "\n" }
	' "$WORK/truth.txt" "$WORK/paths.txt" >"$WORK/count.txt"
	read -r whole total good inspin jsonok phases <"$WORK/count.txt"
	echo "$py ($name): $whole of $total samples in the script's code carry its whole Python chain; $good of the $inspin in spin as Python gave them (by phase: $phases)"
	assert_ge "$py: samples in the script's code" "$total" 1000
	assert_ge "$py: share carrying the whole Python chain" "$(awk -v g="$whole" -v t="$total" 'BEGIN { print g / t }')" 0.95
	assert_ge "$py: share of spin's samples whose frames and lines are Python's" "$(awk -v g="$good" -v t="$inspin" 'BEGIN { print t ? g / t : 0 }')" 0.95
	for p in plain generator coroutine exception json; do
		assert_ge "$py: phase $p's samples with its chain" "$(sed -n "s/.* $p=\([0-9]*\).*/\1/p" "$WORK/count.txt")" 20
	done
	assert_ge "$py: json samples with _json between iterencode and the callback" "$jsonok" 20
done

# Python frames say so where formats keep a kind: report --json's functions
# and speedscope's frames (a key its schema allows), the native ones not.
"$SONDE" report "$rec" --json >"$WORK/kinds.json"
[ "$(jq -r '.functions[] | select(.name == "work.spin") | .kind' "$WORK/kinds.json")" = python ] ||
	fail "report --json: work.spin's kind is not python"
[ "$(jq -r '.functions[] | select(.name == "_start") | .kind' "$WORK/kinds.json")" = user ] ||
	fail "report --json: _start's kind is not user"
"$SONDE" convert "$rec" -o "$WORK/kinds.speedscope.json"
[ "$(jq -r '[.shared.frames[] | select(.name == "work.spin") | .kind] | unique | join(",")' "$WORK/kinds.speedscope.json")" = python ] ||
	fail "speedscope: work.spin's frames are not of kind python"
[ "$(jq '[.shared.frames[] | select(.name == "_start" and has("kind"))] | length' "$WORK/kinds.speedscope.json")" = 0 ] ||
	fail "speedscope: _start has a kind"
command -v node >/dev/null && [ -d "$SRC/tests/js/node_modules/speedscope" ] ||
	fail "node or tests/js's speedscope is not installed: run scripts/bootstrap.sh test"
node "$SRC/tests/js/check_speedscope.mjs" "$WORK/kinds.speedscope.json" >"$WORK/ss.json" ||
	fail "speedscope schema: $(cat "$WORK/ss.json")"
pass "Python frames are of kind python in report --json and speedscope (which its schema takes)"

# -X perf (3.12 on): CPython calls each function through a trampoline copy
# without unwind tables; the walk goes through them (the copies' rows, from
# the interpreter's own code), so the native stacks stay whole: >= 90% of
# the samples in the script's code reach _start (before, the walk ended at
# the first trampoline: 4 of 949 samples complete).
for v in 3.12.1 3.13.0; do
	py="$PYENV/$v/bin/python${v%.*}"
	"$SONDE" record -F 999 -o "$WORK/xperf.sonde" -- "$py" -X perf "$WORK/work.py" "$WORK/truth.txt" 2 \
		>"$WORK/rec.out" 2>&1 || { cat "$WORK/rec.out" >&2; fail "$py -X perf: record failed"; }
	"$SONDE" convert "$WORK/xperf.sonde" -o "$WORK/xperf.folded" --to folded
	read -r whole all <<<"$(awk '/;work\.main;/ { n += $NF; if (/^python[0-9.]*;_start;/ && /py_trampoline_evaluator/) m += $NF }
		END { print m + 0, n + 0 }' "$WORK/xperf.folded")"
	assert_ge "$py -X perf: samples in the script's code" "$all" 500
	assert_ge "$py -X perf: share of them whose native stack reaches _start through the trampolines" \
		"$(awk -v a="$whole" -v n="$all" 'BEGIN { print a / n }')" 0.9
done

# Off the CPU (record --off-cpu): the intervals of the script's threads
# carry their Python frames too, so a thread waiting for the GIL (a futex
# wait under Python's take_gil) shows the Python function it is in.
cat >"$WORK/gil.py" <<'EOF'
import sys, threading, time
def burn(n):
    s = 0
    for i in range(n):
        s += i
    return s
def worker(end):
    while time.time() < end:
        burn(10000)
def sleeper(end):
    while time.time() < end:
        time.sleep(0.01)
end = time.time() + float(sys.argv[1])
ts = [threading.Thread(target=worker, args=(end,)) for _ in range(2)]
ts.append(threading.Thread(target=sleeper, args=(end,)))
for t in ts: t.start()
for t in ts: t.join()
EOF
for py in /usr/bin/python3.11 "$PYENV/3.12.1/bin/python3.12"; do
	"$SONDE" record --off-cpu -o "$WORK/gil.sonde" -- "$py" "$WORK/gil.py" 2 >"$WORK/rec.out" 2>&1 ||
		{ cat "$WORK/rec.out" >&2; fail "$py: record --off-cpu failed"; }
	"$SONDE" convert "$WORK/gil.sonde" -o "$WORK/gil.folded" --to folded --off-cpu
	# The started threads' off-CPU time, and the part of it with their frames.
	read -r with all futex <<<"$(awk '/start_thread/ { n += $NF; if (/;gil\.(worker|sleeper)/) m += $NF
		if (/;gil\.worker;.*\[sleeping: futex\]/) f += $NF }
		END { print m + 0, n + 0, f + 0 }' "$WORK/gil.folded")"
	assert_ge "$py: off-CPU time of the script's threads (folded weight)" "$all" 1
	assert_ge "$py: share of it with the thread's Python frames" "$(awk -v a="$with" -v n="$all" 'BEGIN { print a / n }')" 0.9
	assert_ge "$py: futex waits (the GIL) under gil.worker's frames" "$futex" 1
done

# Thread states (sonde threads): each thread's stack, the one it last left
# the CPU with, has its Python frames: the workers (waiting for the GIL
# or running) in gil.worker, the sleeper in gil.sleeper, the main thread
# in its join under gil.<module>.
"$SONDE" threads -b -n 3 -i 0.5 -- /usr/bin/python3.11 "$WORK/gil.py" 3 >"$WORK/threads.txt" 2>"$WORK/threads.err" ||
	{ cat "$WORK/threads.err" >&2; fail "sonde threads on python3.11 failed"; }
read -r rows python workers sleepers mains gilwaits <<<"$(awk '$2 == "python3.11" && $1 ~ /^[0-9]+$/ { n++
		if (/ < gil\./) p++
		if (/ < gil\.worker < /) w++; if (/ < gil\.sleeper < /) sl++
		if (/ < gil\.<module> < /) m++; if (/futex/ && / < gil\.worker < /) f++ }
	END { print n + 0, p + 0, w + 0, sl + 0, m + 0, f + 0 }' "$WORK/threads.txt")"
assert_ge "threads: rows of the script's threads over 3 passes" "$rows" 9
assert_near "threads: rows whose stack has the script's Python frames" "$python" "$rows" 0
assert_ge "threads: the workers' rows in gil.worker" "$workers" 4
assert_ge "threads: the sleeper's rows in gil.sleeper" "$sleepers" 2
assert_ge "threads: the main thread's rows in gil.<module>" "$mains" 3
assert_ge "threads: workers seen waiting on a futex (the GIL) in gil.worker" "$gilwaits" 1

# Many threads: each sampled thread's state is found in the interpreter's
# list (newest first) however deep it is (150 threads; the scan once looked
# at 64 at most, leaving the oldest without their frames).
cat >"$WORK/many.py" <<'EOF'
import sys, threading, time
def work(end):
    x = 0
    while time.time() < end:
        for i in range(1000):
            x += i
        time.sleep(0.001)
end = time.time() + float(sys.argv[1])
ts = [threading.Thread(target=work, args=(end,)) for _ in range(150)]
for t in ts: t.start()
for t in ts: t.join()
EOF
"$SONDE" record -F 499 -o "$WORK/many.sonde" -- /usr/bin/python3.11 "$WORK/many.py" 3 >"$WORK/rec.out" 2>&1 ||
	{ cat "$WORK/rec.out" >&2; fail "record of 150 Python threads failed"; }
"$SONDE" convert "$WORK/many.sonde" -o "$WORK/many.folded" --to folded
# The threads' samples in Python code, as in the first part: those with
# the thread's frames (many.work, or threading's start and end of it) and
# those with an interpreter loop frame left without them (the thread's
# state not found); a thread's native start and exit have neither.
read -r work with all <<<"$(awk '/start_thread/ {
	if (/;many\.work/) w += $NF
	if (/;(many|threading)\./) m += $NF; else if (/_PyEval_EvalFrameDefault/) l += $NF
} END { print w + 0, m + 0, m + l }' "$WORK/many.folded")"
assert_ge "150 threads: their samples in many.work" "$work" 500
assert_ge "150 threads: share of their samples in Python code with the thread's Python frames" \
	"$(awk -v a="$with" -v n="$all" 'BEGIN { print a / n }')" 0.95

# frames_share LABEL FOLDED MIN: of FOLDED's samples in work.py's code,
# at least MIN carry the script's frames, and >= 95% of those in Python
# code do (the rest: an interpreter loop frame left without them).
frames_share() {
	local with left
	read -r with left <<<"$(awk '/;work\./ { w += $NF; next } /_PyEval_EvalFrameDefault/ { l += $NF }
		END { print w + 0, l + 0 }' "$2")"
	assert_ge "$1: samples with the script's frames" "$with" "$3"
	assert_ge "$1: share of its samples in Python code with their frames" \
		"$(awk -v a="$with" -v l="$left" 'BEGIN { print a / (a + l) }')" 0.95
}

# A process that runs something else first and then execs python (a shell
# script's last command): looked at again after its exec.
# Its samples in the script's code have the script's frames, not an
# interpreter loop frame left without them.
"$SONDE" record -F 499 -o "$WORK/exec.sonde" -- bash -c \
	'for i in $(seq 300000); do :; done; exec /usr/bin/python3.11 "$0" "$1" 1' \
	"$WORK/work.py" "$WORK/truth.txt" >"$WORK/rec.out" 2>&1 ||
	{ cat "$WORK/rec.out" >&2; fail "record of bash execing python failed"; }
"$SONDE" convert "$WORK/exec.sonde" -o "$WORK/exec.folded" --to folded
frames_share "python exec'd by bash" "$WORK/exec.folded" 50

# A stripped interpreter: pyenv's libpython3.12 through strip --strip-all
# (no .symtab, no DWARF; _PyRuntime and Py_Version stay in .dynsym). Its
# layout comes from sonde's table, and its samples have their frames.
mkdir -p "$WORK/stripped"
cp "$PYENV/3.12.1/lib/libpython3.12.so.1.0" "$WORK/stripped/"
strip --strip-all "$WORK/stripped/libpython3.12.so.1.0"
! readelf -S "$WORK/stripped/libpython3.12.so.1.0" | grep -Eq '\.(symtab|debug_info)' ||
	fail "strip left a symbol table or DWARF in libpython3.12"
LD_LIBRARY_PATH=$WORK/stripped "$SONDE" record -v -F 499 -o "$WORK/stripped.sonde" -- \
	"$PYENV/3.12.1/bin/python3.12" "$WORK/work.py" "$WORK/truth.txt" 1 >"$WORK/rec.out" 2>&1 ||
	{ cat "$WORK/rec.out" >&2; fail "record of a stripped libpython failed"; }
grep -q "runs Python 3.12 ($WORK/stripped/libpython3.12.so.1.0, layout from table)" "$WORK/rec.out" ||
	{ grep -v libbpf "$WORK/rec.out" >&2; fail "a stripped libpython: not its table layout"; }
pass "a stripped libpython3.12: its layout from the table"
"$SONDE" convert "$WORK/stripped.sonde" -o "$WORK/stripped.folded" --to folded
frames_share "stripped libpython3.12" "$WORK/stripped.folded" 100

# An interpreter of a version sonde does not read (tests/targets/pythonlike:
# _PyRuntime, and Py_Version 3.9.18): one line, and its samples native.
"$SONDE" record -o "$WORK/py39.sonde" -- "$TARGETS/pythonlike" 1 >"$WORK/rec.out" 2>&1 ||
	{ cat "$WORK/rec.out" >&2; fail "record of a Python 3.9 look-alike failed"; }
[ "$(grep -c "is Python 3.9: sonde reads the interpreters of Python 3.10 to 3.13" "$WORK/rec.out")" = 1 ] ||
	{ cat "$WORK/rec.out" >&2; fail "a Python 3.9 is not said in one line"; }
assert_ge "Python 3.9 look-alike: native samples in spin" \
	"$(sqlite3 "$WORK/py39.sonde" "select count(*) from frames where name = 'spin'")" 1
assert_le "Python 3.9 look-alike: Python frames" \
	"$(sqlite3 "$WORK/py39.sonde" "select count(*) from frames where kind = 'python'")" 0

# --no-python: the native stacks only.
"$SONDE" record --no-python -F 999 -o "$WORK/native.sonde" -- /usr/bin/python3.11 "$WORK/work.py" "$WORK/truth.txt" 1 >"$WORK/rec.out" 2>&1 ||
	{ cat "$WORK/rec.out" >&2; fail "record --no-python failed"; }
assert_le "--no-python: Python frames" "$(sqlite3 "$WORK/native.sonde" "select count(*) from frames where kind = 'python'")" 0
assert_ge "--no-python: samples in the interpreter's loop" \
	"$(sqlite3 "$WORK/native.sonde" "select count(*) from frames where name = '_PyEval_EvalFrameDefault'")" 1
pass "--no-python: native stacks only"
