# Helpers shared by the bench scripts (sourced).

# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# The CPU time bench/calls printed ("LOOP_NS CALLS CPU_NS") in the output
# on stdin.
loop_ns() { awk '/^[0-9]+ [0-9]+ [0-9]+$/ { ns = $3 } END { if (ns == "") exit 1; print ns }'; }

# file_offset BINARY VADDR: the file offset of a code address (what a
# uprobe is placed by): vaddr - p_vaddr + p_offset of its executable LOAD
# segment.
file_offset() {
	local binary=$1 vaddr=$(($2)) _ off va sz flags
	while read -r _ off va _ _ sz flags; do
		[[ $flags == *E* ]] || continue
		if ((vaddr >= va && vaddr < va + sz)); then
			printf '0x%x\n' $((vaddr - va + off))
			return 0
		fi
	done < <(readelf -lW "$binary" | awk '$1 == "LOAD"')
	return 1
}

# python_calls_script FILE: a script that waits for its first argument's
# file (sonde's --ready-file), then times its own CALLS (second argument)
# calls of a one-line function f with time.perf_counter, with sys.settrace
# on when its third argument is 1, and prints the ns per call.
python_calls_script() {
	cat >"$1" <<'EOF'
import os, sys, time
def f(i):
    return i + 1
go, n, trace = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
while not os.path.exists(go):
    time.sleep(0.005)
if trace:
    sys.settrace(lambda *a: None)
t0 = time.perf_counter()
for i in range(n):
    f(i)
t = time.perf_counter() - t0
sys.settrace(None)
print("%.9f" % (t / n * 1e9), flush=True)
EOF
}

# python_timed_run TMP GO PYTHON ARGS... -- [TRACE...]: runs the python
# command (a python_calls_script run waiting for GO) and prints what it
# printed; with TRACEs, `$sonde record -p` traces them and makes GO once
# they are in (a sonde that fails says why and ends the bench), else GO is
# made at once.
python_timed_run() {
	local tmp=$1 go=$2 cmd=() traces=() t
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		cmd+=("$1")
		shift
	done
	[ $# -eq 0 ] || shift
	for t in "$@"; do traces+=(--trace "$t"); done
	rm -f "$go"
	"${cmd[@]}" >"$tmp/out" &
	local pid=$! spid=
	if [ ${#traces[@]} -eq 0 ]; then
		touch "$go"
	else
		"$sonde" record -p "$pid" --no-python "${traces[@]}" --ready-file "$go" \
			-o "$tmp/rec.sonde" >/dev/null 2>"$tmp/sonde.err" &
		spid=$!
		while [ ! -e "$go" ]; do
			kill -0 "$spid" 2>/dev/null || { kill "$pid"; cat "$tmp/sonde.err" >&2; exit 1; }
			sleep 0.05
		done
	fi
	wait "$pid"
	[ -z "$spid" ] || wait "$spid" || true # sonde's status when its target ended
	cat "$tmp/out"
}
