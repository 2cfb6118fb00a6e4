# A live session steered from outside: sonde top -b prints snapshots while
# sonde ctl adds and removes probes, changes the view and saves; neither the
# target nor sonde restarts (same PIDs throughout), and the probes'
# statistics appear in the snapshots that follow. The command may be given
# as one quoted argument ('trace slow_path'), and --json shows the socket's
# answers as they are (ok/text/data, ok/error).
. "$(dirname "$0")/lib.sh"
require_bpf
export SONDE_RUNTIME_DIR="$WORK/run"

# ~100us per request, every 10th also ~2ms in slow_path; runs about a minute.
# It times each call itself (REQUESTS_TIMES: inner and outer wall time, CPU
# time): what the views must match, on an idle machine or a busy one.
REQUESTS_TIMES="$WORK/times" "$TARGETS/requests" 200000 >"$WORK/target.out" &
tpid=$!
BG_PIDS+=("$tpid")
wait_exec "$tpid" "$TARGETS/requests"
"$SONDE" top -b -i 0.5 -F 199 --top 200 -p "$tpid" >"$WORK/top.out" 2>"$WORK/top.err" &
spid=$!
BG_PIDS+=("$spid")

snapshots() { grep -c '^--- sonde top at' "$WORK/top.out" || true; }
# wait_for DESCRIPTION CODE: up to 15 s for the shell code to succeed.
wait_for() {
	local what=$1 code=$2
	for _ in $(seq 150); do
		eval "$code" >/dev/null 2>&1 && return 0
		kill -0 "$spid" 2>/dev/null || { cat "$WORK/top.err" >&2; fail "sonde top exited while waiting for $what"; }
		sleep 0.1
	done
	fail "timed out waiting for $what"
}
# The text of the newest complete snapshot (the one before the last header).
# Checks read it from a variable or file, never from a pipe that a reader
# may close early: with pipefail, the writer's SIGPIPE would fail the check.
last_snapshot() {
	awk '/^--- sonde top at/ { n++ } { s[n] = s[n] $0 "\n" } END { k = (n > 1) ? n - 1 : n; printf "%s", s[k] }' "$WORK/top.out"
}
# Waits for two more snapshots, so the next one read reflects a change.
next_snapshots() {
	local n
	n=$(snapshots)
	wait_for "two more snapshots" '[ "$(snapshots)" -ge '$((n + 2))' ]'
	sleep 0.6
}

