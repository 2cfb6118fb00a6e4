# Branch probes (--trace 'branch FILE:LINE'): each conditional jump's
# outcomes counted exactly in the kernel, against the target's own counts,
# by gcc and clang at -O0 and -O2: a branch taken one call in eight, the two
# jumps of `a && b`, a loop's back edge (its trip count), a branch in an
# always-inlined function (two copies, summed), and jrcxz and loop (which
# test %rcx, and which the kernel steps instead of emulating), and jl, jg,
# jb, jo, jp and js (each flag the evaluator reads: SF, OF, ZF, CF, PF)
# against the ways the CPU took; the target
# computes the same with the probes on; the jump sonde names is the one
# objdump --line-numbers puts on the line, and `branch FUNC+0xOFF` at its
# address counts the same; --sample-when 'branch ... taken' takes no sample
# outside calls where the jump went that way; report --in F --when 'branch
# ... taken' splits F's samples by the outcome; bad input is one line each;
# in a live session the branch is traced, gates sampling and is untraced;
# and LIB:FILE:LINE on sqlite3: the first jump of libc's __libc_malloc
# goes its two ways as many times as malloc is called.
. "$(dirname "$0")/lib.sh"
require_bpf
export SONDE_RUNTIME_DIR="$WORK/run"

src="$SRC/tests/targets/branches/branches.c"
at() { grep -n "/\* $1[ :*]" "$src" | tail -n1 | cut -d: -f1; }
big=$(at LINE_BIG)
clamp=$(at LINE_CLAMP)
and=$(at LINE_AND)
loop=$(at LINE_LOOP)
asm=$(at LINE_ASM)
flagl=$(at LINE_FLAGS)
need_numbers "marker lines" "$big" "$clamp" "$and" "$loop" "$asm" "$flagl"
n=4000

# jq: the [taken, not taken] counts of jump K of branch LOCATION.
pair() { # JSON LOCATION K
	jq -c --arg at "$2" --argjson k "$3" '[.probes[] | select(.branch.at == $at and .branch.jump == $k)]
		| [(.[] | select(.branch.outcome == "taken") | .calls), (.[] | select(.branch.outcome == "not-taken") | .calls)]' "$1"
}
jumps() { jq --arg at "$2" '[.probes[] | select(.branch.at == $at) | .branch.jumps] | max' "$1"; }
# Whether some jump of LOCATION has the counts {A, B} (in either order).
has_pair() { # JSON LOCATION A B
	local k m
	m=$(jumps "$1" "$2")
	need_numbers "jumps of $2" "$m"
	for k in $(seq "$m"); do
		local p
		p=$(pair "$1" "$2" "$k")
		[ "$p" = "[$3,$4]" ] || [ "$p" = "[$4,$3]" ] && return 0
	done
	return 1
}

