# Bad input: one clear line, a non-zero exit, and no half-written output.
. "$(dirname "$0")/lib.sh"

out="$WORK/out.sonde"
expect_error "unknown event 'bogus-event'" "$out" -- "$SONDE" record -e bogus-event -a -d 1 -o "$out"
expect_error "say what to profile" "$out" -- "$SONDE" record -o "$out"
expect_error "needs an output file" "" -- "$SONDE" record -a
expect_error "bad PID list" "$out" -- "$SONDE" record -p 12x -o "$out"
expect_error "no process with PID 999999999|bad PID" "$out" -- "$SONDE" record -p 999999999 -o "$out"
# A PID that existed and exited.
sh -c 'exit 0' &
dead=$!
wait "$dead"
expect_error "no process with PID $dead" "$out" -- "$SONDE" record -p "$dead" -o "$out"
expect_error "it is a directory" "" -- "$SONDE" record -a -d 1 -o "$WORK"
expect_error "cannot write /nonexistent/dir/x.sonde" "/nonexistent/dir/x.sonde" -- \
	"$SONDE" record -a -d 1 -o /nonexistent/dir/x.sonde
expect_error "bad value 'fast' for -F" "$out" -- "$SONDE" record -F fast -a -o "$out"
expect_error "exclude each other" "$out" -- "$SONDE" record -F 99 -c 10 -a -o "$out"
# -i and -n: one parser, so the same forms and the same line in every
# command that repeats.
for cmd in "lat -a -i 0 f" "threads -a -i 1s" "top -b -a -i x" "serve -a -i 4000"; do
	# shellcheck disable=SC2086 # the words of each command line
	expect_error "^sonde: bad value '[^']*' for -i: expected seconds from 0.05 to 3600$" "" -- \
		"$SONDE" $cmd
done
for cmd in "threads -a -n 2.5" "top -b -a -n 0"; do
	# shellcheck disable=SC2086
	expect_error "^sonde: bad value '[^']*' for -n: expected a whole number from 1 to" "" -- \
		"$SONDE" $cmd
done
# The offline commands' numbers: the same parser, the same line (a PID that
# is not a number was once no filter at all).
expect_error "^sonde: bad value 'abc' for --pid: expected a whole number from 1 to" "" -- \
	"$SONDE" report "$WORK/none.sonde" --pid abc
expect_error "^sonde: bad value '1x' for --tid: expected a whole number from 1 to" "$WORK/t.svg" -- \
	"$SONDE" flame "$WORK/none.sonde" -o "$WORK/t.svg" --tid 1x
expect_error "^sonde: bad value '50' for --width: expected pixels from 100 to" "$WORK/w.svg" -- \
	"$SONDE" flame "$WORK/none.sonde" -o "$WORK/w.svg" --width 50
expect_error "^sonde: bad value '5x' for --rows: expected a whole number from 1 to 10000$" \
	"$WORK/h.svg" -- "$SONDE" heatmap "$WORK/none.sonde" -o "$WORK/h.svg" --rows 5x

# report / flame on files that are not recordings.
head -c 4096 /dev/urandom >"$WORK/random.bin"
expect_error "unrecognized format" "" -- "$SONDE" report "$WORK/random.bin"
printf 'not a database at all\n' >"$WORK/text.sonde"
expect_error "unrecognized format" "" -- "$SONDE" report "$WORK/text.sonde"
sqlite3 "$WORK/foreign.db" 'CREATE TABLE t(x); INSERT INTO t VALUES (1);'
expect_error "is not a readable sonde recording" "" -- "$SONDE" report "$WORK/foreign.db"
expect_error "cannot read $WORK/missing.sonde" "" -- "$SONDE" report "$WORK/missing.sonde"
expect_error "unrecognized format" "$WORK/f.svg" -- "$SONDE" flame "$WORK/random.bin" -o "$WORK/f.svg"
expect_error "unknown command 'frobnicate'" "" -- "$SONDE" frobnicate

