# sonde explore: a function's structure against objdump -d --line-numbers,
# by gcc and clang at -O0 and -O2 (tests/targets/branches): every
# instruction and its source line, the conditional jumps (and each line's
# count of them), the basic blocks' starts (the entry, every jump's target
# inside the function, every instruction after a jump or return), the one
# loop's back edge on the loop's line, the inlined call of clamp at its call
# line; without FUNC, the binary's functions as nm lists them; a source
# file that is gone (lines then shown by their instructions)
# and found again with --source-dir; bad input one line each; and --counts:
# a recording's samples per line add up to the samples of the function,
# the call line of slow_path has every sample in slow_path, and the
# recording's branch probe shows its exact counts.
. "$(dirname "$0")/lib.sh"

src="$SRC/tests/targets/branches/branches.c"
at() { grep -n "/\* $1 \*/" "$src" | tail -n1 | cut -d: -f1; }
loop=$(at LINE_LOOP)
big=$(at LINE_BIG)
call=$(grep -n 'return clamp((i \* 7919)' "$src" | cut -d: -f1)
asm=$(grep -n '/\* LINE_ASM \*/' "$src" | cut -d: -f1)
need_numbers "marker lines" "$loop" "$big" "$call" "$asm"

# objdump's instructions of FUNC in BIN, each as "ADDR LINE MNEMONIC
# TARGET" (LINE 0 outside branches.c; TARGET - when none).
objdump_rows() { # BIN FUNC
	objdump -d -l --no-show-raw-insn "$1" | awk -v fn="<$2>:" '
		function hex(h,   v, i) { v = 0; h = tolower(h); for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
		$2 == fn { f = 1; next }
		f && /^$/ { f = 0 } # (no exit: an early one would SIGPIPE objdump under pipefail)
		f && /^\/.*:[0-9]+/ { l = $1; sub(/ .*/, "", l); n = l; sub(/.*:/, "", n); line = (l ~ /\/branches\.c:/) ? n : 0; next }
		f && /^ +[0-9a-f]+:\t/ {
			a = $1; sub(/:$/, "", a)
			split($0, parts, "\t"); m = parts[2]; sub(/ .*/, "", m)
			t = "-"; if (match(parts[2], /[ ,]+[0-9a-f]+ </)) { t = substr(parts[2], RSTART, RLENGTH); gsub(/[ ,<]/, "", t) }
			printf "%d %d %s %s\n", hex(a), line, m, t == "-" ? "-" : hex(t)
		}'
}

for build in gcc-O0 gcc-O2 clang-O0 clang-O2; do
	bin="$TARGETS/branches-$build"
	"$SONDE" explore -e "$bin" handle_request --json >"$WORK/$build.json"
	lo=$(jq .lo "$WORK/$build.json") hi=$(jq .hi "$WORK/$build.json")
	need_numbers "$build: the function's addresses" "$lo" "$hi"
	# objdump goes on into the padding after the symbol's size
	objdump_rows "$bin" handle_request | awk -v hi="$hi" '$1 < hi' >"$WORK/$build.objdump"
	[ -s "$WORK/$build.objdump" ] || fail "$build: objdump shows no handle_request"
	# every instruction, with its line (in branches.c)
	jq -r '.insns[] | "\(.addr) \(if (.file // "" | endswith("/branches.c")) then .line else 0 end)"' \
		"$WORK/$build.json" >"$WORK/$build.insns"
	# objdump's instructions, each with its line by readelf's decoded line
	# table (the last row at or before it; line 0 is no line, which
	# objdump -l leaves unprinted)
	readelf --debug-dump=decodedline "$bin" | awk '
		function hex(h,   v, i) { v = 0; h = tolower(h); sub(/^0x/, "", h); for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
		$3 ~ /^0x[0-9a-f]+$/ && $2 ~ /^[0-9]+$/ { print hex($3), ($1 ~ /(^|\/)branches\.c$/ ? $2 : 0) }' |
		sort -s -n -k1,1 >"$WORK/$build.rows"
	awk 'NR == FNR { ra[++n] = $1; rl[n] = $2; next }
		{ while (k < n && ra[k + 1] <= $1) k++; print $1, (k ? rl[k] : 0) }' \
		"$WORK/$build.rows" "$WORK/$build.objdump" >"$WORK/$build.want"
	diff "$WORK/$build.want" "$WORK/$build.insns" >"$WORK/$build.diff" ||
		{ head -20 "$WORK/$build.diff"; fail "$build: explore's instructions and lines differ from objdump's (< objdump, > explore)"; }
	# the conditional jumps: objdump's j* but jmp
	awk '$3 ~ /^(j|loop)/ && $3 !~ /^jmp/ { print $1 }' "$WORK/$build.objdump" >"$WORK/$build.jcc"
	jq -r '.insns[] | select(.flow == "cond") | .addr' "$WORK/$build.json" >"$WORK/$build.cond"
	diff "$WORK/$build.jcc" "$WORK/$build.cond" >/dev/null ||
		fail "$build: explore's conditional jumps ($(tr '\n' ' ' <"$WORK/$build.cond")) are not objdump's ($(tr '\n' ' ' <"$WORK/$build.jcc"))"
	njcc=$(wc -l <"$WORK/$build.jcc")
	# each line's BR is its conditional jumps, by objdump's lines
	awk '$3 ~ /^(j|loop)/ && $3 !~ /^jmp/ && $2 { n[$2]++ } END { for (l in n) print l, n[l] }' \
		"$WORK/$build.objdump" | sort -n >"$WORK/$build.brwant"
	jq -r '.lines[] | select(.branches > 0) | "\(.line) \(.branches)"' "$WORK/$build.json" | sort -n >"$WORK/$build.brgot"
	diff "$WORK/$build.brwant" "$WORK/$build.brgot" >/dev/null ||
		fail "$build: conditional jumps per line differ: objdump $(tr '\n' ' ' <"$WORK/$build.brwant"), explore $(tr '\n' ' ' <"$WORK/$build.brgot")"
	# block starts: the entry, jump targets inside, what follows a jump or return
	awk -v lo="$lo" -v hi="$hi" '
		{ addr[NR] = $1; m[NR] = $3; t[NR] = $4 }
		END {
			s[lo] = 1
			for (i = 1; i <= NR; i++) {
				if (m[i] ~ /^(j|loop)/ && t[i] != "-" && t[i] + 0 >= lo && t[i] + 0 < hi) s[t[i]] = 1
				if (m[i] ~ /^(j|loop|ret|ud2|hlt|int3)/ && i < NR) s[addr[i + 1]] = 1
			}
			for (a in s) print a
		}' "$WORK/$build.objdump" | sort -n >"$WORK/$build.bwant"
	jq -r '.blocks[].lo' "$WORK/$build.json" | sort -n >"$WORK/$build.bgot"
	diff "$WORK/$build.bwant" "$WORK/$build.bgot" >/dev/null ||
		fail "$build: block starts differ: objdump's $(tr '\n' ' ' <"$WORK/$build.bwant"), explore's $(tr '\n' ' ' <"$WORK/$build.bgot")"
	nblocks=$(wc -l <"$WORK/$build.bgot")
	# each block's successors, from objdump's jumps: a conditional jump's
	# target then the next block, a jump's target, none after a return,
	# else the next block ("START -> START,START")
	awk 'NR == FNR { start[$1] = 1; next }
		{ addr[++n] = $1; m[n] = $3; t[n] = $4 }
		END {
			for (i = 1; i <= n; i++) {
				if (start[addr[i]]) b = addr[i]
				if (i < n && !start[addr[i + 1]]) continue
				nx = i < n ? addr[i + 1] : ""
				s = ""
				if (m[i] ~ /^(j|loop)/ && m[i] !~ /^jmp/) s = (start[t[i]] ? t[i] : "") (nx != "" ? (start[t[i]] ? "," : "") nx : "")
				else if (m[i] ~ /^jmp/) s = start[t[i]] ? t[i] : ""
				else if (m[i] !~ /^(ret|ud2|hlt|int3)/) s = nx
				print b " -> " s
			}
		}' "$WORK/$build.bwant" "$WORK/$build.objdump" >"$WORK/$build.ewant"
	jq -r '.blocks as $b | .blocks[] | "\(.lo) -> \([.succ[] as $s | $b[$s].lo | tostring] | join(","))"' \
		"$WORK/$build.json" >"$WORK/$build.egot"
	diff "$WORK/$build.ewant" "$WORK/$build.egot" >"$WORK/$build.ediff" ||
		{ head "$WORK/$build.ediff"; fail "$build: the blocks' successors differ from objdump's jumps (< objdump, > explore)"; }
	# the blocks the entry does not lead to: the padding nops between
	# the function's parts, nothing else
	pad=$(jq '[.blocks[] | select(.reachable | not) | .id] as $u |
		[.insns[] | select(.block as $b | $u | index($b)) | select(.text | startswith("nop") | not)] | length' \
		"$WORK/$build.json")
	need_numbers "$build: instructions in unreachable blocks" "$pad"
	[ "$pad" = 0 ] || fail "$build: $pad instructions that are no padding in blocks explore says the entry does not reach"
	# one loop, whose back edge is the loop line's jump
	loops=$(jq '.loops | length' "$WORK/$build.json")
	[ "$loops" = 1 ] || fail "$build: explore finds $loops loops in handle_request, it has one"
	edge_line=$(jq '. as $s | .loops[0].from as $b | [$s.insns[] | select(.block == $b)] | last | .line' "$WORK/$build.json")
	[ "$edge_line" = "$loop" ] || fail "$build: the loop's back edge is on line $edge_line, not the loop's line $loop"
	# clamp, always inlined, at its call line
	inl=$(jq -c '[.scopes[] | select(.kind == "inlined" and .name == "clamp") | [.call_file, .call_line]] | unique' "$WORK/$build.json")
	[ "$inl" = "[[\"branches.c\",$call]]" ] || fail "$build: the inlined clamp is $inl, expected at branches.c:$call"
	# count_down: jrcxz and loop (which capstone's jump group leaves out),
	# the loop's back edge
	"$SONDE" explore -e "$bin" count_down --json >"$WORK/$build.cd.json"
	cd=$(jq -c --argjson l "$asm" '[(.lines[] | select(.line == $l) | .branches), (.loops | length)]' "$WORK/$build.cd.json")
	[ "$cd" = "[2,1]" ] || fail "$build: count_down's asm line has (jumps, loops) $cd, expected [2,1] (jrcxz, loop)"
	pass "$build: $(wc -l <"$WORK/$build.insns") instructions with objdump's lines, its $njcc conditional jumps, $nblocks blocks and their successors, the loop's back edge on line $loop, clamp inlined at line $call; count_down's jrcxz and loop"
done

# The text face: the line's marks, its blocks, the loop.
bin="$TARGETS/branches-gcc-O2"
"$SONDE" explore -e "$bin" "branches.c:$big" >"$WORK/text.txt"
grep -Eq "^handle_request in .*branches-gcc-O2: 0x[0-9a-f]+-0x[0-9a-f]+ \([0-9]+ bytes, [0-9]+ instructions, [0-9]+ blocks, 1 loop\)$" "$WORK/text.txt" &&
	grep -Eq "^ +$big +1 +1 +if \(len > 4096\) \{" "$WORK/text.txt" &&
	grep -Eq "^  B[0-9]+ +0x[0-9a-f]+-0x[0-9a-f]+ +lines? [0-9-]+ +-> B[0-9]+, B[0-9]+  \(jbe 0x[0-9a-f]+\)$" "$WORK/text.txt" &&
	grep -Eq "^  B[0-9]+ \(line $loop\): back edge from B[0-9]+ at 0x[0-9a-f]+ \(jne 0x[0-9a-f]+\)$" "$WORK/text.txt" ||
	{ cat "$WORK/text.txt"; fail "explore's text"; }
pass "explore FILE:LINE: the function holding the line, its marks, blocks and loop"

# Source gone: each line shown by its instructions; --source-dir finds it.
mkdir -p "$WORK/build" "$WORK/copy"
cp "$src" "$WORK/build/moved.c"
(cd "$WORK/build" && gcc -O2 -g -o "$WORK/moved" moved.c) || fail "cannot build moved.c"
rm "$WORK/build/moved.c"
cp "$src" "$WORK/copy/moved.c"
"$SONDE" explore -e "$WORK/moved" handle_request >"$WORK/gone.txt"
grep -q "^source: .*moved.c not found (lines by their instructions; --source-dir DIR to say where it is)$" "$WORK/gone.txt" &&
	grep -Eq "^ +$big +1 +1 *$" "$WORK/gone.txt" &&
	grep -Eq "^ {26} 0x[0-9a-f]+  jbe 0x[0-9a-f]+ +B0$" "$WORK/gone.txt" ||
	{ head -20 "$WORK/gone.txt"; fail "explore without the source"; }
"$SONDE" explore -e "$WORK/moved" handle_request --source-dir "$WORK/copy" >"$WORK/found.txt"
grep -q "^source: $WORK/copy/moved.c$" "$WORK/found.txt" && grep -Eq "^ +$big +1 +1 +if \(len > 4096\)" "$WORK/found.txt" ||
	{ head -12 "$WORK/found.txt"; fail "explore --source-dir"; }
pass "explore: a source file gone shows the instructions per line; --source-dir finds it"

# Without FUNC: the binary's functions, as nm lists them (address, size),
# each with its source line.
bin="$TARGETS/branches-gcc-O2"
"$SONDE" explore -e "$bin" --json | jq -r '.functions[] | select(.size > 0) | "\(.addr) \(.size) \(.name)"' | sort >"$WORK/fns.got"
nm -S --defined-only "$bin" | while read -r a s t name; do
	case $t in t | T | w | W) [ -n "$name" ] && [ $((16#$s)) -gt 0 ] && echo "$((16#$a)) $((16#$s)) $name" ;; esac
done | sort >"$WORK/fns.want"
diff "$WORK/fns.want" "$WORK/fns.got" >/dev/null || { diff "$WORK/fns.want" "$WORK/fns.got" | head; fail "explore -e BIN's functions are not nm's"; }
src_of=$("$SONDE" explore -e "$bin" --json | jq -r '.functions[] | select(.name == "handle_request") | "\(.file):\(.line)"')
[ "$src_of" = "branches.c:$(($(grep -n '^__attribute__((noinline)) unsigned long handle_request' "$src" | cut -d: -f1) + 1))" ] ||
	fail "explore -e BIN puts handle_request at $src_of"
pass "explore -e BIN: $(wc -l <"$WORK/fns.got") functions as nm lists them, handle_request at $src_of"
expect_error "no function 'handle_requst' in .*branches-gcc-O2; nearest: handle_request" "" -- \
	"$SONDE" explore -e "$bin" handle_requst
expect_error "no code at branches.c:1; nearest lines with code: [0-9]+$" "" -- \
	"$SONDE" explore -e "$bin" branches.c:1
expect_error "cannot find nosuch-binary: give its path, or a program in PATH" "" -- \
	"$SONDE" explore -e nosuch-binary main
expect_error "explore needs -e BINARY and at most one FUNC or FILE:LINE" "" -- "$SONDE" explore handle_request
expect_error "cannot read .*no-such.sonde|no-such.sonde" "" -- \
	"$SONDE" explore -e "$bin" handle_request --counts "$WORK/no-such.sonde"

# --counts: a recording's samples per line, and its probes' exact counts.
require_bpf
"$SONDE" record -F 999 --no-children --trace handle_request --trace "branch branches.c:$big" \
	-o "$WORK/run.sonde" -- "$bin" 30000 >/dev/null
"$SONDE" explore -e "$bin" handle_request --counts "$WORK/run.sonde" --json >"$WORK/counts.json"
in_stack() {
	sqlite3 "$WORK/run.sonde" "SELECT count(DISTINCT s.id) FROM samples s JOIN stack_frames sf ON sf.stack = s.stack
		JOIN frames f ON f.id = sf.frame WHERE f.name = '$1'"
}
want=$(in_stack handle_request) slow=$(in_stack slow_path)
got=$(jq .samples "$WORK/counts.json")
need_numbers "samples" "$want" "$slow" "$got"
assert_ge "samples in handle_request" "$want" 40
# Only samples taken by the default view: [sonde]'s own are left out.
own=$(sqlite3 "$WORK/run.sonde" "SELECT count(DISTINCT s.id) FROM samples s JOIN stack_frames sf ON sf.stack = s.stack
	JOIN frames f ON f.id = sf.frame JOIN stack_frames sh ON sh.stack = s.stack JOIN frames g ON g.id = sh.frame
	WHERE f.kind = 'overhead' AND g.name = 'handle_request'")
[ "$got" = $((want - own)) ] || fail "--counts: $got samples with handle_request, the recording has $want ($own of them sonde's own)"
slow_line=$(grep -n '		slow_path();' "$src" | cut -d: -f1)
line_total=$(jq --argjson l "$slow_line" '.lines[] | select(.line == $l) | .total' "$WORK/counts.json")
need_numbers "slow_path's line" "$line_total"
assert_le "line $slow_line's samples" "$line_total" "$slow"
assert_ge "line $slow_line's samples (slow_path's, less sonde's own)" "$line_total" $((slow - own))
sum=$(jq '[.lines[].total] | add' "$WORK/counts.json")
assert_ge "samples on the function's lines" "$sum" "$got"
probe=$(jq -c --argjson l "$big" '[.lines[] | select(.line == $l) | .probes[] | .count] | sort' "$WORK/counts.json")
[ "$probe" = "[3750,26250]" ] || fail "--counts: the branch at line $big shows $probe, the program went each way [3750,26250] times"
"$SONDE" explore -e "$bin" handle_request --counts "$WORK/run.sonde" >"$WORK/counts.txt"
grep -Eq "^ {26} branch #1 \(jbe 0x[0-9a-f]+\): taken 87.5% \(26250\), not taken 12.5% \(3750\) \(exact\)$" "$WORK/counts.txt" ||
	{ sed -n 1,30p "$WORK/counts.txt"; fail "--counts text: no exact branch row"; }
pass "explore --counts: $got samples of handle_request on its lines ($line_total on slow_path's call of $slow in slow_path), the branch's exact outcomes"
