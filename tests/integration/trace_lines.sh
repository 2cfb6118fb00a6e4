# Line probes (--trace FILE:LINE): a line inlined in two functions counts the
# sum of both exactly, by gcc and clang at -O0 and -O2 (the program counts
# its own executions of the line); the calls of each traced function that
# ran it are exact too; the inlined function's argument captured at the
# line reads the value passed at every hit (at -O0 its location is
# DW_OP_fbreg of the function it was inlined into: that function's frame
# base); --sample-when takes no sample outside calls that ran the line;
# bad input is one line each; and in a live session the same specs (with
# captures) trace, sample-when and untrace while it runs, and its errors
# leave it running.
. "$(dirname "$0")/lib.sh"
require_bpf
export SONDE_RUNTIME_DIR="$WORK/run"

src="$SRC/tests/targets/lines/lines.c"
line=$(grep -n 'LINE_HIT' "$src" | tail -n1 | cut -d: -f1)

# sonde probe --lines: the function's lines, the inlined line with its one
# address in this function (two in the program: one per function).
for build in gcc-O2 clang-O2; do
	"$SONDE" probe -e "$TARGETS/lines-$build" --lines handle_batch >"$WORK/list.txt"
	grep -Eq "^ +1 +$line  .*LINE_HIT" "$WORK/list.txt" || { cat "$WORK/list.txt"; fail "$build: probe --lines shows no address on line $line"; }
	grep -Eq "^ +[0-9]+ +[0-9]+  .*spin\(10\);" "$WORK/list.txt" || { cat "$WORK/list.txt"; fail "$build: probe --lines: the call to spin has no address"; }
done
pass "probe --lines: lines with addresses, the inlined line among them"
expect_error "no function 'handle_requst' in .*lines-gcc-O2; nearest: handle_request" "" -- \
	"$SONDE" probe -e "$TARGETS/lines-gcc-O2" --lines handle_requst
expect_error "lines-nodebug has no debug info \(DWARF\) to list handle_request's lines" "" -- \
	"$SONDE" probe -e "$TARGETS/lines-nodebug" --lines handle_request
# sonde probe --vars at a line: its two addresses (one per inlined copy),
# and the inlined function's argument readable there.
"$SONDE" probe -e "$TARGETS/lines-gcc-O2" --vars "lines.c:$line" >"$WORK/vars.txt"
grep -Eq "^count_hit in .*lines-gcc-O2, 2 addresses " "$WORK/vars.txt" || { cat "$WORK/vars.txt"; fail "probe --vars lines.c:$line: not 2 addresses of count_hit"; }
grep -Eq "^  argument +long unsigned int +v +yes" "$WORK/vars.txt" || { cat "$WORK/vars.txt"; fail "probe --vars lines.c:$line: v not readable"; }
pass "probe --vars at a line: 2 addresses, v readable"
expect_error "give -e BINARY and one of --lines FUNC, --vars SPEC, --python or --usdt" "" -- \
	"$SONDE" probe -e "$TARGETS/lines-gcc-O2" --lines handle_request --vars handle_request

