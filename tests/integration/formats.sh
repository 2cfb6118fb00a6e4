# sonde convert and the format views: round trips, independent decoders and
# schemas, FlameGraph's corpus, FlameScope's capture, and bad input.
. "$(dirname "$0")/lib.sh"

CORPUS="$SRC/../shared/corpus"
JS="$SRC/tests/js"
have_js() { command -v node >/dev/null && [ -d "$JS/node_modules/pprof-format" ]; }

# --- FlameGraph's corpus: perf script -> folded, every input x mode -------
if [ -d "$CORPUS/flamegraph" ]; then
	n=0
	for input in "$CORPUS"/flamegraph/perf-*.txt; do
		base=$(basename "$input" .txt)
		for mode in pid tid kernel jit all addrs; do
			"$SONDE" convert "--$mode" "$input" -o "$WORK/c.folded"
			cmp -s <(sort "$WORK/c.folded") <(sort "$CORPUS/flamegraph/results/$base-collapsed-$mode.txt") ||
				fail "convert --$mode $base differs from stackcollapse-perf.pl's output"
			n=$((n + 1))
		done
	done
	pass "perf script -> folded matches FlameGraph's results for all $n input x mode cases"
	# FlameGraph's own example capture (1315 samples; it crashed the
	# converter with --from perf-script): against what stackcollapse-perf.pl
	# (the corpus's revision) made of it, tests/integration/expected/.
	ex="$CORPUS/flamegraph/example-perf-stacks.txt.gz"
	for mode in pid tid kernel jit all addrs; do
		for from in "" "--from perf-script"; do
			# shellcheck disable=SC2086 # from is zero or two words
			"$SONDE" convert $from "--$mode" "$ex" -o "$WORK/ex.folded"
			cmp -s <(sort "$WORK/ex.folded") \
				<(gzip -dc "$SRC/tests/integration/expected/example-perf-stacks-collapsed-$mode.txt.gz" | sort) ||
				fail "convert $from --$mode example-perf-stacks differs from stackcollapse-perf.pl's output"
		done
	done
	pass "example-perf-stacks.txt.gz -> folded matches stackcollapse-perf.pl in all 6 modes, detected or --from"
else
	fail "$CORPUS is absent: the shared corpus belongs beside the repository (../shared/corpus), and the FlameGraph comparison needs it"
fi

# --- FlameScope's capture: heatmap cells, and the range flame graph -------
if [ -f "$CORPUS/flamescope/perf.test01" ]; then
	"$SONDE" heatmap "$CORPUS/flamescope/perf.test01" -o "$WORK/h.svg"
	xmllint --noout "$WORK/h.svg" || fail "heatmap SVG not well-formed"
	# The five non-idle samples land in these (second, row) cells, as
	# FlameScope's own arithmetic places them.
	cells=$(grep -o 'data-col="[0-9]*" data-row="[0-9]*" data-n="[1-9][0-9]*"' "$WORK/h.svg" |
		sed 's/data-col="\([0-9]*\)" data-row="\([0-9]*\)" data-n="\([0-9]*\)"/\1,\2:\3/' | sort -t, -n | tr '\n' ' ')
	[ "$cells" = "0,44:1 10,40:1 20,34:1 30,30:1 40,24:1 " ] || fail "heatmap cells: '$cells'"
	pass "heatmap cells of perf.test01 match FlameScope's: $cells"
	"$SONDE" heatmap "$CORPUS/flamescope/perf.test01" -o "$WORK/h.html"
	grep -q 'id="hmwrap"' "$WORK/h.html" && grep -q 'STACK-1' "$WORK/h.html" ||
		fail "heatmap HTML lacks the map or the embedded stacks"
	"$SONDE" flame "$CORPUS/flamescope/perf.test01" --range 10-21 -o "$WORK/range.svg"
	grep -q 'STACK-2' "$WORK/range.svg" && grep -q 'STACK-3' "$WORK/range.svg" && ! grep -q 'STACK-1' "$WORK/range.svg" ||
		fail "flame --range 10-21 should hold STACK-2 and STACK-3 only"
	pass "flame --range takes exactly the samples of the range"
else
	fail "$CORPUS/flamescope is absent: the heatmap comparison needs the shared corpus"
fi

# --- round trips -----------------------------------------------------------
printf 'app;main;work;spin 7\napp;main;work 2\napp;main;read_[k] 3\nother;caller;x_[i] 1\n' >"$WORK/in.folded"
"$SONDE" convert "$WORK/in.folded" -o "$WORK/a.pb.gz"
"$SONDE" convert --all "$WORK/a.pb.gz" -o "$WORK/back.folded"
cmp -s <(sort "$WORK/in.folded") <(sort "$WORK/back.folded") || { diff "$WORK/in.folded" "$WORK/back.folded"; fail "folded -> pprof -> folded changed the stacks"; }
pass "folded -> pprof -> folded is the identity"

