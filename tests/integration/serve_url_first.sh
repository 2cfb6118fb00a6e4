# sonde serve -- CMD: the URL is the first line of sonde's output even when
# the command writes to the same stdout at once. The command is held before
# its exec until the server listens and the URL is printed, so in every one
# of several runs the first line is the URL and the command's line follows
# (before the fix the command's line came first in 2 runs of 3). The URL
# answers at once (the server listened before the command ran).
. "$(dirname "$0")/lib.sh"
require_bpf
command -v curl >/dev/null || skip "needs curl"
export SONDE_RUNTIME_DIR="$WORK/run"

runs=4
for i in $(seq "$runs"); do
	out="$WORK/serve$i.out"
	"$SONDE" serve --no-ctl -F 49 -- /bin/echo "target-first $i" >"$out" 2>"$WORK/serve$i.err" &
	spid=$!
	BG_PIDS+=("$spid")
	# Both lines are there once the command ran (it exits at once; serve
	# stays on the final data until Ctrl-C).
	for _ in $(seq 300); do
		[ "$(wc -l <"$out")" -ge 2 ] && break
		running "$spid" || { cat "$WORK/serve$i.err" >&2; fail "run $i: sonde serve exited early"; }
		sleep 0.1
	done
	first=$(sed -n 1p "$out")
	second=$(sed -n 2p "$out")
	[[ "$first" =~ ^http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]{32}$ ]] ||
		fail "run $i: the first line is not the URL: '$first' (then '$second')"
	[ "$second" = "target-first $i" ] || fail "run $i: the command's line is not second: '$second'"
	[ "$(wc -l <"$out")" = 2 ] || fail "run $i: more than two lines: $(cat "$out")"
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$first")" = 200 ] || fail "run $i: the URL does not answer"
	kill -INT "$spid"
	rc=0
	wait "$spid" || rc=$?
	[ "$rc" = 0 ] || { cat "$WORK/serve$i.err" >&2; fail "run $i: sonde serve exited $rc at Ctrl-C"; }
done
pass "in $runs of $runs runs the URL was the first line and the command's line the second"
