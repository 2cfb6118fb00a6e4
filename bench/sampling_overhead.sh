#!/usr/bin/env bash
# Sampling overhead at 999 Hz on a CPU-bound target: the target's wall time
# under sonde and under `perf record -F 999 -g`, as ratios to its wall time
# with no profiler. Each configuration runs RUNS times; the median counts.
# usage: bench/sampling_overhead.sh [BUILD_DIR] [RUNS] [WORK]
set -euo pipefail
build=${1:-build}
runs=${2:-5}
work=${3:-3000}
target="$build/bench/cpubound"
sonde="$build/sonde"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, perf events)"; exit 1; }

now() { date +%s.%N; }
. "$(dirname "$0")/lib.sh" # median

time_it() { # prints the wall time of "$@" (target output discarded)
	local s e
	s=$(now)
	"$@" >/dev/null 2>&1
	e=$(now)
	awk -v s="$s" -v e="$e" 'BEGIN { printf "%.4f\n", e - s }'
}

measure() { # label command...
	local label=$1
	shift
	for _ in $(seq "$runs"); do time_it "$@"; done | median >"$tmp/$label"
	echo "$label: $(cat "$tmp/$label") s (median of $runs)"
}

measure baseline "$target" "$work"
measure sonde "$sonde" record -F 999 -o "$tmp/s.sonde" -- "$target" "$work"
samples=$("$sonde" report "$tmp/s.sonde" --json | jq .samples)
if command -v perf >/dev/null && perf record -q -F 999 -g -o "$tmp/probe.data" -- true >/dev/null 2>&1; then
	measure perf perf record -q -F 999 -g -o "$tmp/p.data" -- "$target" "$work"
	perf_ratio=$(awk -v a="$(cat "$tmp/perf")" -v b="$(cat "$tmp/baseline")" 'BEGIN { printf "%.3f", a / b }')
else
	perf_ratio="n/a (perf record unavailable)"
fi
sonde_ratio=$(awk -v a="$(cat "$tmp/sonde")" -v b="$(cat "$tmp/baseline")" 'BEGIN { printf "%.3f", a / b }')
echo
echo "samples recorded by sonde (last run): $samples"
echo "wall-time ratio, sonde record -F 999 / no profiler:      $sonde_ratio"
echo "wall-time ratio, perf record -F 999 -g / no profiler:    $perf_ratio"
