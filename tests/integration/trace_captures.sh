# Captures and predicates (--trace 'FUNC VAR... [if EXPR]'): in programs
# built by gcc and clang at -O0 and -O2, sonde reads at each call's entry
# the values the program itself counts: an argument's members through a
# pointer, a char array and a char * as strings, an enum by name, a bool, a
# global, and at -O2 a register-held argument whose location is a location
# list; a predicate keeps exactly the calls where it holds (the others are
# counted entered, not timed: trace_predicate.sh); --by splits
# calls by value as the program counts them; bad input is one line. At a
# line (--trace 'FILE:LINE VAR...'), the locals in scope there read what
# the program computes the line sees at each pass (at -O2 register-held,
# with location lists), and a predicate keeps exactly the matching hits.
# (Line captures in inlined code at -O0: trace_lines.sh.)
. "$(dirname "$0")/lib.sh"
require_bpf
command -v jq >/dev/null || skip "needs jq"

CALLS=2000
SPEC='handle req->hdr.size req->name req->path req->color req->urgent n g_generation'
MIX=$(grep -n '/\* LINE_MIX \*/' "$SRC/tests/targets/captures/captures.c" | cut -d: -f1)

# value_count JSON PROBE VAR VALUE: the count of VALUE among VAR's top values
value_count() {
	jq --arg p "$2" --arg v "$3" --argjson x "$4" \
		'[.probes[] | select(.name == $p) | .values[$v].top[] | select(.[0] == $x) | .[1]] | add // 0' "$1"
}
value_field() {
	jq --arg p "$2" --arg v "$3" --arg f "$4" '.probes[] | select(.name == $p) | .values[$v][$f]' "$1"
}
want() { sed -n "s/^$2 //p" "$1"; }

for build in gcc-O0 gcc-O2 clang-O0 clang-O2; do
	exe="$TARGETS/captures-$build"
	"$SONDE" record -F 99 --no-children --trace "$SPEC" --trace 'checksum seed rounds' \
		--trace "captures.c:$MIX step acc" \
		-o "$WORK/$build.sonde" -- "$exe" "$CALLS" >"$WORK/$build.out" 2>"$WORK/$build.err" ||
		fail "$build: record failed: $(cat "$WORK/$build.err")"
	"$SONDE" report "$WORK/$build.sonde" --json >"$WORK/$build.json"
	j="$WORK/$build.json" o="$WORK/$build.out"
	hits=$(jq '.probes[] | select(.name == "handle") | .hits' "$j")
	[ "$hits" = "$CALLS" ] || fail "$build: $hits hits of handle, expected $CALLS"
	while read -r size count; do
		got=$(value_count "$j" handle 'req->hdr.size' "$size")
		[ "$got" = "$count" ] || fail "$build: req->hdr.size $size seen $got times, the program passed it $count times"
	done < <(want "$o" size)
	while read -r name count; do
		got=$(value_count "$j" handle 'req->name' "\"$name\"")
		[ "$got" = "$count" ] || fail "$build: req->name \"$name\" seen $got times, the program says $count"
	done < <(want "$o" name)
	while read -r color count; do
		got=$(value_count "$j" handle 'req->color' "\"$color\"")
		[ "$got" = "$count" ] || fail "$build: req->color $color seen $got times, the program says $count"
	done < <(want "$o" color)
	[ "$(value_count "$j" handle 'req->path' '"/index.html"')" = $((CALLS / 2)) ] ||
		fail "$build: req->path (a char *) not read as the program passed it"
	[ "$(value_field "$j" handle 'req->urgent' sum)" = "$(want "$o" urgent)" ] ||
		fail "$build: req->urgent sums to $(value_field "$j" handle 'req->urgent' sum), the program counted $(want "$o" urgent)"
	[ "$(value_field "$j" handle n sum)" = "$(want "$o" n_sum)" ] ||
		fail "$build: n sums to $(value_field "$j" handle n sum), the program's sum is $(want "$o" n_sum)"
	[ "$(value_field "$j" handle g_generation sum)" = "$(want "$o" generation_sum)" ] ||
		fail "$build: the global g_generation sums to $(value_field "$j" handle g_generation sum), the program's sum is $(want "$o" generation_sum)"
	[ "$(value_field "$j" checksum seed sum)" = "$(want "$o" seed_sum)" ] ||
		fail "$build: seed sums to $(value_field "$j" checksum seed sum), the program's sum is $(want "$o" seed_sum)"
	unread=$(jq '[.probes[].values[] | .optimized_out + .read_errors + .unavailable] | add' "$j")
	[ "$unread" = 0 ] || fail "$build: $unread values not read"
	pass "$build: $CALLS calls, every captured value as the program passed it (sizes, names, paths, colors, flags, n, a global, seed)"
	# The line: every pass counted, its locals as the line began.
	l="captures.c:$MIX"
	[ "$(jq -r --arg l "$l" '.probes[] | select(.name == $l) | "\(.kind) \(.calls) \(.hits)"' "$j")" = \
		"line $(want "$o" mix_hits) $(want "$o" mix_hits)" ] ||
		fail "$build: $l: $(jq -c --arg l "$l" '.probes[] | select(.name == $l) | [.kind, .calls, .hits]' "$j") (kind, hits, hits with values), the program passed it $(want "$o" mix_hits) times"
	[ "$(value_field "$j" "$l" acc sum)" = "$(want "$o" mix_acc_sum)" ] ||
		fail "$build: acc at $l sums to $(value_field "$j" "$l" acc sum), the program's sum is $(want "$o" mix_acc_sum)"
	while read -r step count; do
		got=$(value_count "$j" "$l" step "$step")
		[ "$got" = "$count" ] || fail "$build: step $step seen $got times at $l, the program passed it $count times"
	done < <(want "$o" step)
	pass "$build: at $l, $(want "$o" mix_hits) hits, the locals step and acc as the program saw them"
