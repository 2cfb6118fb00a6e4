#!/usr/bin/env bash
# Responsiveness of a live session under load: sonde top -b at 999 Hz with
# 32 probes (the 12 functions of bench/busy.c that run all the time, libc's
# clock_gettime, and 19 libc functions it never calls) on the busy service.
# Measures how long `sonde ctl status` takes to be answered (the event
# loop's latency: the same loop reads the UI's keys), and the time for
# `trace` / `untrace` of a hot function while it runs.
#
# usage: bench/live_responsive.sh [BUILD_DIR] [REQUESTS=50]
set -euo pipefail
build=${1:-build}
n=${2:-50}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "live_responsive: needs root (BPF)"; exit 1; }
sonde=$build/sonde
work=$(mktemp -d /tmp/sonde-resp-bench.XXXXXX)
export SONDE_RUNTIME_DIR=$work/run
trap 'kill $busy_pid $sonde_pid 2>/dev/null || true; rm -rf "$work"' EXIT

"$build/bench/busy" 300 2 >/dev/null &
busy_pid=$!
sleep 0.5
probes=(--trace 'stage_*' --trace handle --trace spin --trace libc:clock_gettime)
for f in malloc free calloc realloc read write open close fopen fclose memcpy memset strlen \
	strcmp qsort bsearch getenv setenv nanosleep; do
	probes+=(--trace "libc:$f")
done
"$sonde" top -b -F 999 -i 1 -p "$busy_pid" "${probes[@]}" >"$work/top.out" 2>"$work/top.err" &
sonde_pid=$!
for _ in $(seq 100); do "$sonde" ctl status >/dev/null 2>&1 && break; sleep 0.1; done
sleep 3
nprobes=$(grep -c '^PROBE ' <(awk '/^--- sonde top/ { n++ } n == 2' "$work/top.out") || true)

ms() { date +%s%N; }
: >"$work/rtt"
for _ in $(seq "$n"); do
	t0=$(ms); "$sonde" ctl status >/dev/null; t1=$(ms)
	echo $(((t1 - t0) / 1000)) >>"$work/rtt"
	sleep 0.05
done
# The client's own start-up (exec, dynamic linking) is part of each round
# trip: `sonde --version` gives that floor.
: >"$work/floor"
for _ in $(seq "$n"); do
	t0=$(ms); "$sonde" --version >/dev/null; t1=$(ms)
	echo $(((t1 - t0) / 1000)) >>"$work/floor"
done
floor=$(sort -n "$work/floor" | awk -v n="$n" 'NR == int((n + 1) / 2)')
sort -n "$work/rtt" >"$work/rtt.sorted"
p50=$(awk -v n="$n" 'NR == int((n + 1) / 2)' "$work/rtt.sorted")
p95=$(awk -v n="$n" 'NR == int(n * 0.95 + 0.5)' "$work/rtt.sorted")
max=$(tail -1 "$work/rtt.sorted")
t0=$(ms); "$sonde" ctl untrace stage_3 >/dev/null; t1=$(ms)
"$sonde" ctl trace stage_3 >/dev/null; t2=$(ms)
rate=$(grep -m1 -o 'rates: *[0-9.]* samples/s, [0-9.]* calls/s' <(tac "$work/top.out") || true)
echo "probes in the session: $nprobes; $rate"
echo "sonde ctl status round trip over $n requests: p50 $((p50 / 1000)).$((p50 % 1000 / 100)) ms, p95 $((p95 / 1000)).$((p95 % 1000 / 100)) ms, max $((max / 1000)).$((max % 1000 / 100)) ms"
echo "floor (sonde --version, p50): $((floor / 1000)).$((floor % 1000 / 100)) ms"
echo "untrace of a hot function: $(((t1 - t0) / 1000000)) ms; trace it again: $(((t2 - t1) / 1000000)) ms"
