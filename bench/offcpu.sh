#!/usr/bin/env bash
# The cost of record --off-cpu on the worst case, a context-switch flood:
# tests/targets/pingpong (two threads passing a byte over two pipes; each
# round trip blocks each thread once) measures its own blocking reads per
# second with no profiler, under `sonde record` without and with
# --off-cpu, and under `perf record -e sched:sched_switch -g` (perf's
# off-CPU recipe), RUNS times each; the medians count.
# usage: bench/offcpu.sh [BUILD_DIR] [RUNS] [ROUNDS]
set -euo pipefail
build=${1:-build}
runs=${2:-5}
rounds=${3:-200000}
target="$build/tests/targets/pingpong"
sonde="$build/sonde"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, perf events)"; exit 1; }

. "$(dirname "$0")/lib.sh" # median
rate() { tr ' ' '\n' <"$1" | sed -n 's/^switches_per_s=//p'; }

measure() { # label command... (the target's own switches/s; median)
	local label=$1
	shift
	for i in $(seq "$runs"); do
		"$@" >"$tmp/out" 2>"$tmp/err.$label"
		rate "$tmp/out"
	done | median >"$tmp/$label"
	echo "$label: $(cat "$tmp/$label") switches/s (median of $runs)"
}

measure none "$target" "$rounds"
measure sonde "$sonde" record -o "$tmp/s.sonde" -- "$target" "$rounds"
measure sonde_offcpu "$sonde" record --off-cpu -o "$tmp/o.sonde" -- "$target" "$rounds"
summary=$(grep -o 'off-CPU intervals: .*' "$tmp/err.sonde_offcpu" || true)
if command -v perf >/dev/null && perf record -q -e sched:sched_switch -g -o "$tmp/probe.data" -- true >/dev/null 2>&1; then
	measure perf perf record -q -e sched:sched_switch -g -o "$tmp/p.data" -- "$target" "$rounds"
	perf_ratio=$(awk -v a="$(cat "$tmp/perf")" -v b="$(cat "$tmp/none")" 'BEGIN { printf "%.3f", a / b }')
else
	perf_ratio="n/a (perf record -e sched:sched_switch unavailable)"
fi
ratio() { awk -v a="$(cat "$tmp/$1")" -v b="$(cat "$tmp/none")" 'BEGIN { printf "%.3f", a / b }'; }
echo
echo "sonde --off-cpu, last run: $summary"
echo "switches/s ratio, sonde record / no profiler:                          $(ratio sonde)"
echo "switches/s ratio, sonde record --off-cpu / no profiler:                $(ratio sonde_offcpu)"
echo "switches/s ratio, perf record -e sched:sched_switch -g / no profiler:  $perf_ratio"
