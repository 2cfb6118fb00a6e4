# LIB:FUNC finds the library the target will load: through the program's
# RUNPATH ($ORIGIN), LD_LIBRARY_PATH before RUNPATH, an old-style RPATH
# before LD_LIBRARY_PATH — each with two copies of the library, so a probe on
# the wrong one counts 0 — and in a running target, the file it has mapped
# (one that maps none says so). Stripped binaries: the -dbgsym advice, and
# static functions found in installed debug files.
. "$(dirname "$0")/lib.sh"
require_bpf

lat_calls() { sed -n "s/^$2: \([0-9]*\) calls.*/\1/p" "$1" | tail -n1; }
T=$TARGETS
unset LD_LIBRARY_PATH LD_PRELOAD

# The library exists only in private directories: no system directory or
# cache entry, so nothing below can pass by finding it there.
! ldconfig -p | grep -q libprivcount || fail "libprivcount is in /etc/ld.so.cache: the test would prove nothing"
for d in /lib /usr/lib /lib64 /usr/lib64 /usr/local/lib /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu; do
	[ ! -e "$d/libprivcount.so" ] || fail "$d/libprivcount.so exists: the test would prove nothing"
done
expect_error "cannot find the binary or library 'libprivcount': true would not load it" "" -- \
	"$SONDE" lat libprivcount:priv_work -- /bin/true

# check NAME WANT_LIB_DIR [env...] -- command: the program reports the copy
# its loader chose; sonde must have counted every call on that copy.
check() {
	local what=$1 want=$2
	shift 3
	"$@" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "$what: sonde failed"; }
	local lib calls got
	lib=$(sed -n 's/^calls=.* lib=//p' "$WORK/out")
	calls=$(sed -n 's/^calls=\([0-9]*\) .*/\1/p' "$WORK/out")
	[ "$lib" = "$T/$want/libprivcount.so" ] || fail "$what: the loader chose $lib, the test expected $want (set-up)"
	got=$(lat_calls "$WORK/out" priv_work)
	[ "$got" = "$calls" ] && [ "$calls" = 1000 ] || { cat "$WORK/out" "$WORK/err"; fail "$what: $got calls traced, the program made $calls on $lib"; }
	pass "$what: $got calls on $want/libprivcount.so, as the program made"
}

check "RUNPATH \$ORIGIN/private-lib" private-lib -- \
	"$SONDE" lat libprivcount:priv_work -- "$T/privcount_runpath" 1000
check "LD_LIBRARY_PATH before RUNPATH" decoy-lib -- \
	env LD_LIBRARY_PATH="$T/decoy-lib" "$SONDE" lat libprivcount:priv_work -- "$T/privcount_runpath" 1000
check "RPATH before LD_LIBRARY_PATH" rpath-lib -- \
	env LD_LIBRARY_PATH="$T/decoy-lib" "$SONDE" lat libprivcount:priv_work -- "$T/privcount_rpath" 1000
check "LD_PRELOAD first" decoy-lib -- \
	env LD_PRELOAD="$T/decoy-lib/libprivcount.so" "$SONDE" lat libprivcount.so:priv_work -- \
	"$T/privcount_runpath" 1000

# --- a running target: the library it has mapped ---------------------------
LD_LIBRARY_PATH="$T/decoy-lib" "$T/privcount_runpath" 1000 --wait-traced >"$WORK/p.out" &
pid=$!
BG_PIDS+=("$pid")
for _ in $(seq 600); do grep -q libprivcount "/proc/$pid/maps" 2>/dev/null && break; sleep 0.05; done
"$SONDE" lat -p "$pid" libprivcount:priv_work libprivcount:priv_ready >"$WORK/p.lat" 2>"$WORK/p.err"
wait "$pid"
grep -qx "calls=1000 lib=$T/decoy-lib/libprivcount.so" "$WORK/p.out" || fail "-p: unexpected target output: $(cat "$WORK/p.out")"
[ "$(lat_calls "$WORK/p.lat" priv_work)" = 1000 ] || fail "-p: $(lat_calls "$WORK/p.lat" priv_work) calls traced on the mapped decoy-lib copy, expected 1000"
pass "-p: the mapped copy (decoy-lib, through LD_LIBRARY_PATH): 1000 calls"

# A library no process of the target maps: one line, non-zero exit.
sleep 600 &
idle=$!
BG_PIDS+=("$idle")
expect_error "trace libprivcount:priv_work: no process of the target maps a library or runs a program named 'libprivcount' \(searched PID $idle\)" "" -- \
	"$SONDE" lat -p "$idle" libprivcount:priv_work
expect_error "no process of the target maps a library or runs a program named 'libprivcount'" "$WORK/x.sonde" -- \
	"$SONDE" record -p "$idle" --trace libprivcount:priv_work -o "$WORK/x.sonde"
kill "$idle"

# --- stripped binaries -------------------------------------------------------
cp "$T/counted" "$WORK/stripped"
strip --strip-all "$WORK/stripped"
expect_error "^sonde: --trace counted_loop: no symbol counted_loop: $WORK/stripped has no debug info; install its -dbgsym package or build with -g\$" "$WORK/s.sonde" -- \
	"$SONDE" record --trace counted_loop -o "$WORK/s.sonde" -- "$WORK/stripped" 10

# libc has only .dynsym; with libc6-dbg its static functions are found in
# /usr/lib/debug (by build-id), as a -dbgsym package installs them.
libc=$(ldconfig -p | sed -n 's/^\s*libc.so.6 (libc6,x86-64) => //p' | head -n1)
id=$(readelf -n "$libc" 2>/dev/null | sed -n 's/.*Build ID: //p')
if [ -n "$id" ] && [ -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]; then
	readelf --dyn-syms -W "$libc" | grep -qw _int_malloc && fail "_int_malloc is exported: pick another static function"
	# --no-children on libc probes: on the target alone, not in every process on
	# the machine (a valgrind run there would stop with SIGTRAP; docs/safety.md).
	"$SONDE" lat --no-children libc:_int_malloc -- "$T/counted" 10 >"$WORK/dbg.out" 2>"$WORK/dbg.err" ||
		{ cat "$WORK/dbg.err"; fail "libc:_int_malloc (static, in libc6-dbg's debug file) was not found"; }
	assert_ge "_int_malloc calls" "$(lat_calls "$WORK/dbg.out" _int_malloc)" 1
else
	fail "libc6-dbg's debug file for $libc is not installed (scripts/bootstrap.sh installs it): the static-function lookup needs it"
fi
