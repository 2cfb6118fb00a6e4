# Where outputs go: devices, FIFOs and links to them are written through and
# stay what they were; a link to a file, a dangling link and a directory are
# refused with one line; recordings need a regular file; no temporary file is
# ever left beside the destination. Device nodes are made in a directory of
# the test (never the machine's /dev), so a regression cannot replace the
# real ones.
. "$(dirname "$0")/lib.sh"

D="$WORK/d" # $WORK itself holds expect_error's stdout and stderr
mkdir "$D"
cd "$D"
printf 'prog;main;work 3\nprog;main;idle 2\n' >in.folded

# Nothing but the names given may be in $D afterwards.
only_these() {
	local got want
	got=$(ls -A "$D" | sort | tr '\n' ' ')
	want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "files in the work directory: '$got', expected '$want'"
}

# A FIFO (and /dev/stdout on a pipe, here a link of our own to it) is
# written through: the reader gets the whole SVG, the FIFO stays a FIFO.
mkfifo fifo
timeout 20 cat fifo >from_fifo &
reader=$!
"$SONDE" flame in.folded -o fifo || fail "flame -o FIFO failed"
wait "$reader" || fail "the FIFO's reader got nothing"
[ -p fifo ] || fail "the FIFO was replaced"
grep -q '</svg>' from_fifo || fail "the FIFO's reader got no complete SVG"
pass "flame -o FIFO: $(wc -c <from_fifo) bytes through, still a FIFO"

ln -s /proc/self/fd/1 stdout
bytes=$("$SONDE" flame in.folded -o stdout | wc -c)
[ -L stdout ] || fail "the link to standard output was replaced"
assert_ge "bytes through a link to a pipe" "$bytes" 1000
rm from_fifo
only_these fifo in.folded stdout

# A link to a regular file is refused; link and file stay as they were.
echo kept >real.svg
ln -s real.svg link.svg
expect_error "cannot write link.svg: it is a symbolic link to the file $D/real.svg" "" -- \
	"$SONDE" flame in.folded -o link.svg
[ -L link.svg ] && [ "$(cat real.svg)" = kept ] || fail "the link or its file changed"
# /dev/stdout redirected to a file is such a link too: "-" is the way.
expect_error "it is a symbolic link to the file $D/redirected" "" -- \
	sh -c "exec \"$SONDE\" convert in.folded --to folded -o stdout >redirected"
ln -s missing dangling
expect_error "cannot write dangling: it is a symbolic link to missing, which does not exist" "" -- \
	"$SONDE" report in.folded -o dangling
mkdir adir
expect_error "cannot write adir: it is a directory" "" -- "$SONDE" convert in.folded -o adir --to pprof
rm redirected
only_these adir dangling fifo in.folded link.svg real.svg stdout

# Recordings are SQLite databases: only a regular file.
expect_error "cannot write fifo: it is a FIFO, and a recording \(an SQLite database\) needs a regular file" "" -- \
	"$SONDE" convert in.folded -o fifo --to sonde
expect_error "cannot write a recording \(an SQLite database\) to standard output" "" -- \
	"$SONDE" convert in.folded -o - --to sonde
expect_error "cannot write link.sonde: it is a symbolic link" "" -- \
	sh -c "ln -s real.svg link.sonde && exec \"$SONDE\" convert in.folded -o link.sonde"
[ "$(cat real.svg)" = kept ] || fail "a recording went through a link"
rm link.sonde

# Device nodes of our own: null swallows every format, full reports ENOSPC;
# both stay character devices.
if mknod null c 1 3 2>/dev/null && mknod full c 1 7 2>/dev/null; then
	for to in folded pprof speedscope chrome nflx; do
		"$SONDE" convert in.folded --to "$to" -o null || fail "convert --to $to -o null failed"
	done
	"$SONDE" flame in.folded -o null || fail "flame -o null failed"
	"$SONDE" report in.folded -o null || fail "report -o null failed"
	expect_error "writing full failed: No space left on device" "" -- "$SONDE" flame in.folded -o full
	expect_error "writing full failed: No space left on device" "" -- \
		"$SONDE" convert in.folded --to pprof -o full
	expect_error "writing full failed: No space left on device" "" -- "$SONDE" report in.folded -o full
	expect_error "cannot write full: it is a character device, and a recording" "" -- \
		"$SONDE" convert in.folded --to sonde -o full
	[ -c null ] && [ -c full ] || fail "a device node was replaced"
	pass "device nodes written through, still devices"
	rm null full
else
	skip "the device-node cases need root (mknod)"
fi
only_these adir dangling fifo in.folded link.svg real.svg stdout
pass "no temporary file left"