# Counts that do not fit: named by line, never wrapped to "samples: 0".
printf 'p;a 1\np;b 18446744073709551616\n' >"$WORK/huge.folded"
expect_error "line 2: count 18446744073709551616 is too large \(at most 9223372036854775807\)" "" -- \
	"$SONDE" report "$WORK/huge.folded"
for x in a b c d; do echo "p;$x 4611686018427387904"; done >"$WORK/sum.folded"
expect_error "line 2: the counts add up to more than 9223372036854775807" "$WORK/sum.svg" -- \
	"$SONDE" flame "$WORK/sum.folded" -o "$WORK/sum.svg"

# A session directory every user may write to (/tmp): refused, with the advice
# to choose a private directory, never to chmod or remove the shared one.
shared_dir_advice() {
	grep -q "session directory $1 is shared with other users" "$2" &&
		grep -q 'set SONDE_RUNTIME_DIR to a private directory' "$2" &&
		! grep -Eq 'chmod|remove it' "$2"
}
SONDE_RUNTIME_DIR=/tmp expect_error "session directory /tmp is shared" "" -- "$SONDE" ctl --list
shared_dir_advice /tmp "$WORK/stderr" || fail "ctl: advice for a shared directory: $(cat "$WORK/stderr")"
pass "ctl with SONDE_RUNTIME_DIR=/tmp advises a private directory"

if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	expect_error "command not found" "$out" -- "$SONDE" record -o "$out" -- /no/such/command
	expect_error "unknown tracepoint nosuch:event" "$out" -- "$SONDE" record -e nosuch:event -a -d 1 -o "$out"

	# A truncated recording: half of a real one.
	"$SONDE" record -F 99 -o "$WORK/good.sonde" -- "$TARGETS/cpusplit" 0.3 >/dev/null
	size=$(stat -c %s "$WORK/good.sonde")
	head -c $((size / 2)) "$WORK/good.sonde" >"$WORK/trunc.sonde"
	expect_error "not a readable sonde recording|cannot open" "" -- "$SONDE" report "$WORK/trunc.sonde"

	# A live session with SONDE_RUNTIME_DIR=/tmp runs without its socket (none
	# is left in /tmp) and says which directory to choose instead.
	before=$(find /tmp -maxdepth 1 -type s -name '*.sock' | wc -l)
	SONDE_RUNTIME_DIR=/tmp "$SONDE" top -b -i 0.2 -n 1 -- "$TARGETS/cpusplit" 0.3 \
		>"$WORK/top.out" 2>"$WORK/top.err" || { cat "$WORK/top.err" >&2; fail "top with SONDE_RUNTIME_DIR=/tmp failed"; }
	grep -q '^--- sonde top at' "$WORK/top.out" || fail "top with SONDE_RUNTIME_DIR=/tmp printed no snapshot"
	grep -q 'warning: no control socket' "$WORK/top.err" || fail "top: no warning about the socket: $(cat "$WORK/top.err")"
	shared_dir_advice /tmp "$WORK/top.err" || fail "top: advice for a shared directory: $(cat "$WORK/top.err")"
	! grep -q 'control socket /' "$WORK/top.err" || fail "top listened in /tmp: $(cat "$WORK/top.err")"
	[ "$(find /tmp -maxdepth 1 -type s -name '*.sock' | wc -l)" = "$before" ] || fail "top left a socket in /tmp"
	pass "top with SONDE_RUNTIME_DIR=/tmp runs without a socket and advises a private directory"

	# Without privileges: an unprivileged user cannot load BPF.
	if command -v setpriv >/dev/null; then
		chmod 777 "$WORK"
		expect_error "not allowed to (load BPF|open perf event)" "$WORK/np.sonde" -- \
			setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			"$SONDE" record -a -d 1 -o "$WORK/np.sonde"
	fi
else
	skip "the BPF-dependent error cases need root and BTF"
fi
