#!/usr/bin/env bash
# User stacks through code without frame pointers: sonde --unwind cfi, auto
# and fp against perf record --call-graph dwarf and perf record -g, on the
# same workloads:
#   spin    tests/targets/nofp-gcc spin-for: main;run;stage_a;
#           nofp_lib_stage (libnofp);stage_b;leaf_spin, all -O2
#           -fomit-frame-pointer
#   qsort   nofp-gcc qsort-for: a comparator called by libc's qsort
#   python  pyenv's python 3.11 running a CPU-bound script (if installed)
# For each: completeness (the share of samples whose stack reaches main's
# caller, __libc_start_call_main, or a thread's start), overhead at 99 and
# 999 Hz (the work rate the workload measures itself, per CPU second of its
# own, against a run without a profiler: a busy machine's other processes
# do not move it), the profiler's own CPU time (the whole command's user +
# system time less the workload's), and the bytes written per sample
# (sonde: the ring-buffer records, meta.sample_bytes; perf: perf.data's
# size). perf script's time to unwind perf.data afterwards (perf dwarf
# unwinds in user space, after the run) is not in the profiler's CPU time:
# it is the last column. One run each.
# usage: bench/unwind.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
secs=${2:-4}
sonde=$build/sonde
targets=$build/tests/targets
[ -x "$sonde" ] || { echo "unwind bench: $sonde is missing; build first (make)"; exit 1; }
command -v perf >/dev/null || { echo "unwind bench: perf is not installed"; exit 1; }
work=$(mktemp -d /tmp/sonde-unwind.XXXXXX)
trap 'rm -rf "$work"' EXIT

py=$(ls -d /root/.pyenv/versions/3.11*/bin/python3.11 "${HOME:-/root}"/.pyenv/versions/3.11*/bin/python3.11 2>/dev/null | head -n1 || true)
cat >"$work/cpu.py" <<'EOF'
import sys, time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.time() + float(sys.argv[1])
calls = 0
c0 = time.process_time()
while time.time() < end:
    fib(18)
    calls += 1
print("rate %.0f" % (calls / (time.process_time() - c0)))
print("cpu %.3f" % time.process_time())
EOF

workload() { # workload NAME -> the command
	case $1 in
	spin) echo "$targets/nofp-gcc spin-for $secs" ;;
	qsort) echo "$targets/nofp-gcc qsort-for $secs" ;;
	python) echo "$py $work/cpu.py $secs" ;;
	esac
}

# complete FOLDED: the weighted share of stacks through main's caller or a
# thread's start.
complete() {
	awk '{ w = $NF; t += w; if ($0 ~ /(__libc_start_call_main|start_thread|clone3)/) c += w }
	     END { printf "%.3f", t ? c / t : 0 }' "$1"
}
rate() { sed -n 's/^rate //p' "$1" | tail -n1; }
# timed FILE COMMAND...: runs it; FILE gets its children's user + system seconds.
timed() {
	local f=$1
	shift
	local t0 t1 me=$BASHPID # (inside $(...), BASHPID would be that subshell's)
	t0=$(awk '{ print $16 + $17 }' "/proc/$me/stat")
	"$@"
	t1=$(awk '{ print $16 + $17 }' "/proc/$me/stat")
	awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", (b - a) / hz }' >"$f"
}
own_cpu() { awk -v all="$(cat "$work/cpu")" -v t="$(sed -n 's/^cpu //p' "$1" | tail -n1)" 'BEGIN { printf "%.2f", all - t }'; }

# run TOOL WORKLOAD HZ: prints "completeness rate bytes/sample samples
# profiler-cpu-s post-processing-s"
run() {
	local tool=$1 wl=$2 hz=$3 cmd out=$work/out
	cmd=$(workload "$wl")
	case $tool in
	none)
		$cmd >"$out"
		echo "- $(rate "$out") - - - -"
		;;
	sonde-*)
		timed "$work/cpu" "$sonde" record --unwind "${tool#sonde-}" -F "$hz" -o "$work/r.sonde" -- $cmd >"$out" 2>/dev/null
		timed "$work/post" "$sonde" report "$work/r.sonde" --folded >"$work/r.folded"
		local n bytes
		n=$(sqlite3 "$work/r.sonde" "SELECT count(*) FROM samples")
		bytes=$(sqlite3 "$work/r.sonde" "SELECT value FROM meta WHERE key = 'sample_bytes'")
		echo "$(complete "$work/r.folded") $(rate "$out") $((bytes / (n ? n : 1))) $n $(own_cpu "$out") $(cat "$work/post")"
		;;
	perf-*)
		local g=-g
		[ "$tool" = perf-dwarf ] && g="--call-graph dwarf"
		timed "$work/cpu" perf record -q -F "$hz" $g -o "$work/p.data" -- $cmd >"$out" 2>/dev/null
		timed "$work/post" perf script -i "$work/p.data" 2>/dev/null >"$work/p.txt"
		"$sonde" convert "$work/p.txt" -o "$work/p.folded" 2>/dev/null
		local n size
		n=$(perf script -i "$work/p.data" -F tid 2>/dev/null | wc -l)
		size=$(stat -c %s "$work/p.data")
		echo "$(complete "$work/p.folded") $(rate "$out") $((size / (n ? n : 1))) $n $(own_cpu "$out") $(cat "$work/post")"
		;;
	esac
}

wls="spin qsort"
[ -n "$py" ] && wls="$wls python" || echo "(pyenv's python 3.11 is not installed: no python workload)"
tools="sonde-cfi sonde-auto sonde-fp perf-dwarf perf-g"
echo "| workload | Hz | tool | complete | work rate / no profiler | bytes/sample | samples | profiler CPU s | report/script s |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for wl in $wls; do
	base=$(run none "$wl" 0 | awk '{ print $2 }')
	for hz in 99 999; do
		for tool in $tools; do
			read -r comp r bytes n cpu post < <(run "$tool" "$wl" "$hz")
			ratio=$(awk -v r="$r" -v b="$base" 'BEGIN { printf "%.3f", b ? r / b : 0 }')
			echo "| $wl | $hz | $tool | $comp | $ratio | $bytes | $n | $cpu | $post |"
		done
	done
done