done

# At -O2, checksum's seed and mix's acc live in registers: their locations
# are location lists.
for build in gcc-O2 clang-O2; do
	for var in seed acc; do
		readelf --debug-dump=info "$TARGETS/captures-$build" 2>/dev/null |
			grep -A8 "DW_AT_name.*: $var\$" | grep -q 'DW_AT_location.*(location list)' ||
			fail "$build: $var has no location list (the test no longer covers one)"
	done
done
pass "at -O2 (gcc and clang) seed's and acc's locations are location lists, read right at the entry and at the line"

# probe --vars: what is visible at handle's entry, and how it is read.
"$SONDE" probe -e "$TARGETS/captures-gcc-O2" --vars handle >"$WORK/vars.txt"
grep -Eq '^  argument +struct request \* +req +yes$' "$WORK/vars.txt" || fail "probe --vars: no readable req: $(cat "$WORK/vars.txt")"
grep -Eq '^  local +long int +s +optimized out$' "$WORK/vars.txt" || fail "probe --vars: the local s is not optimized out at the entry"
grep -Eq '^  global +int +g_generation +yes$' "$WORK/vars.txt" || fail "probe --vars: no global g_generation"
"$SONDE" probe -e "$TARGETS/captures-clang-O2" --vars checksum >"$WORK/vars2.txt"
grep -Eq '^  argument +unsigned long +seed +yes \(location list\)$' "$WORK/vars2.txt" || fail "probe --vars: seed is not read from its location list: $(cat "$WORK/vars2.txt")"
"$SONDE" probe -e "$TARGETS/captures-gcc-O0" --vars checksum >"$WORK/vars3.txt"
grep -Eq '^  argument +long unsigned int +seed +yes \(at the entry, where the calling convention puts it\)$' "$WORK/vars3.txt" || fail "probe --vars: -O0 seed at the entry: $(cat "$WORK/vars3.txt")"
expect_error "captures-nodebug has no DWARF debug info" "" -- "$SONDE" probe -e "$TARGETS/captures-nodebug" --vars handle
pass "probe --vars lists arguments, locals and globals with their types and how each is read"

# A predicate, decided in the kernel: only matching calls (and hits of
# the line) send values.
"$SONDE" record -F 99 --no-children \
	--trace 'handle req->hdr.size if req->hdr.size > 1000 && !req->urgent' \
	--trace "captures.c:$MIX acc if acc > 500" \
	-o "$WORK/pred.sonde" -- "$TARGETS/captures-clang-O2" "$CALLS" >"$WORK/pred.out" 2>/dev/null
