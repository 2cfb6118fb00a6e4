# USDT probes whose arguments are variables (issue 27 item 4: %rip-relative
# operands): gcc writes a global or static variable as the assembler takes
# it, "-4@counter(%rip)", the name left to the linker; sonde resolves the
# name from the file's symbol tables and reads the variable where the file
# is loaded. The truth is the target's own sum of the values the variables
# had at each hit (tests/targets/usdt/usdtvars.c):
#  - sonde probe --usdt lists the probes with their notes' operands;
#  - in a PIE, a non-PIE executable and a shared library (a static
#    variable, named by its local symbol; the library by its path, and by
#    its name as the loader finds it), every hit reads the variable's
#    value: the sums equal the target's, exactly;
#  - a predicate on a variable keeps the hits the target's values say;
#  - a point probe in calls in flight: the report counts the calls of step
#    that ran sonde:third as the target did, and --sample-when keeps only
#    the samples of those calls;
#  - a file whose symbol table lost the variable's name: its probe cannot
#    be read, one line.
. "$(dirname "$0")/lib.sh"
require_bpf
[ -x "$TARGETS/usdtvars" ] ||
	skip "tests/targets/usdt was not built: <sys/sdt.h> is missing (Debian's systemtap-sdt-dev; scripts/bootstrap.sh test installs it)"
LIB=$TARGETS/libusdtvars.so

"$SONDE" probe -e "$TARGETS/usdtvars" --usdt >"$WORK/list.txt"
grep -qx "usdt:$TARGETS/usdtvars:sonde:tick  args: -4@counter(%rip) -8@big(%rip)" "$WORK/list.txt" ||
	fail "probe --usdt: $(cat "$WORK/list.txt")"
pass "probe --usdt lists tick with its rip-relative operands"

# sum REC PROBE ARG: the sum of ARG's values over PROBE's hits, from report --json.
sum() {
	"$SONDE" report "$1" --json |
		jq --arg p "$2" --arg a "$3" '.probes[] | select(.name == $p) | .values[$a].sum'
}
for exe in usdtvars usdtvars-nopie; do
	rec=$WORK/$exe.sonde
	"$SONDE" record -o "$rec" --trace "usdt:$TARGETS/$exe:sonde:tick arg0 arg1" \
		--trace "usdt:$LIB:sonde:libtick arg0 arg1" -- "$TARGETS/$exe" 200 >"$WORK/$exe.out" 2>"$WORK/$exe.err" ||
		{ cat "$WORK/$exe.err" >&2; fail "$exe: record failed"; }
	hits=$(kv "$WORK/$exe.out" hits)
	need_numbers "$exe: the target's counts" "$hits" "$(kv "$WORK/$exe.out" sum_counter)"
	assert_near "$exe: tick's hits" \
		"$("$SONDE" report "$rec" --json | jq --arg p "usdt:$TARGETS/$exe:sonde:tick" '.probes[] | select(.name == $p) | .values.arg0.count')" "$hits" 0
	assert_near "$exe: the sum of counter (arg0) at tick, as the target summed it" \
		"$(sum "$rec" "usdt:$TARGETS/$exe:sonde:tick" arg0)" "$(kv "$WORK/$exe.out" sum_counter)" 0
	assert_near "$exe: the sum of big (arg1) at tick" \
		"$(sum "$rec" "usdt:$TARGETS/$exe:sonde:tick" arg1)" "$(kv "$WORK/$exe.out" sum_big)" 0
	assert_near "$exe: the sum of the library's static lib_count (arg0) at libtick" \
		"$(sum "$rec" "usdt:$LIB:sonde:libtick" arg0)" "$(kv "$WORK/$exe.out" sum_lib)" 0
done

# The library by its name, as the loader finds it for the program (its
# RUNPATH): the same probe, the same values.
"$SONDE" record -o "$WORK/byname.sonde" --trace "usdt:libusdtvars.so:sonde:libtick arg0" \
	-- "$TARGETS/usdtvars" 50 >"$WORK/byname.out" 2>"$WORK/byname.err" ||
	{ cat "$WORK/byname.err" >&2; fail "record --trace usdt:libusdtvars.so:... failed"; }
