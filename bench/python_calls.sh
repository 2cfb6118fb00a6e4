#!/usr/bin/env bash
# What a traced Python call costs through the USDT span pair
# usdt:python3.11:python:function__entry,function__return (Debian's
# python3.11, or PY), against the same script untraced. 3.11 fires the
# entry only while a trace function is set (or the line probe is traced
# too), so the rows are: the script alone; with sys.settrace on (the
# baseline a traced run pays anyway); with settrace and sonde tracing the
# pair; and with no settrace, sonde tracing the pair and the line probe
# (every line a trap: how 3.11 fires its entries with nothing set in the
# target); and sonde's py:calls.py:f (the pair kept to f in the kernel, the
# line probe's semaphore raised by a uprobe that is never hit). The script
# times its own CALLS calls of a one-line function
# (time.perf_counter) once the tracer is in place (sonde's --ready-file).
# Per row: the ns per call, and the ns per call over the settrace row.
# Each runs RUNS times; the median counts.
# usage: bench/python_calls.sh [BUILD_DIR] [RUNS] [CALLS]
set -euo pipefail
build=${1:-build}
runs=${2:-3}
calls=${3:-200000}
sonde=$(readlink -f "$build/sonde")
py=${PY:-/usr/bin/python3.11}
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, uprobes)"; exit 1; }
[ -x "$py" ] || { echo "no $py (set PY)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/lib.sh" # median, python_calls_script, python_timed_run
python_calls_script "$tmp/calls.py"

pair="usdt:$py:python:function__entry,function__return"

# run LABEL SETTRACE SONDE_TRACES...: one run; appends ns per call to $tmp/LABEL.
run() {
	local label=$1 trace=$2
	shift 2
	python_timed_run "$tmp" "$tmp/go" "$py" "$tmp/calls.py" "$tmp/go" "$calls" "$trace" -- "$@" \
		>>"$tmp/$label"
}

for _ in $(seq "$runs"); do
	run alone 0
	run settrace 1
	run "settrace + pair" 1 "$pair"
	run "pair + line" 0 "$pair" "usdt:$py:python:line"
	run "py:calls.py:f" 0 "py:calls.py:f"
done
base=$(median <"$tmp/settrace")
echo "target: $py, $calls calls of a one-line function (median of $runs runs)"
printf '%-18s %12s %22s\n' run "ns / call" "ns / call over settrace"
for label in alone settrace "settrace + pair" "pair + line" "py:calls.py:f"; do
	v=$(median <"$tmp/$label")
	printf '%-18s %12.1f %22.1f\n' "$label" "$v" "$(awk -v a="$v" -v b="$base" 'BEGIN { print a - b }')"
done
