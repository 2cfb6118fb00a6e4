#!/usr/bin/env bash
# How many span events per second sonde's ring-buffer consumer takes in
# without drops. bench/calls runs THREADS threads that each call an empty
# target_fn() N times, under `sonde record -F 1 --trace target_fn`; every
# call is one span record in the ring buffer. For each ring-buffer size and
# thread count:
#   offered  = calls the kernel saw (kernel_calls) / loop time
#   received = span records sonde got (calls) / loop time
#   dropped  = lost_spans (ring buffer full), from the recording's meta table
#   cpu/event = sonde's own CPU time (all its threads) from its start to the
#               target's exit, less that of a run with a 1-call target
#               (start-up, BPF load, attach), per record received: what
#               consuming a record costs (saving the file comes later and is
#               not counted)
# The loop time is the target's own (clock_gettime around its loops), so
# sonde's start-up, attach, drain and save do not count.
# Each configuration runs RUNS times; the run with the median received/s is
# shown, with how many of the runs dropped records.
# usage: bench/ringbuf_throughput.sh [BUILD_DIR] [N] ["THREADS..."] ["BUFFER_MB..."] [RUNS]
set -euo pipefail
build=${1:-build}
n=${2:-1000000}
threads_list=${3:-"1 2 4"}
buffers=${4:-"16 64"}
runs=${5:-3}
target="$build/bench/calls"
sonde="$build/sonde"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, uprobes)"; exit 1; }

tick=$(getconf CLK_TCK)
mkfifo "$tmp/tick"
exec 9<>"$tmp/tick" # nothing is ever written: `read -t` on it is a fork-free sleep
# record MB THREADS N: runs sonde in the background and, when the target has
# printed its result (it does so as it exits), reads sonde's own CPU time
# (utime + stime of its threads) from /proc: what sonde spent until then,
# before draining the rest and saving. Prints "LOOP_NS SONDE_CPU_S".
record() {
	local mb=$1 t=$2 calls=$3 spid cpu=
	rm -f "$tmp/r.sonde" "$tmp/out"
	"$sonde" record -F 1 --buffer-mb "$mb" --trace target_fn -o "$tmp/r.sonde" -- "$target" "$calls" "$t" \
		>"$tmp/out" 2>"$tmp/err" &
	spid=$!
	while kill -0 "$spid" 2>/dev/null; do
		# The target's stdout is a file, so its line appears as it exits.
		# Polled with builtins only (no fork), not to take CPU from the run.
		if [ -s "$tmp/out" ]; then
			cpu=$(awk -v tick="$tick" '{ sub(/^.*\) /, ""); print ($12 + $13) / tick }' "/proc/$spid/stat" 2>/dev/null) || cpu=
			break
		fi
		read -r -t 0.005 -u 9 || true
	done
	wait "$spid" || { echo "sonde record failed:"; cat "$tmp/err"; exit 1; } >&2
	[ -n "$cpu" ] || { echo "could not read sonde's CPU time while the target ran" >&2; exit 1; }
	awk -v cpu="$cpu" '/^[0-9]+ [0-9]+ [0-9]+$/ { ns = $1 } END { if (ns == "") exit 1; print ns, cpu }' "$tmp/out" ||
		{ echo "$target printed no loop time" >&2; exit 1; }
}

echo "$(nproc) CPUs; $n calls per thread, one span record per call; the median run (by received/s) of $runs"
printf '%9s %7s %11s %11s %10s %7s %8s %10s %6s\n' buffer threads offered/s received/s lost_spans loop_s sonde_s \
	"cpu/event" drops
for mb in $buffers; do
	# sonde's fixed CPU cost (start-up, BPF load and attach) with a 1-call target
	base_cpu=$(record "$mb" 1 1)
	base_cpu=${base_cpu#* }
	for t in $threads_list; do
		: >"$tmp/runs"
		for _ in $(seq "$runs"); do
			res=$(record "$mb" "$t" "$n")
			read -r loop_ns cpu <<<"$res"
			json=$("$sonde" report "$tmp/r.sonde" --json)
			calls=$(jq '[.probes[] | select(.name == "target_fn") | .calls] | add // 0' <<<"$json")
			kcalls=$(jq '[.probes[] | select(.name == "target_fn") | .kernel_calls] | add // 0' <<<"$json")
			lost=$(sqlite3 "$tmp/r.sonde" "select value from meta where key = 'lost_spans'")
			dur=$(sqlite3 "$tmp/r.sonde" "select value from meta where key = 'duration_s'")
			awk -v ns="$loop_ns" -v c="$calls" -v k="$kcalls" -v l="$lost" -v d="$dur" -v cpu="$cpu" -v base="$base_cpu" \
				'BEGIN { printf "%.0f %.0f %d %.3f %.3f %.0f\n", k / (ns / 1e9), c / (ns / 1e9), l, ns / 1e9, d,
					(cpu - base) / c * 1e9 }' >>"$tmp/runs"
		done
		awk -v mb="$mb" -v t="$t" '{ print mb, t, $0 }' "$tmp/runs" >>"$tmp/all"
		dropped=$(awk '$3 > 0' "$tmp/runs" | wc -l)
		sort -k2,2g "$tmp/runs" | awk -v m="$(( (runs + 1) / 2 ))" 'NR == m' |
			awk -v mb="$mb" -v t="$t" -v dr="$dropped/$runs" \
				'{ printf "%6d MB %7d %11d %11d %10d %7.3f %8.3f %7d ns %6s\n", mb, t, $1, $2, $3, $4, $5, $6, dr }'
	done
done
echo
# Every run, in $tmp/all: MB, threads, offered/s, received/s, lost, ...
awk '$5 == 0 && $4 > best { best = $4; at = $1 " MB, " $2 " threads" }
	END { if (best) printf "highest rate received with no drops:  %.0f events/s (a run with %s)\n", best, at
	      else print "highest rate received with no drops:  none (every run dropped)" }' "$tmp/all"
awk '$5 > 0 && (low == "" || $3 < low) { low = $3; at = $1 " MB, " $2 " threads"; rec = $4; l = $5 }
	END { if (low == "") print "drops: none in any run"
	      else printf "lowest rate offered with drops:       %.0f events/s (a run with %s: %.0f/s received, %d lost)\n", low, at, rec, l }' "$tmp/all"