assert_near "usdt:libusdtvars.so:sonde:libtick (by name): the sum of lib_count" \
	"$("$SONDE" report "$WORK/byname.sonde" --json | jq '[.probes[] | .values.arg0.sum] | add')" \
	"$(kv "$WORK/byname.out" sum_lib)" 0

# A predicate on a variable: big > 300 holds at the hits where the target's
# big (7 + 2 (i + 1) at hit i) is over 300.
"$SONDE" record -o "$WORK/pred.sonde" --trace "usdt:$TARGETS/usdtvars:sonde:tick arg1 if arg1 > 300" \
	-- "$TARGETS/usdtvars" 200 >/dev/null 2>"$WORK/pred.err" || { cat "$WORK/pred.err" >&2; fail "record with a predicate failed"; }
assert_near "hits where big > 300" "$("$SONDE" report "$WORK/pred.sonde" --json | jq '.probes[0].hits')" \
	"$(awk 'BEGIN { for (i = 0; i < 200; i++) n += 7 + 2 * (i + 1) > 300; print n }')" 0

# A point probe joined to the calls in flight: sonde:third fires in every
# third call of step; the report says in how many of step's calls it ran,
# and --sample-when keeps only the samples of those calls.
"$SONDE" record -F 999 --no-children --trace step --trace "usdt:$TARGETS/usdtvars:sonde:third" \
	-o "$WORK/third.sonde" -- "$TARGETS/usdtvars" 1 600 >"$WORK/third.out" 2>"$WORK/third.err" ||
	{ cat "$WORK/third.err" >&2; fail "record --trace step --trace usdt:...:third failed"; }
with=$(kv "$WORK/third.out" steps_with_third)
need_numbers "the target's steps with sonde:third" "$with"
"$SONDE" report "$WORK/third.sonde" --json >"$WORK/third.json"
assert_near "sonde:third's hits" \
	"$(jq --arg p "usdt:$TARGETS/usdtvars:sonde:third" '.probes[] | select(.name == $p) | .calls' "$WORK/third.json")" "$with" 0
assert_near "calls of step that ran sonde:third, as the target counted" \
	"$(jq --arg p "usdt:$TARGETS/usdtvars:sonde:third" '.probes[] | select(.name == $p) | .in_calls[] | select(.probe == "step") | .hit' "$WORK/third.json")" "$with" 0
"$SONDE" record -F 999 --no-children --trace step --sample-when "usdt:$TARGETS/usdtvars:sonde:third" \
	-o "$WORK/when.sonde" -- "$TARGETS/usdtvars" 1 600 >/dev/null 2>"$WORK/when.err" ||
	{ cat "$WORK/when.err" >&2; fail "record --sample-when usdt:...:third failed"; }
bit=$(sqlite3 "$WORK/when.sonde" "SELECT point FROM probes WHERE name = 'usdt:$TARGETS/usdtvars:sonde:third'")
samples=$(sqlite3 "$WORK/when.sonde" "SELECT count(*) FROM samples")
outside=$(sqlite3 "$WORK/when.sonde" "SELECT count(*) FROM samples s WHERE NOT EXISTS (
	SELECT 1 FROM sample_spans ss JOIN spans c ON c.id = ss.span
	WHERE ss.sample = s.id AND (c.points >> $bit) & 1)")
need_numbers "--sample-when's point bit and counts" "$bit" "$samples" "$outside"
assert_ge "samples with --sample-when usdt:...:third" "$samples" 20
assert_near "--sample-when: samples outside calls of step that ran sonde:third" "$outside" 0 0

# Without the variable's name in the file, the operand names nothing sonde
# can find: the probe's arguments cannot be read, in one line.
cp "$TARGETS/usdtvars" "$WORK/stripped"
strip --strip-all "$WORK/stripped"
readelf -n "$WORK/stripped" | grep -q "counter(%rip)" || fail "strip lost the SDT note"
expect_error "arg0: the probe has an operand sonde cannot read" "$WORK/x.sonde" -- \
	"$SONDE" record -d 1 -o "$WORK/x.sonde" --trace "usdt:$WORK/stripped:sonde:tick arg0" -- "$WORK/stripped" 5
