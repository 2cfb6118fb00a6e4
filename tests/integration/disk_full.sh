# A full disk: every output names the file, the reason, the size it needed
# and the room there was, and leaves no partial file; a recording is never
# lost: `record` saves it where there is room and says where, a live
# session keeps it in memory for a `save` to another path, and saves it
# where there is room when it ends. The full disk is a 256 kB tmpfs.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to mount a small tmpfs (the full disk)"

TINY="$WORK/tiny"
mkdir -p "$TINY" "$WORK/rescue"
mount -t tmpfs -o size=256k tmpfs "$TINY" || skip "cannot mount a tmpfs"
trap 'umount "$TINY" 2>/dev/null || true; cleanup' EXIT
export TMPDIR="$WORK/rescue" # where rescued recordings go
export SONDE_RUNTIME_DIR="$WORK/run"
# Leave 32 kB free.
head -c $((224 * 1024)) /dev/zero >"$TINY/ballast"
free_kb() { df -k --output=avail "$TINY" | tail -1 | tr -d ' '; }
[ "$(free_kb)" -eq 32 ] || fail "tiny filesystem: $(free_kb) kB free, expected 32"

# The size outfile_size_text prints for a file.
size_text() {
	awk -v b="$(stat -c %s "$1")" 'BEGIN {
		if (b >= 1048576) printf "%.1f MB", b / 1048576;
		else if (b >= 1024) printf "%.1f kB", b / 1024;
		else printf "%d bytes", b }'
}

# Conversions and drawings: the input is still there, the message says all.
in="$WORK/many.folded" # 5000 stacks: far more than 32 kB as a recording or an SVG
awk 'BEGIN { for (i = 0; i < 5000; i++) printf "prog;main;function_number_%d %d\n", i, i + 1 }' >"$in"
"$SONDE" convert "$in" -o "$WORK/big.sonde"
"$SONDE" flame "$in" -o "$WORK/big.svg"
expect_error "cannot write $TINY/x.sonde: No space left on device: it needs $(size_text "$WORK/big.sonde") and its filesystem has 32.0 kB free" \
	"$TINY/x.sonde" -- "$SONDE" convert "$in" -o "$TINY/x.sonde"
expect_error "cannot write $TINY/x.svg: No space left on device: it needs $(size_text "$WORK/big.svg") and its filesystem has 32.0 kB free" \
	"$TINY/x.svg" -- "$SONDE" flame "$in" -o "$TINY/x.svg"
[ "$(ls -A "$TINY")" = ballast ] || fail "partial files left: $(ls -A "$TINY")"

require_bpf

# record: saved where there is room ($TMPDIR), and the one line says where.
expect_error "cannot write $TINY/run.sonde: No space left on device: it needs [0-9.]+ kB and its filesystem has 32.0 kB free; the recording was saved to $WORK/rescue/rescued-[0-9]+-run.sonde instead" \
	"$TINY/run.sonde" -- "$SONDE" record -F 999 -o "$TINY/run.sonde" -- "$TARGETS/cpusplit" 0.5
rescued=$(ls "$WORK"/rescue/rescued-*-run.sonde)
grep -qF "it needs $(size_text "$rescued") and" "$WORK/stderr" ||
	fail "the size needed is not the recording's: $(cat "$WORK/stderr"), $(stat -c %s "$rescued") bytes"
samples=$("$SONDE" report "$rescued" --json | jq .samples)
assert_ge "samples in the rescued recording" "$samples" 20
[ "$(ls -A "$TINY")" = ballast ] || fail "record left a partial file: $(ls -A "$TINY")"

# A live session: a save that does not fit stays in memory for another path.
"$SONDE" top -b -i 0.5 -F 999 -- "$TARGETS/cpusplit" 60 >"$WORK/top.out" 2>"$WORK/top.err" &
spid=$!
BG_PIDS+=("$spid")
# Up to 30 s (a busy machine) for the control socket and a second of samples.
for _ in $(seq 300); do
	[ -n "$(ls -A "$WORK/run" 2>/dev/null)" ] && grep -q '^--- sonde top at [1-9]' "$WORK/top.out" && break
	kill -0 "$spid" 2>/dev/null || { cat "$WORK/top.err" >&2; fail "sonde top ended early"; }
	sleep 0.1
done
rc=0
"$SONDE" ctl save "$TINY/a.sonde" >"$WORK/ctl.out" 2>"$WORK/ctl.err" || rc=$?
[ "$rc" -eq 1 ] || fail "ctl save to a full disk: exit $rc"
grep -Eq "cannot write $TINY/a.sonde: No space left on device: it needs [0-9.]+ kB and its filesystem has 32.0 kB free; the recording \([0-9.]+ kB\) is kept in memory" \
	"$WORK/ctl.err" || { cat "$WORK/ctl.err" >&2; fail "ctl save: unexpected answer"; }
pass "ctl save to a full disk: $(cat "$WORK/ctl.err")"
"$SONDE" ctl save "$WORK/b.sonde" >"$WORK/ctl.out" || fail "ctl save to another path failed"
grep -q "kept since the save to $TINY/a.sonde failed) to $WORK/b.sonde" "$WORK/ctl.out" ||
	fail "ctl save: $(cat "$WORK/ctl.out")"
kept=$(sed -n 's/^saved \([0-9]*\) samples.*/\1/p' "$WORK/ctl.out")
# The file's sample rows, as ctl save counts them (sonde report leaves out
# the samples that landed in sonde's own machinery, [sonde]; a run on a
# busy machine once had report's count differ, cause not yet seen: the
# failure prints both).
got=$(sqlite3 "$WORK/b.sonde" 'SELECT count(*) FROM samples')
[ "$got" = "$kept" ] ||
	fail "the saved recording holds $got samples ($("$SONDE" report "$WORK/b.sonde" --json | jq -c '[.samples, .overhead.samples]') in sonde report, overhead apart), not the $kept kept: $(cat "$WORK/ctl.out")"
pass "the kept recording saved to another path: $kept samples"
# Once more, and end the session (Ctrl-C) with it unsaved: it is rescued.
"$SONDE" ctl save "$TINY/c.sonde" >/dev/null 2>&1 && fail "ctl save to a full disk succeeded"
kill -INT "$spid"
rc=0
wait "$spid" || rc=$?
# The session ended as asked; the save that failed said so when it did.
[ "$rc" -eq 0 ] || { cat "$WORK/top.err" >&2; fail "sonde top ended by Ctrl-C: exit $rc"; }
grep -Eq "the recording that could not be saved to $TINY/c.sonde \([0-9]+ samples, [0-9]+ calls\) was saved to $WORK/rescue/rescued-$spid-c.sonde" \
	"$WORK/top.err" || { cat "$WORK/top.err" >&2; fail "the unsaved recording was not rescued at the end"; }
assert_ge "samples in the recording rescued at the end" \
	"$("$SONDE" report "$WORK/rescue/rescued-$spid-c.sonde" --json | jq .samples)" 20
[ "$(ls -A "$TINY")" = ballast ] || fail "partial files left: $(ls -A "$TINY")"
