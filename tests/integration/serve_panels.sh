# The page of sonde serve shows where time goes, in a real browser (Debian's
# chromium, headless, driven by tests/js/check_panels.mjs), on targets with
# known behaviour:
#  - off-CPU (blocking, serve --wall): each slow call's time split under
#    its row (on the CPU, off it by state and the function it waited in:
#    the TUI's split, from the status), a pipe wait off the CPU in read for
#    at least the target's BLOCK_MS, never longer than the call; the flame
#    graph counts wall-clock time, its state frames in the SVGs' colours.
#  - threads (threadstates): the Threads pane's button turns the sampler on
#    and each blocked thread shows the state, system call and traced call
#    it is in, the elapsed time of the call at least the target's own
#    (from when it said, inside the call, what it would do) and at most
#    20 ms more, the same rows as the `threads` command's text.
#  - line probes (lines, gcc -O2: a line inlined in two functions): the
#    line's row shows its hits, exactly the target's count, and in which
#    calls of handle_request and handle_batch it ran, the target's counts,
#    and the value it captures (v, always 1) read at every hit.
#  - the explorer (branches, gcc -O2): x on handle_request shows its lines
#    with sonde explore's sites and branches, its blocks as a graph (a box a
#    block, an edge a pair, the loop's back edge dashed), heat on the lines
#    with samples; a click on a line's branch button places the branch
#    probe and its outcomes show (one request in eight one way).
# Screenshots go to $BUILD/test-artifacts/serve_panels/. Skipped only when
# chromium cannot start.
. "$(dirname "$0")/lib.sh"
require_bpf
export SONDE_RUNTIME_DIR="$WORK/run"
require_browser serve_panels

spid=

# serve NAME ARGS...: starts sonde serve (output in $WORK/NAME.*), sets
# spid and url once it samples and every probe is attached.
serve() {
	local name=$1
	shift
	rm -f "$WORK/$name.ready"
	"$SONDE" serve --ready-file "$WORK/$name.ready" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	spid=$!
	BG_PIDS+=("$spid") # stopped gently (never SIGKILL first: it has probes attached)
	url=$(serve_url "$spid" "$WORK/$name.out" "$WORK/$name.err")
	wait_sampling "$spid" "$WORK/$name.ready" "$WORK/$name.err"
}

# panel NAME ARGS...: runs check_panels.mjs NAME against $url.
panel() {
	local name=$1 rc=0
	shift
	node "$JS/check_panels.mjs" "$name" "$url" "$ART" "$@" || rc=$?
	[ "$rc" -eq 77 ] && skip "chromium cannot start (see above)"
	[ "$rc" -eq 0 ] || { cat "$WORK/$name.err" >&2; fail "the $name panel checks failed (screenshots so far in $ART)"; }
	stop_gently "$spid"
}

# ---- off-CPU: every 4th request waits BLOCK_MS in read, nanosleep or a
# futex; the others spin 0.3 ms (slow: over 2 ms). Runs far longer than
# the check, which the page's session ends (SIGINT).
BLOCK_MS=4
serve offcpu -F 99 --wall --trace handle_request --cmd 'slow handle_request 2ms' \
	--target-output "$WORK/blocking.out" -- "$TARGETS/blocking" 10000000 "$BLOCK_MS"
panel offcpu "$BLOCK_MS"

# ---- threads: five threads block (read, nanosleep, a futex twice) or spin
# for HOLD_MS, longer than the check, which the page's session ends.
HOLD_MS=60000
serve threads --trace handle_request --target-output "$WORK/threadstates.out" \
	-- "$TARGETS/threadstates" "$HOLD_MS"
panel threads "$WORK/threadstates.out"

# ---- line probes: the target counts the line's executions itself and
# ends; the page shows the session's final data.
line=$(grep -n 'LINE_HIT' "$SRC/tests/targets/lines/lines.c" | tail -n1 | cut -d: -f1)
serve lines --no-children --trace handle_request --trace handle_batch --trace "lines.c:$line v" \
	--target-output "$WORK/lines.out" -- "$TARGETS/lines-gcc-O2" 30000
panel lines "lines.c:$line" "$WORK/lines.out"

# ---- the explorer: handle_request of the branches target, a branch probe
# placed by a click. Runs far longer than the check.
big=$(grep -n '/\* LINE_BIG \*/' "$SRC/tests/targets/branches/branches.c" | cut -d: -f1)
"$SONDE" explore -e "$TARGETS/branches-gcc-O2" handle_request --json >"$WORK/explore.json"
serve explore -F 199 --trace handle_request -- "$TARGETS/branches-gcc-O2" 1000000000
panel explore "$big" "$WORK/explore.json"
