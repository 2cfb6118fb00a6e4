# Python stacks unwound in the kernel with the binaries' unwind tables
# (record --unwind, issue 12; the C targets are in unwind_cfi.sh):
#  - python 3.11 (pyenv's when installed, else Debian's /usr/bin/python3.11,
#    which the test bootstrap installs; both without frame pointers):
#    samples of a CPU-bound script reach _PyEval_EvalFrameDefault from
#    main's caller (python's main is one jmp to Py_BytesMain, a tail call:
#    no unwinder can show a frame of main itself). With --no-python: the
#    native walk alone (with Python frames, they take the place of
#    _PyEval_EvalFrameDefault: python_samples.sh).
#  - python started by sonde (-- CMD): its start-up unwinds as well as
#    the rest (tables built before it runs, mappings found by file).
. "$(dirname "$0")/lib.sh"
require_bpf
[ "$(uname -m)" = x86_64 ] || skip "the unwind tables are x86-64 only"

# samples NAME PATTERN: samples of folded lines matching an extended regex.
samples() { { grep -E -- "$2" "$WORK/$1.folded" || true; } | awk '{ s += $NF } END { print s + 0 }'; }
share() { awk -v g="$1" -v a="$2" 'BEGIN { print a ? g / a : 0 }'; }

PY=/root/.pyenv/versions/3.11.7/bin/python3.11
[ -x "$PY" ] || PY=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11*/bin/python3.11 2>/dev/null | head -n1 || true)
{ [ -n "$PY" ] && [ -x "$PY" ]; } || PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "no python 3.11: neither pyenv's nor Debian's (scripts/bootstrap.sh test installs python3.11)"
echo "python: $PY"
cat >"$WORK/cpu.py" <<'EOF'
import sys
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
fib(25)
print("ready", flush=True)
# A fixed amount of work (a minute or more of CPU: it is stopped once
# recorded), not a wall-clock time.
for _ in range(int(sys.argv[1])):
    fib(25)
EOF
# Attached once the interpreter runs its loop: the steady state a user
# profiles. (Samples taken while the tables of a just-exec'd program's
# libraries are still loading fall back to frame pointers and are counted
# as table misses; the nofp cases above go through exec.)
"$PY" "$WORK/cpu.py" 3000 >"$WORK/python-target.out" &
ppid=$!
BG_PIDS+=("$ppid")
for _ in $(seq 300); do grep -q ready "$WORK/python-target.out" && break; sleep 0.1; done
grep -q ready "$WORK/python-target.out" || fail "python never started its loop"
"$SONDE" record --no-python --unwind auto -F 999 -d 2 -p "$ppid" -o "$WORK/python.sonde" >"$WORK/python.out" 2>&1 ||
	{ cat "$WORK/python.out" >&2; fail "record -p of python failed"; }
"$SONDE" report "$WORK/python.sonde" --folded >"$WORK/python.folded"
kill "$ppid" 2>/dev/null || true
all=$(samples python '^python3.11;')
deep=$(samples python '^python3.11;_start;__libc_start_main_impl;__libc_start_call_main;Py_BytesMain;.*;_PyEval_EvalFrameDefault(;| )')
assert_ge "python 3.11: samples" "$all" 100
assert_ge "python 3.11: share reaching _PyEval_EvalFrameDefault from main's caller" \
	"$(share "$deep" "$all")" 0.90

# Started by sonde (-- CMD): the tables of python, libpython, libc, libm and
# ld.so are built before it runs, and the sampler finds its mappings by
# file until sonde has read its maps, so its first samples (start-up: the
# loader, the interpreter's initialisation, its imports) unwind as well as
# the rest. Before, each new mapping waited for sonde to read the maps:
# 10.7% of such a run's samples ended on a table miss on a busy machine.
"$SONDE" record --no-python --unwind cfi -F 999 -o "$WORK/pystart.sonde" -- "$PY" "$WORK/cpu.py" 20 \
	>"$WORK/pystart.out" 2>&1 || { cat "$WORK/pystart.out" >&2; fail "record -- python failed"; }
total=$(sqlite3 "$WORK/pystart.sonde" "select count(*) from samples")
missed=$(meta "$WORK/pystart.sonde" stacks_end_table_miss)
assert_ge "python -- CMD: samples" "$total" 100
# How many mappings the kernel found by file depends on how soon sonde read
# the maps (none when it read them before the first sample needed one): a
# figure to show, not to assert; the share of misses is the outcome.
echo "python -- CMD: mappings found by file in the kernel: $(meta "$WORK/pystart.sonde" unwind_found_by_file)"
assert_le "python -- CMD: share of samples ended on a table miss" "$(share "$missed" "$total")" 0.02
