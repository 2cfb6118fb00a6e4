# Probes go away whatever happens meanwhile: sonde killed with SIGKILL while
# the kernel removes its uprobes, a second SIGTERM then, a SIGTERM or a
# SIGKILL while it attaches them, the target exiting during the removal,
# several sondes on the same functions stopped at once. After each: the
# kernel logged no "failed to unregister, leaking uprobe" for any of sonde's
# tasks (its threads and its helper processes), no breakpoint is left in an
# unrelated process that maps the probed program, and processes running the
# probed code meanwhile all ended normally (no SIGTRAP, no crash).
. "$(dirname "$0")/lib.sh"
require_bpf
dmesg >/dev/null 2>&1 || skip "cannot read the kernel log (dmesg: $(dmesg 2>&1 >/dev/null | head -n1)); it is where a leaked uprobe shows"

M=$TARGETS/manyfuncs
leaks_now() { dmesg | grep "failed to unregister, leaking uprobe" || true; }
leaks_now >"$WORK/leaks.before" # lines logged before the test are not its own
TIDS=()

# note_tasks PID: remembers the threads of a sonde and of its child
# processes (the detacher), whose names the kernel log would give.
note_tasks() {
	local c
	TIDS+=($(ls "/proc/$1/task" 2>/dev/null))
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		TIDS+=($(ls "/proc/$c/task" 2>/dev/null))
	done
}

# helpers_of PID: sonde's helper processes (they attach and remove its
# uprobes, and finish that work when sonde dies).
helpers_of() {
	child_named "$1" sonde-attach
	child_named "$1" sonde-detach
}

# gone PID...: waits (up to 120 s) until these processes (not children of
# this shell) have ended.
gone() {
	local p i
	for p in "$@"; do
		for ((i = 0; i < 1200; i++)); do [ -e "/proc/$p" ] || break; sleep 0.1; done
		[ ! -e "/proc/$p" ] || fail "PID $p ($(cat "/proc/$p/comm" 2>/dev/null)) still running after 120 s"
	done
}

# no_leak WHAT: no "leaking uprobe" line since the test began from a task
# noted so far.
no_leak() {
	local lines
	lines=$({ leaks_now | grep -vxF -f "$WORK/leaks.before" || true; } | awk -v ids=" ${TIDS[*]} " '
		match($0, /:[0-9]+ failed to unregister/) {
			id = substr($0, RSTART + 1, RLENGTH - 1); sub(/ .*/, "", id)
			if (index(ids, " " id " ")) print
		}')
	[ -z "$lines" ] || fail "$1: the kernel leaked uprobes of sonde: $lines"
	pass "$1: no uprobe leaked (kernel log)"
}

# text_intact WHAT PID: no breakpoint left in the program's code in PID.
text_intact() {
	local why
	why=$(code_is_file "$2" "$M") || { echo "$1: $why"; return 1; }
}

# wait_for FILE PATTERN SECONDS
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	cat "$1" >&2
	fail "no '$2' in $1 after $3 s"
}

# Processes running the probed functions all along, one after the other,
# unrelated to the target; each must end with status 0.
touch "$WORK/go"
(
	runs=0
	while [ ! -e "$WORK/stop" ]; do
		"$M" "$WORK/go" 200 >/dev/null || echo "run $runs: status $?" >>"$WORK/loop.bad"
		runs=$((runs + 1))
	done
	echo "$runs" >"$WORK/loop.runs"
) &
loop=$!
BG_PIDS+=("$loop")

# maps PID: waits until process PID has mapped the program.
maps() {
	local i
	for ((i = 0; i < 600; i++)); do grep -q manyfuncs "/proc/$1/maps" 2>/dev/null && return 0; sleep 0.05; done
	fail "set-up: PID $1 never mapped $M"
}

