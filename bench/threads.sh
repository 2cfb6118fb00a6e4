#!/usr/bin/env bash
# The cost of one thread-state pass (record --threads, sonde threads): a
# target with N sleeping threads (bench/sleepers) recorded with --threads
# at 20 passes a second for SECONDS; each pass times itself in the kernel
# (bpf_ktime_get_ns at its start and end: the walk over the threads and
# their records into the ring buffer), the recording's meta sums it
# (thread_state_pass_ns over thread_state_passes). The perf interrupt
# that runs the pass (its entry and exit, the same for any number of
# threads) is not in it. Reference: xcapture v3's published 340-555 us
# per pass (task iterator over all threads). stacks/pass: the threads whose
# last stack was new since the pass before (each sent once; a sleeper
# leaves the CPU every 50 ms, a pass's interval: nearly all of them).
# usage: bench/threads.sh [BUILD_DIR] [SECONDS] [N...]
set -euo pipefail
build=${1:-build}
seconds=${2:-4}
shift 2 2>/dev/null || shift $#
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(10 100 1000 4000)
sonde="$build/sonde"
target="$build/bench/sleepers"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, perf events)"; exit 1; }
meta() { sqlite3 "$1" "SELECT value FROM meta WHERE key = '$2'"; }

printf "%8s %8s %12s %12s %14s\n" threads passes "us/pass" "ns/thread" "stacks/pass"
for n in "${counts[@]}"; do
	"$sonde" record --threads --threads-hz 20 -F 1 -d "$seconds" -o "$tmp/t.sonde" \
		-- "$target" "$n" $((seconds + 30)) >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
	passes=$(meta "$tmp/t.sonde" thread_state_passes)
	pass_ns=$(meta "$tmp/t.sonde" thread_state_pass_ns)
	states=$(meta "$tmp/t.sonde" thread_state_samples)
	lost=$(meta "$tmp/t.sonde" lost_thread_states)
	stacks=$(meta "$tmp/t.sonde" thread_stacks)
	awk -v p="$passes" -v ns="$pass_ns" -v s="$states" -v lost="$lost" -v k="${stacks:-0}" 'BEGIN {
		per = ns / p; per_thread = per / (s / p)
		printf "%8d %8d %12.1f %12.0f %14.0f%s\n", s / p, p, per / 1e3, per_thread, k / p,
			(lost > 0 ? "  (lost " lost ")" : "") }'
done
echo "xcapture v3 (published): 340-555 us per pass"
