# sonde refuses the probes that would break the target instead of
# corrupting it: a return probe on the entry point (_start: 3 arguments
# became -8192), on a function that never returns (noreturn in the debug
# info), and a breakpoint inside an instruction (a symbol that does not
# start one: every call computed a wrong constant). A glob leaves them out
# and says which and why; the target's own results stay right.
. "$(dirname "$0")/lib.sh"
require_bpf

T="$TARGETS/badentries"
"$T" a b >"$WORK/plain.out"
expected="argc=3 sum=17120507571678644844"
[ "$(cat "$WORK/plain.out")" = "$expected" ] || fail "badentries alone printed '$(cat "$WORK/plain.out")'"

expect_error "^sonde: --trace _start: cannot trace _start: it is the entry point of .*/badentries, which is jumped to, not called, and never returns" \
	"$WORK/a.sonde" -- "$SONDE" record --trace _start -o "$WORK/a.sonde" -- "$T" a b
expect_error "^sonde: --trace magic_inside: cannot trace magic_inside: its address in .*/badentries is inside the instruction at 0x[0-9a-f]+ of magic, and a breakpoint there would change that instruction" \
	"$WORK/b.sonde" -- "$SONDE" record --trace magic_inside -o "$WORK/b.sonde" -- "$T" a b
expect_error "^sonde: --trace finish: cannot trace finish: it never returns \(noreturn in the debug info of .*/badentries\)" \
	"$WORK/c.sonde" -- "$SONDE" record --trace finish -o "$WORK/c.sonde" -- "$T" a b

# Every function of the program: the three are left out, with a note.
"$SONDE" record --trace '*' -o "$WORK/all.sonde" -- "$T" a b >"$WORK/all.out" 2>"$WORK/all.err" ||
	{ cat "$WORK/all.err"; fail "record --trace '*' failed"; }
[ "$(grep -c '^argc=' "$WORK/all.out")" = 1 ] || fail "no result line from the traced target"
[ "$(grep '^argc=' "$WORK/all.out")" = "$expected" ] ||
	fail "traced with '*', badentries printed '$(grep '^argc=' "$WORK/all.out")', expected '$expected'"
note=$(grep 'not traced' "$WORK/all.err") || { cat "$WORK/all.err"; fail "no note about the functions left out"; }
grep -q "^sonde: --trace \*: not traced: 3 functions '\*' names that a probe would break or cannot reach: " <<<"$note" || fail "note: $note"
for part in "finish (never returns)" "magic_inside (inside the instruction at 0x[0-9a-f]* of magic)" "_start (the entry point, never returns)"; do
	grep -q "$part" <<<"$note" || fail "the note does not say '$part': $note"
done
"$SONDE" report "$WORK/all.sonde" --json >"$WORK/all.json"
calls() { jq -r --arg f "$1" '[.probes[] | select(.name == $f) | .calls] | add // "none"' "$WORK/all.json"; }
[ "$(calls magic)" = 1000 ] || fail "magic: $(calls magic) calls, expected 1000"
for f in _start finish magic_inside; do
	[ "$(calls "$f")" = none ] || fail "$f was traced"
done
pass "'*' traces the rest (magic: 1000 calls) and the target computes right: $expected"

# A real program: libc's noreturn functions, from libc6-dbg's debug info.
for f in exit abort __libc_start_main; do
	expect_error "^sonde: --trace libc:$f: cannot trace $f: it never returns \(noreturn in the debug info of .*libc\.so\.6\)" \
		"" -- "$SONDE" record --trace "libc:$f" -o "$WORK/l.sonde" -- /bin/true
done
# --no-children on libc probes: on the target alone, not in every process on
# the machine (a valgrind run there would stop with SIGTRAP; docs/safety.md).
"$SONDE" record --no-children --trace 'libc:ex*' -o "$WORK/ex.sonde" -- /bin/true 2>"$WORK/ex.err"
grep -q "not traced: .*exit (never returns)" "$WORK/ex.err" || { cat "$WORK/ex.err"; fail "libc:ex* did not leave exit out"; }
pass "libc's exit, abort and __libc_start_main are refused; a glob leaves exit out"
