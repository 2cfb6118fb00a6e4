# Shared helpers for integration tests. Sourced; expects SONDE and TARGETS
# in the environment (CTest sets them). Exit 77 = skipped.
set -euo pipefail
: "${SONDE:?SONDE must point to the sonde binary}"
: "${TARGETS:?TARGETS must point to the built test targets}"

WORK=$(mktemp -d /tmp/sonde-test.XXXXXX)
BG_PIDS=()

# running PID: the process exists and has not ended (a child of this shell
# that ended stays a zombie until waited for).
running() {
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $st != Z* ]]
}

# stop_gently PID: SIGTERM, then up to 30 s for it to end (a sonde removes
# its probes first, ~0.2 s each); SIGKILL only after that, and said on
# stderr. Never SIGKILL first: a sonde killed while the kernel attaches or
# removes one of its uprobes can leave that uprobe in the kernel ("failed to
# unregister, leaking uprobe"; docs/safety.md).
stop_gently() {
	local p=$1 i
	running "$p" || { wait "$p" 2>/dev/null || true; return 0; }
	kill -TERM "$p" 2>/dev/null || true
	for ((i = 0; i < 300; i++)); do
		running "$p" || { wait "$p" 2>/dev/null || true; return 0; }
		sleep 0.1
	done
	echo "cleanup: PID $p ($(cat "/proc/$p/comm" 2>/dev/null)) still running 30 s after SIGTERM: sending SIGKILL" >&2
	kill -KILL "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
}

