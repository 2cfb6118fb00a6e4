# The kernel's uprobes refuse (ENOTSUPP, silently, when the file is mapped)
# or mis-step (a VEX vpbroadcastb taken for a js) VEX, EVEX and XOP first
# instructions: sonde puts the entry probe after them where that changes
# nothing the call computes, or refuses the function in one line naming the
# instruction; a glob leaves it out with a note (insn.h, docs/safety.md).
# Then every string and memory function of libc whose implementation the
# IFUNC resolution picks on this CPU is traced at once while strcheck
# checks every result against a plain loop: all results right, every call
# counted.
. "$(dirname "$0")/lib.sh"
require_bpf

T=$TARGETS
rc=0
"$T/avxentry" 1000 >"$WORK/plain.out" || rc=$?
[ "$rc" = 77 ] && skip "this CPU has no AVX2: the VEX functions of avxentry cannot run"
[ "$rc" = 0 ] || { cat "$WORK/plain.out"; fail "avxentry alone exits $rc"; }

# vmovd (refused by the kernel), vpbroadcastb (mis-stepped), then xor: the
# probe goes on the xor and the function's 1000 results stay right.
"$SONDE" record --trace vex_bcast -o "$WORK/b.sonde" -- "$T/avxentry" 1000 >"$WORK/b.out" 2>"$WORK/b.err" ||
	{ cat "$WORK/b.err"; fail "record --trace vex_bcast failed"; }
grep -q "^vex_bcast calls=1000 wrong=0$" "$WORK/b.out" || { cat "$WORK/b.out"; fail "vex_bcast computed wrong under its probe"; }
grep -q "^sonde: trace vex_bcast: the entry probe of vex_bcast is placed at +9, after vmovd, vpbroadcastb: the first is vmovd %edi, %xmm0 (AVX, VEX-encoded)" "$WORK/b.err" ||
	{ cat "$WORK/b.err"; fail "no note that the probe was moved"; }
calls=$("$SONDE" report "$WORK/b.sonde" --json | jq '.probes[] | select(.name == "vex_bcast") | .calls')
[ "$calls" = 1000 ] || fail "vex_bcast: $calls calls traced, the target made 1000"
pass "vex_bcast: probe past two AVX instructions, 1000 of 1000 calls traced, every result right"

expect_error "^sonde: --trace vex_gpr: cannot trace vex_gpr in .*/avxentry: its first instruction is vmovd %xmm0, %eax \(AVX, VEX-encoded\), which the kernel's uprobes refuse or step wrongly, and the probe cannot move past it: it writes %eax$" \
	"$WORK/g.sonde" -- "$SONDE" record --trace vex_gpr -o "$WORK/g.sonde" -- "$T/avxentry" 10
expect_error "^sonde: --trace vex_loop: cannot trace vex_loop in .*: the branch at 0x[0-9a-f]+ lands there$" \
	"$WORK/l.sonde" -- "$SONDE" record --trace vex_loop -o "$WORK/l.sonde" -- "$T/avxentry" 10
# The AVX-512 repro (never run on a CPU without it: the decision is the
# same everywhere).
expect_error "^sonde: --trace evex_gpr: cannot trace evex_gpr in .*: its first instruction is vpbroadcastb %esi, %ymm17 \(AVX-512, EVEX-encoded\), which the kernel's uprobes refuse or step wrongly, and the probe cannot move past vmovd: it writes %eax$" \
	"$WORK/e.sonde" -- "$SONDE" record --trace evex_gpr -o "$WORK/e.sonde" -- "$T/avxentry" 10
"$SONDE" record --trace evex_moved -o "$WORK/m.sonde" -- "$T/avxentry" 10 >/dev/null 2>"$WORK/m.err" ||
	{ cat "$WORK/m.err"; fail "record --trace evex_moved failed"; }
grep -q "the entry probe of evex_moved is placed at +6, after vpbroadcastb: the first is vpbroadcastb %edi, %xmm17 (AVX-512, EVEX-encoded)" "$WORK/m.err" ||
	{ cat "$WORK/m.err"; fail "evex_moved: no note of the moved probe"; }
pass "evex_moved: placed past its EVEX first instruction"

# A glob leaves out what it cannot trace, and says why.
"$SONDE" record --trace 'vex_*' -o "$WORK/glob.sonde" -- "$T/avxentry" 100 >"$WORK/glob.out" 2>"$WORK/glob.err" ||
	{ cat "$WORK/glob.err"; fail "record --trace 'vex_*' failed"; }
