#!/usr/bin/env bash
# What a py: probe costs per Python call (pyenv's 3.12, or PY, run with
# -X perf: every Python call goes through the trampoline evaluator, where
# the probe's uprobe and uretprobe are), against the same script untraced.
# Rows: the script without -X perf; with it; with sonde timing the called
# function (py:calls.f: every call a span); the same reading its argument
# (py:calls.f i: the int read from the frame at every call, sent as a
# record); with sonde timing a function
# the script never calls (py:calls.absent: every call trapped, looked at in
# the kernel and left out: what the other Python calls of a traced process
# pay). The script times its own CALLS calls of a one-line function
# (time.perf_counter) once the tracer is in place (sonde's --ready-file).
# Per row: the ns per call, and the ns per call over -X perf alone. Each
# runs RUNS times; the median counts.
# usage: bench/python_spans.sh [BUILD_DIR] [RUNS] [CALLS]
set -euo pipefail
build=${1:-build}
runs=${2:-3}
calls=${3:-200000}
sonde=$(readlink -f "$build/sonde")
py=${PY:-/root/.pyenv/versions/3.12.1/bin/python3.12}
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, uprobes)"; exit 1; }
[ -x "$py" ] || { echo "no $py (set PY)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/lib.sh" # median, python_calls_script, python_timed_run
python_calls_script "$tmp/calls.py"


# run LABEL PYTHON_OPTS [SONDE_TRACE]: one run; appends ns per call to $tmp/LABEL.
run() {
	local label=$1 opts=$2
	shift 2
	# shellcheck disable=SC2086 # opts is empty or -X perf
	python_timed_run "$tmp" "$tmp/go" "$py" $opts "$tmp/calls.py" "$tmp/go" "$calls" 0 -- "$@" \
		>>"$tmp/$label"
}

for _ in $(seq "$runs"); do
	run alone ""
	run "-X perf" "-X perf"
	run "py:calls.f" "-X perf" py:calls.f
	run "py:calls.f i" "-X perf" "py:calls.f i"
	run "py:calls.absent" "-X perf" py:calls.absent
done
base=$(median <"$tmp/-X perf")
echo "target: $py, $calls calls of a one-line function (median of $runs runs)"
printf '%-18s %12s %22s\n' run "ns / call" "ns / call over -X perf"
for label in alone "-X perf" "py:calls.f" "py:calls.f i" "py:calls.absent"; do
	v=$(median <"$tmp/$label")
	printf '%-18s %12.1f %22.1f\n' "$label" "$v" "$(awk -v a="$v" -v b="$base" 'BEGIN { print a - b }')"
done
