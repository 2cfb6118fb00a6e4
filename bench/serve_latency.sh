#!/usr/bin/env bash
# sonde serve's page update latency, a sample in the kernel to a pixel, and
# the server's CPU with pages connected: a live session at 999 Hz with 10
# probes (stage_0..9) on bench/busy.c (two busy threads), first with no
# client, then with CLIENTS pages of the page in one headless chromium
# (tests/js/page_latency.mjs). While the pages are connected, busy's main
# thread runs MARKS functions seen nowhere else (mark_0, mark_1, ...), one
# every 1.5 s, each printing the CLOCK_REALTIME time it began and the time
# it had had 1 ms of CPU (a 999 Hz sampler has sampled it by then); each
# page notes when its hot functions table or flame graph first holds that
# function, at the animation frame that paints it, on the same clock.
# Latency from the mark's start is an upper bound of sample -> pixel, from
# its first CPU millisecond about a lower one. Prints the medians and 90th
# percentiles over every page and mark, and sonde's CPU (% of one core) in
# each phase.
#
# usage: bench/serve_latency.sh [BUILD_DIR] [MARKS] [CLIENTS] [INTERVAL_S]
set -euo pipefail
build=${1:-build}
marks=${2:-12}
clients=${3:-5}
interval=${4:-1}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "serve_latency: needs root (BPF)"; exit 1; }
[ -d tests/js/node_modules/playwright-core ] && [ -x /usr/bin/chromium ] ||
	{ echo "serve_latency: needs chromium and tests/js's npm packages (scripts/bootstrap.sh test)"; exit 1; }
sonde=$build/sonde
busy=$build/bench/busy
work=$(mktemp -d /tmp/sonde-serve-latency.XXXXXX)
busy_pid= sonde_pid= node_pid=
cleanup() {
	[ -n "$node_pid" ] && kill "$node_pid" 2>/dev/null
	# sonde has probes attached: SIGINT, never SIGKILL
	[ -n "$sonde_pid" ] && kill -INT "$sonde_pid" 2>/dev/null
	[ -n "$busy_pid" ] && kill "$busy_pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM # cleanup runs then too

"$busy" 900 2 "$marks" >"$work/busy.out" &
busy_pid=$!
for _ in $(seq 100); do [ "$(readlink "/proc/$busy_pid/exe")" = "$(readlink -f "$busy")" ] && break; sleep 0.05; done
traces=()
for k in 0 1 2 3 4 5 6 7 8 9; do traces+=(--trace "stage_$k"); done
"$sonde" serve -F 999 -i "$interval" -p "$busy_pid" "${traces[@]}" --no-ctl >"$work/serve.out" 2>"$work/serve.err" &
sonde_pid=$!
# Loading the BPF programs takes seconds, tens on a loaded machine.
for _ in $(seq 1200); do [ -s "$work/serve.out" ] && break; sleep 0.1; done
url=$(head -n1 "$work/serve.out")
[ -n "$url" ] || { echo "serve_latency: sonde serve printed no URL: $(cat "$work/serve.err")"; exit 1; }
sleep 3 # the probes attached, the window filling

tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$sonde_pid/stat"; }
span=$(echo "$marks * 1.5" | bc)
# cpu_during CMD...: sonde's CPU while CMD runs, in % of one core.
cpu_during() {
	local c0 c1 t0 t1
	c0=$(cpu_ticks)
	t0=$(date +%s.%N)
	"$@"
	c1=$(cpu_ticks)
	t1=$(date +%s.%N)
	awk -v dc="$((c1 - c0))" -v tck="$tck" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f", 100 * dc / tck / (t1 - t0) }'
}
mark_all() {
	for _ in $(seq "$marks"); do
		kill -USR1 "$busy_pid"
		sleep 1.5
	done
}

idle=$(cpu_during sleep "$span")
node tests/js/page_latency.mjs "$url" "$clients" "$work/ready" "$work/collect" >"$work/shown" &
node_pid=$!
for _ in $(seq 1200); do [ -s "$work/ready" ] && break; kill -0 "$node_pid" 2>/dev/null || break; sleep 0.1; done
[ -s "$work/ready" ] || { echo "serve_latency: the pages did not come up"; exit 1; }
sleep 3 # each page has its first whole state
busyN=$(cpu_during mark_all)
sleep 3 # the last mark shown
touch "$work/collect"
wait "$node_pid"
node_pid=

echo "sonde serve -F 999 -i $interval, 10 probes, busy.c with 2 threads; $clients page(s) in headless chromium, $marks marks"
echo "  pages: $(cat "$work/ready")"
echo "  sonde CPU, no client:     ${idle}% of one core (${span} s)"
echo "  sonde CPU, $clients page(s):   ${busyN}% of one core (${span} s, while the marks ran)"
# mark -> page latencies (ms), from the mark's start and from its first
# CPU millisecond
awk '
	FNR == NR { split($1, k, "="); split($2, e, "="); split($3, c, "=");
		entry["mark_" k[2]] = e[2] / 1e6; cpu1["mark_" k[2]] = c[2] / 1e6; next }
	/^page=/ { split($2, n, "="); split($3, s, "=");
		if (n[2] in entry) { print "E", s[2] - entry[n[2]]; print "C", s[2] - cpu1[n[2]]; shown++ } }
	END { print "N", shown + 0 }' <(grep '^mark=' "$work/busy.out") "$work/shown" >"$work/lat"
ran=$(grep -c '^mark=' "$work/busy.out" || true)
shown=$(awk '$1 == "N" { print $2 }' "$work/lat")
echo "  $ran marks ran; $shown of $((ran * clients)) (page, mark) pairs shown"
# pct KIND P: the P-th percentile (nearest rank) of the latencies of KIND
pct() { awk -v k="$1" '$1 == k { print $2 }' "$work/lat" | sort -n |
	awk -v p="$2" '{ v[NR] = $1 } END { if (!NR) { print "-"; exit } i = int((p * NR + 99) / 100); if (i < 1) i = 1; printf "%.0f", v[i] }'; }
echo "  sample -> pixel, from the mark's start:          median $(pct E 50) ms, p90 $(pct E 90) ms, max $(pct E 100) ms"
echo "  sample -> pixel, from its first CPU millisecond: median $(pct C 50) ms, p90 $(pct C 90) ms, max $(pct C 100) ms"
