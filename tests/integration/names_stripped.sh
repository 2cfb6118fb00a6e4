# Names past a symbol's end. stripsym spends nearly all its time in
# hidden_hot, a function whose symbol the build strips; shown_before, a
# function of a few bytes, is the symbol right before it
# (tests/targets/stripsym.c).
# addr2line names hidden_hot's code after shown_before, and so did sonde.
# Now: without DWARF (stripsym-nodebug), its samples are one frame
# "[stripsym-nodebug+0xSTART]", START the start of the FDE that holds it
# (readelf) as a file offset; with DWARF (stripsym), DWARF names it. Either
# way shown_before gets no samples. `sonde symbolize` follows the same rule.
. "$(dirname "$0")/lib.sh"
require_bpf

full=$TARGETS/stripsym-full
nodebug=$TARGETS/stripsym-nodebug
hot=$(nm "$full" | awk '$3 == "hidden_hot" { print $1 }')
size=$(nm -S "$full" | awk '$4 == "hidden_hot" { print $2 }')
[ -n "$hot" ] && [ -n "$size" ] || fail "no hidden_hot in $full"
nm "$nodebug" | grep -qw hidden_hot && fail "$nodebug still has hidden_hot's symbol"
hot=$((16#$hot)) size=$((16#$size))

# The trap: addr2line names hidden_hot's code after the symbol before it.
a2l=$(addr2line -f -e "$nodebug" "$(printf '0x%x' $((hot + size / 2)))" | head -n1)
[ "$a2l" = shown_before ] || fail "addr2line names hidden_hot's middle '$a2l', expected shown_before"
pass "addr2line names hidden_hot's code after shown_before"

# The FDE that holds hidden_hot starts at it; its file offset, from the
# program headers.
fde=$(readelf --debug-dump=frames "$nodebug" | grep -o 'pc=[0-9a-f]*\.\.[0-9a-f]*' |
	while IFS=. read -r lo _ hi; do
		lo=$((16#${lo#pc=})) hi=$((16#$hi))
		if [ "$lo" -le "$hot" ] && [ "$hot" -lt "$hi" ]; then echo "$lo"; fi
	done)
[ "$fde" = "$hot" ] || fail "the FDE holding hidden_hot (0x$(printf %x "$hot")) starts at '$fde'"
off=$(readelf -lW "$nodebug" | awk '$1 == "LOAD" { print $2, $3, $5 }' |
	while read -r o v f; do
		o=$((o)) v=$((v)) f=$((f))
		if [ "$v" -le "$fde" ] && [ "$fde" -lt $((v + f)) ]; then echo $((fde - v + o)); fi
	done)
want=$(printf '[stripsym-nodebug+0x%x]' "$off")
pass "hidden_hot's FDE starts at it: expecting $want"

# sonde symbolize: every address of hidden_hot is the one unnamed function.
names=$(for ((a = hot; a < hot + size; a++)); do printf '0x%x\n' "$a"; done |
	"$SONDE" symbolize -e "$nodebug" | awk 'NR % 2 == 1' | sort -u)
[ "$names" = "$want" ] || fail "sonde symbolize names hidden_hot's addresses: $(echo $names)"
pass "sonde symbolize: all $size addresses of hidden_hot are $want"

share() { function_share "$1" "$2"; }

"$SONDE" record -F 999 -o "$WORK/nodebug.sonde" -- "$nodebug" 2 >/dev/null
"$SONDE" report "$WORK/nodebug.sonde" --json >"$WORK/nodebug.json"
"$SONDE" report "$WORK/nodebug.sonde" --folded >"$WORK/nodebug.folded"
assert_ge "share of $want (no symbol, no DWARF)" "$(share "$WORK/nodebug.json" "$want")" 0.9
assert_le "share of shown_before (no symbol, no DWARF)" "$(share "$WORK/nodebug.json" shown_before)" 0.02
# One frame for the function: no other name of the form [stripsym-nodebug+0x...]
# inside hidden_hot's bytes.
others=$(jq -r '.functions[].name' "$WORK/nodebug.json" | grep -F '[stripsym-nodebug+0x' |
	while read -r n; do
		a=${n#*+0x} a=$((16#${a%]})) # file offset == vaddr here (checked above for hidden_hot)
		if [ "$n" != "$want" ] && [ "$a" -ge "$off" ] && [ "$a" -lt $((off + size)) ]; then
			echo "$n"
		fi
	done)
[ -z "$others" ] || fail "hidden_hot split into several frames: $others"
grep -Fq ";main;run;$want " "$WORK/nodebug.folded" ||
	fail "no ...;main;run;$want stack: $(sort -t' ' -k2 -nr "$WORK/nodebug.folded" | head -n1)"
pass "stacks read main;run;$want"

"$SONDE" record -F 999 -o "$WORK/dwarf.sonde" -- "$TARGETS/stripsym" 2 >/dev/null
"$SONDE" report "$WORK/dwarf.sonde" --json >"$WORK/dwarf.json"
assert_ge "share of hidden_hot (no symbol, DWARF)" "$(share "$WORK/dwarf.json" hidden_hot)" 0.9
assert_le "share of shown_before (no symbol, DWARF)" "$(share "$WORK/dwarf.json" shown_before)" 0.02
