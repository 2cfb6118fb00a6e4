# sonde serve FILE: a recording in the browser, offline. The requests target
# is recorded (real BPF, every call kept); then `sonde serve FILE` answers
# from it through the same view engine as a live session: status names the
# recording and holds exactly the target's calls and the recording's
# samples; the flame data shows where the target spent its time; the slow
# view and a band brushed over the slow calls are dominated by slow_path
# (>= 85%, as the CLI's test); commands that would steer the session
# (trace, untrace, sample, reset) answer 400 and one JSON error naming the
# recording while views and windows work; the event stream says "recording".
# Colours: every frame and hot function has sonde flame's SVG colour. The
# sandwich of burn (/api/sandwich); the latest slow calls (all over the
# threshold) and one call's flame chart (/api/flamechart), box for box as
# sonde flame --chart --span draws it.
# Then the page in a real browser (tests/js/check_recording.mjs: it says
# "recording", offers no probe to add; colours; the sandwich of burn;
# search; a refused trace; windows; the histogram's two modes, its p50,
# p95, p99 and threshold lines where its axis puts the status's values and
# their labels apart inside it (also for worker's one call), inner's
# histogram from under 1 ns drawn whole; a brushed
# slow band >= 85% slow_path; the slow calls and a flame chart; the heat
# map and the flame graph of a range dragged on it; the main flame graph
# drawn again to its box as each pane opens and closes, its root and
# handle_request in view, and each pane's graph with its root in view; screenshots
# in $BUILD/test-artifacts/serve_recording/; skipped only when chromium
# cannot start). Bad input: a missing file, a file and a target at once, a
# file and --trace.
. "$(dirname "$0")/lib.sh"
require_bpf
command -v curl >/dev/null || skip "needs curl"
export SONDE_RUNTIME_DIR="$WORK/run"

# ~100us a request, every 10th ~2ms more in slow_path; worker (the thread,
# one call) gives the page a histogram whose percentiles are one value,
# inner (3 calls a request of a few ns) one from under 1 ns.
"$SONDE" record -F 499 --all-calls --trace handle_request --trace worker --trace inner -o "$WORK/run.sonde" \
	-- "$TARGETS/requests" 4000 >"$WORK/target.out" 2>"$WORK/record.err" ||
	{ cat "$WORK/record.err" >&2; fail "sonde record failed"; }
requests=$(kv "$WORK/target.out" requests)
slow=$(kv "$WORK/target.out" slow)
samples=$(sqlite3 "$WORK/run.sonde" "SELECT count(*) FROM samples")
[ "$requests" = 4000 ] && [ "$slow" = 400 ] || fail "target: $(cat "$WORK/target.out")"
pass "recorded $requests requests ($slow slow), $samples samples"

expect_error "no such file|cannot open|No such" "" -- "$SONDE" serve --no-ctl "$WORK/nope.sonde"
expect_error "both a recording .* and a target" "" -- "$SONDE" serve -p 1 "$WORK/run.sonde"
expect_error "is a recording: tracing and sampling options" "" -- "$SONDE" serve --trace handle_request "$WORK/run.sonde"

"$SONDE" serve --no-ctl -i 0.5 "$WORK/run.sonde" >"$WORK/serve.out" 2>"$WORK/serve.err" &
spid=$!
BG_PIDS+=("$spid") # stopped gently at the end (never SIGKILL first: it has probes attached)
url=$(serve_url "$spid" "$WORK/serve.out" "$WORK/serve.err")
base=${url%%/\?*}
token=${url##*token=}
pass "sonde serve FILE: $url"

code() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }
q() { case "$1" in *\?*) echo "$base$1&token=$token" ;; *) echo "$base$1?token=$token" ;; esac; }
post() { code -X POST --data "$1" "$(q /api/command)"; }

[ "$(code "$base/api/status")" = 401 ] || fail "no token: $(cat "$WORK/body")"
[ "$(code "$(q /api/status)")" = 200 ] || fail "status: $(cat "$WORK/body")"
jq -e --arg f "$WORK/run.sonde" '.ok and .data.target == "recording " + $f and (.data.sampling | test("recorded: cpu-clock @ 499 Hz"))' \
	"$WORK/body" >/dev/null || fail "status of a recording: $(cat "$WORK/body")"
