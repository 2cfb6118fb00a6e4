#!/usr/bin/env bash
# perf script -> folded and folded -> SVG throughput on FlameGraph's
# example-perf-stacks.txt.gz (repeated REPEAT times for a stable timing), as
# MB/s and stacks/s, and as ratios against FlameGraph's Perl scripts when
# FLAMEGRAPH_DIR points at a directory holding stackcollapse-perf.pl and
# flamegraph.pl (they are not part of sonde; get them yourself).
# usage: bench/formats_throughput.sh [BUILD_DIR] [REPEAT]
set -euo pipefail
build=${1:-build}
repeat=${2:-10}
sonde="$build/sonde"
corpus="$(dirname "$0")/../../shared/corpus/flamegraph/example-perf-stacks.txt.gz"
[ -f "$corpus" ] || { echo "needs $corpus (the shared corpus)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for _ in $(seq "$repeat"); do gzip -dc "$corpus"; done >"$tmp/in.txt"
mb=$(awk -v b="$(stat -c %s "$tmp/in.txt")" 'BEGIN { printf "%.1f", b / 1e6 }')
records=$(grep -c '^\S' "$tmp/in.txt" || true)

now() { date +%s.%N; }
secs() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.3f", e - s }'; }
best_of_3() { # prints the fastest wall time of "$@" (stdout to $OUT)
	local best="" s e t
	for _ in 1 2 3; do
		s=$(now)
		"$@" >"$OUT" || { echo "failed: $*" >&2; exit 1; }
		e=$(now)
		t=$(secs "$s" "$e")
		if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
	done
	echo "$best"
}

echo "input: example-perf-stacks x $repeat = $mb MB, $records perf records"
t_sc=$(OUT="$tmp/sonde.folded" best_of_3 "$sonde" convert --to folded "$tmp/in.txt" -o -)
stacks=$(wc -l <"$tmp/sonde.folded")
echo "sonde convert (perf script -> folded): $t_sc s = $(awk -v m="$mb" -v t="$t_sc" 'BEGIN { printf "%.1f", m / t }') MB/s, $(awk -v r="$records" -v t="$t_sc" 'BEGIN { printf "%.0f", r / t }') records/s"
t_sf=$(OUT="$tmp/sonde.svg" best_of_3 "$sonde" flame "$tmp/sonde.folded" -o -)
echo "sonde flame (folded -> SVG, $stacks stacks): $t_sf s = $(awk -v s="$stacks" -v t="$t_sf" 'BEGIN { printf "%.0f", s / t }') stacks/s"

fg=${FLAMEGRAPH_DIR:-}
if [ -n "$fg" ] && [ -x "$fg/stackcollapse-perf.pl" ] && [ -x "$fg/flamegraph.pl" ]; then
	t_pc=$(OUT="$tmp/perl.folded" best_of_3 "$fg/stackcollapse-perf.pl" "$tmp/in.txt")
	t_pf=$(OUT="$tmp/perl.svg" best_of_3 "$fg/flamegraph.pl" "$tmp/perl.folded")
	cmp -s <(sort "$tmp/sonde.folded") <(sort "$tmp/perl.folded") && same=identical || same=DIFFERENT
	echo "stackcollapse-perf.pl: $t_pc s; flamegraph.pl: $t_pf s (folded outputs $same)"
	echo "speed-up, perf script -> folded: $(awk -v a="$t_pc" -v b="$t_sc" 'BEGIN { printf "%.1f", a / b }')x"
	echo "speed-up, folded -> SVG:         $(awk -v a="$t_pf" -v b="$t_sf" 'BEGIN { printf "%.1f", a / b }')x"
else
	echo "FLAMEGRAPH_DIR not set (or scripts missing): no comparison with the Perl scripts"
fi