"$SONDE" report "$WORK/pred.sonde" --json >"$WORK/pred.json"
lhits=$(jq '.probes[] | select(.kind == "line") | .hits' "$WORK/pred.json")
[ "$lhits" = "$(want "$WORK/pred.out" mix_big)" ] ||
	fail "the predicate at captures.c:$MIX kept $lhits hits, the program passed the line $(want "$WORK/pred.out" mix_big) times with acc > 500"
[ "$(jq '.probes[] | select(.kind == "line") | .calls' "$WORK/pred.json")" = "$(want "$WORK/pred.out" mix_hits)" ] ||
	fail "with a predicate the line's hits are not all counted"
[ "$(jq '.probes[] | select(.kind == "line") | .values.acc.min' "$WORK/pred.json")" -gt 500 ] ||
	fail "a hit failing the predicate at the line sent its values"
pass "predicate at a line: $lhits of $(want "$WORK/pred.out" mix_hits) hits matched, as the program counted"
hits=$(jq '.probes[0].hits' "$WORK/pred.json")
calls=$(jq '.probes[0].kernel_calls' "$WORK/pred.json")
entered=$(jq '.probes[0].entered' "$WORK/pred.json")
[ "$hits" = "$(want "$WORK/pred.out" big_not_urgent)" ] ||
	fail "predicate kept $hits calls, the program made $(want "$WORK/pred.out" big_not_urgent) matching calls"
[ "$calls" = "$hits" ] || fail "with a predicate the kernel timed $calls calls, expected the $hits matching ones"
[ "$entered" = "$CALLS" ] || fail "with a predicate $entered calls entered, expected all $CALLS"
[ "$(jq '.probes[0].values["req->hdr.size"].min' "$WORK/pred.json")" -gt 1000 ] ||
	fail "a call failing the predicate sent its values"
pass "predicate: $hits of $entered calls matched, as the program counted; only those timed"

# --by: calls split by value, as the program counts them; the samples of
# the view add up.
"$SONDE" record -F 999 --no-children --all-calls --trace 'handle req->color' \
	-o "$WORK/by.sonde" -- "$TARGETS/captures-gcc-O2" 20000 >"$WORK/by.out" 2>/dev/null
"$SONDE" report "$WORK/by.sonde" --in handle --by 'req->color' --json >"$WORK/by.json"
while read -r color count; do
	got=$(jq --arg c "$color" '.by.rows[] | select(.value == $c) | .calls' "$WORK/by.json")
	[ "$got" = "$count" ] || fail "--by req->color: $color has $got calls, the program made $count"
done < <(want "$WORK/by.out" color)
[ "$(jq '[.by.rows[].samples] | add' "$WORK/by.json")" = "$(jq .samples "$WORK/by.json")" ] ||
	fail "--by: the rows' samples do not add up to the view's"
"$SONDE" report "$WORK/by.sonde" --in handle --by 'req->color' >"$WORK/by.txt"
grep -q '^  GREEN  *10000 ' "$WORK/by.txt" ||
	fail "--by text: no GREEN row with 10000 calls"
pass "--by req->color splits handle's calls as the program counted them"

# Bad input: one line each, nothing recorded.
out="$WORK/bad.sonde"
exe="$TARGETS/captures-gcc-O2"
expect_error "len is not visible at handle \(captures.c:[0-9]+\); visible: req, n" "$out" -- \
	"$SONDE" record --trace 'handle len' -o "$out" -- "$exe" 10
expect_error "req has no member \"nosuch\" \(struct request has: fd, hdr, path, name, color, urgent, offset\)" "$out" -- \
	"$SONDE" record --trace 'handle req->nosuch' -o "$out" -- "$exe" 10
expect_error "req->hdr is a struct hdr, not a number" "$out" -- \
	"$SONDE" record --trace 'handle n if req->hdr > 1' -o "$out" -- "$exe" 10
expect_error "req is a struct request \*: use req->fd" "$out" -- \
	"$SONDE" record --trace 'handle req.fd' -o "$out" -- "$exe" 10
expect_error "req->name\[20\] is out of bounds: req->name has 16 elements" "$out" -- \
	"$SONDE" record --trace 'handle req->name[20]' -o "$out" -- "$exe" 10