got_samples=$(jq '.data.samples' "$WORK/body")
[ "$got_samples" = "$samples" ] || fail "status says $got_samples samples, the recording holds $samples"
jq -e --argjson n "$requests" '.data.probes[] | select(.name == "handle_request") |
	.total_calls == $n and .calls_in_window == $n and .attached and (.buckets | length) > 5' "$WORK/body" >/dev/null ||
	fail "handle_request's calls: $(jq -c '.data.probes' "$WORK/body")"
pass "status: the recording, its $samples samples, all $requests calls of handle_request in the window, histogram buckets"

[ "$(code "$(q /api/flame)")" = 200 ] || fail "flame: $(cat "$WORK/body")"
share=$(jq '.data as $d | ([$d.added[] | select(.[2] == "handle_request") | .[4]] | add // 0) / ($d.total + 0.000001)' "$WORK/body")
assert_ge "share of samples under handle_request (API flame)" "$share" 0.8

# Colours: each node and hot function carries the SVG flame graph's colour
# of its frame (sonde flame on the same file), with or without NO_COLOR.
NO_COLOR=1 "$SONDE" flame "$WORK/run.sonde" -o "$WORK/run.svg" 2>/dev/null || fail "sonde flame failed"
for fn in burn handle_request slow_path; do
	svg=$({ grep -o "<g class=\"f\" data-name=\"$fn\"[^>]*><title>[^<]*</title><rect [^>]*fill=\"rgb([0-9,]*)\"" "$WORK/run.svg" || true; } |
		awk 'NR == 1' | sed 's/.*fill="rgb(\([0-9,]*\))"/\1/' | awk -F, '{ printf "#%02x%02x%02x", $1, $2, $3 }')
	api=$(jq -r --arg f "$fn" '[.data.added[] | select(.[2] == $f) | .[6]] | unique | join(" ")' "$WORK/body")
	[ -n "$svg" ] && [ "$svg" = "$api" ] || fail "colour of $fn: the SVG's '$svg', the API's '$api'"
done
burnc=$(jq -r '[.data.added[] | select(.[2] == "burn") | .[6]][0]' "$WORK/body")
curl -sN --max-time 2 "$(q /api/events)" >"$WORK/events0" || true
hotc=$(grep '^event: hot' -A1 "$WORK/events0" | sed -n 's/^data: //p' | awk 'NR == 1' |
	jq -r '.functions[] | select(.name == "burn") | .color')
[ "$hotc" = "$burnc" ] || fail "the hot row of burn has colour '$hotc', its frames '$burnc'"
pass "colours: burn, handle_request, slow_path as in the SVG (last: $svg); the hot row of burn $hotc"

# Steering is refused, in one JSON line naming the recording; views work.
for c in "trace parse_request" "untrace handle_request" "sample 99" "sample-in handle_request" "reset"; do
	[ "$(post "$c")" = 400 ] || fail "$c: not a 400: $(cat "$WORK/body")"
	jq -e --arg f "$WORK/run.sonde" '.ok == false and (.error | contains($f + " is a recording")) and (.error | contains("\n") | not)' \
		"$WORK/body" >/dev/null || fail "$c on a recording: $(cat "$WORK/body")"
done
pass "trace, untrace, sample, sample-in, reset: $(jq -r .error "$WORK/body")"

[ "$(post "slow handle_request 1ms")" = 200 ] && jq -e .ok "$WORK/body" >/dev/null || fail "slow view: $(cat "$WORK/body")"
code "$(q /api/flame)" >/dev/null
slowshare=$(jq '.data as $d | ([$d.added[] | select(.[2] == "slow_path") | .[4]] | add // 0) / ($d.total + 0.000001)' "$WORK/body")
assert_ge "slow_path's share of the slow view (> 1ms)" "$slowshare" 0.85
post "all" >/dev/null