if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	"$SONDE" record -F 999 --all-calls --trace handle_request -o "$WORK/r.sonde" -- "$TARGETS/requests" 300 >/dev/null
	"$SONDE" convert --all "$WORK/r.sonde" -o "$WORK/r.folded"
	for fmt in pb.gz nflx; do
		"$SONDE" convert "$WORK/r.sonde" -o "$WORK/r.$fmt"
		"$SONDE" convert --all "$WORK/r.$fmt" -o "$WORK/r.$fmt.folded"
		cmp -s <(sort "$WORK/r.folded") <(sort "$WORK/r.$fmt.folded") || fail "recording -> $fmt -> folded differs from the recording's folded"
		pass "recording -> $fmt -> folded equals the recording's folded"
	done
	samples=$("$SONDE" report "$WORK/r.sonde" --json | jq .samples)
	"$SONDE" convert "$WORK/r.sonde" -o "$WORK/r.speedscope.json"
	"$SONDE" convert "$WORK/r.sonde" -o "$WORK/r.trace.json"
	if have_js; then
		node "$JS/check_pprof.mjs" "$WORK/r.pb.gz" >"$WORK/pp.json" || fail "pprof-format could not decode sonde's pprof"
		[ "$(jq .total "$WORK/pp.json")" = "$samples" ] || fail "pprof-format total $(jq .total "$WORK/pp.json") != $samples samples"
		jq -e '.labels | index("span_id") and index("thread") and index("timestamp_ns")' "$WORK/pp.json" >/dev/null ||
			fail "pprof labels missing: $(jq -c .labels "$WORK/pp.json")"
		pass "pprof decoded by pprof-format: $samples samples, thread/timestamp/span_id labels"
		node "$JS/check_speedscope.mjs" "$WORK/r.speedscope.json" >"$WORK/ss.json" || fail "speedscope schema: $(cat "$WORK/ss.json")"
		[ "$(jq .samples "$WORK/ss.json")" = "$samples" ] || fail "speedscope samples != $samples"
		pass "speedscope output valid against speedscope's schema ($samples samples)"
		node "$JS/check_chrometrace.mjs" "$WORK/r.trace.json" >"$WORK/ct.json" || fail "chrome trace: $(cat "$WORK/ct.json")"
		[ "$(jq .samples "$WORK/ct.json")" = "$samples" ] && [ "$(jq .x_events "$WORK/ct.json")" = 300 ] ||
			fail "chrome trace: $(cat "$WORK/ct.json")"
		pass "Chrome trace: 300 spans as X events, $samples samples in Profile chunks"
	else
		fail "node or tests/js/node_modules is missing: run make test-deps (the independent decoder checks need them)"
	fi
	# Differential views take any two inputs in any format.
	"$SONDE" flame --diff "$WORK/r.sonde" "$WORK/r.pb.gz" -o "$WORK/d.svg"
	xmllint --noout "$WORK/d.svg" || fail "diff across formats: bad SVG"
	pass "flame --diff recording vs pprof"
	sid=$(sqlite3 "$WORK/r.sonde" "SELECT id FROM spans ORDER BY duration_ns DESC LIMIT 1")
	"$SONDE" flame "$WORK/r.sonde" --chart --span "$sid" -o "$WORK/chart.svg"
	xmllint --noout "$WORK/chart.svg" || fail "flame chart of a span: bad SVG"
	pass "flame chart of the slowest call (span $sid)"
fi

# --- bad input: one line, non-zero exit, no output file ------------------
head -c 100 "$WORK/a.pb.gz" >"$WORK/trunc.pb.gz"
expect_error "corrupt or truncated gzip" "$WORK/x.folded" -- "$SONDE" convert "$WORK/trunc.pb.gz" -o "$WORK/x.folded"
printf '\x0a\x05hello\x12\xff\xff' >"$WORK/junk.pb"
expect_error "unrecognized format|not a valid" "$WORK/x.folded" -- "$SONDE" convert "$WORK/junk.pb" -o "$WORK/x.folded"
expect_error "not a valid pprof" "$WORK/x.folded" -- "$SONDE" convert --from pprof "$WORK/junk.pb" -o "$WORK/x.folded"
expect_error "cannot tell the output format" "" -- "$SONDE" convert "$WORK/in.folded" -o "$WORK/x.weird"
expect_error "unknown format 'svgz'" "" -- "$SONDE" convert --to svgz "$WORK/in.folded" -o "$WORK/x"
expect_error "line 2" "$WORK/x.pb.gz" -- "$SONDE" convert --from folded <(printf 'a;b 1\nbroken\n') -o "$WORK/x.pb.gz"

# Standard input, read once; a directory as output; --range combinations.
[ -f "$CORPUS/flamegraph/perf-dd-stacks-01.txt" ] && {
	"$SONDE" convert --tid - -o "$WORK/stdin.folded" <"$CORPUS/flamegraph/perf-dd-stacks-01.txt"
	cmp -s <(sort "$WORK/stdin.folded") <(sort "$CORPUS/flamegraph/results/perf-dd-stacks-01-collapsed-tid.txt") ||
		fail "convert from standard input differs"
	pass "convert reads standard input"
}
expect_error "a recording cannot be read from standard input" "" -- sh -c "\"$SONDE\" convert --from sonde - -o \"$WORK/y.folded\" </dev/null"
expect_error "--range works with plain flame graphs and --diff-slow" "$WORK/z.svg" -- \
	"$SONDE" flame --chart --range 1-2 "$WORK/in.folded" -o "$WORK/z.svg"
