# Inputs are detected from their head and text formats are streamed: an
# input far larger than sonde's memory (a 2 GB sparse file, /dev/zero, a gzip
# bomb, 140 MB of text through a pipe) costs what it holds, not its size.
# Every sonde run here gets 100 MB of address space (sonde itself needs
# under 60): reading any of these inputs whole would fail.
. "$(dirname "$0")/lib.sh"

limited() { (ulimit -v 100000 && exec "$@"); }
# repeat TEXT N: N lines of TEXT repeated (yes ends on SIGPIPE: not a failure)
repeat() { yes "$1" | head -n "$2" || true; }

# Garbage: refused from the first megabyte.
truncate -s 2G "$WORK/sparse.bin"
expect_error "sparse.bin: unrecognized format" "" -- limited "$SONDE" report "$WORK/sparse.bin"
expect_error "/dev/zero: unrecognized format" "" -- limited "$SONDE" report /dev/zero
head -c 256M /dev/zero | gzip -1 >"$WORK/bomb.gz"
expect_error "bomb.gz: unrecognized format" "$WORK/bomb.svg" -- \
	limited "$SONDE" flame "$WORK/bomb.gz" -o "$WORK/bomb.svg"

# Forced formats: a format read whole is refused from the file's size, before
# reading it; a text format stops at the first line that cannot be one.
expect_error "sparse.bin: larger than 1024 MiB: sonde reads pprof files whole" "$WORK/x.folded" -- \
	limited "$SONDE" convert "$WORK/sparse.bin" --from pprof -o "$WORK/x.folded"
expect_error "sparse.bin: larger than 1024 MiB: sonde reads nflx files whole" "$WORK/x.folded" -- \
	limited "$SONDE" convert "$WORK/sparse.bin" --from nflx -o "$WORK/x.folded"
expect_error "/dev/zero: not a valid folded file: line 1 is longer than 16 MiB" "$WORK/x.pb.gz" -- \
	limited "$SONDE" convert /dev/zero --from folded -o "$WORK/x.pb.gz"
expect_error "/dev/zero: line 1 is longer than 16 MiB" "$WORK/x.folded" -- \
	limited "$SONDE" convert /dev/zero --from perf-script -o "$WORK/x.folded"
# A gzip bomb read whole (pprof, nflxprofile): refused as it inflates, at
# 64 MiB (it inflates to over 200x), not after holding all 256 MB of it
# (a 1 MB bomb of 1 GB once cost 986 MB before it was refused).
for fmt in pprof nflx; do
	expect_error "bomb.gz: gunzipped, over 200 times its compressed size .*: not a profile but a gzip bomb" \
		"$WORK/x.folded" -- \
		bash -c 'ulimit -v 300000 && exec "$@"' - "$SONDE" convert "$WORK/bomb.gz" --from "$fmt" -o "$WORK/x.folded"
done
pass "a gzip bomb read whole is refused as it inflates, within 300 MB"

# Valid files past the buffers' sizes: a folded file whose first line (a
# stack of 20,000 frames) is longer than the 1 MiB head detection reads;
# frame names longer than 1 KiB, kept whole by every output.
awk 'BEGIN { printf "app"; for (i = 0; i < 20000; i++) printf ";frame_%060d", i; print " 3"; print "app;main 2" }' \
	>"$WORK/wide.folded"
[ "$(stat -c %s "$WORK/wide.folded")" -gt 1048576 ] || fail "wide.folded is not over 1 MiB"
[ "$(limited "$SONDE" report --json "$WORK/wide.folded" | jq -e .samples)" = 5 ] ||
	fail "a folded file with a 1.4 MB first line was not read"
limited "$SONDE" convert "$WORK/wide.folded" -o "$WORK/wide2.folded"
cmp -s "$WORK/wide.folded" <(sort "$WORK/wide2.folded") || fail "the 1.4 MB stack did not convert whole"
long=$(head -c 1500 /dev/zero | tr '\0' a)
printf 'app;%sX 1\napp;%sY 2\n' "$long" "$long" >"$WORK/long.folded"
limited "$SONDE" report --folded "$WORK/long.folded" >"$WORK/long.out"
cmp -s "$WORK/long.folded" "$WORK/long.out" || fail "report --folded cut or merged 1.5 KB names: $(cut -c1-20,1500- "$WORK/long.out")"
limited "$SONDE" convert "$WORK/long.folded" -o "$WORK/long2.folded"
cmp -s "$WORK/long.folded" "$WORK/long2.folded" || fail "convert cut or merged 1.5 KB names"
pass "a 1.4 MB first line is detected and read whole; 1.5 KB names stay whole and apart"

# perf script whose records never end (no blank line): refused at a depth
# no perf stack has, not after swallowing the input.
{ echo 'prog 123 cpu-clock:'; repeat $'\tffffffff main (/bin/x)' 1100000; } >"$WORK/deep.perf"
expect_error "deep.perf: line 1048578: a record with more than 1048576 frames" "$WORK/x.folded" -- \
	limited "$SONDE" convert "$WORK/deep.perf" -o "$WORK/x.folded"

# Streams: 10 million folded lines (140 MB) of two stacks through a pipe.
repeat $'prog;main;a 1\nprog;main;b 2' 10000000 |
	limited "$SONDE" convert - -o "$WORK/stream.folded" ||
	fail "convert of a folded stream failed"
[ "$(cat "$WORK/stream.folded")" = $'prog;main;a 5000000\nprog;main;b 10000000' ] ||
	fail "folded stream summed to: $(cat "$WORK/stream.folded")"
pass "140 MB of folded lines streamed and summed exactly"

# perf script records (2.5 million, 140 MB) through a pipe, to folded (the
# collapse), and 500,000 into the model (report, a sample each).
rec=$'prog 123 cpu-clock:\n\tffffffff main (/bin/x)\n\tffffffff start (/bin/x)\n'
repeat "$rec" 10000000 | limited "$SONDE" convert - -o "$WORK/perf.folded" ||
	fail "convert of a perf script stream failed"
[ "$(cat "$WORK/perf.folded")" = "prog;start;main 2500000" ] ||
	fail "perf script stream collapsed to: $(cat "$WORK/perf.folded")"
pass "perf script stream collapsed exactly"
repeat "$rec" 2000000 | limited "$SONDE" report - --json >"$WORK/perf.json" ||
	fail "report of a perf script stream failed"
[ "$(jq .samples "$WORK/perf.json")" = 500000 ] ||
	fail "perf script stream read $(jq .samples "$WORK/perf.json") samples"
pass "perf script stream read into the model: 500000 samples"
