# A session's breakpoints are in its own processes only (docs/safety.md):
# while sonde traces libc:memset and a function of libcounted for a
# command, a -p process, with --no-children or not, an unrelated process
# that maps both files keeps their code byte for byte as the files have it,
# while the target's processes (the command, a child it forks, a program
# its shell forks and execs) carry the breakpoints; and every call the
# targets make once they are traced counts. --exact-children puts the
# probes on the files for every process instead, as asked.
. "$(dirname "$0")/lib.sh"
require_bpf

T=$TARGETS
LIBC=$(ldd "$T/counted" | awk '$1 ~ /^libc\.so/ { print $3 }')
[ -f "$LIBC" ] || fail "no libc found for $T/counted"
LIBCOUNTED=$T/libcounted.so
own_calls() { sed -n 's/.*calls=\([0-9]*\).*/\1/p' "$1" | awk '{ s += $1 } END { print s + 0 }'; }

# The bystander: maps libc and libcounted, waits for its go file.
"$T/counted" 50 --go "$WORK/bystander.go" >"$WORK/bystander.out" &
bystander=$!
BG_PIDS+=("$bystander")

# scope NAME EXPECT_BYSTANDER SONDE_ARGS... : runs sonde on a command (or -p)
# that waits for $WORK/go, checks whose code has breakpoints, lets it go.
check_code() { # PID FILE want(clean|probed) WHO
	local out i
	# A new process gets its probes once sonde hears of its fork: wait for
	# them (bounded), on a busy machine that takes a while.
	if [ "$3" = probed ]; then
		for ((i = 0; i < 500; i++)); do
			code_is_file "$1" "$2" >/dev/null || break
			sleep 0.02
		done
	fi
	if out=$(code_is_file "$1" "$2"); then
		[ "$3" = clean ] || fail "$4 (PID $1): no breakpoint in its $(basename "$2"), it should be traced"
	else
		grep -q "differs from the file" <<<"$out" || fail "$4: $out"
		[ "$3" = probed ] || fail "$4 (PID $1): $out, but it is not a target"
	fi
}

run_scope() {
	local name=$1 bystander_want=$2
	shift 2
	rm -f "$WORK/go" "$WORK/go2" "$WORK/ready"
	"$SONDE" record -F 1 --trace libc:memset --trace "$LIBCOUNTED:counted_work" \
		--ready-file "$WORK/ready" -o "$WORK/$name.sonde" "$@" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" &
	local sonde=$!
	BG_PIDS+=("$sonde")
	wait_sampling "$sonde" "$WORK/ready" "$WORK/$name.err"
}

# --- a command: sh forks counted (which forks a child) and a second
# counted, exec'd in place of sh ------------------------------------------
run_scope cmd clean -- sh -c "'$T/counted' 200 --children 1 --go '$WORK/go'; '$T/counted' 300 --go '$WORK/go2'"
# The first counted and its child are waiting; sh waits for them.
for _ in $(seq 500); do
	kids=$(pgrep -f "counted 200 --children 1 --go $WORK/go" | sort -n | tr '\n' ' ')
	[ "$(wc -w <<<"$kids")" -ge 2 ] && break
	sleep 0.01
done
[ "$(wc -w <<<"$kids")" -ge 2 ] || fail "the command's counted and its child did not start: $kids"
sleep 0.2 # the child's fork record reached sonde: its probes are attached within ms
for p in $kids; do
	check_code "$p" "$LIBC" probed "the command's process"
	check_code "$p" "$LIBCOUNTED" probed "the command's process"
done
check_code "$bystander" "$LIBC" clean "the bystander"
check_code "$bystander" "$LIBCOUNTED" clean "the bystander"
touch "$WORK/go"
# The second program, once sh started it, waits for go2.
for _ in $(seq 500); do
	second=$(pgrep -f "counted 300 --go $WORK/go2" || true)
	[ -n "$second" ] && break
	sleep 0.01
done
[ -n "$second" ] || fail "the command's second program did not start"
sleep 0.2
check_code "$second" "$LIBCOUNTED" probed "the command's second program"
check_code "$bystander" "$LIBCOUNTED" clean "the bystander"
touch "$WORK/go2"
wait "${BG_PIDS[-1]}" || { cat "$WORK/cmd.err"; fail "sonde record of the command failed"; }
calls=$("$SONDE" report "$WORK/cmd.sonde" --json | jq '.probes[] | select(.name == "counted_work") | .calls')
[ "$calls" = 700 ] || { cat "$WORK/cmd.out" "$WORK/cmd.err"; fail "command: $calls counted_work calls traced, the programs made 700"; }
grep -q "new process.* got probes" "$WORK/cmd.err" || { cat "$WORK/cmd.err"; fail "no word on the processes followed"; }
pass "command: breakpoints in its 3 processes (forked, exec'd) only, not in a bystander mapping the same files; 700 of 700 calls"

# --- -p, with and without --no-children -------------------------------------
for mode in children no-children; do
	rm -f "$WORK/go"
	"$T/counted" 100 --children 2 --go "$WORK/go" >"$WORK/p-$mode.target" &
	parent=$!
	BG_PIDS+=("$parent")
	for _ in $(seq 500); do
		[ "$(pgrep -c -P "$parent" || true)" -ge 2 ] && break
		sleep 0.01
	done
	kids=$(pgrep -P "$parent" | tr '\n' ' ')
	[ "$(wc -w <<<"$kids")" = 2 ] || fail "-p: the target's children did not start"
	extra=()
	[ "$mode" = no-children ] && extra=(--no-children)
	run_scope "p-$mode" clean -p "$parent" "${extra[@]}" -d 30
	check_code "$parent" "$LIBC" probed "the -p process"
	for k in $kids; do
		check_code "$k" "$LIBC" "$([ "$mode" = children ] && echo probed || echo clean)" "a child of the -p process ($mode)"
	done
	check_code "$bystander" "$LIBC" clean "the bystander (-p, $mode)"
	touch "$WORK/go"
	wait "$parent"
	stop_gently "${BG_PIDS[-1]}"
	calls=$("$SONDE" report "$WORK/p-$mode.sonde" --json | jq '.probes[] | select(.name == "counted_work") | .calls')
	want=$([ "$mode" = children ] && echo 300 || echo 100)
	[ "$calls" = "$want" ] || fail "-p ($mode): $calls counted_work calls traced, expected $want"
	pass "-p ($mode): breakpoints in the target$([ "$mode" = children ] && echo " and its children") only; $calls calls"
done

# --- --exact-children: on the files for every process, as asked ------------
rm -f "$WORK/go"
run_scope exact probed --exact-children -- "$T/counted" 100 --go "$WORK/go"
check_code "$bystander" "$LIBCOUNTED" probed "the bystander under --exact-children"
touch "$WORK/go"
wait "${BG_PIDS[-1]}" || { cat "$WORK/exact.err"; fail "sonde record --exact-children failed"; }
pass "--exact-children: the probes are on the file for every process (the bystander too)"

# The bystander ran its calls right and untraced.
touch "$WORK/bystander.go"
wait "$bystander"
[ "$(own_calls "$WORK/bystander.out")" = 50 ] || fail "the bystander made $(own_calls "$WORK/bystander.out") calls"
pass "the bystander ran on untouched"
