#!/usr/bin/env bash
# What a library probe costs processes that are not targets. sonde attaches
# a LIB:FUNC probe to the library file for every process (so that processes
# the target forks and execs later are counted from their first call), which
# makes every process that runs FUNC take the uprobe trap; only targets are
# counted. --no-children fixes the target set and attaches per process
# instead. tests/targets/counted calls counted_work (libcounted.so, a
# function with the usual frame-pointer prologue) N times and prints the
# loop's wall time per call; the median of RUNS runs counts:
#   no probe              counted alone
#   non-target, default   while `sonde lat -p X libcounted:counted_work` runs,
#                         X another process mapping libcounted
#   non-target, --no-children   the same with --no-children
#   target                `sonde lat libcounted:counted_work -- counted N`
#                         (the traced call itself, for scale)
# usage: bench/library_trap.sh [BUILD_DIR] [N] [RUNS]
set -euo pipefail
build=${1:-build}
n=${2:-200000}
runs=${3:-3}
sonde="$build/sonde"
targets="$(realpath "$build/tests/targets")"
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, uprobes)"; exit 1; }

. "$(dirname "$0")/lib.sh" # median
per_call() { sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p'; }
runs_of() { for _ in $(seq "$runs"); do "$@" | per_call; done | median; }

base=$(runs_of "$targets/counted" "$n")

# X: a process that maps libcounted and stays.
LD_PRELOAD="$targets/libcounted.so" sleep 100000 &
x=$!
pids+=("$x")
while ! grep -q libcounted "/proc/$x/maps" 2>/dev/null; do sleep 0.05; done

nontarget() { # sonde options...
	"$sonde" lat "$@" -p "$x" libcounted:counted_work >"$tmp/lat.out" 2>"$tmp/lat.err" &
	local lat=$!
	pids+=("$lat")
	while ! grep -q '^sonde: tracing' "$tmp/lat.err"; do
		kill -0 "$lat" 2>/dev/null || { cat "$tmp/lat.err"; exit 1; }
		sleep 0.05
	done
	runs_of "$targets/counted" "$n"
	kill -INT "$lat"
	wait "$lat" || true
	grep -q '^counted_work: 0 calls' "$tmp/lat.out" || { echo "non-target calls were counted:"; cat "$tmp/lat.out"; exit 1; }
}
shared=$(nontarget)
fixed=$(nontarget --no-children)
traced=$(for _ in $(seq "$runs"); do "$sonde" lat libcounted:counted_work -- "$targets/counted" "$n" 2>/dev/null | per_call; done | median)

awk -v n="$n" -v runs="$runs" -v base="$base" -v shared="$shared" -v fixed="$fixed" -v traced="$traced" 'BEGIN {
	printf "%d calls of counted_work per run, median of %d runs (wall time per call of the loop)\n", n, runs
	printf "%-42s %9.1f ns/call\n", "no probe:", base
	printf "%-42s %9.1f ns/call  (+ %.1f)\n", "non-target, library probe (default):", shared, shared - base
	printf "%-42s %9.1f ns/call  (+ %.1f)\n", "non-target, library probe, --no-children:", fixed, fixed - base
	printf "%-42s %9.1f ns/call  (+ %.1f)\n", "target (traced call, for scale):", traced, traced - base
	printf "non-target trap / traced call: %.2f\n", (shared - base) / (traced - base)
}'