for build in gcc-O0 gcc-O2 clang-O0 clang-O2; do
	bin="$TARGETS/branches-$build"
	"$bin" "$n" >"$WORK/$build.plain"
	"$SONDE" record -F 99 --no-children --trace handle_request \
		--trace "branch branches.c:$big" --trace "branch branches.c:$clamp" \
		--trace "branch branches.c:$and" --trace "branch branches.c:$loop" \
		--trace "branch branches.c:$asm" --trace "branch branches.c:$flagl" \
		-o "$WORK/$build.sonde" -- "$bin" "$n" >"$WORK/$build.out"
	cmp -s "$WORK/$build.plain" "$WORK/$build.out" ||
		fail "$build: the target computed otherwise with the probes: $(cat "$WORK/$build.out") vs $(cat "$WORK/$build.plain")"
	"$SONDE" report "$WORK/$build.sonde" --json >"$WORK/$build.json"
	o="$WORK/$build.out"
	nbig=$(kv "$o" big) odd=$(kv "$o" odd) both=$(kv "$o" both) zero=$(kv "$o" loop_zero)
	iters=$(kv "$o" loop_iters) calls=$(kv "$o" clamp_calls) over=$(kv "$o" clamp_over)
	azero=$(kv "$o" asm_zero) aiters=$(kv "$o" asm_iters)
	need_numbers "$build: the target's counts" "$nbig" "$odd" "$both" "$zero" "$iters" "$calls" "$over" "$azero" "$aiters"
	kind=$(jq -r --arg p "branch branches.c:$big taken" '.probes[] | select(.name == $p) | .kind' "$WORK/$build.json")
	[ "$kind" = branch ] || fail "$build: branch branches.c:$big taken is kind '$kind'"

	# len > 4096: one jump; its outcome that counts the big requests goes
	# into the if's body, and happened in exactly those calls.
	[ "$(jumps "$WORK/$build.json" "branches.c:$big")" = 1 ] || fail "$build: branches.c:$big has not one jump"
	has_pair "$WORK/$build.json" "branches.c:$big" "$nbig" $((n - nbig)) ||
		fail "$build: branches.c:$big counted $(pair "$WORK/$build.json" "branches.c:$big" 1), the program took it $nbig of $n"
	body=$(jq -c --arg at "branches.c:$big" --argjson c "$nbig" '.probes[] | select(.branch.at == $at and .calls == $c)
		| [.branch.to_line, (.in_calls[] | select(.probe == "handle_request") | .hit)]' "$WORK/$build.json")
	[ "$body" = "[$((big + 1)),$nbig]" ] || [ "$body" = "[$((big + 2)),$nbig]" ] ||
		fail "$build: the big requests' outcome (to line, calls of handle_request it happened in) is $body, expected [$((big + 1)) or $((big + 2)),$nbig]"
	# The inlined clamp: its copies (handle_request's, handle_batch's) summed.
	has_pair "$WORK/$build.json" "branches.c:$clamp" "$over" $((calls - over)) ||
		fail "$build: branches.c:$clamp (inlined twice) has no jump counting $over of $calls"
	# (i & 1) && check(i): one jump per call decides (i & 1), in however
	# many copies the compiler made of it; another decides check(i).
	has_pair "$WORK/$build.json" "branches.c:$and" "$both" $((odd - both)) ||
		fail "$build: branches.c:$and has no jump counting check(i): $both of $odd"
	first=$(jq --arg at "branches.c:$and" --argjson both "$both" --argjson rest $((odd - both)) \
		'[.probes[] | select(.branch.at == $at)] | group_by(.branch.jump) | map(map(.calls))
		 | map(select(sort != ([$both, $rest] | sort)) | add) | add' "$WORK/$build.json")
	[ "$first" = "$n" ] || fail "$build: branches.c:$and's jumps on (i & 1) ran $first times, expected once a call: $n"
	# The loop's back edge: taken each iteration but the last (a rotated
	# loop, tested first by a guard), or each iteration (tested at the top
	# or the bottom each time, the exit the other way).
	has_pair "$WORK/$build.json" "branches.c:$loop" "$iters" "$n" ||
		has_pair "$WORK/$build.json" "branches.c:$loop" $((iters - n + zero)) $((n - zero)) ||
		fail "$build: branches.c:$loop has no back edge counting $iters iterations of $n loops ($zero empty)"
	# jrcxz, taken when rcx is 0; loop, taken n - 1 of n times.
	[ "$(pair "$WORK/$build.json" "branches.c:$asm" 1)" = "[$azero,$((n - azero))]" ] ||
		fail "$build: jrcxz counted $(pair "$WORK/$build.json" "branches.c:$asm" 1), expected [$azero,$((n - azero))]"
	[ "$(pair "$WORK/$build.json" "branches.c:$asm" 2)" = "[$((aiters - n + azero)),$((n - azero))]" ] ||
		fail "$build: loop counted $(pair "$WORK/$build.json" "branches.c:$asm" 2), expected [$((aiters - n + azero)),$((n - azero))]"
	# jl, jg, jb, jo, jp, js: each flag the evaluator reads, against the
	# CPU's own way (each jump skips its counter)
	fcalls=$(kv "$o" flag_calls)
	k=0
	for c in l g b o p s; do
		k=$((k + 1))
		nt=$(kv "$o" "not_$c")
		need_numbers "$build: not_$c" "$nt" "$fcalls"
		[ "$(pair "$WORK/$build.json" "branches.c:$flagl" "$k")" = "[$((fcalls - nt)),$nt]" ] ||
			fail "$build: j$c (jump $k of branches.c:$flagl) counted $(pair "$WORK/$build.json" "branches.c:$flagl" "$k"), the CPU [$((fcalls - nt)),$nt]"
	done
	"$SONDE" report "$WORK/$build.sonde" >"$WORK/$build.txt"
	grep -Eq "^Branch branches.c:$big if \(len > 4096\) \{" "$WORK/$build.txt" &&
		grep -Eq "^  jump 1 of 1 \(j[a-z]+ 0x[0-9a-f]+\): ran $n times: taken [0-9.]+% \([0-9]+, -> [0-9]+\), not taken [0-9.]+% \([0-9]+, -> [0-9]+\)$" "$WORK/$build.txt" &&
		grep -Eq "^    (not )?taken in 12.5% of the calls of handle_request \($nbig of $n\)" "$WORK/$build.txt" ||
		{ sed -n '/^Branch/,$p' "$WORK/$build.txt"; fail "$build: the text report's branch block"; }
	pass "$build: every jump's outcomes exact: len > 4096 ($nbig of $n), inlined clamp ($over of $calls), && ($both of $odd), the loop's back edge ($iters iterations), jrcxz ($azero) and loop, jl jg jb jo jp js; the target computed the same"
done

# The jump sonde names at branches.c:$big is the one objdump puts on that
# line, and `branch FUNC+0xOFF` at its address counts the same.
bin="$TARGETS/branches-gcc-O2"
# (awk reads to the end: an early exit would SIGPIPE objdump, and pipefail
# fail the script)
objdump -d --line-numbers --no-show-raw-insn "$bin" |
	awk -v tag="branches.c:$big" '/^[0-9a-f]+ <handle_request>:/ { f = 1 } f && /^$/ { f = 0 }
		f && /^\/.*branches\.c:[0-9]+/ { here = ($0 ~ tag "( |$)") }
		f && here && !done && /\tj[a-z]+ +[0-9a-f]+ </ { print; done = 1 }' >"$WORK/objdump.txt"
addr=$(sed -E 's/^ *([0-9a-f]+):.*/\1/' "$WORK/objdump.txt")
insn=$(sed -E 's/^ *[0-9a-f]+:\t(j[a-z]+) +([0-9a-f]+) .*/\1 0x\2/' "$WORK/objdump.txt")
fn=$(nm "$bin" | awk '$3 == "handle_request" { print $1 }')
[ -n "$addr" ] && [ -n "$fn" ] || fail "objdump shows no jump on branches.c:$big in handle_request"
sonde_insn=$(jq -r --arg at "branches.c:$big" '[.probes[] | select(.branch.at == $at) | .branch.insn][0]' "$WORK/gcc-O2.json")
[ "$sonde_insn" = "$insn" ] || fail "sonde's jump at branches.c:$big is '$sonde_insn', objdump's '$insn'"
off=$(printf '0x%x' $((0x$addr - 0x$fn)))
"$SONDE" record -F 99 --trace "branch handle_request+$off" -o "$WORK/off.sonde" -- "$bin" "$n" >/dev/null
"$SONDE" report "$WORK/off.sonde" --json >"$WORK/off.json"
[ "$(pair "$WORK/off.json" "handle_request+$off" 1)" = "$(pair "$WORK/gcc-O2.json" "branches.c:$big" 1)" ] ||
	fail "branch handle_request+$off counted $(pair "$WORK/off.json" "handle_request+$off" 1), the line's jump $(pair "$WORK/gcc-O2.json" "branches.c:$big" 1)"
pass "the jump at branches.c:$big is objdump's ($insn at 0x$addr), and branch handle_request+$off counts the same"

# --sample-when 'branch ... OUTCOME': the outcome of the big requests
# samples only in them (slow_path's work, never fast_path's); the other
# outcome never in them.
slow_way=$(jq -r --arg at "branches.c:$big" --argjson c "$(kv "$WORK/gcc-O2.out" big)" \
	'.probes[] | select(.branch.at == $at and .calls == $c) | .branch.outcome' "$WORK/gcc-O2.json")
fast_way=$([ "$slow_way" = taken ] && echo not-taken || echo taken)
in_stack() { # RECORDING FUNCTION: samples with FUNCTION on their stack
	sqlite3 "$1" "SELECT count(DISTINCT s.id) FROM samples s JOIN stack_frames sf ON sf.stack = s.stack
		JOIN frames f ON f.id = sf.frame WHERE f.name = '$2'"
}
"$SONDE" record -F 999 --no-children --trace handle_request --sample-when "branch branches.c:$big $slow_way" \
	-o "$WORK/when.sonde" -- "$bin" 30000 >/dev/null
s_slow=$(in_stack "$WORK/when.sonde" slow_path) s_fast=$(in_stack "$WORK/when.sonde" fast_path)
assert_ge "samples in slow_path with --sample-when 'branch branches.c:$big $slow_way'" "$s_slow" 20
[ "$s_fast" = 0 ] || fail "--sample-when 'branch branches.c:$big $slow_way': $s_fast samples in fast_path, whose calls never go that way"
# and none outside a call of handle_request whose record has the outcome's bit
bit=$(sqlite3 "$WORK/when.sonde" "SELECT point FROM probes WHERE name = 'branch branches.c:$big $slow_way'")
samples=$(sqlite3 "$WORK/when.sonde" "SELECT count(*) FROM samples")
outside=$(sqlite3 "$WORK/when.sonde" "SELECT count(*) FROM samples s WHERE NOT EXISTS (
	SELECT 1 FROM sample_spans ss JOIN spans c ON c.id = ss.span
	WHERE ss.sample = s.id AND (c.points >> $bit) & 1)")
need_numbers "--sample-when's samples" "$bit" "$samples" "$outside"
[ "$outside" = 0 ] || fail "--sample-when 'branch branches.c:$big $slow_way': $outside of $samples samples outside calls where the jump went that way"
"$SONDE" record -F 999 --no-children --trace handle_request --sample-when "branch branches.c:$big $fast_way" \
	-o "$WORK/when2.sonde" -- "$bin" 30000 >/dev/null
f_slow=$(in_stack "$WORK/when2.sonde" slow_path) f_fast=$(in_stack "$WORK/when2.sonde" fast_path)
assert_ge "samples in fast_path with --sample-when 'branch branches.c:$big $fast_way'" "$f_fast" 20
[ "$f_slow" = 0 ] || fail "--sample-when 'branch branches.c:$big $fast_way': $f_slow samples in slow_path"
pass "--sample-when on each outcome: $s_slow samples in slow_path and none in fast_path, then $f_fast in fast_path and none in slow_path"

# report --in handle_request --when 'branch ... OUTCOME': the two outcomes
# split the calls' samples, each into its own kind of call.
"$SONDE" record -F 999 --no-children --trace handle_request --trace "branch branches.c:$big" \
	-o "$WORK/all.sonde" -- "$bin" 30000 >/dev/null
count_view() { "$SONDE" report "$WORK/all.sonde" --json "$@" | jq '.samples'; }
all=$(count_view --in handle_request)
w_slow=$(count_view --in handle_request --when "branch branches.c:$big $slow_way")
w_fast=$(count_view --in handle_request --when "branch branches.c:$big $fast_way")
need_numbers "--when views" "$all" "$w_slow" "$w_fast"
assert_ge "samples in handle_request's calls" "$all" 40
[ $((w_slow + w_fast)) = "$all" ] || fail "--when: $w_slow + $w_fast samples, $all in the calls of handle_request"
"$SONDE" report "$WORK/all.sonde" --json --in handle_request --when "branch branches.c:$big $fast_way" >"$WORK/wf.json"
[ "$(function_share "$WORK/wf.json" slow_path)" = 0 ] || fail "--when $fast_way: samples in slow_path"
"$SONDE" report "$WORK/all.sonde" --in handle_request --when "branch branches.c:$big $slow_way" >"$WORK/when.txt"
grep -Eq "^  view: +samples in calls of handle_request \([0-9]+ calls\) during which branch branches.c:$big $slow_way happened$" "$WORK/when.txt" ||
	{ grep "view:" "$WORK/when.txt" >&2; fail "report --when: the view line does not say which calls"; }
pass "report --in handle_request --when: $w_slow + $w_fast = $all samples, none of slow_path in the fast way"

# Bad input: one line each, non-zero exit, no recording.
expect_error "no branch at branches.c:$((big + 1)); branches in handle_request at lines [0-9, ]*$big" "$WORK/bad" -- \
	"$SONDE" record --trace "branch branches.c:$((big + 1))" -o "$WORK/bad" -- "$bin" 10
expect_error "branches.c:$big has 1 conditional jump: no #3 \(#1 j[a-z]+ 0x[0-9a-f]+\)$" "$WORK/bad" -- \
	"$SONDE" record --trace "branch branches.c:$big#3" -o "$WORK/bad" -- "$bin" 10
hint=$(at LINE_HINT)
expect_error "branch branches.c:$hint: the kernel cannot probe its jump: 0x[0-9a-f]+ is an instruction with a segment prefix \(0x3e\), which uprobes refuse$" "$WORK/bad" -- \
	"$SONDE" record --trace "branch branches.c:$hint" -o "$WORK/bad" -- "$bin" 10
expect_error "no instruction begins at \+0x1 of handle_request" "$WORK/bad" -- \
	"$SONDE" record --trace "branch handle_request+0x1" -o "$WORK/bad" -- "$bin" 10
expect_error "the instruction at \+0x0 of handle_request is no conditional jump" "$WORK/bad" -- \
	"$SONDE" record --trace "branch handle_request+0x0" -o "$WORK/bad" -- "$bin" 10
expect_error "a branch probe counts outcomes and captures nothing" "$WORK/bad" -- \
	"$SONDE" record --trace "branch branches.c:$big len" -o "$WORK/bad" -- "$bin" 10
expect_error "say which way the jump goes: 'branch branches.c:$big taken' or" "$WORK/bad" -- \
	"$SONDE" record --trace handle_request --sample-when "branch branches.c:$big" -o "$WORK/bad" -- "$bin" 10
expect_error "branches.c:$and has [0-9] conditional jumps: say which, as branch branches.c:$and#K taken; its jumps: #1 \(j" "$WORK/bad" -- \
	"$SONDE" record --trace handle_request --sample-when "branch branches.c:$and taken" -o "$WORK/bad" -- "$bin" 10
expect_error "--when x.c:1: no line or branch outcome of that name was traced; traced: branch branches.c:$big taken, branch branches.c:$big not-taken$" "" -- \
	"$SONDE" report "$WORK/all.sonde" --in handle_request --when x.c:1
expect_error "--when branch branches.c:$big taken needs the calls it is about" "" -- \
	"$SONDE" report "$WORK/all.sonde" --when "branch branches.c:$big taken"

# Live: trace the branch into a running session, gate sampling by it,
# untrace it; a bad spec answers one error and the session runs on.
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
out=$("$SONDE" ctl trace "branch branches.c:$big") || fail "ctl trace branch: $out"
[ "$out" = "tracing branch branches.c:$big at 1 address: branch branches.c:$big taken, branch branches.c:$big not-taken" ] ||
	fail "ctl trace branch answered '$out'"
expect_error "no branch at branches.c:$((big + 1))" "" -- "$SONDE" ctl trace "branch branches.c:$((big + 1))"
out=$("$SONDE" ctl sample-when "branch branches.c:$big $slow_way") || fail "ctl sample-when: $out"
kill -0 "$spid" || fail "sonde top exited after a bad branch spec"
sleep 1.5
"$SONDE" ctl save "$WORK/live.sonde" >/dev/null || fail "ctl save failed"
"$SONDE" report "$WORK/live.sonde" --json >"$WORK/live.json"
share=$(jq --arg p "branch branches.c:$big $slow_way" '.probes[] | select(.name == $p) | .in_calls[] | select(.probe == "handle_request") | .share' "$WORK/live.json")
# One request in eight goes the slow way; calls in flight at the attach
# are counted without it (a few).
need_numbers "live share" "$share"
awk -v s="$share" 'BEGIN { exit !(s > 0.10 && s < 0.15) }' || fail "live: share of handle_request calls going the slow way is $share, expected ~0.125"
out=$("$SONDE" ctl sample-when off) || fail "ctl sample-when off: $out"
attached() {
	"$SONDE" ctl --json status | jq --arg at "branch branches.c:$big" \
		'[.data.probes[] | select(.name | startswith($at)) | select(.attached == true)] | length'
}
[ "$(attached)" = 2 ] || fail "live: not both outcome probes attached ($(attached))"
out=$("$SONDE" ctl untrace "branch branches.c:$big") || fail "ctl untrace: $out"
[ "$(attached)" = 0 ] || fail "live: $(attached) outcome probes still attached after untrace"
kill -0 "$spid" || fail "sonde top exited"
pass "live: traced branch branches.c:$big (the slow way in $share of handle_request's calls), sample-when, untraced both outcomes"
stop_gently "$spid"
stop_gently "$tpid"

# LIB:FILE:LINE, on a program no one here wrote: sqlite3 with libc's
# malloc (libc6-dbg's DWARF). The first line of __libc_malloc with a jump
# (explore finds it: the first at or after the function's entry line)
# decides once a call, so its jump's two ways add up to malloc's calls
# (the function probe's count, in the same run).
[ -d /usr/lib/debug/.build-id ] && dpkg -s libc6-dbg >/dev/null 2>&1 ||
	skip "libc6-dbg is not installed (scripts/bootstrap.sh test installs it): the LIB:FILE:LINE part"
libc=/lib/x86_64-linux-gnu/libc.so.6
"$SONDE" explore -e "$libc" __libc_malloc --json >"$WORK/malloc.json"
mline=$(jq '.insns[0].line as $e | [.lines[] | select(.branches > 0 and .sites > 0 and .line >= $e) | .line] | min' "$WORK/malloc.json")
need_numbers "__libc_malloc's first line with a jump" "$mline"
printf 'CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);\nWITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) INSERT INTO t SELECT x, printf("row %%d", x) FROM c;\nSELECT count(*) FROM t WHERE b LIKE "%%7%%";\n' >"$WORK/q.sql"
"$SONDE" record -F 99 --trace libc.so.6:malloc --trace "branch libc.so.6:malloc.c:$mline" -o "$WORK/libc.sonde" \
	-- sqlite3 "$WORK/q.db" <"$WORK/q.sql" >/dev/null
"$SONDE" report "$WORK/libc.sonde" --json >"$WORK/libc.json"
mcalls=$(jq '.probes[] | select(.name == "malloc") | .entered' "$WORK/libc.json")
ways=$(jq --arg at "malloc.c:$mline" '[.probes[] | select(.branch.at == $at and .branch.jump == 1) | .calls] | add' "$WORK/libc.json")
need_numbers "malloc's calls and its line's jump" "$mcalls" "$ways"
assert_ge "malloc's calls in sqlite3" "$mcalls" 1000
[ "$ways" = "$mcalls" ] || fail "branch libc.so.6:malloc.c:$mline: its jump went $ways times, malloc was called $mcalls times"
pass "branch libc.so.6:malloc.c:$mline in sqlite3: its jump's ways add up to malloc's $mcalls calls"