# fresh NAME: a new target ($tpid: waits, maps the program) and a new
# unrelated process ($upid: maps the program, runs nothing until its case
# is over), for one case (manyfuncs waits at most 120 s for its go file).
fresh() {
	"$M" "$WORK/$1.tgo" 1 >/dev/null &
	tpid=$!
	BG_PIDS+=("$tpid")
	"$M" "$WORK/$1.ugo" 200 >"$WORK/$1.u" &
	upid=$!
	BG_PIDS+=("$upid")
	maps "$tpid"
	maps "$upid"
}

# start_sonde NAME [FUNC]: a sonde on the target with --exact-children, so
# that its probes are on the file for every process that maps the program
# (the unrelated ones too: what is left in them after a kill is what this
# test looks for; by default a session's breakpoints are in its own
# processes only, probes_scope.sh), in the background; sets $spid.
start_sonde() {
	"$SONDE" lat --exact-children -p "$tpid" "${2:-manyfuncs:f00*}" >"$WORK/$1.out" 2>"$WORK/$1.err" &
	spid=$!
	BG_PIDS+=("$spid")
}

# after NAME WHAT: what every case checks once its sondes and detachers are gone;
# then the case's unrelated process runs the functions once and must end
# normally.
after() {
	no_leak "$2"
	text_intact "$2" "$upid" || fail "$2: a breakpoint is left in the unrelated PID $upid"
	pass "$2: no breakpoint left in the unrelated PID $upid"
	touch "$WORK/$1.ugo" "$WORK/$1.tgo"
	local rc=0
	wait "$upid" || rc=$?
	[ "$rc" = 0 ] && grep -q "rounds=200 functions=300" "$WORK/$1.u" ||
		fail "$2: the unrelated PID $upid ended with status $rc ($(cat "$WORK/$1.u"))"
	pass "$2: the unrelated PID $upid then ran the functions and exited 0"
	wait "$tpid" 2>/dev/null || true
}

# The removal cases signal sonde while the helper removes its probes. With
# uprobe_multi links, a spec's functions are two links, removed in ~0.3 s:
# a signal sent once sonde says "traced" may land after the end. One link a
# uprobe (SONDE_UPROBE_MULTI=0, as on kernels before 6.6) goes through the
# same helper and hand-over with 8 links for 4 functions, removed one after
# the other (~0.15 s each, so ~1.2 s): the signal lands in the removal.
REMOVING='manyfuncs:f00[0-3]'

# 1. SIGKILL while the probes are being removed.
fresh kill
SONDE_UPROBE_MULTI=0 start_sonde kill "$REMOVING"
wait_for "$WORK/kill.err" "tracing 4 function" 120
text_intact probed "$upid" >/dev/null && fail "set-up: the probes are not in the unrelated process (they should be, with --exact-children)"
note_tasks "$spid"
helpers=$(helpers_of "$spid")
kill -TERM "$spid"
wait_for "$WORK/kill.err" "sonde: traced" 60 # the removal starts right after
kill -KILL "$spid"
rc=0
wait "$spid" 2>/dev/null || rc=$?
[ "$rc" = 137 ] || fail "sonde ended with status $rc, not by the SIGKILL it was sent (137)"
gone $helpers
after kill "SIGKILL during the removal"

# 2. A second SIGTERM during the removal: ignored, sonde ends normally.
fresh term2
SONDE_UPROBE_MULTI=0 start_sonde term2 "$REMOVING"
wait_for "$WORK/term2.err" "tracing 4 function" 120
note_tasks "$spid"
kill -TERM "$spid"
wait_for "$WORK/term2.err" "sonde: traced" 60
kill -TERM "$spid"
rc=0
wait "$spid" || rc=$?
[ "$rc" = 0 ] || fail "a second SIGTERM during the removal: sonde exited with $rc (143: killed by it mid-removal)"
pass "a second SIGTERM during the removal: sonde removed its probes and exited 0"
after term2 "a second SIGTERM during the removal"

