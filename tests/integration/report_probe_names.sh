# A recording's probe is named in report and flame by every spelling
# record --trace accepted for it: `record --trace libsqlite3:sqlite3_step --
# sqlite3 ...` then `report --slow libsqlite3:sqlite3_step` (which was
# refused: "was not traced in this recording; traced: sqlite3_step"), the
# library's file name, its path as traced and its real path, and the bare
# function, each with or without a :THRESHOLD, all giving the same view;
# names of no probe are one line naming what was traced.
. "$(dirname "$0")/lib.sh"
require_bpf
command -v jq >/dev/null || skip "needs jq"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (scripts/bootstrap.sh installs it)"

query='WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400000)
	SELECT x FROM c WHERE x % 2000 = 0;'
"$SONDE" record -F 999 --trace libsqlite3:sqlite3_step -o "$WORK/r.sonde" -- sqlite3 :memory: "$query" \
	>"$WORK/rows.txt" 2>"$WORK/rec.err" || fail "record failed: $(cat "$WORK/rec.err")"
[ "$(wc -l <"$WORK/rows.txt")" = 200 ] || fail "sqlite3 printed $(wc -l <"$WORK/rows.txt") rows, expected 200"
traced=$(sqlite3 "$WORK/r.sonde" "SELECT binary FROM probes WHERE name = 'sqlite3_step'")
[ -n "$traced" ] || fail "the recording has no probe sqlite3_step: $(sqlite3 "$WORK/r.sonde" 'SELECT name, binary FROM probes')"
real=$(readlink -f "$traced")
calls=$("$SONDE" report "$WORK/r.sonde" --json | jq -e '.probes[] | select(.name == "sqlite3_step") | .calls') ||
	fail "report --json has no calls of sqlite3_step"
assert_ge "calls of sqlite3_step (one a row)" "$calls" 200

# view ARGS...: the view's description and samples, as JSON.
view() { "$SONDE" report "$WORK/r.sonde" "$@" --json | jq -ec '[.view, .samples]' || fail "report $*"; }
for q in --slow --in; do
	want=$(view "$q" sqlite3_step)
	for spec in libsqlite3:sqlite3_step libsqlite3.so.0:sqlite3_step "$traced:sqlite3_step" \
		"$real:sqlite3_step" "$(basename "$real"):sqlite3_step"; do
		[ "$(view "$q" "$spec")" = "$want" ] || fail "report $q $spec: $(view "$q" "$spec"), as sqlite3_step: $want"
	done
done
want=$(view --fast sqlite3_step:1ms)
[ "$(view --fast libsqlite3:sqlite3_step:1ms)" = "$want" ] || fail "report --fast libsqlite3:sqlite3_step:1ms differs from sqlite3_step:1ms"
grep -q '"samples in fast calls of sqlite3_step (<= 1.00ms, 1ms: ' <<<"$want" || fail "--fast sqlite3_step:1ms: $want"
"$SONDE" report --slow libsqlite3:sqlite3_step "$WORK/r.sonde" >"$WORK/slow.txt" ||
	fail "report --slow libsqlite3:sqlite3_step FILE (options first) failed"
grep -q '^  view: *samples in slow calls of sqlite3_step (' "$WORK/slow.txt" || fail "report --slow: $(grep view: "$WORK/slow.txt")"
"$SONDE" flame "$WORK/r.sonde" --diff-slow libsqlite3:sqlite3_step -o "$WORK/diff.svg" ||
	fail "flame --diff-slow libsqlite3:sqlite3_step failed"
xmllint --noout "$WORK/diff.svg" || fail "flame --diff-slow: SVG not well-formed"
pass "sqlite3_step named as libsqlite3, libsqlite3.so.0, $traced, $real, $(basename "$real") or bare: one view ($calls calls)"

expect_error "'libc:sqlite3_step' was not traced in this recording; traced: sqlite3_step \(libsqlite3\.so\.0\)" "" -- \
	"$SONDE" report "$WORK/r.sonde" --slow libc:sqlite3_step
expect_error "'libsqlite3:nosuch' was not traced in this recording" "" -- \
	"$SONDE" report "$WORK/r.sonde" --slow libsqlite3:nosuch
expect_error "bad threshold 'p9x'" "" -- "$SONDE" report "$WORK/r.sonde" --slow libsqlite3:sqlite3_step:p9x
pass "names of no probe, and a bad threshold, are one line each"
