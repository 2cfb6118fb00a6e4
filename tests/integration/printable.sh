# Names from outside (frames of a profile, symbols of a binary, a process's
# name, what the user typed) are printed as text, never as terminal
# commands: no output of sonde carries their control characters raw; they
# show as escapes (\e, \n, \x07, ...).
. "$(dirname "$0")/lib.sh"

ESC=$'\e'
# no_controls FILE WHAT: FILE holds no ESC, BEL, CR, C1 CSI, nor NUL byte
no_controls() {
	if LC_ALL=C grep -aq $'[\x01-\x08\x0b-\x1f\x7f\x9b]' "$1"; then
		od -c "$1" | head -20 >&2
		fail "$2: raw control characters in the output"
	fi
	pass "$2: no raw control characters"
}

# A profile whose frame names would clear the screen, blink, ring the bell,
# forge a line and send a C1 CSI.
printf 'prog;main;evil%s[2J%s[5mblink\a 7\nprog;main;two\\nlines 3\nprog;main;c1\xc2\x9b31m 2\n' \
	"$ESC" "$ESC" >"$WORK/evil.folded"
# (the folded format cannot hold a newline in a name: "\\n" above is a
# backslash and an n; the recording below holds a real one)
"$SONDE" convert "$WORK/evil.folded" -o "$WORK/evil.sonde"
sqlite3 "$WORK/evil.sonde" "UPDATE frames SET name = 'forged' || char(10) || 'line' WHERE name = 'two\\nlines';
	UPDATE threads SET comm = 'comm' || char(27) || '[31m';"

"$SONDE" report "$WORK/evil.sonde" >"$WORK/report.txt"
no_controls "$WORK/report.txt" "report text"
grep -qF 'evil\e[2J\e[5mblink\x07' "$WORK/report.txt" || fail "report lacks the escaped name"
grep -qF 'forged\nline' "$WORK/report.txt" || fail "report lacks the escaped newline"
grep -qF 'c1\xc2\x9b31m' "$WORK/report.txt" || fail "report lacks the escaped C1"
grep -qF 'comm\e[31m' "$WORK/report.txt" || fail "report lacks the escaped comm"
pass "report text shows the names escaped"

"$SONDE" report "$WORK/evil.sonde" --folded >"$WORK/report.folded"
no_controls "$WORK/report.folded" "report --folded"
[ "$(wc -l <"$WORK/report.folded")" -eq 3 ] || fail "folded: not one line per stack"
pass "folded output: one line per stack"

# JSON escapes them its own way (and must still carry the real names).
"$SONDE" report "$WORK/evil.sonde" --json >"$WORK/report.json"
no_controls "$WORK/report.json" "report --json"
jq -e --arg n "forged"$'\n'"line" '.functions | map(.name) | index($n) != null' \
	"$WORK/report.json" >/dev/null || fail "JSON lost the real name"
pass "JSON keeps the real names, escaped as JSON"

# Error messages that quote input.
expect_error "unknown command 'frobnicate\\\\e\[2J'" "" -- "$SONDE" "frobnicate${ESC}[2J"
no_controls "$WORK/stderr" "unknown command"
expect_error "unknown event 'bogus\\\\e\]2;x\\\\x07'" "$WORK/x.sonde" -- \
	"$SONDE" record -e "bogus${ESC}]2;x"$'\a' -a -d 1 -o "$WORK/x.sonde"
no_controls "$WORK/stderr" "unknown event"

# symbolize: a symbol whose name is a terminal command.
if command -v objcopy >/dev/null && command -v nm >/dev/null; then
	evil="evil${ESC}[2J"
	objcopy --strip-debug --redefine-sym "work_hot=$evil" "$TARGETS/cpusplit" "$WORK/evilbin"
	addr=$(nm "$WORK/evilbin" | awk -v n="$evil" '$3 == n { print $1 }')
	[ -n "$addr" ] || fail "objcopy did not rename work_hot"
	"$SONDE" symbolize -e "$WORK/evilbin" "0x$addr" >"$WORK/sym.txt"
	no_controls "$WORK/sym.txt" "symbolize"
	grep -qF 'evil\e[2J' "$WORK/sym.txt" || fail "symbolize lacks the escaped name: $(cat "$WORK/sym.txt")"
	pass "symbolize shows the symbol escaped"
else
	fail "objcopy and nm are needed for the symbolize case (binutils)"
fi

# A live session (root): a program whose very name is a terminal command,
# in the snapshots and in an answer (the command language itself refuses
# control characters in what is typed).
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	prog="$WORK/x${ESC}[31mred"
	cp "$TARGETS/cpusplit" "$prog"
	"$SONDE" top -b -i 1 -n 2 --no-ctl --cmd status -- "$prog" 3 >"$WORK/top.txt" \
		2>"$WORK/top.err" || { cat "$WORK/top.err" >&2; fail "top -b failed"; }
	no_controls "$WORK/top.txt" "top -b"
	no_controls "$WORK/top.err" "top -b stderr"
	n=$(grep -cF "target:   command $WORK/x\e[31mred (PID" "$WORK/top.txt" || true)
	[ "$n" -ge 2 ] || fail "top: the target line is not escaped in the answer and the snapshots"
	pass "top -b shows the program's name escaped (answer and snapshots)"
else
	skip "the live session case needs root and BTF"
fi
