# Every file of the shared corpus through every reader sonde has that takes
# it, and the sample totals compared across them (issue 24): perf script
# read by report (the profile), by report --folded, by convert to folded
# (streamed) and through each format sonde writes and reads back (pprof,
# nflxprofile, a recording); folded stacks (FlameGraph's results) the
# same. A reader that counted other records than the rest would differ
# here. The inputs are real captures of other tools, larger than the
# readers' buffers (example-perf-stacks: 37,158 lines, gzip).
. "$(dirname "$0")/lib.sh"

CORPUS="$SRC/../shared/corpus"
[ -d "$CORPUS/flamegraph" ] ||
	fail "$CORPUS is absent: the shared corpus belongs beside the repository (../shared/corpus)"

sum_folded() { awk '{ s += $NF } END { printf "%d\n", s }' "$1"; }
samples() { "$SONDE" report --json "$1" | jq -e .samples; }

# totals FILE: one line "reader total" for each reader of FILE.
totals() {
	local f=$1 t
	echo "report $(samples "$f")"
	"$SONDE" report --folded "$f" >"$WORK/r.folded"
	echo "report--folded $(sum_folded "$WORK/r.folded")"
	"$SONDE" convert "$f" -o "$WORK/c.folded" 2>"$WORK/c.err"
	echo "convert-folded $(sum_folded "$WORK/c.folded")"
	for fmt in pb.gz nflx sonde; do
		rm -f "$WORK/x.$fmt"
		"$SONDE" convert "$f" -o "$WORK/x.$fmt" 2>"$WORK/c.err"
		t=$(samples "$WORK/x.$fmt")
		echo "via-$fmt $t"
		"$SONDE" convert "$WORK/x.$fmt" -o "$WORK/x.folded"
		echo "via-$fmt-folded $(sum_folded "$WORK/x.folded")"
	done
}

n=0
for f in "$CORPUS"/flamegraph/perf-*.txt "$CORPUS"/flamegraph/example-perf-stacks.txt.gz \
	"$CORPUS"/flamescope/perf.test01 "$CORPUS"/flamegraph/results/*.txt; do
	totals "$f" >"$WORK/totals"
	first=$(head -n1 "$WORK/totals" | cut -d' ' -f2)
	is_number "$first" || fail "$(basename "$f"): report's total is '$first'"
	[ "$first" -gt 0 ] || fail "$(basename "$f"): no samples"
	awk -v t="$first" '$2 != t { bad = 1; print "  " $0 } END { exit bad }' "$WORK/totals" ||
		{ cat "$WORK/totals"; fail "$(basename "$f"): the readers disagree (report: $first)"; }
	n=$((n + 1))
done
pass "$n corpus files: report, report --folded, convert and pprof/nflxprofile/recording round trips count the same samples"

# What no reader takes gets one clear line and no output.
expect_error 'unrecognized format' "" -- "$SONDE" report "$CORPUS/flamegraph/example-dtrace-stacks.txt"
pass "DTrace output: one clear line"
