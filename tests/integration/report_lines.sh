# Source lines: report --lines and flame --lines make a frame per line of a
# function, "function:line" (perf report's srcline), a caller's line being
# that of its call. On cpusplit (main -> run -> work_hot|work_cold -> spin):
# spin's lines add up to spin, each is a line addr2line gives for one of
# spin's addresses, the hottest is the loop; the call lines of run and
# work_hot are those addr2line gives for their call instructions (found by
# objdump) and those of the calls in the source.
. "$(dirname "$0")/lib.sh"
require_bpf
: "${SRC:?SRC must point to the source tree}"
bin=$TARGETS/cpusplit
src=$SRC/tests/targets/cpusplit.c

"$SONDE" record -F 999 -o "$WORK/r.sonde" -- "$bin" 2 >/dev/null
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/fn.json"
"$SONDE" report "$WORK/r.sonde" --lines --json >"$WORK/lines.json"
"$SONDE" report "$WORK/r.sonde" --lines --folded >"$WORK/lines.folded"
"$SONDE" report "$WORK/r.sonde" --lines >"$WORK/lines.txt"
"$SONDE" flame "$WORK/r.sonde" --lines -o "$WORK/lines.svg"

# Lines addr2line gives for every byte of spin.
read -r start size < <(nm -S "$bin" | awk '$4 == "spin" { print $1, $2 }')
a2l_lines=$(for ((a = 16#$start; a < 16#$start + 16#$size; a++)); do printf '0x%x\n' "$a"; done |
	addr2line -e "$bin" | sed 's/.*://; s/ .*//' | sort -un | tr '\n' ' ')
pass "addr2line: spin's code is on lines $a2l_lines"

spin_self=$(jq '[.functions[] | select(.name == "spin") | .self] | add' "$WORK/fn.json")
lines_self=$(jq '[.lines[] | select(.name | test("^spin:[0-9]+$")) | .self] | add' "$WORK/lines.json")
[ "$spin_self" = "$lines_self" ] || fail "spin's lines have $lines_self self samples, spin $spin_self"
pass "spin's lines add up to spin's $spin_self self samples"
for l in $(jq -r '.lines[] | select(.name | test("^spin:[0-9]+$")) | .name' "$WORK/lines.json"); do
	grep -qw "${l#spin:}" <<<"$a2l_lines" || fail "$l is not a line of spin by addr2line ($a2l_lines)"
done
pass "every spin:LINE is a line addr2line gives for spin"

hot=$(jq -r '[.lines[] | select(.name | test("^spin:"))] | max_by(.self) | .name' "$WORK/lines.json")
hot_self=$(jq --arg n "$hot" '.lines[] | select(.name == $n) | .self' "$WORK/lines.json")
loop=$(grep -nE 'for \(unsigned long i = 0; i < n; i\+\+\)|x = x \* 2862933555777941757UL' "$src" |
	cut -d: -f1 | tr '\n' ' ')
grep -qw "${hot#spin:}" <<<"$loop" || fail "spin's hottest line $hot is not the loop (lines $loop)"
assert_ge "share of spin's samples on its hottest line $hot" \
	"$(awk -v h="$hot_self" -v s="$spin_self" 'BEGIN { print h / s }')" 0.5

# Call lines: addr2line on the call instruction objdump shows.
call_line() { # CALLER CALLEE
	local addr
	addr=$(objdump -d --no-show-raw-insn "$bin" |
		awk -v f="<$1>:" -v c="<$2>" '$2 == f { in_f = 1; next } /^$/ { in_f = 0 }
			in_f && $0 ~ "call" && index($0, c) { sub(":", "", $1); print $1; exit }')
	[ -n "$addr" ] || fail "objdump shows no call of $2 in $1"
	addr2line -e "$bin" "0x$addr" | sed 's/.*://; s/ .*//'
}
run_line=$(call_line run work_hot)
hot_line=$(call_line work_hot spin)
[ "$run_line" = "$(grep -n 'work_hot();' "$src" | cut -d: -f1)" ] ||
	fail "addr2line puts run's call of work_hot on line $run_line, the source on $(grep -n 'work_hot();' "$src")"
pass "run calls work_hot on line $run_line, work_hot calls spin on line $hot_line"
chain=";run:$run_line;work_hot:$hot_line;$hot "
n=$(grep -F -- "$chain" "$WORK/lines.folded" | awk '{ s += $NF } END { print s + 0 }')
assert_ge "samples of ...$chain(folded --lines)" "$n" "$((hot_self / 2))"

grep -q '^Top source lines by self samples:' "$WORK/lines.txt" || fail "no source-line table in report --lines"
first=$(awk '/^Top source lines by self samples:/ { getline; getline; print $NF; exit }' "$WORK/lines.txt")
[ "$first" = "$hot" ] || fail "report --lines' first row is $first, not $hot"
pass "report --lines ranks $hot first"
for f in "$hot" "work_hot:$hot_line" "run:$run_line"; do
	grep -q "<title>$f (" "$WORK/lines.svg" || fail "flame --lines has no $f frame"
done
pass "flame --lines draws $hot, work_hot:$hot_line and run:$run_line"
