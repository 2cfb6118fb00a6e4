#!/usr/bin/env bash
# The verifier's work per BPF program, and what sonde's start costs:
#   bench/verifier.sh [BUILD_DIR] [RUNS] [OTHER_BUILD_DIR]
# prints bench/verifier's table for BUILD_DIR's object, then the median wall
# and CPU time of `sonde record -- true` over RUNS runs (a start, the BPF
# load, the tables of `true` and of libc, an exit). With OTHER_BUILD_DIR
# (another checkout's build, e.g. before a change) the same for it, the
# runs alternating. Needs root.
set -euo pipefail
build=${1:-build}
runs=${2:-5}
other=${3:-}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

builds=("$build")
[ -n "$other" ] && builds+=("$other")
for b in "${builds[@]}"; do
	echo "== $b: the verifier's work per program"
	"$build/bench/verifier" "$b/bpf/sonde.bpf.o"
done
for ((r = 0; r < runs; r++)); do
	for i in "${!builds[@]}"; do
		/usr/bin/time -f "%e %U %S" -o "$tmp/t" "${builds[$i]}/sonde" record -o "$tmp/x.sonde" -- true \
			>/dev/null 2>&1
		echo "$(cat "$tmp/t")" >>"$tmp/times.$i"
	done
done
for i in "${!builds[@]}"; do
	sort -n "$tmp/times.$i" | awk -v b="${builds[$i]}" '{ w[NR] = $1; c[NR] = $2 + $3 }
		END { m = int((NR + 1) / 2); printf "%s: sonde record -- true: median %.2f s wall, %.2f s CPU (%d runs)\n", b, w[m], c[m], NR }'
done
