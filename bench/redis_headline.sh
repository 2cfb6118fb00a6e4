#!/usr/bin/env bash
# The headline answer on redis-server (tests/integration/redis_headline.sh's
# mix: SET/GET from 4 clients and LRANGE of 600 elements from one at once),
# at 99 and 999 Hz, on a quiet machine and with a CPU-bound process on every
# core: the share of the slow view's samples in LRANGE code (auto, 2us,
# 5us), of the fast view's in LRANGE code, the sampled calls' corrected
# median against the unsampled ones' in the ~1 us mode, and a sample's cost
# as measured in the run against the calibration's figure.
#   bench/redis_headline.sh BUILD [BEFORE_SONDE]
# BEFORE_SONDE: another sonde binary (an older build) to run beside it.
set -euo pipefail
build=${1:-build}
before=${2:-}
cd "$(dirname "$0")/.."
sonde=$build/sonde
work=$(mktemp -d)
hogs=()
cleanup() {
	for h in "${hogs[@]}"; do kill "$h" 2>/dev/null || true; done
	[ -n "${rpid:-}" ] && kill "$rpid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
sock=$work/r.sock
redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --save "" --appendonly no \
	--dir "$work" --logfile "$work/log" --daemonize no &
rpid=$!
for _ in $(seq 100); do [ "$(redis-cli -s "$sock" ping 2>/dev/null)" = PONG ] && break; sleep 0.05; done
redis-cli -s "$sock" RPUSH mylist $(seq 600) >/dev/null

share() { # FOLDED -> "LRANGE SETGET" shares
	awk '{ n = $NF; t += n; if ($0 ~ /lrangeCommand|addListRangeReply|listTypeNext|quicklist/) a += n;
		if ($0 ~ /setCommand|getCommand|setGenericCommand|getGenericCommand/) b += n }
		END { printf "%.2f/%.2f", t ? a / t : 0, t ? b / t : 0 }' "$1"
}
one() { # SONDE HZ LOAD
	local s=$1 hz=$2 rec=$work/r.sonde
	rm -f "$work/ready" "$rec"
	"$s" record -p "$rpid" -F "$hz" --trace processCommand --buffer-mb 64 --all-calls \
		--ready-file "$work/ready" -o "$rec" 2>"$work/err" &
	local sp=$!
	for _ in $(seq 600); do [ -s "$work/ready" ] && break; sleep 0.05; done
	redis-benchmark -s "$sock" -c 4 -n 150000 -t set,get -q >/dev/null &
	local b1=$!
	redis-benchmark -s "$sock" -c 1 -n 15000 -q LRANGE mylist 0 599 >/dev/null &
	wait "$b1" $!
	kill -INT "$sp"
	wait "$sp"
	local row=""
	for v in "--slow processCommand:auto" "--slow processCommand:2us" "--slow processCommand:5us" \
		"--fast processCommand:auto"; do
		# shellcheck disable=SC2086
		"$s" report "$rec" --folded $v >"$work/f" 2>/dev/null || : >"$work/f"
		row+="$(share "$work/f") "
	done
	# The unsampled calls' median weighted by duration (what sampled calls
	# would be if samples cost nothing: a sample lands in a call as often
	# as it is long), then the sampled calls' plain median.
	local med
	med=$(sqlite3 "$rec" "WITH c AS (SELECT sp.duration_ns AS d, EXISTS (SELECT 1 FROM sample_spans ss WHERE ss.span = sp.id) AS s FROM spans sp WHERE sp.duration_ns < 8000),
		u AS (SELECT d, sum(d) OVER (ORDER BY d ROWS UNBOUNDED PRECEDING) AS cum, sum(d) OVER () AS tot FROM c WHERE NOT s),
		m AS (SELECT d, row_number() OVER (ORDER BY d) AS i, count(*) OVER () AS n FROM c WHERE s)
		SELECT (SELECT min(d) FROM u WHERE 2 * cum >= tot) || '/' || (SELECT d FROM m WHERE i = (n + 1) / 2)")
	local cost
	cost=$(sqlite3 "$rec" "SELECT printf('%.1f/%.1f', (SELECT value FROM meta WHERE key = 'calib_sample_full_ns') / 1000.0,
		(COALESCE((SELECT value FROM meta WHERE key = 'sample_charged_run_ns'), 0) + COALESCE((SELECT value FROM meta WHERE key = 'sample_charged_late_ns'), 0) + COALESCE((SELECT value FROM meta WHERE key = 'sample_charged_exit_ns'), 0) + (SELECT value FROM meta WHERE key = 'calib_sample_unseen_ns')) / 1000.0)")
	printf "%-7s %4s %-7s %s %-15s %s\n" "$3" "$hz" "$4" "$row" "$med" "$cost"
}
echo "load    Hz   sonde   LRANGE/SETGET share: slow auto  slow 2us  slow 5us  fast auto   median ns unsampled weighted/sampled (<8us)   sample us calibrated/charged"
for load in quiet loaded; do
	if [ "$load" = loaded ]; then
		for _ in $(seq "$(nproc)"); do (while :; do :; done) & hogs+=("$!"); done
	fi
	for hz in 99 999; do
		one "$sonde" "$hz" "$load" after
		[ -n "$before" ] && one "$before" "$hz" "$load" before
	done
done