expect_error "captures-nodebug has no DWARF debug info: install its debug symbols" "$out" -- \
	"$SONDE" record --trace 'handle n' -o "$out" -- "$TARGETS/captures-nodebug" 10
expect_error "expected a variable, a number or \"\(\" at the end of" "$out" -- \
	"$SONDE" record --trace 'handle n if n +' -o "$out" -- "$exe" 10
expect_error "\*req is a struct request: capture one of its members" "$out" -- \
	"$SONDE" record --trace 'handle *req' -o "$out" -- "$exe" 10
expect_error "--by acc: captures.c:$MIX is a line, whose values belong to no call" "" -- \
	"$SONDE" report "$WORK/pred.sonde" --in "captures.c:$MIX" --by acc
expect_error "handle does not capture nosuch \(it captures: req->color\)" "" -- \
	"$SONDE" report "$WORK/by.sonde" --in handle --by nosuch
pass "bad captures and predicates: one line each, nothing recorded"

# Live: a bad capture is answered with one line and the session goes on; a
# good one is attached while the target runs, and its values are saved.
export SONDE_RUNTIME_DIR="$WORK/run"
"$TARGETS/captures-gcc-O2" 1500000000 >/dev/null &
tpid=$!
BG_PIDS+=("$tpid")
wait_exec "$tpid" "$TARGETS/captures-gcc-O2"
"$SONDE" top -b -i 0.5 -F 99 -p "$tpid" >"$WORK/top.out" 2>"$WORK/top.err" &
spid=$!
BG_PIDS+=("$spid")
for _ in $(seq 300); do
	grep -q "^$spid " <<<"$("$SONDE" ctl --list 2>/dev/null)" && break
	kill -0 "$spid" 2>/dev/null || fail "sonde top exited: $(cat "$WORK/top.err")"
	sleep 0.1
done
expect_error "req has no member \"nosuch\"" "" -- "$SONDE" ctl "$spid" trace 'handle req->nosuch'
# (A name not in scope at a line: the same resolver answers record and the
# live session, which costs no extra sonde start.)
expect_error "trace captures.c:$MIX nosuch: nosuch is not visible at captures.c:$MIX; visible: step, .*acc" "" -- \
	"$SONDE" ctl "$spid" trace "captures.c:$MIX nosuch"
kill -0 "$spid" || fail "the live session ended after a bad capture"
"$SONDE" ctl "$spid" trace 'handle req->hdr.size req->color if req->hdr.size > 1000' >"$WORK/ctl.out" ||
	fail "live trace with captures failed: $(cat "$WORK/ctl.out")"
sleep 1
# The probe record names the spec as written, captures and predicate too.
"$SONDE" ctl --json "$spid" status >"$WORK/status.json" || fail "ctl --json status failed"
[ "$(jq -r '.data.probes[] | select(.name == "handle") | .spec' "$WORK/status.json")" = \
	'handle req->hdr.size req->color if req->hdr.size > 1000' ] ||
	fail "status: handle's spec is $(jq -c '.data.probes[] | select(.name == "handle") | .spec' "$WORK/status.json")"
"$SONDE" ctl "$spid" in handle >/dev/null || fail "ctl in handle failed"
"$SONDE" ctl "$spid" by 'req->color' >"$WORK/by_live.txt" || fail "live by failed: $(cat "$WORK/by_live.txt")"
grep -Eq '^  GREEN +[1-9][0-9]* ' "$WORK/by_live.txt" || fail "live by: no GREEN row: $(cat "$WORK/by_live.txt")"
expect_error "handle does not capture nosuch" "" -- "$SONDE" ctl "$spid" by nosuch
"$SONDE" ctl "$spid" save "$WORK/live.sonde" >/dev/null || fail "ctl save failed"
stop_gently "$spid"
"$SONDE" report "$WORK/live.sonde" --json >"$WORK/live.json"
hits=$(jq '.probes[] | select(.name == "handle") | .hits' "$WORK/live.json")
min=$(jq '.probes[] | select(.name == "handle") | .values["req->hdr.size"].min' "$WORK/live.json")
assert_ge "live hits with values" "$hits" 1
[ "$min" -gt 1000 ] || fail "live: a call failing the predicate sent values (min size $min)"
pass "live: a bad capture answered in one line, the session went on; by splits the held calls; $hits hits saved, all matching"
