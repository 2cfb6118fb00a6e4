#!/usr/bin/env bash
# sonde serve's cost: a live session at 999 Hz with 10 probes on a busy
# two-thread service (bench/busy.c), first with no client, then with 5
# clients on the event stream (-i 1). Prints sonde's CPU (% of one core)
# in each phase, the bytes per second each client receives, and what the
# same clients would receive if every flame event carried the whole tree
# (the size of /api/flame per interval): the deltas' saving; and the bytes
# per second of each kind of event.
#
# usage: bench/serve.sh [BUILD_DIR] [SECONDS_PER_PHASE]
set -euo pipefail
build=${1:-build}
seconds=${2:-20}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "serve: needs root (BPF)"; exit 1; }
command -v curl >/dev/null || { echo "serve: needs curl"; exit 1; }
sonde=$build/sonde
busy=$build/bench/busy
work=$(mktemp -d /tmp/sonde-serve-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT

"$busy" $((3 * seconds + 150)) 2 >"$work/busy.out" &
busy_pid=$!
pids+=("$busy_pid")
sleep 1
traces=()
for k in 0 1 2 3 4 5 6 7 8 9; do traces+=(--trace "stage_$k"); done
"$sonde" serve -F 999 -i 1 -p "$busy_pid" "${traces[@]}" --no-ctl >"$work/serve.out" 2>"$work/serve.err" &
sonde_pid=$!
pids+=("$sonde_pid")
# Loading the BPF programs takes seconds, tens on a loaded machine.
for _ in $(seq 1200); do [ -s "$work/serve.out" ] && break; sleep 0.1; done
url=$(head -n1 "$work/serve.out")
[ -n "$url" ] || { echo "serve: sonde serve printed no URL: $(cat "$work/serve.err")"; exit 1; }
base=${url%%/\?*}
token=${url##*token=}
sleep 3 # the probes attached, the window filling

tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$sonde_pid/stat"; }
# phase SECONDS: sonde's CPU over it, in % of one core.
phase() {
	local c0 c1 t0 t1
	c0=$(cpu_ticks)
	t0=$(date +%s.%N)
	sleep "$1"
	c1=$(cpu_ticks)
	t1=$(date +%s.%N)
	awk -v dc="$((c1 - c0))" -v tck="$tck" -v dt="$(echo "$t1 - $t0" | bc)" 'BEGIN { printf "%.1f", 100 * dc / tck / dt }'
}

idle=$(phase "$seconds")
for k in 1 2 3 4 5; do
	curl -sN "$base/api/events?token=$token" >"$work/events.$k" &
	pids+=($!)
done
busy5=$(phase "$seconds")
full=$(curl -s "$base/api/flame?token=$token" | wc -c)
for p in "${pids[@]:2}"; do kill "$p" 2>/dev/null || true; done
kill -INT "$sonde_pid"
wait "$sonde_pid" || true

bytes=$(cat "$work/events.1" | wc -c)
flame_bytes=$(grep '^event: flame' -A1 "$work/events.1" | grep '^data:' | wc -c)
flame_events=$(grep -c '^event: flame' "$work/events.1" || true)
echo "sonde serve -F 999, 10 probes, busy.c with 2 threads, ${seconds} s per phase"
echo "  sonde CPU, no client:        ${idle}% of one core"
echo "  sonde CPU, 5 event clients:  ${busy5}% of one core"
awk -v b="$bytes" -v fb="$flame_bytes" -v n="$flame_events" -v full="$full" -v s="$seconds" 'BEGIN {
	printf "  per client: %.0f bytes/s in all, %.0f bytes/s of flame deltas (%d flame events)\n", b / s, fb / s, n
	if (n > 0 && fb > 0)
		printf "  a whole tree per event would be %.0f bytes/s: the deltas send %.2fx less\n", full * n / s, full * n / fb
}'
# Each kind of event: how many, and its bytes per second (status_delta and
# hot_delta: the patches of the status and the hot list).
awk -v s="$seconds" '/^event: / { e = $2; n[e]++ } /^data: / { b[e] += length($0) - 6 }
	END { for (e in n) printf "  %-13s %3d events, %6.0f bytes/s\n", e, n[e], b[e] / s }' "$work/events.1" | sort
