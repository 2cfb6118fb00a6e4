# Output that does not hide what it has (issue 9):
#  - `auto` that finds no second mode uses the p95 and says "no second
#    mode; using p95" in every output that shows the threshold: report
#    (text and JSON), flame graphs (--slow, --diff-slow), `sonde slow`, and
#    the live session (its view line and the probe's slow line);
#  - `sonde slow` prints only calls above the threshold in force, and says
#    when the threshold it follows moves.
# microcalls with 100 us calls and no slow ones (SLOW_EVERY larger than the
# calls) has one mode; at real-time priority no preemption makes a second.
. "$(dirname "$0")/lib.sh"
require_bpf
RT=(chrt -f 10)
"${RT[@]}" true 2>/dev/null || RT=()
FALLBACK="no second mode; using p95"
one_mode=(3000 100 0 1000000000)

# --- a recording -----------------------------------------------------------
"${RT[@]}" "$SONDE" record -F 999 --trace handle -o "$WORK/u.sonde" -- \
	"$TARGETS/microcalls" "${one_mode[@]}" >/dev/null
"$SONDE" report "$WORK/u.sonde" --json >"$WORK/u.json"
jq -e '.probes[0].auto.found == false' "$WORK/u.json" >/dev/null ||
	fail "auto found two modes in calls that all take 100 us: $(jq -c .probes[0].auto "$WORK/u.json")"
p95=$("$SONDE" report "$WORK/u.sonde" | sed -n 's/.*  p95 \([^ ]*\) .*/\1/p' | head -n1)
"$SONDE" report "$WORK/u.sonde" >"$WORK/u.txt"
grep -q "modes: .*; auto: $FALLBACK = $p95 (unimodal: one mode at " "$WORK/u.txt" ||
	{ grep modes: "$WORK/u.txt"; fail "report: the modes line does not say '$FALLBACK = $p95'"; }
pass "report: auto: $FALLBACK = $p95"
"$SONDE" report "$WORK/u.sonde" --slow handle:auto >"$WORK/slow.txt"
grep -q "^  view: .*> $p95, auto: $FALLBACK: " "$WORK/slow.txt" ||
	{ grep view: "$WORK/slow.txt"; fail "report --slow handle:auto: the view line does not say '$FALLBACK'"; }
"$SONDE" report "$WORK/u.sonde" --json --fast handle:auto >"$WORK/fast.json"
jq -e --arg f "$FALLBACK" '.view | contains("auto: " + $f)' "$WORK/fast.json" >/dev/null ||
	fail "report --json --fast handle:auto: view is '$(jq -r .view "$WORK/fast.json")'"
pass "report --slow/--fast handle:auto (text and JSON) say it"
"$SONDE" flame "$WORK/u.sonde" --slow handle:auto -o "$WORK/slow.svg"
grep -q "<text id=\"subtitle\"[^<]*auto: $FALLBACK" "$WORK/slow.svg" || fail "flame --slow handle:auto: the subtitle does not say it"
"$SONDE" flame "$WORK/u.sonde" --diff-slow handle:auto -o "$WORK/diff.svg"
grep -q "<text id=\"title\"[^<]*(threshold $p95, auto: $FALLBACK)" "$WORK/diff.svg" ||
	fail "flame --diff-slow handle:auto: the title does not say it: $(grep -o '<text id="title"[^<]*' "$WORK/diff.svg")"
pass "flame --slow and --diff-slow handle:auto say it"

# --- sonde slow --------------------------------------------------------------
"${RT[@]}" "$SONDE" slow -o "$WORK/live-diff.svg" handle:auto -- "$TARGETS/microcalls" "${one_mode[@]}" \
	>"$WORK/auto.out" 2>"$WORK/auto.err"
grep -q '^-- threshold now ' "$WORK/auto.out" || { cat "$WORK/auto.out"; fail "sonde slow handle:auto: no threshold line"; }
grep '^-- threshold now ' "$WORK/auto.out" | grep -v "(auto: $FALLBACK) over [0-9]* calls\$" &&
	fail "sonde slow handle:auto: a threshold line that does not say '$FALLBACK'"
grep -q "^Summary: .*auto: $FALLBACK" "$WORK/auto.out" || fail "sonde slow: the summary does not say it"
grep -q "<text id=\"title\"[^<]*auto: $FALLBACK" "$WORK/live-diff.svg" || fail "sonde slow -o: the title does not say it"
pass "sonde slow handle:auto: every threshold line, the summary and the graph say it"

# Every call printed is above the threshold in force when it ended: the one
# announced last, give or take the 5% it may move before a new line.
"${RT[@]}" "$SONDE" slow handle:p95 -- "$TARGETS/microcalls" 20000 100 1000 >"$WORK/p95.out" 2>"$WORK/p95.err"
awk '
	function ns(s,   v) {
		v = s + 0
		if (s ~ /ns$/) return v
		if (s ~ /us$/) return v * 1e3
		if (s ~ /ms$/) return v * 1e6
		if (s ~ /s$/) return v * 1e9
		return -1
	}
	/^-- threshold now / { thr = ns($4); changes++; next }
	$3 == "handle" && $1 ~ /^[0-9]+$/ {
		n++
		if (!thr) { print "a call printed before any threshold: " $0; bad++ }
		else if (ns($2) <= 0.95 * thr) { print "at or below the threshold " thr " ns: " $0; bad++ }
	}
	END {
		if (changes < 1 || n < 100) { print changes " threshold lines, " n " calls printed"; exit 1 }
		printf "%d calls printed, all above the threshold in force (%d threshold lines)\n", n, changes
		exit bad > 0
	}' "$WORK/p95.out" >"$WORK/p95.check" || { cat "$WORK/p95.check"; fail "sonde slow handle:p95"; }
pass "sonde slow handle:p95: $(cat "$WORK/p95.check")"

# --- the live session ----------------------------------------------------------
"${RT[@]}" "$SONDE" top -b -i 0.5 -n 4 -F 99 --no-ctl --trace handle --cmd 'slow handle auto' -- \
	"$TARGETS/microcalls" 30000 100 0 1000000000 >"$WORK/top.out" 2>"$WORK/top.err"
views=$(grep -c '^view: .*slow handle > auto (' "$WORK/top.out" || true)
known=$(grep -c "^view: .*slow handle > auto ($FALLBACK) ([0-9.]*[a-z]*s)\$" "$WORK/top.out" || true)
lines=$(grep -c "^  slow: .*slower than [0-9.]*[a-z]*s (auto: $FALLBACK)\$" "$WORK/top.out" || true)
grep '^view: .*slow handle > auto (' "$WORK/top.out" | grep -v -e "($FALLBACK)" -e '(not known yet)' &&
	fail "top: a view line with a threshold that does not say '$FALLBACK'"
assert_ge "top: snapshots whose view says auto: $FALLBACK" "$known" 2
assert_ge "top: snapshots whose probe block says slower than ... (auto: $FALLBACK)" "$lines" "$known"
pass "top: $views view lines, every one with a threshold says it"
