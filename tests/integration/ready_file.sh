# --ready-file: once sonde has written its PID there, every probe is
# attached and sampling is on, in each command that samples or traces. A
# target let go at that moment has every call traced: sonde counts exactly
# the calls the target made (tests/targets/blocking, the first right after
# SIGUSR1; a target let go while sonde still calibrates its own costs, whose
# perf events and probes come first, would run some untraced). A run that
# fails leaves no ready file, not even an old one; a bad path is one line.
. "$(dirname "$0")/lib.sh"
require_bpf

# ready NAME COMMAND ARGS...: sonde COMMAND -p TARGET --ready-file F ARGS...
# on a new blocking target that is let go once F says sonde is ready; then
# the calls of handle_request sonde counted (its summary line) are all the
# target made. serve stays on its final data after the target ends: it is
# stopped then.
ready() {
	local name=$1 cmd=$2 target sonde calls want
	shift 2
	"$TARGETS/blocking" 24 1 wait >"$WORK/$name.out" &
	target=$!
	BG_PIDS+=("$target")
	wait_exec "$target" "$TARGETS/blocking"
	"$SONDE" "$cmd" -p "$target" --ready-file "$WORK/$name.ready" "$@" >"$WORK/$name.txt" 2>"$WORK/$name.err" &
	sonde=$!
	BG_PIDS+=("$sonde")
	go_when_sampling "$WORK/$name.out" "$target" "$sonde" "$WORK/$name.ready" "$WORK/$name.err"
	wait "$target"
	[ "$cmd" = serve ] && stop_gently "$sonde"
	wait "$sonde" || { cat "$WORK/$name.err"; fail "$name failed"; }
	want=$(kv "$WORK/$name.out" requests)
	calls=$(grep -o '[0-9]* traced calls' "$WORK/$name.err" | cut -d' ' -f1)
	[ "$calls" = "$want" ] || { cat "$WORK/$name.err"; fail "$name: $calls calls traced once ready, the target made $want"; }
	pass "$name: ready file held sonde's PID; all $want calls the target made then were traced"
}

ready record record --trace handle_request -o "$WORK/r.sonde"
ready lat lat handle_request
ready slow slow handle_request:1s
ready threads threads -b -i 10 --trace handle_request
ready top top -b -i 10 --no-ctl --trace handle_request
ready serve serve --no-ctl --trace handle_request

# A run that fails removes an old ready file and writes none; a path that
# cannot be a ready file is refused at once.
echo stale >"$WORK/old.ready"
expect_error "--trace no_such_function: no function 'no_such_function'" "" -- \
	"$SONDE" record --ready-file "$WORK/old.ready" --trace no_such_function -o "$WORK/x.sonde" -- "$TARGETS/blocking" 1
[ ! -e "$WORK/old.ready" ] || fail "a failed run left the old ready file"
pass "a failed run leaves no ready file"
expect_error "^sonde: --ready-file: .*$WORK" "" -- \
	"$SONDE" record --ready-file "$WORK" -o "$WORK/x.sonde" -- "$TARGETS/blocking" 1
