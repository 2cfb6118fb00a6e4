#!/usr/bin/env bash
# A real server under load, traced and sampled: redis-server (Debian's) on a
# unix socket, driven by redis-benchmark (SET/GET, 50 clients, pipelining
# off), in one run of each configuration:
#   none          no profiler
#   floor         an empty BPF program on processCommand's entry and return,
#                 on the same kind of link as sonde's (bench/emptyprobe)
#   sonde 99      sonde record --trace processCommand -F 99
#   sonde 999     sonde record --trace processCommand -F 999
#   bpftrace      a latency histogram of processCommand (uprobe+uretprobe)
#   perf 999      perf record -g -F 999 (sampling only, no tracing)
# Prints requests/s of each, its ratio to none, redis-server's own CPU time
# per command (its threads' run time from /proc/PID/task/*/schedstat: what
# the probes and samples cost it, whatever else the machine runs), and for
# sonde the calls the kernel counted against redis' own
# total_commands_processed, the records kept, and sonde's own cost per call
# and per sample from the recording (the sample's as sonde calibrated it at
# start: the p90 of ~300 samples' gaps in a spinning thread's clock).
# redis' CPU time per command moves with how many commands each turn of its
# event loop serves, by more than a probe costs: the cost per call against
# the floor is bench/trace_cost.sh's to measure.
# The configurations alternate ROUNDS times; the median counts.
# usage: bench/redis_trace.sh [BUILD_DIR] [REQUESTS] [ROUNDS]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:-build}
requests=${2:-200000}
rounds=${3:-3}
sonde="$(realpath "$build/sonde")"
tmp=$(mktemp -d)
server=
prof=
cleanup() {
	[ -n "$prof" ] && kill -INT "$prof" 2>/dev/null && wait "$prof" 2>/dev/null || true
	[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, uprobes, perf)"; exit 1; }
for c in redis-server redis-benchmark redis-cli; do
	command -v "$c" >/dev/null || { echo "$c not found: apt-get install redis-server redis-tools"; exit 1; }
done
exe=$(realpath "$(command -v redis-server)")
sock="$tmp/redis.sock"
empty="$(realpath "$build/bench/emptyprobe")"
offset=$(file_offset "$exe" "0x$({ nm "$exe"; nm -D "$exe"; } 2>/dev/null | awk '$3 == "processCommand" { print $1; exit }')")
# The floor on the kind of link sonde uses here: uprobe_multi when sonde does.
multi=--multi
"$sonde" record -v -F 1 -o "$tmp/probe.sonde" -- true 2>&1 | grep -q 'one link a uprobe' && multi=

start_server() {
	redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no \
		--dir "$tmp" >"$tmp/server.log" 2>&1 &
	server=$!
	for _ in $(seq 100); do redis-cli -s "$sock" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
	echo "redis-server did not start:" >&2
	cat "$tmp/server.log" >&2
	exit 1
}
commands() { redis-cli -s "$sock" info stats | awk -F: '/^total_commands_processed/ { print $2 + 0 }'; }
cpu_ns() { cat /proc/"$server"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
load() { # [PREFIX...]: requests/s of one redis-benchmark run (run by PREFIX)
	"$@" redis-benchmark -s "$sock" -n "$requests" -c 50 -t set,get -q 2>/dev/null |
		tr '\r' '\n' | awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/) { s += $i; n++; break } }
			END { if (n) printf "%.0f\n", s / n }'
}
# Waits until the profiler has its probes or sampler in place.
wait_attached() { # pid what
	for _ in $(seq 200); do
		case $2 in
		sonde) [ -s "$tmp/ready" ] && return 0 ;;
		bpftrace) grep -q '^Attaching' "$tmp/prof.out" 2>/dev/null && { sleep 1; return 0; } ;;
		perf) sleep 1; return 0 ;;
		esac
		kill -0 "$1" 2>/dev/null || { cat "$tmp/prof.err" >&2; return 1; }
		sleep 0.1
	done
	return 1
}
stop_prof() {
	kill -INT "$prof" 2>/dev/null || true
	wait "$prof" 2>/dev/null || true
	prof=
}

