# sonde flame: a well-formed interactive SVG of a real recording, whose frame
# widths follow the recorded counts.
. "$(dirname "$0")/lib.sh"
require_bpf

"$SONDE" record -F 999 -o "$WORK/r.sonde" -- "$TARGETS/cpusplit" 1 >/dev/null
"$SONDE" flame "$WORK/r.sonde" -o "$WORK/f.svg" --title "cpusplit test" --width 1000
xmllint --noout "$WORK/f.svg" || fail "flame graph is not well-formed XML"
pass "flame graph is well-formed"
grep -q 'cpusplit test' "$WORK/f.svg" || fail "title missing"
grep -q 'width="1000"' "$WORK/f.svg" || fail "width not honoured"
grep -q '<script' "$WORK/f.svg" || fail "no interactive script"
grep -q 'work_hot' "$WORK/f.svg" || fail "work_hot frame missing"
pass "title, width, script and frames present"
"$SONDE" flame "$WORK/r.sonde" --icicle -o "$WORK/i.svg"
xmllint --noout "$WORK/i.svg" || fail "icicle graph is not well-formed XML"
grep -q 'Icicle Graph' "$WORK/i.svg" || fail "icicle default title missing"
pass "icicle graph"
