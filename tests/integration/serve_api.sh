# sonde serve against a real target (real BPF): the URL comes first, with
# its token; the API answers nothing without the token (401) or with a
# wrong one (403); /api/status and POST /api/command give the control
# socket's answers (a probe added over HTTP counts the target's calls; a bad
# or unknown command is a 400 with one error line and the session goes on);
# a cross-origin POST is refused and changes nothing; the flame data shows
# where the target spends its time; the event stream's flame deltas,
# applied as a page does, keep a consistent tree that grows; sonde ctl steers the same session; and
# Ctrl-C ends it cleanly.
. "$(dirname "$0")/lib.sh"
require_bpf
command -v curl >/dev/null || skip "needs curl"
command -v node >/dev/null || skip "needs node (scripts/bootstrap.sh test installs it)"
export SONDE_RUNTIME_DIR="$WORK/run"

# ~100us in parse_request per request, every 10th also ~2ms in slow_path:
# burn() is nearly all of its CPU time. Runs about a minute.
"$TARGETS/requests" 200000 >"$WORK/target.out" &
tpid=$!
BG_PIDS+=("$tpid")
wait_exec "$tpid" "$TARGETS/requests"
"$SONDE" serve -F 199 -i 0.5 -p "$tpid" >"$WORK/serve.out" 2>"$WORK/serve.err" &
spid=$!
BG_PIDS+=("$spid")
url=$(serve_url "$spid" "$WORK/serve.out" "$WORK/serve.err")
[[ "$url" =~ ^http://127\.0\.0\.1:([0-9]+)/\?token=([0-9a-f]{32})$ ]]
port=${BASH_REMATCH[1]}
token=${BASH_REMATCH[2]}
base="http://127.0.0.1:$port"
pass "serve printed $base/?token=..."

# code URL [curl args...]: the HTTP status; the body goes to $WORK/body.
code() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }
q() { case "$1" in *\?*) echo "$base$1&token=$token" ;; *) echo "$base$1?token=$token" ;; esac; }

[ "$(code "$base/api/status")" = 401 ] || fail "no token: $(cat "$WORK/body")"
jq -e '.ok == false and (.error | test("no token"))' "$WORK/body" >/dev/null || fail "401 body: $(cat "$WORK/body")"
[ "$(code "$base/api/status?token=ffffffffffffffffffffffffffffffff")" = 403 ] || fail "wrong token served"
pass "401 without the token, 403 with a wrong one"

[ "$(code "$(q /api/status)")" = 200 ] || fail "status: $(cat "$WORK/body")"
jq -e --arg p "$tpid" '.ok and (.data.target | contains($p)) and (.text | test("target:"))' "$WORK/body" >/dev/null ||
	fail "status answer: $(cat "$WORK/body")"
pass "/api/status is the control socket's status answer"

[ "$(code -X POST --data 'trace handle_request' "$(q /api/command)")" = 200 ] || fail "trace: $(cat "$WORK/body")"
jq -e '.ok and (.text | test("handle_request"))' "$WORK/body" >/dev/null || fail "trace answer: $(cat "$WORK/body")"
[ "$(code -X POST --data 'trace no_such_function_here' "$(q /api/command)")" = 400 ] || fail "bad trace: not a 400: $(cat "$WORK/body")"
jq -e '.ok == false and (.error | test("no_such_function_here")) and (.error | contains("\n") | not)' "$WORK/body" >/dev/null ||
	fail "bad command answer: $(cat "$WORK/body")"
[ "$(code -X POST --data 'no_such_command 1' "$(q /api/command)")" = 400 ] || fail "an unknown command was not a 400"
jq -e '.ok == false and (.error | length > 0) and (.error | contains("\n") | not)' "$WORK/body" >/dev/null ||
	fail "unknown command answer: $(cat "$WORK/body")"
[ "$(code -X POST --data '' "$(q /api/command)")" = 400 ] || fail "an empty command was not a 400"
pass "POST /api/command: a probe added (200), a bad one and an unknown command refused (400) in one line"

# The probe counts the target's calls.
calls=0
for _ in $(seq 100); do
	code "$(q /api/status)" >/dev/null
	calls=$(jq '[.data.probes[] | select(.name == "handle_request") | .total_calls] | add // 0' "$WORK/body")
	[ "$calls" -gt 100 ] && break
	sleep 0.1
done
assert_ge "handle_request calls counted over HTTP" "$calls" 100

