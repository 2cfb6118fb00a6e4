# An IFUNC symbol (libc's strlen: the loader picks an implementation for the
# CPU) is traced at the implementation the target uses, not at its resolver
# (which counted 2 of 100,000 calls); -v says which. strlens calls strlen
# exactly N times once its ready file exists.
. "$(dirname "$0")/lib.sh"
require_bpf
n=100000
calls() { "$SONDE" report "$1" --json | jq '.probes[] | select(.name == "strlen") | .calls'; }

# A command sonde starts: the choice its loader will make is sonde's own
# (the same libc file, CPU and environment).
touch "$WORK/ready"
# --no-children on libc probes: on the target alone, not in every process on
# the machine (a valgrind run there would stop with SIGTRAP; docs/safety.md).
"$SONDE" record -v --no-children --trace libc:strlen -o "$WORK/cmd.sonde" -- "$TARGETS/strlens" "$WORK/ready" "$n" \
	>"$WORK/cmd.out" 2>"$WORK/cmd.err"
grep -q "^calls=$n " "$WORK/cmd.out" || fail "strlens did not run: $(cat "$WORK/cmd.out")"
grep -Eq "^sonde: strlen is an IFUNC in .*libc\.so\.6: tracing __strlen_[a-z0-9_]+, the implementation sonde's own process \(the same file, CPU and environment\) uses$" "$WORK/cmd.err" ||
	{ cat "$WORK/cmd.err"; fail "-v does not say which strlen is traced"; }
[ "$(calls "$WORK/cmd.sonde")" = "$n" ] || fail "-- CMD: strlen counted $(calls "$WORK/cmd.sonde") calls, expected $n"
pass "-- CMD: libc:strlen counts exactly $n calls ($(grep -o 'tracing __strlen_[a-z0-9_]*' "$WORK/cmd.err"))"

# A running process (-p) is asked itself: the GOT slot its loader filled.
"$TARGETS/strlens" "$WORK/go" "$n" >"$WORK/p.out" &
tpid=$!
BG_PIDS+=("$tpid")
"$SONDE" record -v -p "$tpid" --no-children --trace libc:strlen -o "$WORK/p.sonde" --ready-file "$WORK/p.ready" \
	>/dev/null 2>"$WORK/p.err" &
spid=$!
BG_PIDS+=("$spid")
wait_sampling "$spid" "$WORK/p.ready" "$WORK/p.err"
touch "$WORK/go"
wait "$spid" || { cat "$WORK/p.err"; fail "record -p failed"; }
grep -q "^calls=$n " "$WORK/p.out" || fail "strlens (-p) did not run: $(cat "$WORK/p.out")"
grep -Eq "^sonde: strlen is an IFUNC in .*libc\.so\.6: tracing __strlen_[a-z0-9_]+, the implementation PID $tpid uses$" "$WORK/p.err" ||
	{ cat "$WORK/p.err"; fail "-v does not say which strlen PID $tpid uses"; }
[ "$(calls "$WORK/p.sonde")" = "$n" ] || fail "-p: strlen counted $(calls "$WORK/p.sonde") calls, expected $n"
pass "-p: libc:strlen counts exactly $n calls, as PID $tpid resolved it"

# A Debian program (sleep, linked with BIND_NOW): its own GOT answers.
sleep 30 &
dpid=$!
BG_PIDS+=("$dpid")
sleep 0.2
"$SONDE" record -v -p "$dpid" --no-children --trace libc:strlen --trace libc:memcpy -d 0.5 -o "$WORK/d.sonde" \
	>/dev/null 2>"$WORK/d.err"
grep -Eq "^sonde: strlen is an IFUNC in .*libc\.so\.6: tracing __strlen_[a-z0-9_]+, the implementation PID $dpid uses$" "$WORK/d.err" ||
	{ cat "$WORK/d.err"; fail "sleep's strlen not resolved"; }
grep -Eq "^sonde: memcpy is an IFUNC in .*libc\.so\.6: tracing __mem[a-z0-9_]+, the implementation PID $dpid uses$" "$WORK/d.err" ||
	{ cat "$WORK/d.err"; fail "sleep's memcpy not resolved"; }
pass "sleep's strlen and memcpy resolve to their implementations"