# attaching NAME: waits until the sonde $spid has attached some of its 200
# probes (20 BPF links: more than its calibration and sampling hold), then
# stops it there (SIGSTOP), so what follows lands mid-attach however fast
# the machine attaches.
attaching() {
	local i
	for ((i = 0; i < 24000; i++)); do
		[ "$(find "/proc/$spid/fd" -lname 'anon_inode:bpf_link' 2>/dev/null | wc -l)" -ge 20 ] && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.005
	done
	kill -STOP "$spid" 2>/dev/null || fail "set-up: sonde ended before it attached its probes: $(cat "$WORK/$1.err")"
	grep -q "tracing" "$WORK/$1.err" && fail "set-up: sonde had attached all 200 probes before it was stopped"
	text_intact attaching "$upid" >/dev/null && fail "set-up: none of the probes is in the unrelated process"
	note_tasks "$spid"
}

# 3. SIGTERM while the probes are being attached (200 functions, one after
# the other): sonde stops attaching, removes what it attached, one line.
# With uprobe_multi links a spec's 200 functions are two links, made in one
# system call each by the helper: no moment to land in. One link a uprobe
# (SONDE_UPROBE_MULTI=0, as on kernels before 6.6) goes through the same
# helper, hand-over and take-back, with 400 moments to land in.
fresh attach
SONDE_UPROBE_MULTI=0 start_sonde attach 'manyfuncs:f[01]*'
attaching attach
kill -TERM "$spid"
kill -CONT "$spid"
rc=0
wait "$spid" || rc=$?
[ "$rc" = 1 ] || { cat "$WORK/attach.err"; fail "SIGTERM during the attach: sonde exited with $rc (143: killed by it mid-attach), expected 1"; }
grep -q "interrupted by a signal while attaching probes" "$WORK/attach.err" ||
	{ cat "$WORK/attach.err"; fail "SIGTERM during the attach: no line saying so"; }
pass "SIGTERM during the attach: $(cat "$WORK/attach.err")"
after attach "SIGTERM during the attach"

# 4. SIGKILL while the probes are being attached.
fresh akill
SONDE_UPROBE_MULTI=0 start_sonde akill 'manyfuncs:f[01]*'
attaching akill
helpers=$(helpers_of "$spid")
kill -KILL "$spid"
rc=0
wait "$spid" 2>/dev/null || rc=$?
[ "$rc" = 137 ] || fail "sonde ended with status $rc, not by the SIGKILL it was sent (137)"
gone $helpers
after akill "SIGKILL during the attach"

# 5. The target exits during the removal.
fresh texit
start_sonde texit
wait_for "$WORK/texit.err" "tracing 10 function" 120
note_tasks "$spid"
kill -TERM "$spid"
wait_for "$WORK/texit.err" "sonde: traced" 60
kill -TERM "$tpid"
rc=0
wait "$spid" || rc=$?
[ "$rc" = 0 ] || fail "target exiting during the removal: sonde exited with $rc"
after texit "the target exiting during the removal"

# 6. Three sondes on the same functions, stopped at once; one of them
# killed while they all remove their probes.
fresh many
pids=()
for k in 1 2 3; do
	SONDE_UPROBE_MULTI=0 start_sonde "many$k" "$REMOVING"
	pids+=("$spid")
done
for k in 1 2 3; do wait_for "$WORK/many$k.err" "tracing 4 function" 180; done
helpers=""
for p in "${pids[@]}"; do
	note_tasks "$p"
	helpers="$helpers $(helpers_of "$p")"
done
kill -TERM "${pids[@]}"
wait_for "$WORK/many2.err" "sonde: traced" 60
kill -KILL "${pids[1]}"
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
gone $helpers
after many "three sondes at once, one killed during the removal"

# The processes that ran the probed functions meanwhile: no signal.
touch "$WORK/stop"
wait "$loop"
[ ! -e "$WORK/loop.bad" ] || fail "processes running the probed functions meanwhile failed: $(cat "$WORK/loop.bad")"
assert_ge "unrelated processes that ran the probed functions during the test, all with status 0" "$(cat "$WORK/loop.runs")" 5
