#!/usr/bin/env bash
# What sampling a Python program costs, with and without its Python frames,
# against py-spy (pip install py-spy) where it is installed: at 99 and 999
# Hz, on a CPU-bound script doing a fixed amount of work (recursive calls),
# run by Debian's python3.11 (or PY). The script times its own work (wall
# and CPU, time.perf_counter / time.process_time) once the profiler runs:
# it waits for a start file the profiler's side creates (sonde's
# --ready-file; for py-spy, one second after it started). Per
# configuration: the target's work time (wall) and its CPU time (its own
# process_time, which counts what the sampler's interrupts take from it)
# as ratios to no profiler, and the profiler's own CPU seconds (user +
# system) per 1,000 samples it took.
# Each runs RUNS times; the median counts.
# usage: bench/python_sampling.sh [BUILD_DIR] [RUNS] [CALLS]
set -euo pipefail
build=${1:-build}
runs=${2:-3}
calls=${3:-2000}
sonde=$(readlink -f "$build/sonde")
py=${PY:-/usr/bin/python3.11}
# The first py-spy that runs (pyenv's shim on the PATH does not, outside the
# version that installed it).
pyspy=${PYSPY:-}
if [ -z "$pyspy" ]; then
	for c in $(command -v py-spy) /root/.pyenv/versions/*/bin/py-spy; do
		if [ -x "$c" ] && "$c" --version >/dev/null 2>&1; then pyspy=$c; break; fi
	done
fi
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, perf events)"; exit 1; }
[ -x "$py" ] || { echo "no $py (set PY)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/work.py" <<'EOF'
import os, sys, time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def handle(k):
    return fib(22 + k % 2)
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.005)
w0, c0 = time.perf_counter(), time.process_time()
for k in range(int(sys.argv[2])):
    handle(k)
print("%.6f %.6f" % (time.perf_counter() - w0, time.process_time() - c0), flush=True)
EOF

. "$(dirname "$0")/lib.sh" # median

# run LABEL KIND HZ: one run; appends "work_wall profiler_cpu samples work_cpu" to $tmp/LABEL.
run() {
	local label=$1 kind=$2 hz=$3 go="$tmp/go" pid prof=0 samples=0
	rm -f "$go" "$tmp/out" "$tmp/rec.sonde" "$tmp/spy.txt"
	"$py" "$tmp/work.py" "$go" "$calls" >"$tmp/out" &
	pid=$!
	case $kind in
	none) touch "$go" ;;
	sonde | sonde-native)
		local extra=()
		[ "$kind" = sonde-native ] && extra=(--no-python)
		/usr/bin/time -f "%U %S" -o "$tmp/cpu" "$sonde" record "${extra[@]}" -F "$hz" -p "$pid" \
			--ready-file "$go" -o "$tmp/rec.sonde" >/dev/null 2>&1 &
		;;
	py-spy)
		/usr/bin/time -f "%U %S" -o "$tmp/cpu" "$pyspy" record -r "$hz" -p "$pid" -f raw \
			-o "$tmp/spy.txt" >/dev/null 2>&1 &
		sleep 1
		touch "$go"
		;;
	esac
	local profiler=$!
	wait "$pid"
	[ "$kind" = none ] || wait "$profiler" || true # the profiler's status when its target ended
	if [ "$kind" != none ]; then
		prof=$(awk '{ print $1 + $2 }' "$tmp/cpu")
		if [ "$kind" = py-spy ]; then
			samples=$(awk '{ s += $NF } END { print s + 0 }' "$tmp/spy.txt")
		else
			samples=$(sqlite3 "$tmp/rec.sonde" "select count(*) from samples")
		fi
	fi
	read -r wall cpu <"$tmp/out"
	echo "$wall $prof $samples $cpu" >>"$tmp/$label"
}

configs=(none sonde-native sonde)
[ -n "$pyspy" ] && [ -x "$pyspy" ] && configs+=(py-spy) || echo "py-spy not installed (pip install py-spy): its rows are left out"
for hz in 99 999; do
	for kind in "${configs[@]}"; do
		[ "$kind" = none ] && [ "$hz" = 999 ] && continue
		label="$kind-$hz"
		[ "$kind" = none ] && label=none
		for _ in $(seq "$runs"); do run "$label" "$kind" "$hz"; done
	done
done

base=$(cut -d' ' -f1 "$tmp/none" | median)
base_cpu=$(cut -d' ' -f4 "$tmp/none" | median)
echo "target: $py, $calls calls of fib(22|23); its work alone: $base s, $base_cpu s of CPU (median of $runs)"
printf '%-22s %14s %14s %12s %22s\n' profiler "work / alone" "CPU / alone" samples "profiler CPU s / 1k"
for hz in 99 999; do
	for kind in "${configs[@]}"; do
		[ "$kind" = none ] && continue
		f="$tmp/$kind-$hz"
		w=$(cut -d' ' -f1 "$f" | median)
		tc=$(cut -d' ' -f4 "$f" | median)
		s=$(cut -d' ' -f3 "$f" | median)
		c=$(awk '{ if ($3 > 0) print $2 / $3 * 1000 }' "$f" | median)
		printf '%-22s %14.3f %14.3f %12s %22.4f\n' "$kind -F $hz" "$(awk -v a="$w" -v b="$base" 'BEGIN { print a / b }')" \
			"$(awk -v a="$tc" -v b="$base_cpu" 'BEGIN { print a / b }')" "$s" "$c"
	done
done