[ "$(code "$(q "/api/band?probe=handle_request&min_ns=1000000&max_ns=10000000000")")" = 200 ] || fail "band: $(cat "$WORK/body")"
jq -e --argjson n "$requests" '.ok and (.data.calls_in + .data.calls_out == $n) and .data.samples_waiting == 0' "$WORK/body" >/dev/null ||
	fail "band counts: $(jq -c '.data | {calls_in, calls_out, samples_waiting}' "$WORK/body")"
calls_in=$(jq '.data.calls_in' "$WORK/body")
assert_ge "calls of 1 ms or more in the band" "$calls_in" "$slow"
bandshare=$(jq '.data.in as $d | ([$d.added[] | select(.[2] == "slow_path") | .[4]] | add // 0) / ($d.total + 0.000001)' "$WORK/body")
assert_ge "slow_path's share of the band's samples" "$bandshare" 0.85

[ "$(post "window 2s")" = 200 ] && jq -e .ok "$WORK/body" >/dev/null || fail "window: $(cat "$WORK/body")"
code "$(q /api/status)" >/dev/null
jq -e '.data.window == "last 2s"' "$WORK/body" >/dev/null || fail "window 2s: $(jq -c .data.window "$WORK/body")"
post "window 60s" >/dev/null
pass "views and windows work on the recording"

# The latest slow calls of handle_request, each with a flame chart: the
# boxes sonde flame --chart --span draws in its SVG, box for box (names
# without the SVG's kind suffix "_[k]": the API has the kind apart). Over
# 1 ms, the slow requests' own mark: with no slow view the list holds the
# calls over p95, and p95 is the top of its histogram bucket, which on a
# quiet machine can hold every slow request (~2.1 ms within a few us).
[ "$(post "slow handle_request 1ms")" = 200 ] && jq -e .ok "$WORK/body" >/dev/null || fail "slow view: $(cat "$WORK/body")"
code "$(q /api/status)" >/dev/null
nslow=$(jq '[.data.probes[] | select(.name == "handle_request") | .slow[]] | length' "$WORK/body")
[ "$nslow" -ge 1 ] || fail "no latest slow calls: $(jq -c '.data.probes[0].slow' "$WORK/body")"
jq -e --arg t "$(jq -r '.data.probes[0].slow_threshold_ns' "$WORK/body")" \
	'[.data.probes[0].slow[] | .duration_ns > ($t | tonumber) and .span_id > 0] | all' "$WORK/body" >/dev/null ||
	fail "a latest slow call is not slower than the threshold: $(jq -c '.data.probes[0] | {slow_threshold_ns, slow}' "$WORK/body")"
span=$(jq '[.data.probes[0].slow[] | select(.samples > 0)][0].span_id // .data.probes[0].slow[0].span_id' "$WORK/body")
[ "$(code "$(q "/api/flamechart?span=$span")")" = 200 ] || fail "flamechart: $(cat "$WORK/body")"
jq -r '.data.boxes[] | "\(.[3]) \(.[0]) \(.[1] - .[0]) \(.[2]) \(.[6])"' "$WORK/body" >"$WORK/chart.api"
"$SONDE" flame "$WORK/run.sonde" --chart --span "$span" -o "$WORK/chart.svg" || fail "sonde flame --chart --span $span"
grep -o '<g class="f" [^>]*>' "$WORK/chart.svg" |
	sed 's/.*data-name="\([^"]*\)" data-start="\([0-9]*\)" data-dur="\([0-9]*\)" data-depth="\([0-9]*\)" data-samples="\([0-9]*\)".*/\1 \2 \3 \4 \5/' |
	sed 's/^\([^ ]*\)_\[[a-z]\] /\1 /' >"$WORK/chart.svgboxes" # the API gives the kind apart
[ -s "$WORK/chart.api" ] && cmp -s <(sort "$WORK/chart.api") <(sort "$WORK/chart.svgboxes") ||
	{ diff <(sort "$WORK/chart.api") <(sort "$WORK/chart.svgboxes") | head >&2; fail "the flame chart of span $span differs from the SVG's"; }
