# Predicates select calls (--trace 'FUNC VAR... if EXPR'): requests'
# handle_request(id) takes the ~2 ms slow path exactly when id % 10 == 9,
# so 'handle_request id if id % 10 == 9' over N requests is N/10 calls, all
# slow. The probe's calls, histogram, percentiles, auto modes, slow and fast
# classes, the samples joined to its calls (report --in/--slow/--fast --by,
# flame graphs) are those N/10 calls, while `entered` counts all N; live
# (sonde top's trace and status, ctl by, save), in lat and in slow as in a
# recording. The percentiles are checked against the target's own timing of
# its matching calls (REQUESTS_TIMES), which are 10x slower than the others:
# over all calls the median would be a fast call's. Nested calls that fail
# a predicate between calls that pass it (recurse n if n % 2 == 0) pair
# with their own returns. (longjmp and deep recursion: trace_longjmp.sh.)
. "$(dirname "$0")/lib.sh"
require_bpf
command -v jq >/dev/null || skip "needs jq"

N=1000
M=$((N / 10))
SPEC='handle_request id if id % 10 == 9'

# number NAME VALUE: VALUE is a number, else the check fails here.
number() { [[ $2 =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "$1 is '$2', not a number"; }
# quantile FILE COLUMN Q [MATCHING]: the Q quantile (0..1, nearest rank) of
# a column of the target's times (thread index inner outer cpu), over every
# request or (MATCHING=1) over those with index % 10 == 9.
quantile() {
	awk -v c="$2" -v m="${4:-0}" '!m || $2 % 10 == 9 { print $c }' "$1" | sort -n |
		awk -v q="$3" '{ v[NR] = $1 } END { i = int(NR * q + 0.999999); if (i < 1) i = 1; if (NR) print v[i] }'
}
# in_range NAME VALUE LO HI
in_range() {
	number "$1" "$2"
	awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }' ||
		fail "$1: $2, expected within [$3, $4]"
	pass "$1: $2 within [$3, $4]"
}
# timing_bounds TIMES: the target's figures of its matching calls:
# MED_LO/MED_HI (median inner and outer times, widened by sonde's own cost
# taken out of a call and a histogram bucket's width, 4.4%), MIN_LO, MAX_HI, and
# MED_ALL (the median over every call, for the message only).
timing_bounds() {
	[ "$(wc -l <"$1")" = "$N" ] || fail "the target timed $(wc -l <"$1") requests, expected $N"
	[ "$(awk '$2 % 10 == 9' "$1" | wc -l)" = "$M" ] || fail "the target's matching requests are not $M"
	MED_LO=$(awk -v v="$(quantile "$1" 3 0.5 1)" 'BEGIN { print int(v * 0.85) }')
	MED_HI=$(awk -v v="$(quantile "$1" 4 0.5 1)" 'BEGIN { print int(v * 1.1) }')
	MIN_LO=$(awk -v v="$(quantile "$1" 3 0 1)" 'BEGIN { print int(v * 0.85) }')
	MAX_HI=$(awk -v v="$(quantile "$1" 4 1 1)" 'BEGIN { print int(v * 1.1) }')
	MED_ALL=$(quantile "$1" 3 0.5)
	number "the target's median matching time" "$MED_LO"
}

# ---- recorded ---------------------------------------------------------------
REQUESTS_TIMES="$WORK/times" "$SONDE" record -F 499 --trace "$SPEC" --trace parse_request \
	--trace 'recurse n if n % 2 == 0' -o "$WORK/rec.sonde" -- "$TARGETS/requests" "$N" \
	>"$WORK/rec.out" 2>"$WORK/rec.err" || fail "record failed: $(cat "$WORK/rec.err")"
"$SONDE" report "$WORK/rec.sonde" --json >"$WORK/rec.json"
probe() { jq -e --arg f "$1" ".probes[] | select(.name == \$f) | $2" "$WORK/rec.json" || fail "report --json has no $2 for $1"; }

[ "$(probe handle_request .kernel_calls)" = "$M" ] ||
	fail "handle_request: the kernel timed $(probe handle_request .kernel_calls) calls, expected the $M where the predicate held"
[ "$(probe handle_request .calls)" = "$M" ] || fail "handle_request: $(probe handle_request .calls) calls, expected $M"
[ "$(probe handle_request '[.hist[].count] | add')" = "$M" ] ||
	fail "handle_request: its histogram holds $(probe handle_request '[.hist[].count] | add') calls, expected $M"
[ "$(probe handle_request .entered)" = "$N" ] || fail "handle_request: $(probe handle_request .entered) entered, expected all $N"
[ "$(probe handle_request .hits)" = "$M" ] || fail "handle_request: $(probe handle_request .hits) hits with values, expected $M"
[ "$(probe handle_request .values.id.min)" = 9 ] || fail "handle_request: the smallest id captured is not 9"
[ "$(probe parse_request .kernel_calls)" = "$N" ] || fail "parse_request (no predicate): $(probe parse_request .kernel_calls) calls, expected $N"
grep -q "^Traced calls of handle_request where id % 10 == 9: $M calls; the kernel counted $M completed of $N entered;" \
	<("$SONDE" report "$WORK/rec.sonde") || fail "report text: $("$SONDE" report "$WORK/rec.sonde" | grep 'calls of handle_request')"
pass "recorded: $M calls of handle_request where the predicate held (its histogram too), $N entered"

# Nested calls that fail between calls that pass: recurse(4) is 5 nested
# calls a request, of which n = 4, 2, 0 pass.
[ "$(probe recurse .kernel_calls)" = $((3 * N)) ] || fail "recurse n if n % 2 == 0: $(probe recurse .kernel_calls) calls timed, expected $((3 * N))"
[ "$(probe recurse .entered)" = $((5 * N)) ] || fail "recurse: $(probe recurse .entered) entered, expected $((5 * N))"
[ "$(meta "$WORK/rec.sonde" span_orphans)" = 0 ] || fail "$(meta "$WORK/rec.sonde" span_orphans) calls lost their return"
pass "recursion: $((3 * N)) of $((5 * N)) nested calls passed, each paired with its own return, none orphaned"

timing_bounds "$WORK/times"
in_range "p50 of handle_request's calls (the target's median over all its calls: $MED_ALL ns)" \
	"$(probe handle_request .p50_ns)" "$MED_LO" "$MED_HI"
in_range "min of handle_request's calls" "$(probe handle_request .min_ns)" "$MIN_LO" "$MAX_HI"
in_range "max of handle_request's calls" "$(probe handle_request .max_ns)" "$MIN_LO" "$MAX_HI"
low=$(probe handle_request "[.auto.modes[].ns | select(. < $MIN_LO)] | length")
[ "$low" = 0 ] || fail "auto: $low modes below the fastest matching call ($MIN_LO ns): $(probe handle_request .auto)"
pass "auto: every mode of the distribution lies among the matching calls"

# Samples joined to the probe's calls are in matching calls only.
"$SONDE" report "$WORK/rec.sonde" --in handle_request --by id --json >"$WORK/in.json"
jq -e --argjson m "$M" '(.by.rows | all(.value % 10 == 9)) and ([.by.rows[].calls] | add) == $m
	and ([.by.rows[].samples] | add) == .samples and .samples > 0' "$WORK/in.json" >/dev/null ||
	fail "--in handle_request --by id: $(jq -c '[.samples, [.by.rows[] | [.value, .calls, .samples]]]' "$WORK/in.json")"
total() { jq --arg f "$2" '[.functions[] | select(.name == $f) | .total] | add // 0' "$1"; }
all_slow=$(total "$WORK/rec.json" slow_path) in_slow=$(total "$WORK/in.json" slow_path)
all_parse=$(total "$WORK/rec.json" parse_request) in_parse=$(total "$WORK/in.json" parse_request)
number "slow_path samples" "$all_slow"
[ "$in_slow" = "$all_slow" ] || fail "--in handle_request: $in_slow of slow_path's $all_slow samples (it runs in matching calls only)"
assert_ge "parse_request samples left out of the view (in the $((N - M)) calls that failed the predicate)" \
	"$((all_parse - in_parse))" 1
view_samples() { "$SONDE" report "$WORK/rec.sonde" "$@" --json | jq -e .samples || fail "report $*"; }
[ "$(view_samples --fast handle_request:1ms)" = 0 ] || fail "--fast handle_request:1ms has samples: no matching call is fast"
[ "$(view_samples --slow handle_request:1ms)" = "$(jq .samples "$WORK/in.json")" ] ||
	fail "--slow handle_request:1ms: $(view_samples --slow handle_request:1ms) samples, --in: $(jq .samples "$WORK/in.json")"
"$SONDE" report "$WORK/rec.sonde" --slow handle_request --by id --json >"$WORK/slow.json"
jq -e '(.by.rows | all(.value % 10 == 9)) and ([.by.rows[].samples] | add // 0) == .samples' "$WORK/slow.json" >/dev/null ||
	fail "--slow handle_request --by id: $(jq -c '[.view, [.by.rows[] | [.value, .samples]]]' "$WORK/slow.json")"
pass "samples: the $(jq .samples "$WORK/in.json") inside handle_request's calls are in matching calls only (slow_path's all, parse_request's of failing calls none); --fast 1ms is empty"
"$SONDE" flame "$WORK/rec.sonde" --fast handle_request:1ms -o "$WORK/fast.svg"
grep -q 'data-name="all" data-start="0" data-total="0"' "$WORK/fast.svg" || fail "flame --fast handle_request:1ms is not empty"
grep -q "fast calls of handle_request (&lt;= 1.00ms, 1ms: 0 of $M calls)" "$WORK/fast.svg" || fail "flame --fast: subtitle $(grep -o 'subtitle[^<]*' "$WORK/fast.svg")"
"$SONDE" flame "$WORK/rec.sonde" --slow handle_request:1ms -o "$WORK/slow.svg"
grep -q "data-name=\"all\" data-start=\"0\" data-total=\"$(jq .samples "$WORK/in.json")\"" "$WORK/slow.svg" ||
	fail "flame --slow handle_request:1ms: $(grep -o 'data-name="all"[^>]*' "$WORK/slow.svg")"
pass "flame: --slow 1ms is every matching call's samples, --fast 1ms none, of $M calls"

# ---- lat and slow ----------------------------------------------------------
"$SONDE" lat "$SPEC" -- "$TARGETS/requests" "$N" >"$WORK/lat.out" 2>"$WORK/lat.err" || fail "lat failed: $(cat "$WORK/lat.err")"
grep -q "^handle_request where id % 10 == 9: $M calls of $N entered, mean" "$WORK/lat.out" || fail "lat: $(cat "$WORK/lat.out")"
[ "$(awk '/ : +[0-9]+ \|/ { split($0, a, ":"); s += a[2] + 0 } END { print s }' "$WORK/lat.out")" = "$M" ] ||
	fail "lat: the histogram's rows do not add up to $M"
pass "lat: $M calls of $N entered, the histogram of those"
"$SONDE" slow "$SPEC:1ms" -- "$TARGETS/requests" "$N" >"$WORK/slowcmd.out" 2>"$WORK/slowcmd.err" || fail "slow failed: $(cat "$WORK/slowcmd.err")"
lines=$(grep -c '^[0-9]\+ \+[0-9.]\+m\?s  handle_request  \[' "$WORK/slowcmd.out" || true)
[ "$lines" = "$M" ] || fail "slow $SPEC:1ms printed $lines calls, expected the $M matching ones (all over 1 ms)"
grep -q "slow calls of handle_request (> 1.00ms, 1ms: $M of $M calls)" "$WORK/slowcmd.out" || fail "slow: summary $(grep Summary "$WORK/slowcmd.out")"
pass "slow: exactly the $M matching calls printed as slow; none of the others"

# ---- live --------------------------------------------------------------------
# The target starts once requests_go is traced after the spec, so every
# request runs with the predicate in place; it stays until told, so the
# session can be asked about all of them.
export SONDE_RUNTIME_DIR="$WORK/run"
REQUESTS_WAIT_TRACED=go REQUESTS_LINGER="$WORK/linger" REQUESTS_TIMES="$WORK/live_times" \
	"$TARGETS/requests" "$N" >"$WORK/live_target.out" &
tpid=$!
BG_PIDS+=("$tpid")
wait_exec "$tpid" "$TARGETS/requests"
"$SONDE" top -b -i 0.3 -F 499 --window 60s -p "$tpid" --ready-file "$WORK/ready" >"$WORK/top.out" 2>"$WORK/top.err" &
spid=$!
BG_PIDS+=("$spid")
wait_sampling "$spid" "$WORK/ready" "$WORK/top.err"
"$SONDE" ctl "$spid" trace "$SPEC" >/dev/null || fail "ctl trace $SPEC failed"
"$SONDE" ctl "$spid" trace requests_go >/dev/null || fail "ctl trace requests_go failed"
for _ in $(seq 1200); do
	grep -q '^pid=' "$WORK/live_target.out" && break
	running "$tpid" || fail "the target ended: $(cat "$WORK/live_target.out")"
	sleep 0.1
done
grep -q "requests=$N " "$WORK/live_target.out" || fail "the target did not finish its requests: $(cat "$WORK/live_target.out")"
# status_probe FIELD: handle_request's FIELD in the status, once the
# kernel's counts of every request have been read (1 s: the refresh).
status_probe() {
	"$SONDE" ctl --json "$spid" status | jq -e --arg f "$1" '.data.probes[] | select(.name == "handle_request") | .[$f]' ||
		fail "ctl status: no $1 for handle_request"
}
# (the calls' records reach the window in batches, after the kernel's
# counts: wait for both, up to 10 s on a busy machine)
for _ in $(seq 100); do
	[ "$(status_probe total_calls)" = "$M" ] && [ "$(status_probe entered)" = "$N" ] &&
		[ "$(status_probe calls_in_window)" = "$M" ] && break
	sleep 0.1
done
[ "$(status_probe total_calls)" = "$M" ] || fail "live: $(status_probe total_calls) calls, expected the $M matching ones"
[ "$(status_probe entered)" = "$N" ] || fail "live: $(status_probe entered) entered, expected $N"
[ "$(status_probe calls_in_window)" = "$M" ] || fail "live: $(status_probe calls_in_window) calls in the window, expected $M"
[ "$(status_probe predicate)" = '"id % 10 == 9"' ] || fail "live: predicate $(status_probe predicate)"
"$SONDE" ctl "$spid" status | grep -q "^probe:    handle_request: .* $M total where its predicate held, of $N entered$" ||
	fail "live status text: $("$SONDE" ctl "$spid" status | grep 'probe: *handle_request')"
timing_bounds "$WORK/live_times"
in_range "live p50 (the target's median over all its calls: $MED_ALL ns)" "$(status_probe p50_ns)" "$MED_LO" "$MED_HI"
in_range "live max" "$(status_probe max_ns)" "$MIN_LO" "$MAX_HI"
pass "live: $M calls where the predicate held, $N entered, their percentiles"

"$SONDE" ctl "$spid" in handle_request >/dev/null || fail "ctl in handle_request failed"
"$SONDE" ctl "$spid" by id >"$WORK/by_live.txt" || fail "ctl by id failed: $(cat "$WORK/by_live.txt")"
awk -v m="$M" '/^  VALUE/ { t = 1; next } t && /^  \(/ { t = 0 } t { n++; c += $2; if ($1 !~ /^[0-9]+$/ || $1 % 10 != 9) bad++ }
	END { exit !(n > 0 && c == m && !bad) }' "$WORK/by_live.txt" || fail "live by id: $(cat "$WORK/by_live.txt")"
pass "live by id: the held calls are the $M matching ones, each with its id"
# A view rebuilt from what is held: fast calls (<= 1 ms) of the probe are none.
"$SONDE" ctl "$spid" fast handle_request:1ms >/dev/null || fail "ctl fast failed"
n=$(grep -c '^--- sonde top at' "$WORK/top.out" || true)
for _ in $(seq 150); do
	[ "$(grep -c '^--- sonde top at' "$WORK/top.out" || true)" -ge $((n + 2)) ] && break
	sleep 0.1
done
snap=$(awk '/^--- sonde top at/ { n++ } { s[n] = s[n] $0 "\n" } END { printf "%s", s[n - 1] }' "$WORK/top.out")
grep -q '^view:     fast handle_request' <<<"$snap" || fail "live: the view is not the fast calls: $snap"
grep -q '^window:   last 60s, 0 of [0-9]* samples in view' <<<"$snap" ||
	fail "live fast handle_request:1ms is not empty: $(grep '^window:' <<<"$snap")"
pass "live: no sample in a fast call of the probe"

"$SONDE" ctl "$spid" save "$WORK/live.sonde" >/dev/null || fail "ctl save failed"
"$SONDE" report "$WORK/live.sonde" --json >"$WORK/live.json"
jq -e --argjson m "$M" --argjson n "$N" '.probes[] | select(.name == "handle_request")
	| .kernel_calls == $m and .entered == $n and ([.hist[].count] | add) == $m' "$WORK/live.json" >/dev/null ||
	fail "saved: $(jq -c '.probes[] | select(.name == "handle_request") | [.kernel_calls, .entered]' "$WORK/live.json")"
pass "saved from the live session: $M calls, $N entered"

# One predicate per probe: a second spec that would change it is refused.
expect_error "handle_request is traced already: untrace it first to change what it captures" "" -- \
	"$SONDE" ctl "$spid" trace 'handle_request id if id > 5'
"$SONDE" ctl "$spid" untrace handle_request >/dev/null || fail "ctl untrace failed"
expect_error "handle_request was traced with 'if id % 10 == 9' in this session and its counts go on" "" -- \
	"$SONDE" ctl "$spid" trace 'handle_request if id > 5'
pass "a spec changing which calls a probe counts is refused in one line"
touch "$WORK/linger"
wait "$tpid" || fail "the target failed"
stop_gently "$spid"
