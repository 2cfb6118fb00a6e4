#!/usr/bin/env bash
# How long putting probes on many functions and taking them off takes:
# sonde with uprobe_multi links (the default where the kernel has them,
# Linux 6.6+), sonde with one perf-event link a uprobe (SONDE_UPROBE_MULTI=0,
# what older kernels get), and bpftrace on the same functions.
# Target: tests/targets/manyfuncs (f000..f299), waiting, so no call runs.
#   ready   from the start of the command to its "tracing" line (sonde;
#           BPF load and calibration included) or its BEGIN probe's output
#           (bpftrace: BEGIN runs once every probe is attached)
#   end     from SIGINT to the process's exit (the kernel removes the
#           uprobes; sonde waits for its helper to finish the removal)
# N functions are f00* (10), f0* (100) and f0* f1* (200); each entry and
# return uprobe counts (sonde and bpftrace trace entries and returns).
# usage: bench/probe_setup.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-1}
sonde="$(realpath "$build/sonde")"
target="$(realpath "$build/tests/targets/manyfuncs")"
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, uprobes)"; exit 1; }

"$target" "$tmp/never" 1 >"$tmp/target.out" &
tpid=$!
pids+=("$tpid")
now() { date +%s.%N; }

# measure LABEL READY_REGEX CMD...: prints "ready end" in seconds.
measure() {
	local re=$1
	shift
	local t0 t1 t2
	t0=$(now)
	"$@" >"$tmp/out" 2>&1 &
	local p=$!
	while ! grep -qE "$re" "$tmp/out"; do
		kill -0 "$p" 2>/dev/null || { echo "failed:" >&2; cat "$tmp/out" >&2; exit 1; }
		sleep 0.02
	done
	t1=$(now)
	kill -INT "$p"
	wait "$p" || true
	t2=$(now)
	awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "%.2f %.2f\n", b - a, c - b }'
}

median_pair() { sort -g | awk '{ r[NR] = $1; e[NR] = $2 } END { m = int((NR + 1) / 2); print r[m], e[m] }'; }

printf '%-9s %-4s %10s %10s\n' tool N ready_s end_s
for spec in 'f00*:10' 'f0*:100' 'f0* f1*:200'; do
	globs=${spec%%:*}
	n=${spec##*:}
	read -ra g <<<"$globs"
	m=$(for _ in $(seq "$runs"); do measure '^sonde: tracing' "$sonde" lat -p "$tpid" "${g[@]}"; done | median_pair)
	printf '%-9s %-4s %10s %10s\n' multi "$n" $m
	c=$(for _ in $(seq "$runs"); do SONDE_UPROBE_MULTI=0 measure '^sonde: tracing' "$sonde" lat -p "$tpid" "${g[@]}"; done | median_pair)
	printf '%-9s %-4s %10s %10s\n' per-probe "$n" $c
	if command -v bpftrace >/dev/null; then
		# bpftrace 0.17 has no [..] in its globs: a probe list instead
		ent="" ret=""
		for x in "${g[@]}"; do
			ent="$ent${ent:+,}uprobe:$target:$x"
			ret="$ret${ret:+,}uretprobe:$target:$x"
		done
		b=$(for _ in $(seq "$runs"); do measure '^ready' bpftrace -e \
			"BEGIN { printf(\"ready\\n\"); } $ent { @c = count(); } $ret { @r = count(); }"; done | median_pair)
		grep -q "^Attaching $((2 * n + 1)) probes" "$tmp/out" || { echo "bpftrace did not attach $((2 * n)) uprobes:" >&2; cat "$tmp/out" >&2; exit 1; }
		printf '%-9s %-4s %10s %10s\n' bpftrace "$n" $b
	fi
done