[ "$(code "$(q "/api/flamechart?span=999999999")")" = 400 ] || fail "an unknown span: $(cat "$WORK/body")"
pass "$nslow latest slow calls, all over the threshold; span $span's flame chart: $(wc -l <"$WORK/chart.api") boxes, as sonde flame --chart draws them"
post "all" >/dev/null

curl -sN --max-time 2 "$(q /api/events)" >"$WORK/events" || true
grep -q '^data: {"state":"recording"}' "$WORK/events" || fail "the event stream does not say recording: $(head -c 300 "$WORK/events")"
grep -q '^event: flame' "$WORK/events" || fail "no flame event for the recording"
# -i 0.5: 4 intervals in 2 s, but a recording's status never changes: one
nstatus=$(grep -c '^event: status' "$WORK/events" || true)
nhot=$(grep -c '^event: hot' "$WORK/events" || true)
[ "$nstatus" = 1 ] && [ "$nhot" = 1 ] ||
	fail "$nstatus status and $nhot hot events in 2 s for a recording: an unchanged one is sent again"
pass "event stream: state recording, a flame event, one status and one hot event (unchanged ones are not resent)"

# The subsecond heat map (/api/heatmap) holds every sample sonde report
# counts; the flame tree of a time range (/api/range) has the samples sonde
# flame --range draws for the same range.
report_samples=$("$SONDE" report "$WORK/run.sonde" | awk '$1 == "samples:" { print $2 }')
[ "$(code "$(q /api/heatmap)")" = 200 ] || fail "heatmap: $(cat "$WORK/body")"
jq -e --argjson n "$report_samples" '.data | .rows == 50 and .cols >= 2 and .total + .idle_dropped == $n and
	([.cells[][]] | add) == .total and (.cells | length) == .cols and all(.cells[]; length == 50)' "$WORK/body" >/dev/null ||
	fail "the heat map does not hold sonde report's $report_samples samples: $(jq -c '.data | del(.cells)' "$WORK/body")"
hstart=$(jq '.data.start_ns' "$WORK/body")
[ "$(code "$(q "/api/range?from_ns=$((hstart + 500000000))&to_ns=$((hstart + 1500000000))")")" = 200 ] ||
	fail "range: $(cat "$WORK/body")"
api_range=$(jq '.data.flame.total' "$WORK/body")
"$SONDE" flame "$WORK/run.sonde" --range 0.5-1.5 -o "$WORK/range.svg" || fail "sonde flame --range failed"
cli_range=$(grep -o '<title>all ([0-9]* samples' "$WORK/range.svg" | head -n1 | grep -o '[0-9]*' | head -n1)
[ -n "$cli_range" ] && [ "$api_range" = "$cli_range" ] && [ "$api_range" -gt 0 ] ||
	fail "/api/range over 0.5-1.5 s has $api_range samples, sonde flame --range 0.5-1.5 $cli_range"
[ "$(code "$(q "/api/range?from_ns=9&to_ns=3")")" = 400 ] && jq -e '.ok == false and (.error | test("empty range"))' "$WORK/body" >/dev/null ||
	fail "a backward range: $(cat "$WORK/body")"
[ "$(code "$(q "/api/heatmap?rows=0")")" = 400 ] || fail "rows=0: $(cat "$WORK/body")"
pass "heat map: $report_samples samples as sonde report; /api/range 0.5-1.5 s: $api_range samples as sonde flame --range"

# The page in a real browser.
require_browser serve_recording
rc=0
node "$JS/check_recording.mjs" "$url" "$ART" "$WORK/run.sonde" "$report_samples" || rc=$?
[ "$rc" -eq 77 ] && skip "chromium cannot start (see above)"
[ "$rc" -eq 0 ] || fail "the page checks on the recording failed (screenshots so far in $ART)"

kill -INT "$spid"
src=0
wait "$spid" || src=$?
[ "$src" -eq 0 ] || { cat "$WORK/serve.err" >&2; fail "sonde serve FILE exited $src after SIGINT"; }
grep -q "served $samples samples" "$WORK/serve.err" || fail "summary: $(cat "$WORK/serve.err")"
pass "Ctrl-C ends it cleanly: $(tail -n1 "$WORK/serve.err")"