# Another origin's page cannot steer the session, even with the token.
[ "$(code -X POST -H "Origin: http://evil.example" --data 'untrace handle_request' "$(q /api/command)")" = 403 ] ||
	fail "cross-origin POST not refused: $(cat "$WORK/body")"
code "$(q /api/status)" >/dev/null
jq -e '.data.probes[] | select(.name == "handle_request") | .attached' "$WORK/body" >/dev/null ||
	fail "the refused untrace detached the probe"
pass "cross-origin POST refused (403), the probe still attached"

# The flame data: burn() has nearly all samples, under handle_request.
sleep 2
[ "$(code "$(q /api/flame)")" = 200 ] || fail "flame: $(cat "$WORK/body")"
share=$(jq '.data as $d | ([$d.added[] | select(.[2] == "burn") | .[4]] | add // 0) / ($d.total + 0.000001)' "$WORK/body")
assert_ge "share of samples in burn (API flame)" "$share" 0.8
jq -e '.data.added | map(.[2]) | index("handle_request")' "$WORK/body" >/dev/null || fail "no handle_request in the flame data"

# The event stream: a full flame message, then deltas that keep the tree
# consistent, and the tree grows.
timeout 4 curl -sN "$(q /api/events)" >"$WORK/events.txt" || true
grep -q '^event: state' "$WORK/events.txt" || fail "no state event"
grep -q '^event: status' "$WORK/events.txt" || fail "no status event"
grep -q '^event: hot' "$WORK/events.txt" || fail "no hot event"
node "$SRC/tests/js/apply_flame_events.mjs" "$WORK/events.txt" >"$WORK/applied.json" || fail "the flame deltas do not apply"
jq -e '.fulls == 1 and .deltas >= 2' "$WORK/applied.json" >/dev/null || fail "flame events: $(cat "$WORK/applied.json")"
first_total=$(grep -m1 '"full":true' "$WORK/events.txt" | sed 's/^data: //' | jq .total)
last_total=$(jq .total "$WORK/applied.json")
assert_ge "tree total grows over the stream ($first_total -> $last_total)" "$last_total" "$((first_total + 1))"
pass "event stream: $(cat "$WORK/applied.json" | jq -c '{messages,fulls,deltas,nodes,total}')"

# The histogram and a band brushed on it: the slow calls (every 10th spends
# ~2ms in slow_path) against the others (~100us in parse_request).
code "$(q /api/status)" >/dev/null
jq -e '.data.probes[] | select(.name == "handle_request") | (.buckets | length > 1) and
	((.buckets | map(.[2]) | add) - .calls_in_window | fabs < 1) and
	(.buckets | all(.[0] < .[1]))' "$WORK/body" >/dev/null ||
	fail "probe buckets: $(jq -c '.data.probes' "$WORK/body")"
pass "status has the probe's histogram buckets, summing to its calls in the window"
[ "$(code "$(q '/api/band?probe=handle_request&min_ns=1000000&max_ns=1000000000')")" = 200 ] ||
	fail "band: $(cat "$WORK/body")"
band_share() { jq --arg side "$1" '.data[$side] as $t | ([$t.added[] | select(.[2] == "slow_path") | .[4]] | add // 0) / ($t.total + 0.000001)' "$WORK/body"; }
in_total=$(jq '.data.in.total' "$WORK/body")
assert_ge "samples inside the band's calls" "$in_total" 20
assert_ge "share of slow_path inside calls of 1ms..1s" "$(band_share in)" 0.85
assert_le "share of slow_path inside the other calls" "$(band_share out)" 0.03
jq -e '.data.calls_in > 0 and .data.calls_out > .data.calls_in' "$WORK/body" >/dev/null ||
	fail "band calls: $(jq -c '.data | {calls_in, calls_out}' "$WORK/body")"
[ "$(code "$(q '/api/band?probe=nope&min_ns=1&max_ns=2')")" = 400 ] || fail "band of an untraced function"
jq -e '.error | test("not traced")' "$WORK/body" >/dev/null || fail "band error: $(cat "$WORK/body")"
[ "$(code "$(q '/api/band?probe=handle_request&min_ns=5&max_ns=x')")" = 400 ] || fail "band with a bad bound"
pass "band: the slow calls' flame graph is slow_path, the others' is not"

# sonde ctl reaches the same session.
"$SONDE" ctl "$spid" 'untrace handle_request' >"$WORK/ctl.out" || fail "ctl: $(cat "$WORK/ctl.out")"
code "$(q /api/status)" >/dev/null
jq -e '[.data.probes[] | select(.name == "handle_request" and .attached)] | length == 0' "$WORK/body" >/dev/null ||
	fail "untrace over ctl not seen over HTTP: $(cat "$WORK/body")"
pass "sonde ctl steers the session the page shows"

kill -INT "$spid"
rc=0
wait "$spid" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/serve.err" >&2; fail "sonde serve exited $rc at Ctrl-C"; }
[ "$(code "$(q /api/status)")" = 000 ] || fail "the server still answers after Ctrl-C"
pass "Ctrl-C ends the session and the server"
