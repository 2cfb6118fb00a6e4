# The terminal UI of sonde top, driven through tmux: send keys, capture the
# pane, and check what it shows — the status line, the flame tree, search,
# zoom, invert, the detail line, the hottest functions, the probe panel, the
# command prompt, help, and a clean quit. Panel borders are "│" in a UTF-8
# locale and "x" (ncurses' line-drawing fallback) in others, so patterns
# take both.
. "$(dirname "$0")/lib.sh"
require_bpf
command -v tmux >/dev/null || skip "tmux is not installed (scripts/bootstrap.sh installs it)"
export SONDE_RUNTIME_DIR="$WORK/run"
sock="sonde-test-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; cleanup' EXIT

tmux -L "$sock" new-session -d -s top -x 160 -y 45 \
	"SONDE_RUNTIME_DIR='$SONDE_RUNTIME_DIR' '$SONDE' top -F 499 --trace handle_request -- '$TARGETS/requests' 1000000; echo \"EXITED \$?\"; sleep 60"
screen() { tmux -L "$sock" capture-pane -p -t top; }
keys() { tmux -L "$sock" send-keys -t top "$@"; }
# wait_screen WHAT REGEX: up to 15 s for the pane to show a line matching REGEX.
wait_screen() {
	for _ in $(seq 150); do
		grep -Eq -- "$2" <<<"$(screen)" && { pass "$1"; return 0; }
		sleep 0.1
	done
	screen >&2
	fail "$1: the screen never showed /$2/"
}
# wait_gone WHAT REGEX: up to 15 s for the pane to stop showing REGEX (the UI
# redraws when it gets to it, later on a busy machine).
wait_gone() {
	for _ in $(seq 150); do
		grep -Eq -- "$2" <<<"$(screen)" || { pass "$1"; return 0; }
		sleep 0.1
	done
	screen >&2
	fail "$1: the screen still shows /$2/"
}

wait_screen "status line" '^sonde top +command .* +[0-9.k]+ events/s +[0-9.k]+ calls/s +drops 0'
wait_screen "flame tree header" '^TOTAL%  SELF%  FUNCTION'
wait_screen "tree shows the request path" '^ *[0-9.]+% +[0-9.]+% +\[-\] handle_request'
wait_screen "hottest functions panel" 'HOTTEST FUNCTIONS'
wait_screen "hottest functions list burn" '(│|x) *[0-9.]+% +[0-9.]+% +burn'
wait_screen "probe panel lists handle_request" '(│|x)handle_requ[a-z.]* +[0-9.k]+ +[0-9.]+us'

# Search: burn is under both parse_request and slow_path.
keys / b u r n Enter
wait_screen "search finds burn" "match [0-9]+ of ([2-9]|[0-9]{2,}) for 'burn'"
keys Home n
wait_screen "n from the top goes to the first match" "match 1 of [0-9]+ for 'burn'"
keys n
wait_screen "n goes to the next match" "match 2 of [2-9][0-9]* for 'burn'"

# The detail line (once the search is cleared): where the selected function
# spends most of its samples, a line of burn's loop by the source.
keys Escape
loop=$(grep -nE 'while \(thread_cpu_now\(\) < end\)|for \(int i = 0; i < 200; i\+\+\)|x = x \* 6364136223846793005UL' \
	"$SRC/tests/targets/requests.c" | cut -d: -f1 | paste -sd'|')
wait_screen "detail line: burn's hottest line is in its loop" \
	"^burn  hottest line requests\.c:($loop) \([0-9.]+% of its samples\)"

# Zoom into the selected burn and back out.
keys z
wait_screen "zoom into burn" '^zoom: (all > |\.\.\.> )(clone3 > )?start_thread > worker > handle_request > .*burn'
keys Z
wait_screen "zoom out" 'not zoomed|^ CALL TREE'
wait_gone "zoomed out: no breadcrumb" '^zoom: all >'

# Invert: leaf functions first.
keys i
wait_screen "inverted tree" 'CALL TREE \(inverted'
keys i
wait_screen "back to the call tree" '^ CALL TREE  '

# The command prompt steers the session.
keys : 't' 'r' 'a' 'c' 'e' ' ' 's' 'l' 'o' 'w' '_' 'p' 'a' 't' 'h' Enter
wait_screen "prompt: trace slow_path answered" 'tracing 1 function: slow_path'
wait_screen "probe panel lists slow_path" 'slow_path +[0-9.k]+ +[0-9.]+ms'
keys : 't' 'a' 'r' 'c' 'e' ' ' 'x' Enter
wait_screen "prompt: a bad command is one line" "unknown command 'tarce': did you mean trace"
keys : 's' 'l' 'o' 'w' ' ' 'h' 'a' 'n' 'd' 'l' 'e' '_' 'r' 'e' 'q' 'u' 'e' 's' 't' ' ' '1' 'm' 's' Enter
wait_screen "prompt: view changed" 'view slow handle_request > 1ms'
wait_screen "the slow view is slow_path" '^ *[0-9.]+% +[0-9.]+% +\[-\] slow_path'

# sonde ctl reaches the same session while the UI runs.
out=$("$SONDE" ctl status) || fail "ctl status failed"
grep -q '^view:     slow handle_request > 1ms' <<<"$out" || fail "ctl status does not see the UI's view"
pass "sonde ctl steers the session behind the UI"

keys '?'
wait_screen "help overlay" 'sonde top: keys'
keys q
sleep 0.5
grep -q 'EXITED' <<<"$(screen)" && fail "q in the help overlay quit sonde top"
keys q
wait_screen "q quits cleanly" '^EXITED 0$'

# A command that ends: the UI stays on the final data until q, and the
# command's output went to --target-output instead of over the screen.
# The new session starts before the old one is killed: killing the server's
# last session makes it exit, and a new-session racing that exit could
# connect to the dying server ("server exited unexpectedly").
tmux -L "$sock" new-session -d -s top2 -x 160 -y 45 \
	"SONDE_RUNTIME_DIR='$SONDE_RUNTIME_DIR' '$SONDE' top -F 499 --target-output '$WORK/target.out' -- '$TARGETS/requests' 3000; echo \"EXITED \$?\"; sleep 60"
tmux -L "$sock" kill-session -t top
tmux -L "$sock" rename-session -t top2 top
wait_screen "the end of the command is shown" 'sampling stopped: the targets exited'
wait_screen "the final tree stays" '^ *[0-9.]+% +[0-9.]+% +\[-\] handle_request'
grep -Eq '^sonde top ' <<<"$(screen)" || { screen >&2; fail "the status line scrolled away"; }
grep -q '^pid=[0-9]* requests=3000 slow=300$' "$WORK/target.out" || fail "the command's output is not in --target-output"
pass "the command's output went to --target-output"
keys : t r a c e Space s l o w _ p a t h Enter
wait_screen "no probes once the session ended" 'the session has ended \(the targets exited\)'
keys q
wait_screen "q quits after the end" '^EXITED 0$'