wait_for "the session in sonde ctl --list" 'grep -q "^$spid " <<<"$("$SONDE" ctl --list)"'
pass "ctl --list shows session $spid"
socket=$(ls "$SONDE_RUNTIME_DIR"/*.sock)
[ "$(stat -c %a "$socket")" = 600 ] || fail "control socket mode is $(stat -c %a "$socket"), expected 600"
[ "$(stat -c %a "$SONDE_RUNTIME_DIR")" = 700 ] || fail "session dir mode is not 700"
pass "control socket and its directory are owner-only"

next_snapshots
snap=$(last_snapshot)
grep -q "^target:   PID $tpid\$" <<<"$snap" || fail "snapshot does not name the target PID $tpid"
grep -q '^PROBE ' <<<"$snap" && fail "a probe block before any probe was added"
grep -Eq '^ +[0-9.]+ +[0-9.]+  (parse_request|burn)' <<<"$snap" ||
	{ echo "$snap"; fail "hottest functions do not show the target's work"; }
pass "snapshots before tracing: target $tpid, hottest functions, no probes"

# Add probes mid-run (no session given: the only one running is used).
out=$("$SONDE" ctl trace handle_request 2>&1) || fail "ctl trace handle_request failed: $out"
[ "$out" = "tracing 1 function: handle_request" ] || fail "ctl trace answered '$out'"
# The command line as one argument, as `bpftrace -e` takes its program.
out=$("$SONDE" ctl "$spid" 'trace slow_path' 2>&1) || fail "ctl PID 'trace slow_path' failed: $out"
[ "$out" = "tracing 1 function: slow_path" ] || fail "ctl 'trace slow_path' answered '$out'"
[ "$("$SONDE" ctl 'help  sample-slow')" = "$("$SONDE" ctl help sample-slow)" ] ||
	fail "ctl 'help  sample-slow' differs from ctl help sample-slow"
pass "ctl 'COMMAND ARGS' works as ctl COMMAND ARGS"
expect_error "no function 'nosuchfn'" "" -- "$SONDE" ctl trace nosuchfn
expect_error "unknown command 'tarce'.*did you mean trace" "" -- "$SONDE" ctl tarce handle_request
kill -0 "$spid" || fail "a bad command ended the session"
# The answers as the socket sends them: one JSON object, status with data.
"$SONDE" ctl --json status >"$WORK/status.json" || fail "ctl --json status failed"
[ "$(wc -l <"$WORK/status.json")" = 1 ] || fail "ctl --json status: not one line"
jq -e --arg t "PID $tpid" '.ok == true and .data.target == $t and (.text | startswith("target:   " + $t + "\n"))
	and ([.data.probes[].name] == ["handle_request", "slow_path"])
	and ([.data.probes[].attached] == [true, true]) and (.data.samples | type) == "number"
	and ([.data.probes[].spec] == ["handle_request", "slow_path"])' \
	"$WORK/status.json" >/dev/null || { cat "$WORK/status.json"; fail "ctl --json status: unexpected answer"; }
rc=0
"$SONDE" ctl --json trace nosuchfn >"$WORK/error.json" || rc=$?
[ "$rc" = 1 ] || fail "ctl --json with an error answer exited $rc"
jq -e '.ok == false and (.error | startswith("trace nosuchfn: no function '"'"'nosuchfn'"'"'")) and (has("text") | not)' \
	"$WORK/error.json" >/dev/null || { cat "$WORK/error.json"; fail "ctl --json error: unexpected answer"; }
pass "ctl --json: status with its data, errors as ok:false"
next_snapshots
snap=$(last_snapshot)
grep -q '^PROBE handle_request$' <<<"$snap" || { echo "$snap"; fail "no handle_request block after ctl trace"; }
# probe_value PROBE LABEL N: field N of the first LABEL line in PROBE's block.
probe_value() {
	awk -v p="PROBE $1" -v l="$2" -v n="$3" \
		'$0 == p { in_p = 1 } in_p && $1 == l && !done { print $n; done = 1 }' <<<"$snap"
}
calls=$(probe_value handle_request calls: 2)
assert_ge "handle_request calls in the window" "$calls" 50
p50=$(probe_value handle_request latency: 3)
slow_p50=$(probe_value slow_path latency: 3)
to_us() { awk -v d="$1" 'BEGIN { v = d + 0; if (d ~ /ms$/) v *= 1000; else if (d ~ /ns$/) v /= 1000; else if (d ~ /[0-9]s$/) v *= 1e6; print v }'; }
# times_pct FILTER COLUMN P: the P-th percentile (us) of COLUMN (3 = inner,
# 4 = outer, 5 = CPU time) of the calls the target timed so far that pass
# FILTER (awk).
times_pct() {
	awk "$1 { print \$$2 / 1000 }" "$WORK/times" | sort -n |
		awk -v p="$3" '{ v[NR] = $1 } END { i = int(NR * p / 100); if (i < 1) i = 1; print v[i] }'
}
# The p50s lie among the target's own times: no less than 0.8 x the 25th
# percentile of its CPU times (a call takes at least its CPU time, however
# busy the machine), no more than 1.25 x the 75th of its outer times (on an
# idle machine both ~100 us and ~2.1 ms; slow_path is a slow call less its
# ~100 us parse_request).
assert_ge "handle_request p50 (us)" "$(to_us "$p50")" "$(awk -v v="$(times_pct 1 5 25)" 'BEGIN { print 0.8 * v }')"
assert_le "handle_request p50 (us)" "$(to_us "$p50")" "$(awk -v v="$(times_pct 1 4 75)" 'BEGIN { print 1.25 * v }')"
assert_ge "slow_path p50 (us)" "$(to_us "$slow_p50")" "$(awk -v v="$(times_pct '$2 % 10 == 9' 5 25)" 'BEGIN { print 0.8 * (v - 200) }')"
assert_le "slow_path p50 (us)" "$(to_us "$slow_p50")" "$(awk -v v="$(times_pct '$2 % 10 == 9' 4 75)" 'BEGIN { print 1.25 * v }')"
grep -q '^target:   PID '"$tpid"'$' <<<"$snap" || fail "target PID changed"

# A view on the slow calls: the samples there are in slow_path. A 3 s window,
# full of traced time (3 s after trace), makes the views' sample counts
# comparable.
"$SONDE" ctl window 3s >/dev/null || fail "ctl window failed"
sleep 3
out=$("$SONDE" ctl slow handle_request 1ms) || fail "ctl slow failed"
grep -q '^view: slow handle_request > 1ms' <<<"$out" || fail "ctl slow answered '$out'"
next_snapshots
snap=$(last_snapshot)
share=$(awk '/^HOTTEST FUNCTIONS/ { h = 1; next } h && $3 == "slow_path" && !done { print $2; done = 1 }' <<<"$snap")
[ -n "$share" ] || { echo "$snap"; fail "slow_path not among the hottest functions of the slow view"; }
assert_ge "slow_path total % in the slow view" "$share" 80
# The samples follow CPU time: the share of the target's CPU time spent in
# calls over 1 ms by its own clock (~2 ms of every ~3 ms on an idle machine;
# on a busy one fast calls preempted past 1 ms are slow calls too).
slow_cpu_pct=$(awk '{ all += $5; if ($4 > 1000000) slow += $5 } END { print 100 * slow / all }' "$WORK/times")
slow_pct=$(sed -n 's/^window: .* samples in view (\([0-9.]*\)%)$/\1/p' <<<"$snap")
assert_near "slow calls' share of the window's samples (%)" "${slow_pct:-0}" "$slow_cpu_pct" 12
# The fast calls: no slow_path (each ~2 ms call is > 1ms), and the two views
# split the samples about as the target splits its CPU time.
"$SONDE" ctl fast handle_request 1ms >/dev/null || fail "ctl fast failed"
next_snapshots
snap=$(last_snapshot)
fast_share=$(awk '/^HOTTEST FUNCTIONS/ { h = 1; next } h && $3 == "slow_path" && !done { print $2; done = 1 }' <<<"$snap")
assert_le "slow_path total % in the fast view" "${fast_share:-0}" 2
parse=$(awk '/^HOTTEST FUNCTIONS/ { h = 1; next } h && $3 == "parse_request" && !done { print $2; done = 1 }' <<<"$snap")
assert_ge "parse_request total % in the fast view" "${parse:-0}" 80
# (each view's share of its own window's samples: the two snapshots are
# seconds apart, and on a busy machine the target's sample rate changes
# in between)
fast_pct=$(sed -n 's/^window: .* samples in view (\([0-9.]*\)%)$/\1/p' <<<"$snap")
assert_near "fast calls' share of the window's samples (%)" "${fast_pct:-0}" \
	"$(awk -v s="$slow_cpu_pct" 'BEGIN { print 100 - s }')" 12
"$SONDE" ctl all >/dev/null || fail "ctl all failed"
"$SONDE" ctl window 10s >/dev/null || fail "ctl window failed"

# Exact counts: with the target stopped nothing is in flight, so the calls
# held match the kernel's count exactly.
kill -STOP "$tpid"
sleep 0.3
out=$("$SONDE" ctl save "$WORK/live.sonde") || fail "ctl save failed"
grep -q "^saved .* to $WORK/live.sonde\$" <<<"$out" || fail "ctl save answered '$out'"
kill -CONT "$tpid"
"$SONDE" report --json "$WORK/live.sonde" >"$WORK/live.json"
for f in handle_request slow_path; do
	got=$(jq --arg f "$f" '.probes[] | select(.name == $f) | .calls' "$WORK/live.json")
	kernel=$(jq --arg f "$f" '.probes[] | select(.name == $f) | .kernel_calls' "$WORK/live.json")
	assert_ge "$f calls saved" "$got" 1
	[ "$got" = "$kernel" ] || fail "$f: $got calls saved, the kernel counted $kernel"
done
hr=$(jq '.probes[] | select(.name == "handle_request") | .calls' "$WORK/live.json")
sp=$(jq '.probes[] | select(.name == "slow_path") | .calls' "$WORK/live.json")
assert_near "slow_path calls per 10 handle_request calls" "$(awk -v a="$sp" -v b="$hr" 'BEGIN { print 10 * a / b }')" 1 0.1
pass "saved recording: calls held = in-kernel counts"

# The session saves through the same outputs as every command: a device (a
# /dev/full of our own) or a link is refused, never replaced by the save.
mknod "$WORK/full" c 1 7
ln -s live.sonde "$WORK/link.sonde"
expect_error "cannot write $WORK/full: it is a character device, and a recording \(an SQLite database\) needs a regular file" "" -- \
	"$SONDE" ctl save "$WORK/full"
expect_error "cannot write $WORK/link.sonde: it is a symbolic link to the file $WORK/live.sonde" "" -- \
	"$SONDE" ctl save "$WORK/link.sonde"
[ -c "$WORK/full" ] && [ -L "$WORK/link.sonde" ] || fail "ctl save replaced a device or a link"
compgen -G "$WORK/*.tmp.*" >/dev/null && fail "ctl save left a temporary file: $(ls "$WORK"/*.tmp.*)"
# A save that failed keeps its recording in memory: the next save writes it.
out=$("$SONDE" ctl save "$WORK/kept.sonde") || fail "ctl save of the kept recording failed"
grep -q "kept since the save to $WORK/full failed) to $WORK/kept.sonde; save again" <<<"$out" ||
	fail "ctl save answered '$out'"
"$SONDE" report "$WORK/kept.sonde" >/dev/null || fail "the kept recording does not read back"
"$SONDE" report "$WORK/live.sonde" >/dev/null || fail "the saved recording changed"

out=$("$SONDE" ctl untrace slow_path) || fail "ctl untrace failed"
[ "$out" = "untraced 1 function (what they gathered stays)" ] || fail "ctl untrace answered '$out'"
next_snapshots
snap=$(last_snapshot)
grep -q '^PROBE slow_path (untraced)$' <<<"$snap" || fail "slow_path not shown as untraced"
out=$("$SONDE" ctl status) || fail "ctl status failed"
grep -q '^probe:    handle_request: ' <<<"$out" || fail "ctl status lacks the probe"
kill -0 "$tpid" && kill -0 "$spid" || fail "target or sonde restarted"
pass "same PIDs throughout: target $tpid, sonde $spid"

kill -INT "$spid"
rc=0
wait "$spid" || rc=$?
[ "$rc" = 0 ] || fail "sonde top exited $rc after SIGINT"
kill -0 "$tpid" || fail "the target did not survive the end of the session"
[ ! -e "$socket" ] || fail "the control socket was not removed"
expect_error "no sonde session is running" "" -- "$SONDE" ctl status

# Several processes: the tree and the stacks are rooted at process names.
# Both run until the test ends: on a busy machine sonde's start alone can
# outlast a few seconds of target.
"$TARGETS/cpusplit" 300 >/dev/null &
c=$!
BG_PIDS+=("$c")
"$TARGETS/requests" 100000000 >/dev/null &
r=$!
BG_PIDS+=("$r")
"$SONDE" top -b -i 1 -n 2 --top 50 --no-ctl -p "$c,$r" >"$WORK/two.out" 2>/dev/null
stacks=$(awk '/^--- sonde top at/ { n++ } n == 2 && /^HOTTEST STACKS/ { s = 1; next } s && /^$/ { s = 0 } s' "$WORK/two.out")
grep -Eq '^ +[0-9.]+  cpusplit;(_start;__libc_start_main_impl;)?__libc_start_call_main;main;run;work_hot;spin$' <<<"$stacks" ||
	{ echo "$stacks"; fail "no cpusplit-rooted stack"; }
grep -Eq '^ +[0-9.]+  requests;(clone3;)?start_thread;worker;handle_request;' <<<"$stacks" ||
	{ echo "$stacks"; fail "no requests-rooted stack"; }
pass "two processes: stacks rooted at cpusplit and requests"
# filter pid: only the samples of one of them (the same view `report --pid`
# takes).
"$SONDE" top -b -i 1 -n 2 --top 50 --no-ctl --cmd "filter pid $c" -p "$c,$r" >"$WORK/one.out" 2>/dev/null
grep -q "^filter: pid $c\$" "$WORK/one.out" || fail "filter pid $c was not answered: $(head -3 "$WORK/one.out")"
stacks=$(awk '/^--- sonde top at/ { n++ } n == 2 && /^HOTTEST STACKS/ { s = 1; next } s && /^$/ { s = 0 } s' "$WORK/one.out")
grep -Eq '^ +[0-9.]+  cpusplit;' <<<"$stacks" || { echo "$stacks"; fail "filter pid $c: no cpusplit stack"; }
grep -Eq '^ +[0-9.]+  requests;' <<<"$stacks" && { echo "$stacks"; fail "filter pid $c: a requests stack"; }
pass "filter pid: the stacks of that process only"