note=$(grep "not traced" "$WORK/glob.err") || { cat "$WORK/glob.err"; fail "no note about the functions left out"; }
for part in "vex_gpr (its first instruction is vmovd %xmm0, %eax" "vex_loop (its first instruction is vpxor"; do
	grep -qF "$part" <<<"$note" || fail "the note does not say '$part': $note"
done
grep -q "wrong=[1-9]" "$WORK/glob.out" && { cat "$WORK/glob.out"; fail "a result went wrong under 'vex_*'"; }
pass "'vex_*' traces vex_bcast and leaves out vex_gpr and vex_loop, with why"

# --- every string/memory function of libc, as this CPU's IFUNCs pick them --
FUNCS="memset memcpy memmove mempcpy memchr memrchr rawmemchr memcmp bcmp strlen strnlen strchr
strchrnul strrchr strcmp strncmp strcpy stpcpy strncpy stpncpy strcat strncat strcasecmp
strncasecmp strspn strcspn strpbrk strstr wcslen wcsnlen wcschr wcsrchr wcscmp wcsncmp wcscpy
wmemchr wmemcmp wmemset"
args=()
for f in $FUNCS; do args+=(--trace "libc:$f"); done
"$T/strcheck" 2 >"$WORK/alone.out" || { cat "$WORK/alone.out"; fail "strcheck alone found wrong results"; }
"$SONDE" record -v "${args[@]}" -o "$WORK/libc.sonde" -- "$T/strcheck" 2 \
	>"$WORK/libc.out" 2>"$WORK/libc.err" || { tail -5 "$WORK/libc.err"; fail "record of strcheck with every probe failed"; }
grep -q "^strcheck: checks=[0-9]* wrong=0$" "$WORK/libc.out" ||
	{ tail -1 "$WORK/libc.out"; fail "strcheck computed wrong results under the probes"; }
grep -q "cannot trace\|not traced" "$WORK/libc.err" && { grep "cannot trace\|not traced" "$WORK/libc.err"; fail "a libc function was refused"; }
moved=$(grep -c "the entry probe of .* is placed at" "$WORK/libc.err")
"$SONDE" report "$WORK/libc.sonde" --json | jq -r '.probes[] | "\(.name | sub("^libc.so.6:"; "")) \(.calls)"' >"$WORK/got.txt"
total_own=0
total_traced=$(awk '{ s += $2 } END { print s + 0 }' "$WORK/got.txt")
for f in $FUNCS; do
	own=$(sed -n "s/^$f calls=\([0-9]*\)$/\1/p" "$WORK/libc.out")
	[ -n "$own" ] || fail "strcheck did not say how often it called $f"
	total_own=$((total_own + own))
	# memmove may share memcpy's implementation (one probe), bcmp memcmp's:
	# those have no probe of their own name and count in the total below.
	traced=$(awk -v f="$f" '$1 == f { s += $2; n++ } END { if (n) print s }' "$WORK/got.txt")
	[ -z "$traced" ] && continue
	[ "$traced" -ge "$own" ] || fail "libc:$f: $traced calls traced, strcheck alone made $own"
done
[ "$total_traced" -ge "$total_own" ] || fail "$total_traced calls traced in all, strcheck made $total_own"
pass "$(echo $FUNCS | wc -w) libc functions traced at once ($moved entry probes moved past AVX code): every result right, $total_traced calls traced >= $total_own made"

# --- line probes: a line whose code begins with a VEX instruction ---------
# probe --lines marks it, and a line probe there is refused with the same
# reason (vex_line in avxentry.c).
vex_line=$(grep -n 'VEX_LINE' "$SRC/tests/targets/avxentry.c" | cut -d: -f1)
need_numbers "the VEX_LINE line of avxentry.c" "$vex_line"
"$SONDE" probe -e "$T/avxentry" --lines vex_line >"$WORK/lines.txt"
grep -Eq "^ +- +$vex_line  .*VEX_LINE" "$WORK/lines.txt" ||
	{ cat "$WORK/lines.txt"; fail "probe --lines vex_line does not mark line $vex_line as refused"; }
why=$(grep -A1 -E "^ +- +$vex_line  " "$WORK/lines.txt" | sed -n 's/^  ^ no line probe here: //p')
[[ $why == *"VEX-encoded"* ]] || fail "probe --lines: the reason for line $vex_line is '$why'"
expect_error "cannot trace avxentry.c:$vex_line in vex_line: .*VEX-encoded" "" -- \
	"$SONDE" record --trace "avxentry.c:$vex_line" -o "$WORK/line.sonde" -- "$T/avxentry" 1
grep -qF "$why" "$WORK/stderr" || fail "the refusal's reason differs from probe --lines': $(cat "$WORK/stderr")"
pass "a line beginning with a VEX instruction: probe --lines marks it, --trace refuses it, for one reason"