for build in gcc-O0 gcc-O2 clang-O0 clang-O2; do
	bin="$TARGETS/lines-$build"
	"$SONDE" record -F 99 --no-children --trace handle_request --trace handle_batch \
		--trace "lines.c:$line v" -o "$WORK/$build.sonde" -- "$bin" 3000 >"$WORK/$build.out"
	"$SONDE" report "$WORK/$build.sonde" --json >"$WORK/$build.json"
	hits=$(kv "$WORK/$build.out" hits)
	with_hit=$(kv "$WORK/$build.out" requests_with_hit)
	batches=$(kv "$WORK/$build.out" batches)
	got=$(jq --arg l "lines.c:$line" '.probes[] | select(.name == $l) | .calls' "$WORK/$build.json")
	kind=$(jq -r --arg l "lines.c:$line" '.probes[] | select(.name == $l) | .kind' "$WORK/$build.json")
	[ "$kind" = line ] || fail "$build: kind '$kind', expected line"
	[ "$(jq -r '.probes[] | select(.name == "handle_request") | .kind' "$WORK/$build.json")" = function ] ||
		fail "$build: handle_request is not kind function"
	[ "$got" = "$hits" ] || fail "$build: line $line counted $got hits, the program ran it $hits times"
	# count_hit(1) everywhere: v is 1 at every hit, in both inlined copies.
	v=$(jq -c --arg l "lines.c:$line" '.probes[] | select(.name == $l) | [.hits, .values.v.count, .values.v.sum, .values.v.optimized_out + .values.v.read_errors + .values.v.unavailable]' "$WORK/$build.json")
	[ "$v" = "[$hits,$hits,$hits,0]" ] || fail "$build: v at lines.c:$line (hits, read, sum, unread) is $v, the program passed 1 at each of $hits hits"
	in_req=$(jq --arg l "lines.c:$line" '.probes[] | select(.name == $l) | .in_calls[] | select(.probe == "handle_request") | .hit' "$WORK/$build.json")
	[ "$in_req" = "$with_hit" ] || fail "$build: $in_req calls of handle_request ran the line, the program says $with_hit"
	# Batches of 0 (every 7th) do not run it.
	in_batch=$(jq --arg l "lines.c:$line" '.probes[] | select(.name == $l) | .in_calls[] | select(.probe == "handle_batch") | .hit' "$WORK/$build.json")
	expect=$((batches - (batches + 6) / 7))
	[ "$in_batch" = "$expect" ] || fail "$build: $in_batch calls of handle_batch ran the line, expected $expect"
	"$SONDE" report "$WORK/$build.sonde" >"$WORK/$build.txt"
	grep -q "^  ran in 33.3% of the calls of handle_request ($with_hit of 3000)" "$WORK/$build.txt" ||
		{ cat "$WORK/$build.txt"; fail "$build: text report has no 'ran in 33.3% of the calls' line"; }
	pass "$build: lines.c:$line ran $got times (inlined in two functions), in $in_req of 3000 calls of handle_request, $in_batch of $batches batches; its argument v read 1 at each hit"
done

# --sample-when: every sample is inside a call of handle_request that ran
# the line (the sample names the call; the call's record has the line's
# bit). Without it, most samples are in calls that did not.
bin="$TARGETS/lines-gcc-O2"
"$SONDE" record -F 999 --no-children --trace handle_request --sample-when "lines.c:$line" \
	-o "$WORK/when.sonde" -- "$bin" 30000 >/dev/null
bit=$(sqlite3 "$WORK/when.sonde" "SELECT point FROM probes WHERE name = 'lines.c:$line'")
samples=$(sqlite3 "$WORK/when.sonde" "SELECT count(*) FROM samples")
outside=$(sqlite3 "$WORK/when.sonde" "SELECT count(*) FROM samples s WHERE NOT EXISTS (
	SELECT 1 FROM sample_spans ss JOIN spans c ON c.id = ss.span
	WHERE ss.sample = s.id AND (c.points >> $bit) & 1)")
assert_ge "samples with --sample-when" "$samples" 20
[ "$outside" = 0 ] || fail "--sample-when: $outside of $samples samples outside calls that ran the line"
"$SONDE" record -F 999 --no-children --trace handle_request --trace "lines.c:$line" \
	-o "$WORK/all.sonde" -- "$bin" 30000 >/dev/null
all=$(sqlite3 "$WORK/all.sonde" "SELECT count(*) FROM samples")
without=$(sqlite3 "$WORK/all.sonde" "SELECT count(*) FROM samples s WHERE NOT EXISTS (
	SELECT 1 FROM sample_spans ss JOIN spans c ON c.id = ss.span
	WHERE ss.sample = s.id AND (c.points >> $bit) & 1)")
assert_ge "samples outside calls that ran the line, without --sample-when" "$without" $((all / 3))
pass "--sample-when: $samples samples, none outside calls that ran the line (without it: $without of $all)"

# Bad input, one-shot: one line each, non-zero exit, no recording (the
# rest of the bad specs are given to the live session below: the same
# resolver answers both, and each sonde start costs seconds).
expect_error "no code at lines.c:$((line + 1)); nearest lines with code: $line, [0-9]+$" "$WORK/bad" -- \
	"$SONDE" record --trace "lines.c:$((line + 1))" -o "$WORK/bad" -- "$bin" 10
