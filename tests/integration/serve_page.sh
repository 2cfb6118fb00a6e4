# sonde serve's page in a real browser: Debian's chromium, headless, driven
# by playwright-core (tests/js/check_page.mjs) against `sonde serve` on the
# requests target (real BPF). Checks: 401 without the token, 403 with a
# wrong one; the live flame graph shows handle_request and grows; search
# highlights and its matched share is within 1 point of the share computed
# from /api/flame; zoom survives updates; the keys as in sonde top (z, Z, Backspace, n, Esc, ?, i, p, :); a
# probe added from the page shows in the probes table with calls and its
# histogram, a failing command shows its error; the histogram's p50, p95,
# p99 and threshold lines where its axis puts the status's values, their
# labels apart inside it; the status and hot list
# the page holds after their patches (status_delta, hot_delta) are what a
# new client is sent whole at the same moment, the patch in fewer bytes; a
# cross-origin POST with the token is refused
# (403) and changes nothing; the page says when the target exits and when
# the server is gone. Screenshots of each state go to
# $BUILD/test-artifacts/serve_page/. Skipped only when chromium cannot start.
. "$(dirname "$0")/lib.sh"
require_bpf
export SONDE_RUNTIME_DIR="$WORK/run"
require_browser serve_page

# ~100us a request, every 10th ~2ms more in slow_path: runs far longer than
# the test, which ends it (SIGTERM) to see the page notice. A window longer
# than the test: the view only gains samples, however little CPU the target
# gets on a busy machine (a 10 s window may hold fewer samples at 6 s than
# at 3 s).
"$SONDE" serve -F 499 --window 60s --trace handle_request -- "$TARGETS/requests" 10000000 \
	>"$WORK/serve.out" 2>"$WORK/serve.err" &
spid=$!
BG_PIDS+=("$spid") # stopped gently at the end (never SIGKILL first: it has probes attached)

url=$(serve_url "$spid" "$WORK/serve.out" "$WORK/serve.err")
pass "sonde serve: $url"

rc=0
node "$JS/check_page.mjs" "$url" "$ART" "$spid" || rc=$?
[ "$rc" -eq 77 ] && skip "chromium cannot start (see above)"
[ "$rc" -eq 0 ] || { cat "$WORK/serve.err" >&2; fail "the page checks failed (screenshots so far in $ART)"; }

# The page stopped the server with SIGINT: it ends cleanly.
src=0
for _ in $(seq 100); do
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.1
done
wait "$spid" || src=$?
[ "$src" -eq 0 ] || { cat "$WORK/serve.err" >&2; fail "sonde serve exited $src after SIGINT"; }
pass "sonde serve ended cleanly; screenshots in $ART: $(cd "$ART" && echo *.png)"
