# One function named two ways is one probe: libc:getppid in a running
# target resolves to /proc/PID/root/usr/lib/.../libc.so.6, the full path to
# /usr/lib/... (and /lib/... through the /lib symlink): probes are keyed by
# (device, inode, offset), so the calls are not split between two probes
# (they were 0/N, with N returns without a call). strlens calls getppid
# exactly N times once its ready file exists.
. "$(dirname "$0")/lib.sh"
require_bpf
n=20000
libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null || true)
[ -f "$libc" ] || skip "no /lib/x86_64-linux-gnu/libc.so.6"

check() { # recording label
	"$SONDE" report "$1" --json >"$WORK/r.json"
	[ "$(jq '.probes | length' "$WORK/r.json")" = 1 ] || fail "$2: $(jq -c '[.probes[] | [.name, .binary, .calls]]' "$WORK/r.json") — expected one probe"
	[ "$(jq '.probes[0].calls' "$WORK/r.json")" = "$n" ] || fail "$2: $(jq '.probes[0].calls' "$WORK/r.json") calls, expected $n"
	[ "$(jq '.probes[0].kernel_calls' "$WORK/r.json")" = "$n" ] || fail "$2: in-kernel count $(jq '.probes[0].kernel_calls' "$WORK/r.json"), expected $n"
	[ "$(sqlite3 "$1" "SELECT value FROM meta WHERE key = 'span_orphans'")" = 0 ] || fail "$2: orphaned spans"
	pass "$2: one probe, exactly $n calls, no orphans"
}

# record -p with three names of one function.
"$TARGETS/strlens" "$WORK/go" "$n" getppid >"$WORK/t.out" &
tpid=$!
BG_PIDS+=("$tpid")
# --no-children on libc probes: on the target alone, not in every process on
# the machine (a valgrind run there would stop with SIGTRAP; docs/safety.md).
"$SONDE" record -v -p "$tpid" --no-children --trace libc:getppid --trace "$libc:getppid" \
	--trace /lib/x86_64-linux-gnu/libc.so.6:getppid -o "$WORK/p.sonde" --ready-file "$WORK/p.ready" \
	>/dev/null 2>"$WORK/p.err" &
spid=$!
BG_PIDS+=("$spid")
wait_sampling "$spid" "$WORK/p.ready" "$WORK/p.err"
touch "$WORK/go"
wait "$spid" || { cat "$WORK/p.err"; fail "record -p failed"; }
grep -q "^calls=$n " "$WORK/t.out" || fail "strlens did not run: $(cat "$WORK/t.out")"
check "$WORK/p.sonde" "record -p, three names"

# A live session: the second name finds the first's probe.
export SONDE_RUNTIME_DIR="$WORK/run"
rm -f "$WORK/go"
"$SONDE" top -b -i 0.5 --no-children --keep-calls 1000000 --target-output "$WORK/l.out" -- \
	"$TARGETS/strlens" "$WORK/go" "$n" getppid "$WORK/end" >/dev/null 2>"$WORK/l.err" &
lpid=$!
BG_PIDS+=("$lpid")
for _ in $(seq 150); do
	grep -q "^$lpid " <<<"$("$SONDE" ctl --list 2>/dev/null)" && break
	sleep 0.1
done
"$SONDE" ctl "$lpid" trace libc:getppid >/dev/null || fail "ctl trace libc:getppid"
"$SONDE" ctl "$lpid" trace "$libc:getppid" >/dev/null || fail "ctl trace $libc:getppid"
touch "$WORK/go"
for _ in $(seq 300); do
	grep -q '^calls=' "$WORK/l.out" 2>/dev/null && break
	sleep 0.1
done
sleep 1
"$SONDE" ctl "$lpid" save "$WORK/l.sonde" >/dev/null || fail "ctl save"
touch "$WORK/end"
check "$WORK/l.sonde" "live trace, two names"
