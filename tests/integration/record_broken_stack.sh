# Stacks a frame-pointer walk cannot follow: brokenstack calls three hot
# leaves with %rbp pointing at a fake frame whose return address is a heap
# address, a .data address and one no mapping holds (see
# tests/targets/brokenstack.c). Each such stack ends at its root in one
# "[broken stack: heap|data|unmapped]" frame right above the last real
# frame, never in a "function" named after whatever the address is near
# (sonde used to show "[heap+0x2c0]", "data_start" and "[unknown]" there);
# the sound stack of the fourth leaf is untouched; the report and the
# recording count the broken stacks.
. "$(dirname "$0")/lib.sh"
require_bpf
[ "$(uname -m)" = x86_64 ] || skip "brokenstack fakes its frames in x86-64 assembly"

"$SONDE" record -F 999 -o "$WORK/r.sonde" -- "$TARGETS/brokenstack" 3 >"$WORK/target.out"
"$SONDE" report "$WORK/r.sonde" --folded >"$WORK/r.folded"
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/r.json"
"$SONDE" report "$WORK/r.sonde" >"$WORK/r.txt"
samples=$(jq .samples "$WORK/r.json")

# Samples of folded lines containing (fixed) string S.
count() { grep -F -- "$1" "$WORK/r.folded" | awk '{ s += $NF } END { print s + 0 }'; }

marked=0
for kind in heap data unmapped; do
	all=$(count ";spin_$kind;")
	good=$(count "brokenstack;[broken stack: $kind];call_with_bad_frame;spin_$kind;spin")
	assert_ge "samples in spin_$kind (a quarter of $samples)" "$all" "$((samples / 5))"
	assert_ge "share of spin_$kind's stacks cut at a [broken stack: $kind] root" \
		"$(awk -v g="$good" -v a="$all" 'BEGIN { print g / a }')" 0.97
	marked=$((marked + $(count "[broken stack: $kind]")))
done

sound=$(count ";spin_sound;")
assert_ge "samples in spin_sound" "$sound" "$((samples / 5))"
assert_ge "share of spin_sound's stacks whole (main;run;spin_sound;spin)" \
	"$(awk -v g="$(count ";main;run;spin_sound;spin")" -v a="$sound" 'BEGIN { print g / a }')" 0.97
grep -F ";spin_sound;" "$WORK/r.folded" | grep -Fq "[broken stack" &&
	fail "a sound stack was marked broken: $(grep -F ";spin_sound;" "$WORK/r.folded" | grep -F "[broken stack" | head -n1)"
pass "no sound stack is marked broken"

# The marker is only ever at the root, and nothing names the junk.
# Only the program's own stacks: a sample of the started child during its
# exec still has sonde's name and an address space that is being replaced.
grep '^brokenstack;' "$WORK/r.folded" >"$WORK/own.folded" || true
bad=$(grep -F "[broken stack" "$WORK/own.folded" | grep -Ev '^brokenstack;\[broken stack: (heap|stack|data|uprobes|unmapped)\];' || true)
[ -z "$bad" ] || fail "a broken-stack marker not at the stack's root: $(head -n1 <<<"$bad")"
pass "broken-stack markers are at the root only"
# "[unknown]" stays right for the user leaf no mapping holds under a sample
# in execve, before the new image is mapped (more of them on a busy machine,
# where the exec takes longer): kernel frames follow it. Anywhere else it
# would be junk.
junk=$(awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";")
	for (i = 2; i <= n; i++)
		if (f[i] ~ /^\[(heap|stack)\+/ || f[i] ~ /^data_(start|word)$/ ||
		    (f[i] == "[unknown]" && !(i < n && f[i + 1] ~ /_\[k\]$/))) { print; break } }' \
	"$WORK/own.folded")
[ -z "$junk" ] || fail "an address that is not code shown as a frame: $(head -n1 <<<"$junk")"
pass "no heap, data or unmapped address is shown as a function"

# Counted: in the report (text and JSON) and in the recording's metadata.
[ "$(jq .broken_stacks "$WORK/r.json")" = "$marked" ] ||
	fail "report --json broken_stacks $(jq .broken_stacks "$WORK/r.json") != $marked marked samples"
grep -Eq "^  broken: +$marked \(" "$WORK/r.txt" || fail "the text report does not say '$marked' broken: $(grep broken "$WORK/r.txt")"
meta=$(sqlite3 "$WORK/r.sonde" "SELECT value FROM meta WHERE key = 'broken_stacks'")
[ "$meta" = "$marked" ] || fail "meta broken_stacks $meta != $marked marked samples"
dropped=$(sqlite3 "$WORK/r.sonde" "SELECT value FROM meta WHERE key = 'broken_stack_frames'")
assert_ge "addresses cut off broken stacks (one per stack at least)" "$dropped" "$marked"
pass "$marked broken stacks counted in report and recording"
