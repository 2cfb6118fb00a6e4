# The explorer pane of sonde top, driven through tmux (tests/targets/
# branches, gcc -O2): x on handle_request in the call tree shows its
# source lines with the marks `sonde explore` gives (SITES, BR); b on the
# line `if (len > 4096)` traces its branch probe and the pane shows its
# outcomes; with the target stopped, the pane's counts (the branch's, and
# the samples on slow_path's call line) equal those of the recording
# `ctl save` writes (report, explore --counts); W gates sampling by the
# jump not taken; Enter on slow_path's call line
# explores slow_path, Backspace comes back, p goes to the caller (main);
# u untraces both outcomes; l traces the line; Esc closes the pane.
. "$(dirname "$0")/lib.sh"
require_bpf
command -v tmux >/dev/null || skip "tmux is not installed (scripts/bootstrap.sh installs it)"
export SONDE_RUNTIME_DIR="$WORK/run"
sock="sonde-test-$$"
trap 'kill -CONT "${tpid:-0}" 2>/dev/null; tmux -L "$sock" kill-server 2>/dev/null || true; cleanup' EXIT

src="$SRC/tests/targets/branches/branches.c"
big=$(grep -n '/\* LINE_BIG \*/' "$src" | cut -d: -f1)
slow_line=$(grep -n '		slow_path();' "$src" | cut -d: -f1)
first_line=$(grep -n 'clamp_calls++;' "$src" | cut -d: -f1)
need_numbers "lines" "$big" "$slow_line" "$first_line"
bin="$TARGETS/branches-gcc-O2"
"$bin" 1000000000 >/dev/null &
tpid=$!
BG_PIDS+=("$tpid")
wait_exec "$tpid" "$bin"

tmux -L "$sock" new-session -d -s top -x 190 -y 50 \
	"SONDE_RUNTIME_DIR='$SONDE_RUNTIME_DIR' '$SONDE' top -F 199 --trace handle_request -p $tpid; echo \"EXITED \$?\"; sleep 60"
screen() { tmux -L "$sock" capture-pane -p -t top; }
keys() { tmux -L "$sock" send-keys -t top "$@"; }
wait_screen() { # WHAT REGEX: up to 15 s
	for _ in $(seq 150); do
		grep -Eq -- "$2" <<<"$(screen)" && { pass "$1"; return 0; }
		sleep 0.1
	done
	screen >&2
	fail "$1: the screen never showed /$2/"
}
row() { screen | grep -E "^ +$1 " | head -n1; }
# a row's column: LINE 1-6, SITES 8-12, BR 14-15, SELF 17-22, TOTAL 24-29
col() { cut -c"$2" <<<"$1" | tr -d ' '; }

wait_screen "the call tree" '\[[-+]\] handle_request'
keys / h a n d l e _ r e q u e s t Enter
wait_screen "search finds handle_request" "match [0-9]+ of [0-9]+ for 'handle_request'"
keys x
wait_screen "the pane opens on handle_request" '^ explore handle_request +\(branches-gcc-O2\) +[0-9]+ blocks, 1 loop'
wait_screen "its header" '^  LINE SITES BR +SELF +TOTAL +PROBES \(exact\) +SOURCE$'
# The marks are explore's.
"$SONDE" explore -e "$bin" handle_request --json >"$WORK/explore.json"
for l in "$big" "$slow_line"; do
	want=$(jq -r --argjson l "$l" '.lines[] | select(.line == $l) | "\(.sites) \(.branches)"' "$WORK/explore.json")
	r=$(row "$l")
	sites=$(col "$r" 8-12) br=$(col "$r" 14-15)
	got="${sites:-0} ${br:-0}"
	[ "$got" = "$want" ] || fail "line $l: the pane shows SITES BR '$got', explore '$want' ($(row "$l"))"
done
pass "the pane's SITES and BR are explore's"

# b on `if (len > 4096)`: the cursor starts on the first line with code.
for _ in $(seq $((big - first_line))); do keys j; done
keys b
wait_screen "b traces the branch" "tracing branch branches.c:$big at 1 address"
wait_screen "its outcomes in the pane" "^ +$big +1 +1 .*T [0-9.]+% N [0-9.]+% of [1-9][0-9]*"

# Counts against the recording, the target stopped: the same numbers (once
# slow_path's call line holds 20 samples: the CPU the target gets decides
# when).
for _ in $(seq 300); do
	n=$(col "$(row "$slow_line")" 24-29)
	[ -n "$n" ] && [ "$n" -ge 20 ] && break
	sleep 0.1
done
kill -STOP "$tpid"
sleep 2.5 # two refreshes after the last sample
pane=$(row "$big")
pane_slow=$(row "$slow_line")
"$SONDE" ctl save "$WORK/live.sonde" >/dev/null || fail "ctl save"
kill -CONT "$tpid"
"$SONDE" report "$WORK/live.sonde" --json >"$WORK/live.json"
taken=$(jq --arg p "branch branches.c:$big taken" '.probes[] | select(.name == $p) | .calls' "$WORK/live.json")
nott=$(jq --arg p "branch branches.c:$big not-taken" '.probes[] | select(.name == $p) | .calls' "$WORK/live.json")
need_numbers "saved outcomes" "$taken" "$nott"
want=$(awk -v t="$taken" -v n="$nott" 'BEGIN { printf "T %.1f%% N %.1f%% of %d", 100 * t / (t + n), 100 * n / (t + n), t + n }')
grep -qF "$want" <<<"$pane" || fail "the pane shows '$pane', the saved recording '$want'"
"$SONDE" explore -e "$bin" handle_request --counts "$WORK/live.sonde" --json >"$WORK/counts.json"
total=$(jq --argjson l "$slow_line" '.lines[] | select(.line == $l) | .total' "$WORK/counts.json")
need_numbers "slow_path's line" "$total"
assert_ge "samples on slow_path's call line" "$total" 20
got=$(col "$pane_slow" 24-29)
[ "$got" = "$total" ] || fail "the pane shows $got samples on line $slow_line ('$pane_slow'), explore --counts of the saved recording $total"
pass "the pane's counts are the recording's: $want, $total samples on line $slow_line"

# W: sample only when the jump went the other way (not taken).
keys W
wait_screen "W sets sample-when" "sampling only in calls during which branch .*branches.c:$big not-taken happened"
keys Escape
wait_screen "Esc closes the pane" '^TOTAL%  SELF%  FUNCTION'
out=$("$SONDE" ctl sample-when off) || fail "ctl sample-when off: $out"
keys x
wait_screen "x opens it again" '^ explore handle_request'
for _ in $(seq $((slow_line - first_line))); do keys j; done
keys Enter
wait_screen "Enter explores the callee" '^ explore slow_path '
keys BSpace
wait_screen "Backspace comes back" '^ explore handle_request '
keys p
wait_screen "p goes to the caller" '^ explore main '
keys BSpace
wait_screen "and back" '^ explore handle_request '
for _ in $(seq $((big - first_line))); do keys j; done
keys u
wait_screen "u untraces the branch" "untraced 2 "
attached=$("$SONDE" ctl --json status | jq '[.data.probes[] | select(.name | startswith("branch ")) | select(.attached == true)] | length')
[ "$attached" = 0 ] || fail "$attached outcome probes still attached after u"
keys l
wait_screen "l traces the line" "tracing line branches-gcc-O2:branches.c:$big at 1 address"
wait_screen "its hits in the pane" "^ +$big +1 +1 .*line [1-9][0-9]*"
keys Escape q
wait_screen "top quits" '^EXITED 0$'
