#!/usr/bin/env bash
# A long live session: sonde top -b at 999 Hz with 10 probes on a busy
# two-thread service (bench/busy.c, ~50k traced calls/s), for SECONDS
# (default 600). Every 30 s it reads sonde's own CPU time and RSS from /proc
# and prints them; at the end, the RSS growth over the second half of the
# run (flat = bounded memory) and sonde's average CPU in % of one core.
#
# usage: bench/live_session.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
build=${1:-build}
seconds=${2:-600}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "live_session: needs root (BPF)"; exit 1; }
sonde=$build/sonde
busy=$build/bench/busy
work=$(mktemp -d /tmp/sonde-live-bench.XXXXXX)
trap 'kill $busy_pid $sonde_pid 2>/dev/null || true; rm -rf "$work"' EXIT

"$busy" $((seconds + 30)) 2 >"$work/busy.out" &
busy_pid=$!
sleep 1
traces=()
for k in 0 1 2 3 4 5 6 7 8 9; do traces+=(--trace "stage_$k"); done
"$sonde" top -b -F 999 -i 10 -p "$busy_pid" "${traces[@]}" --no-ctl >"$work/top.out" 2>"$work/top.err" &
sonde_pid=$!

tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$sonde_pid/stat"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$sonde_pid/status"; }

printf '%8s %10s %10s\n' "time_s" "cpu_%" "rss_MB"
start=$(date +%s.%N)
prev_t=$start
prev_c=$(cpu_ticks)
first_c=$prev_c
half_rss=""
t=0
while [ "$t" -lt "$seconds" ]; do
	sleep 30
	t=$((t + 30))
	kill -0 "$sonde_pid" 2>/dev/null || { echo "sonde exited early:"; cat "$work/top.err"; exit 1; }
	now=$(date +%s.%N)
	c=$(cpu_ticks)
	rss=$(rss_kb)
	awk -v t="$t" -v dc="$((c - prev_c))" -v dt="$(echo "$now - $prev_t" | bc)" -v tck="$tck" \
		-v rss="$rss" 'BEGIN { printf "%8d %10.1f %10.1f\n", t, 100 * dc / tck / dt, rss / 1024 }'
	prev_c=$c
	prev_t=$now
	[ "$t" -ge $((seconds / 2)) ] && [ -z "$half_rss" ] && half_rss=$rss
	end_rss=$rss
done
end=$(date +%s.%N)
total_c=$(($(cpu_ticks) - first_c))
kill -INT "$sonde_pid"
wait "$sonde_pid" || true
snapshots=$(grep -c '^--- sonde top at' "$work/top.out" || true)
drops=$(grep -m1 -o 'drops *[0-9]*' "$work/top.out" | tail -1 || true)
awk -v c="$total_c" -v tck="$tck" -v dt="$(echo "$end - $start" | bc)" -v h="$half_rss" -v e="$end_rss" \
	-v n="$snapshots" 'BEGIN {
	printf "sonde CPU: %.1f%% of one core on average over %.0f s (%d snapshots)\n", 100 * c / tck / dt, dt, n
	printf "RSS: %.1f MB at the half, %.1f MB at the end: %+.1f%% over the second half\n", h / 1024, e / 1024, 100 * (e - h) / h
}'
tail -n 3 "$work/top.err"