run() { # label: one measured load under that configuration
	local label=$1 before after cpu0 cpu1 prefix=()
	before=$(commands)
	case $label in
	none) ;;
	floor) prefix=("$empty" --return $multi "$exe" "$offset" --) ;;
	sonde99 | sonde999)
		rm -f "$tmp/ready"
		"$sonde" record -F "${label#sonde}" -p "$server" --trace "$exe:processCommand" \
			--ready-file "$tmp/ready" -o "$tmp/$label.sonde" >/dev/null 2>"$tmp/prof.err" &
		prof=$!
		wait_attached "$prof" sonde ;;
	bpftrace)
		bpftrace -e "uprobe:$exe:processCommand { @s[tid] = nsecs; }
			uretprobe:$exe:processCommand /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }" \
			>"$tmp/prof.out" 2>"$tmp/prof.err" &
		prof=$!
		wait_attached "$prof" bpftrace ;;
	perf999)
		perf record -g -F 999 -p "$server" -o "$tmp/perf.data" >/dev/null 2>"$tmp/prof.err" &
		prof=$!
		wait_attached "$prof" perf ;;
	esac
	local rps
	cpu0=$(cpu_ns)
	rps=$(load "${prefix[@]}")
	cpu1=$(cpu_ns)
	after=$(commands)
	[ -n "$prof" ] && stop_prof
	echo "$rps" >>"$tmp/$label.rps"
	# redis' CPU ns per command (the ping and info of commands() included)
	awk -v c=$((cpu1 - cpu0)) -v n=$((after - before)) 'BEGIN { printf "%.1f\n", c / n }' >>"$tmp/$label.cpu"
	if [ "${label#sonde}" != "$label" ]; then
		local calls
		calls=$("$sonde" report "$tmp/$label.sonde" --json | jq '[.probes[].kernel_calls] | add')
		echo "$((after - before)) $calls" >>"$tmp/$label.calls"
	fi
}

start_server
configs=(none floor sonde99 sonde999 bpftrace perf999)
command -v bpftrace >/dev/null || configs=(none floor sonde99 sonde999 perf999)
for _ in $(seq "$rounds"); do
	for c in "${configs[@]}"; do run "$c"; done
done

base=$(median <"$tmp/none.rps")
echo "redis-benchmark -n $requests -c 50 -t set,get over a unix socket; median of $rounds rounds"
base_cpu=$(median <"$tmp/none.cpu")
for c in "${configs[@]}"; do
	r=$(median <"$tmp/$c.rps")
	cpu=$(median <"$tmp/$c.cpu")
	printf '%-10s %9s req/s  %5.3f of no profiler   redis CPU %7.1f ns/command (+%6.1f)\n' "$c" "$r" \
		"$(awk -v a="$r" -v b="$base" 'BEGIN { print a / b }')" "$cpu" "$(awk -v a="$cpu" -v b="$base_cpu" 'BEGIN { print a - b }')"
done
for c in sonde99 sonde999; do
	echo "$c: commands redis counted / calls sonde's kernel counted, per round: $(paste -sd, "$tmp/$c.calls")"
	"$sonde" report "$tmp/$c.sonde" --json | jq -r '.probes[0] | "  last round: \(.kernel_calls) calls, \(.records) kept with a record, p50 \(.p50_ns) ns, p99 \(.p99_ns) ns, sonde inside calls \(.own_ns / (.kernel_calls + 0.001) | floor) ns/call"'
	"$sonde" report "$tmp/$c.sonde" --json | jq -r '.overhead | "  calibrated: a call \(.calib_call_ns) ns, a sample \(.calib_sample_ns) ns"'
done