expect_error "lines-nodebug has no debug info \(DWARF\) to find lines.c:$line in: install its debug symbols.*-dbgsym.*debuginfod-find" "$WORK/bad" -- \
	"$SONDE" record --trace "lines.c:$line" -o "$WORK/bad" -- "$TARGETS/lines-nodebug" 10

# Live: trace the line into a running session, sample-when, untrace; bad
# specs answer one error and the session runs on.
"$bin" 100000000 >/dev/null &
tpid=$!
BG_PIDS+=("$tpid")
wait_exec "$tpid" "$bin"
"$SONDE" top -b -i 0.5 -F 199 -p "$tpid" >"$WORK/top.out" 2>"$WORK/top.err" &
spid=$!
BG_PIDS+=("$spid")
for _ in $(seq 150); do
	grep -q "^$spid " <<<"$("$SONDE" ctl --list 2>/dev/null)" && break
	sleep 0.1
done
out=$("$SONDE" ctl trace handle_request) || fail "ctl trace handle_request: $out"
expect_error "trace lines.c:$line nosuch: nosuch is not visible at lines.c:$line; visible: v, hits, sink$" "" -- "$SONDE" ctl trace "lines.c:$line nosuch"
out=$("$SONDE" ctl trace "lines.c:$line v hits") || fail "ctl trace lines.c:$line v hits: $out"
[ "$out" = "tracing line lines.c:$line at 2 addresses" ] || fail "ctl trace line answered '$out'"
out=$("$SONDE" ctl sample-when "lines.c:$line") || fail "ctl sample-when: $out"
expect_error "no code at lines.c:1; nearest lines with code: [0-9]+$" "" -- "$SONDE" ctl trace lines.c:1
expect_error "no file nosuch.c in the debug info of .*lines-gcc-O2" "" -- "$SONDE" ctl trace nosuch.c:3
expect_error "trace lines.c:$line v: lines.c:$line is traced already: untrace it first to change what it captures$" "" -- "$SONDE" ctl trace "lines.c:$line v"
expect_error "handle_request is a function: sample-when takes a line" "" -- "$SONDE" ctl sample-when handle_request
kill -0 "$spid" || fail "sonde top exited after bad line specs"
sleep 1
"$SONDE" ctl save "$WORK/live.sonde" >/dev/null || fail "ctl save failed"
"$SONDE" report "$WORK/live.sonde" --json >"$WORK/live.json"
hits=$(jq --arg l "lines.c:$line" '.probes[] | select(.name == $l) | .calls' "$WORK/live.json")
share=$(jq --arg l "lines.c:$line" '.probes[] | select(.name == $l) | .in_calls[] | select(.probe == "handle_request") | .share' "$WORK/live.json")
assert_ge "hits of the line traced live" "$hits" 1
vals=$(jq -c --arg l "lines.c:$line" '.probes[] | select(.name == $l) | [.hits > 0, .values.v.min, .values.v.max, .values.hits.count == .hits]' "$WORK/live.json")
[ "$vals" = "[true,1,1,true]" ] || fail "live: the line's captures saved as $vals (hits with values, v min, v max, hits read at each)"
# One request in three runs the line; the requests in flight at the attach
# are counted without it (a few).
awk -v s="$share" 'BEGIN { exit !(s > 0.30 && s < 0.37) }' || fail "live: share of handle_request calls that ran the line is $share, expected ~0.333"
grep -Eq "^  line: +[1-9][0-9]* hits since tracing began" "$WORK/top.out" ||
	{ tail -n 30 "$WORK/top.out"; fail "live: no hits in sonde top's PROBE lines.c:$line block"; }
"$SONDE" ctl --json status | jq -e --arg l "lines.c:$line" \
	'.data.probes[] | select(.name == $l) | .kind == "line" and .total_calls > 0' >/dev/null ||
	fail "live: ctl --json status has no line probe with hits"
out=$("$SONDE" ctl sample-when off) || fail "ctl sample-when off: $out"
out=$("$SONDE" ctl untrace "lines.c:$line") || fail "ctl untrace: $out"
kill -0 "$spid" || fail "sonde top exited"
pass "live: traced lines.c:$line ($hits hits, in $share of handle_request's calls), sample-when, untraced; bad specs left the session running"
stop_gently "$spid"
stop_gently "$tpid"