# code_is_file PID FILE: the code of FILE as process PID maps it (its
# executable mapping) is byte for byte the file's, i.e. no uprobe
# breakpoint is in it. Otherwise returns 1, saying why on stdout.
code_is_file() {
	local ino size range perms off dev inode path start end n
	ino=$(stat -Lc %i "$2")
	size=$(stat -Lc %s "$2")
	while read -r range perms off dev inode path; do
		[ "$perms" = r-xp ] && [ "$inode" = "$ino" ] || continue
		start=$((16#${range%-*}))
		end=$((16#${range#*-}))
		off=$((16#$off))
		n=$((end - start))
		[ $((off + n)) -le "$size" ] || n=$((size - off))
		cmp -s -n "$n" <(dd if="/proc/$1/mem" bs=4096 skip=$((start / 4096)) count=$(((n + 4095) / 4096)) 2>/dev/null) \
			<(dd if="$2" bs=4096 skip=$((off / 4096)) count=$(((n + 4095) / 4096)) 2>/dev/null) ||
			{ echo "PID $1 has code of $2 that differs from the file (a breakpoint in it)"; return 1; }
		return 0
	done <"/proc/$1/maps"
	echo "PID $1 does not map $2"
	return 1
}

# child_named PID NAME: the PID of a child process of PID named NAME (its
# command, once exec'd), or nothing.
child_named() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = "$2" ] && { echo "$c"; return 0; }
	done
	return 0
}

# (SONDE_TEST_KEEP=1 keeps the work folder, to look into a failure.)
cleanup() {
	for p in "${BG_PIDS[@]}"; do stop_gently "$p"; done
	if [ -n "${SONDE_TEST_KEEP:-}" ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# require_browser NAME: node, playwright-core in tests/js and Debian's
# chromium for a page test; sets JS (the checkers' folder) and ART (an empty
# folder for NAME's screenshots, $BUILD/test-artifacts/NAME).
require_browser() {
	JS="$SRC/tests/js"
	command -v node >/dev/null || fail "node is not installed: run scripts/bootstrap.sh test"
	[ -d "$JS/node_modules/playwright-core" ] ||
		fail "playwright-core is not installed in tests/js: run scripts/bootstrap.sh test"
	[ -x /usr/bin/chromium ] || skip "chromium cannot start: /usr/bin/chromium is not installed (scripts/bootstrap.sh test installs it)"
	ART="${BUILD:-$WORK}/test-artifacts/$1"
	rm -rf "$ART"
	mkdir -p "$ART"
}

require_bpf() {
	[ "$(id -u)" = 0 ] || skip "needs root to load BPF programs (CI runs as root)"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
}

# assert_near NAME ACTUAL EXPECTED TOLERANCE: |actual - expected| <= tolerance
# is_number VALUE: a decimal number (sign, digits, a fraction, an
# exponent), not "null", "", "abc" or "1e": awk compares those as strings,
# and a check on them would pass.
is_number() {
	[[ $1 =~ ^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]]
}
# need_numbers NAME VALUE...: fails unless every VALUE is a number.
need_numbers() {
	local what=$1 v
	shift
	for v in "$@"; do
		is_number "$v" || fail "$what: '$v' is not a number"
	done
}
assert_near() {
	need_numbers "$1" "$2" "$3" "$4"
	awk -v a="$2" -v e="$3" -v t="$4" 'BEGIN { d = a - e; if (d < 0) d = -d; exit !(d <= t) }' ||
		fail "$1: got $2, expected $3 ± $4"
	pass "$1: $2 (expected $3 ± $4)"
}
assert_ge() {
	need_numbers "$1" "$2" "$3"
	awk -v a="$2" -v m="$3" 'BEGIN { exit !(a >= m) }' || fail "$1: got $2, expected >= $3"
	pass "$1: $2 >= $3"
}
assert_le() {
	need_numbers "$1" "$2" "$3"
	awk -v a="$2" -v m="$3" 'BEGIN { exit !(a <= m) }' || fail "$1: got $2, expected <= $3"
	pass "$1: $2 <= $3"
}
function_share() {
	jq -r --arg f "$2" '([.functions[] | select(.name == $f) | .total] | add // 0) / .samples' "$1"
}

# hist_ranges REC PROBE: the kernel's histogram of PROBE's calls in a
# recording, a line per bucket "LO HI COUNT" (ns, [LO, HI)): the
# log-linear buckets of bpf/sonde_abi.h's sonde_hist_bucket, 16 a power
# of two from 16 ns, exact below.
hist_ranges() {
	sqlite3 -separator ' ' "$1" \
		"SELECT bucket, count FROM probe_hist WHERE probe = (SELECT id FROM probes WHERE name = '$2')" |
		awk '{
			b = $1
			if (b < 16) { lo = b; hi = b + 1 } else { k = int(b / 16) + 3; w = 2 ^ (k - 4); lo = 2 ^ k + (b % 16) * w; hi = lo + w }
			print lo, hi, $2
		}'
}

# run_quiet_and_loaded FN: FN quiet, then FN loaded with a CPU-bound
# process on every core (stopped after; the cleanup kills them on a failure).
run_quiet_and_loaded() {
	local fn=$1 hogs=() h
	"$fn" quiet
	for _ in $(seq "$(nproc)"); do
		(while :; do :; done) &
		hogs+=("$!")
		BG_PIDS+=("$!")
	done
	"$fn" loaded
	for h in "${hogs[@]}"; do kill "$h"; done
}

# assert_mode_medians LABEL REC PROBE SPLIT_NS
# The issue's property of the own-cost correction: the corrected durations
# of the calls a sample landed in are distributed as those of the calls
# none did, per mode (PROBE's calls split at SPLIT_NS; the recording must
# hold every call, --all-calls). A sample lands in a call as often as the
# call is on the CPU, which for the calls of a mode is as often as it is
# long, so the sampled calls' median is compared with the unsampled calls'
# median weighted by duration (what the sampled calls would be if a sample
# cost nothing): within 10% or 0.5 us, whichever is more, of the band
# between the unsampled calls' 40th and 60th percentiles by duration, with
# at least 30 sampled and 100 unsampled calls in each mode. In one mode
# the band is the median itself; where a mode holds two kinds of call near
# half each by duration (redis' LRANGE of 24.8 and 40.8 us: 0.92 and 0.45
# of the weight in one chroot run), the median of a few hundred sampled
# calls may fall anywhere between them (30.1 us there, against 24.8). Calls
# over 10 x SPLIT_NS are in neither mode: a call the host held off the CPU
# that long (one of 380 ms, among 3,217 of ~100 us, outweighed them all by
# duration and drew no sample) says nothing of what a sample costs.
assert_mode_medians() {
	local label=$1 rec=$2 probe=$3 split=$4 mode nu mu lo hi ns ms tol
	need_numbers "$label: split" "$split"
	sqlite3 "$rec" >"$WORK/modes.txt" <<SQL
WITH c AS MATERIALIZED (SELECT sp.duration_ns AS d, sp.duration_ns >= $split AS slow,
	EXISTS (SELECT 1 FROM sample_spans ss WHERE ss.span = sp.id) AS sampled
	FROM spans sp WHERE sp.probe = (SELECT id FROM probes WHERE name = '$probe')
	AND sp.duration_ns < 10 * $split),
u AS (SELECT slow, d, sum(d) OVER (PARTITION BY slow ORDER BY d ROWS UNBOUNDED PRECEDING) AS cum,
	sum(d) OVER (PARTITION BY slow) AS tot, count(*) OVER (PARTITION BY slow) AS n FROM c WHERE NOT sampled),
s AS (SELECT slow, d, row_number() OVER (PARTITION BY slow ORDER BY d) AS i,
	count(*) OVER (PARTITION BY slow) AS n FROM c WHERE sampled)
SELECT slow, 0, n, min(d), (SELECT min(d) FROM u u2 WHERE u2.slow = u.slow AND 10 * u2.cum >= 4 * u2.tot),
	(SELECT min(d) FROM u u3 WHERE u3.slow = u.slow AND 10 * u3.cum >= 6 * u3.tot)
	FROM u WHERE 2 * cum >= tot GROUP BY slow
UNION ALL
SELECT slow, 1, n, d, 0, 0 FROM s WHERE i = (n + 1) / 2 ORDER BY 1, 2;
SQL
	for mode in 0 1; do
		read -r nu mu lo hi <<<"$(awk -F'|' -v m="$mode" '$1 == m && $2 == 0 { print $3, $4, $5, $6 }' "$WORK/modes.txt")"
		read -r ns ms <<<"$(awk -F'|' -v m="$mode" '$1 == m && $2 == 1 { print $3, $4 }' "$WORK/modes.txt")"
		assert_ge "$label: sampled calls in mode $mode" "${ns:-}" 30
		assert_ge "$label: unsampled calls in mode $mode" "${nu:-}" 100
		need_numbers "$label: mode $mode's medians and band" "$mu" "$lo" "$hi" "$ms"
		tol=$(awk -v m="$mu" 'BEGIN { t = m * 0.1; print (t > 500 ? t : 500) }')
		assert_ge "$label: median corrected ns of sampled calls, mode $mode (unsampled, by duration: $mu, 40-60%: $lo-$hi)" \
			"$ms" "$(awk -v l="$lo" -v t="$tol" 'BEGIN { print l - t }')"
		assert_le "$label: median corrected ns of sampled calls, mode $mode (unsampled, by duration: $mu, 40-60%: $lo-$hi)" \
			"$ms" "$(awk -v h="$hi" -v t="$tol" 'BEGIN { print h + t }')"
	done
}

# assert_slow_fn_share REC ALL_JSON OUT_TXT VIEW_JSON VIEW INNER
# For the microcalls target (its handle calls, 1% slow in slow_fn): the
# share of VIEW_JSON's samples in slow_fn (the view `--slow handle:VIEW`,
# auto or p99) is at least what expected_slow_share predicts from the host's
# stalls of the calls no sample landed in, less its sampling error. The slow calls are
# those within 15% of the mode of the recording's calls nearest their mean
# by the target's own clock (OUT_TXT's slow_ns / slow: that clock holds
# the traps and samples); INNER is slow_fn's part of a slow call. Skips
# (77) when the host stalled so much that slow_fn could hold under half.
assert_slow_fn_share() {
	local rec=$1 all=$2 out=$3 json=$4 view=$5 inner=$6 j mean mode t_ns expected n
	j='.probes[] | select(.name == "handle")'
	mean=$(awk -v s="$(kv "$out" slow_ns)" -v n="$(kv "$out" slow)" 'BEGIN { if (n > 0) printf "%d", s / n }')
	need_numbers "the target's mean slow call (ns)" "$mean"
	mode=$(jq --argjson m "$mean" "[$j | .auto.modes[] | {ns, d: ((.ns / \$m) | log | fabs)}] | min_by(.d) | .ns" "$all")
	need_numbers "the slow calls' mode (ns)" "$mode"
	case $view in
	auto) t_ns=$(jq "$j | .auto.threshold_ns" "$all") ;;
	p99) t_ns=$(jq "$j | .p99_ns" "$all") ;;
	*) fail "assert_slow_fn_share: view $view is not auto or p99" ;;
	esac
	expected=$(expected_slow_share "$rec" handle "$t_ns" $((mode * 85 / 100)) $((mode * 115 / 100)) "$inner")
	need_numbers "expected slow_fn share ($view)" "$expected"
	awk -v e="$expected" 'BEGIN { exit !(e < 0.5) }' &&
		skip "the host stalled so many fast calls past the $view threshold that slow_fn can hold only $expected of the slow view: too few to tell sonde's errors from the host's"
	# The bound: the prediction less 0.03 and 3 standard deviations of a
	# share of the view's samples (0.10 for slow_microcalls' ~350, 0.15 for
	# own_cost's ~150): the prediction has its own spread (the few stalled
	# calls it is read from), so the views fall around it wider than their
	# samples alone would (own_cost, twelve runs on a busy 2-CPU VM whose
	# samples cost 50 us: -0.13..+0.06, standard deviation 0.06).
	n=$(jq .samples "$json")
	need_numbers "samples in the slow view ($view)" "$n"
	assert_ge "slow_fn share in slow calls ($view), against $expected expected from the host's stalls of unsampled calls" \
		"$(function_share "$json" slow_fn)" \
		"$(awk -v e="$expected" -v n="$n" 'BEGIN { print e - 0.03 - 3 * sqrt(e * (1 - e) / (n > 0 ? n : 1)) }')"
}

# expected_slow_share REC PROBE THRESHOLD_NS SLOW_LO_NS SLOW_HI_NS INNER
# The share of a slow view's samples that a target's slow kind of call
# should hold when the host stalls some of its fast calls past the
# threshold: a stalled call is slow (by the wall clock, sonde or not), and
# a sample lands in it in proportion to its length. Both are read from the
# calls no sample landed in (the kernel's histogram of every call less the
# sampled calls' records), as a sample does not make those slow: above the
# threshold, the slow calls are those in [SLOW_LO_NS, SLOW_HI_NS] (where the
# target's slow kind lies), the rest are stalled fast calls. INNER is the
# share of a slow call's samples in the code the view is checked for.
# Prints the expected share (0-1), weighing each call by its time up to the
# sampling period (the recording's): a stall longer than that draws one
# sample, not more, as the sampler's timer fires once when the host gives
# the CPU back.
expected_slow_share() {
	local rec=$1 probe=$2 thr=$3 lo=$4 hi=$5 inner=$6 h period
	period=$(sqlite3 "$rec" "SELECT CAST(1e9 / value AS INTEGER) FROM meta WHERE key = 'frequency_hz'")
	need_numbers "expected_slow_share" "$thr" "$lo" "$hi" "$inner" "$period"
	h="(SELECT id FROM probes WHERE name = '$probe')"
	{
		hist_ranges "$rec" "$probe" | sed 's/^/h /'
		sqlite3 -separator ' ' "$rec" "SELECT 's', duration_ns FROM spans sp WHERE probe = $h AND EXISTS (SELECT 1 FROM sample_spans x WHERE x.span = sp.id)"
	} | awk -v t="$thr" -v lo="$lo" -v hi="$hi" -v inner="$inner" -v period="$period" '
		function add(v, n) {
			if (v <= t) return
			if (v >= lo && v <= hi) slow_ns += n * v; else stall_ns += n * (v < period ? v : period)
		}
		$1 == "h" { add(($2 + $3) / 2, $4) }
		$1 == "s" { add($2, -1) }
		END {
			if (stall_ns < 0) stall_ns = 0
			if (slow_ns <= 0) { print "none"; exit }
			printf "%.4f\n", inner * slow_ns / (slow_ns + stall_ns)
		}'
}

# Reads key=value from a target's output line.
kv() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -n1; }

# Expects a command to fail with exit code != 0, exactly one line on stderr
# matching PATTERN, and no file at OUTPUT (if given).
# usage: expect_error PATTERN OUTPUT -- command...
expect_error() {
	local pattern=$1 output=$2
	shift 3
	local rc=0
	"$@" >"$WORK/stdout" 2>"$WORK/stderr" || rc=$?
	[ "$rc" -ne 0 ] || fail "expected failure from: $*"
	local lines
	lines=$(wc -l <"$WORK/stderr")
	[ "$lines" -eq 1 ] || { cat "$WORK/stderr" >&2; fail "expected one error line from: $* (got $lines)"; }
	grep -Eq -- "$pattern" "$WORK/stderr" || { cat "$WORK/stderr" >&2; fail "error of '$*' does not match /$pattern/"; }
	if [ -n "$output" ] && compgen -G "$output*" >/dev/null; then
		fail "'$*' left an output file: $(ls "$output"*)"
	fi
	pass "error (exit $rc): $(cat "$WORK/stderr")"
}

# ---- what a target actually got, for tests that must pass on a busy machine --
# Sample counts follow the CPU time a target got, not the wall time: on a
# machine whose other processes keep a core busy a target spinning for 2 s
# may get 1 s of CPU. These helpers read the target's own numbers.

# meta VALUE of a recording: meta FILE KEY
meta() { sqlite3 "$1" "SELECT value FROM meta WHERE key = '$2'"; }

# pyenv_pythons WHAT: pyenv's 3.10.13, 3.11.7, 3.12.1 and 3.13.0 (the
# interpreters the bootstrap installs) into the array pythons, PYENV their
# versions folder; skips, saying WHAT is checked on each, when one is missing.
pyenv_pythons() {
	PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
	pythons=()
	local v
	for v in 3.10.13 3.11.7 3.12.1 3.13.0; do
		[ -x "$PYENV/$v/bin/python${v%.*}" ] ||
			skip "pyenv's Python $v is not installed ($PYENV/$v): $1 checked on each of 3.10 to 3.13"
		pythons+=("$PYENV/$v/bin/python${v%.*}")
	done
}

# watch_cpu FILE PID...: starts tests/targets/cpuwatch, which writes every
# millisecond the CPU time each process has had (the kernel's count for all
# its threads), with CLOCK_MONOTONIC, the clock of a recording's start_ns and
# end_ns. Stopped at exit.
watch_cpu() {
	local file=$1
	shift
	"$TARGETS/cpuwatch" "$file" "$@" &
	BG_PIDS+=($!)
}

# cpu_in_recording FILE PID RECORDING: the seconds of CPU process PID got
# between the recording's start_ns and end_ns (linear between cpuwatch's
# readings, which are 1 ms apart; a process gone before end_ns keeps its last
# reading).
cpu_in_recording() {
	local start end
	start=$(meta "$3" start_ns)
	end=$(meta "$3" end_ns)
	awk -v p="$2" -v s="$start" -v e="$end" '
		$2 == p { n++; t[n] = $1; c[n] = $3 }
		function at(x,   i) {
			if (x >= t[n]) return c[n]
			for (i = 2; i <= n; i++)
				if (t[i] >= x) return c[i - 1] + (c[i] - c[i - 1]) * (x - t[i - 1]) / (t[i] - t[i - 1])
		}
		END {
			if (n < 2 || t[1] > s) { print "cpuwatch has no reading of PID " p " before the recording started" > "/dev/stderr"; exit 1 }
			printf "%.4f\n", (at(e) - at(s)) / 1e9
		}' "$1"
}

# wait_sampling PID READY [ERR]: waits until the sonde process PID, started
# with --ready-file READY, is ready: every probe attached, sampling on, a
# live frontend's --cmd commands run (sonde then writes its PID to READY).
# Not its perf events: its start-up calibration opens some too, and a target
# let go then runs its first calls unsampled and untraced. ERR: sonde's
# stderr, shown when it ends first.
wait_sampling() {
	local i
	for ((i = 0; i < 6000; i++)); do
		if [ -s "$2" ]; then
			[ "$(cat "$2")" = "$1" ] || fail "ready file $2 holds '$(cat "$2")', not sonde's PID $1"
			return 0
		fi
		running "$1" || { [ -z "${3:-}" ] || cat "$3" >&2; fail "sonde (PID $1) ended before it was ready"; }
		sleep 0.01
	done
	fail "sonde (PID $1) was not ready after 60 s"
}

# assert_samples_match_cpu NAME SAMPLES CPU_S HZ: SAMPLES is CPU_S seconds at
# HZ, within 5% + 3 sqrt(expected) + 3. A CPU's timer samples whoever runs
# when it fires: a target alone on a CPU gets every tick, one sharing it gets
# each with the chance of running then, a binomial count (3 standard
# deviations at most sqrt(expected)). CPU_S must be substantial (>= 0.2 s)
# so a target that got nothing does not pass.
assert_samples_match_cpu() {
	assert_ge "$1: CPU time the target got (s)" "$3" 0.2
	assert_near "$1 (${3}s of CPU at $4 Hz)" "$2" "$(awk -v c="$3" -v f="$4" 'BEGIN { print c * f }')" \
		"$(awk -v c="$3" -v f="$4" 'BEGIN { e = c * f; print e * 0.05 + 3 * sqrt(e) + 3 }')"
}

# go_when_sampling OUT TARGET_PID SONDE_PID READY [ERR]: lets a target started
# with its "wait" argument (cpusplit, threads, blocking) begin once it is
# ready (says so in OUT) and sonde is (wait_sampling), so no sleep decides
# what the recording holds.
go_when_sampling() {
	local i
	for ((i = 0; i < 6000; i++)); do
		grep -q ' ready' "$1" 2>/dev/null && break
		sleep 0.01
	done
	grep -q ' ready' "$1" || fail "target $2 never said it was ready"
	wait_sampling "$3" "$4" "${5:-}"
	kill -USR1 "$2"
}

# wait_exec PID PROGRAM: waits until the background job PID runs PROGRAM (a
# job started with & is a copy of the shell until it has exec'd, and sonde
# attached to it then would take the shell for the target's program).
wait_exec() {
	local i want
	want=$(readlink -f "$2")
	for ((i = 0; i < 6000; i++)); do
		[ "$(readlink -f "/proc/$1/exe" 2>/dev/null)" = "$want" ] && return 0
		sleep 0.01
	done
	fail "process $1 never ran $2"
}

# assert_share NAME SHARE EXPECTED SAMPLES: a function's share of SAMPLES
# samples is the EXPECTED share the target measured itself, within 0.02 + 3
# standard deviations of a share counted from that many samples (few on a
# busy machine, where the target gets little CPU).
assert_share() {
	assert_near "$1 (of $4 samples)" "$2" "$3" \
		"$(awk -v e="$3" -v n="$4" 'BEGIN { if (n < 1) n = 1; print 0.02 + 3 * sqrt(e * (1 - e) / n) }')"
}

# folded_count FILE COMM RE: the samples of the folded stacks in FILE whose
# root (the process name) is COMM and that match extended regex RE (given
# through the environment, so its backslashes reach awk as written).
folded_count() {
	COMM="$2" RE="$3" awk 'index($0, ENVIRON["COMM"] ";") == 1 && $0 ~ ENVIRON["RE"] { s += $NF }
		END { print s + 0 }' "$1"
}

# ratio A B: A / B, 0 when B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print b ? a / b : 0 }'; }

# serve_url PID OUT ERR: waits (30 s at most) for `sonde serve` (PID,
# writing to OUT and ERR) to print its URL, checks its form and echoes it.
serve_url() {
	local pid=$1 out=$2 err=$3 url
	for _ in $(seq 300); do
		[ -s "$out" ] && break
		kill -0 "$pid" 2>/dev/null || { cat "$err" >&2; fail "sonde serve exited before printing its URL"; }
		sleep 0.1
	done
	url=$(head -n1 "$out")
	[[ "$url" =~ ^http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]{32}$ ]] || fail "first line is not the URL: '$url'"
	echo "$url"
}

# start_redis: a redis-server of the test's own, on a unix socket in $WORK
# (no TCP port: loopback only), no persistence; sets $sock and $rpid and
# waits (bounded) until it answers.
start_redis() {
	sock="$WORK/redis.sock"
	redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --save "" --appendonly no \
		--dir "$WORK" --logfile "$WORK/redis.log" --daemonize no &
	rpid=$!
	BG_PIDS+=("$rpid")
	local i
	for ((i = 0; i < 600; i++)); do
		[ "$(redis-cli -s "$sock" ping 2>/dev/null)" = PONG ] && return 0
		sleep 0.05
	done
	cat "$WORK/redis.log"
	fail "redis-server did not start"
}
