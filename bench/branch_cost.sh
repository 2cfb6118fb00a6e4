#!/usr/bin/env bash
# Branch probes: (1) the cost per hit of sonde's branch probe (its two
# outcome programs on one breakpoint at the jump) against the floor, an
# empty BPF program as a uprobe on the same jump (bench/emptyprobe.c), and
# against sonde's line probe on the same line (at the line's first
# instruction); (2) the time from `trace 'branch FILE:LINE'` sent to a live
# session to its outcomes counting (sonde ctl answers once the uprobes are
# attached; then ctl status is polled until a count shows); (3) the same
# from the key b in sonde top's explorer pane (in tmux).
#
# (1) bench/branchy calls pick(i) N times; pick's `if (i & 1)` line is an
# `and` (which the kernel single-steps) and a `je` (which it emulates).
# Per configuration, the median of RUNS runs of the process's CPU time
# (user + system); added ns/hit = (median - median without probes) / N.
# sonde's outcomes must add up to N and count the program's own odd calls.
# usage: bench/branch_cost.sh [BUILD_DIR] [N] [RUNS]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:-build}
n=${2:-300000}
runs=${3:-5}
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, uprobes)"; exit 1; }
prog="$(realpath "$build/bench/branchy")"
empty="$build/bench/emptyprobe"
sonde="$build/sonde"
tmp=$(mktemp -d)
top_pid= target_pid=
cleanup() {
	[ -n "$top_pid" ] && { kill -TERM "$top_pid" 2>/dev/null || true; wait "$top_pid" 2>/dev/null || true; }
	[ -n "$target_pid" ] && { kill -TERM "$target_pid" 2>/dev/null || true; wait "$target_pid" 2>/dev/null || true; }
	rm -rf "$tmp"
}
trap cleanup EXIT

line=$(grep -n 'BRANCH_LINE' "$(dirname "$0")/branchy.c" | tail -n1 | cut -d: -f1)
# pick's instructions on the line: the first (the line probe's) and the jump
rows=$(objdump -d --no-show-raw-insn "$prog" | awk '/<pick>:/ { f = 1; next } f && /^$/ { exit } f && /^ +[0-9a-f]+:/ { print }')
stmt=$(awk 'NR == 1 { sub(/:.*/, ""); print "0x" $1 }' <<<"$rows")
jump=$(awk '/\tj[a-z]+ / && !/jmp/ { sub(/:.*/, ""); print "0x" $1; exit }' <<<"$rows")
stmt_off=$(file_offset "$prog" "$stmt")
jump_off=$(file_offset "$prog" "$jump")

run_plain() { "$prog" "$n" | loop_ns; }
run_floor() { "$empty" "$prog" "$1" -- "$prog" "$n" | loop_ns; }
run_sonde() { # SPEC
	"$sonde" record -F 1 --no-children --trace "$1" -o "$tmp/s.sonde" -- "$prog" "$n" 2>/dev/null >"$tmp/out"
	loop_ns <"$tmp/out"
	local odd counted
	odd=$(sed -n 's/^odd=//p' "$tmp/out")
	counted=$("$sonde" report "$tmp/s.sonde" --json | jq -c '[.probes[] | .calls]')
	case $1 in
	"branch "*) [ "$counted" = "[$odd,$((n - odd))]" ] || [ "$counted" = "[$((n - odd)),$odd]" ] ||
		{ echo "sonde counted $counted for $1, the program $odd odd of $n" >&2; return 1; } ;;
	*) [ "$counted" = "[$n]" ] || { echo "sonde counted $counted hits of $1, expected $n" >&2; return 1; } ;;
	esac
}
measure() { # name command...
	local name=$1
	shift
	for _ in $(seq "$runs"); do "$@"; done >"$tmp/$name.runs"
	median <"$tmp/$name.runs" >"$tmp/$name"
}
per_hit() { awk -v a="$(cat "$tmp/$1")" -v b="$(cat "$tmp/plain")" -v n="$n" 'BEGIN { printf "%.0f", (a - b) / n }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? a / b : 0 }'; }

measure plain run_plain
measure floor_jump run_floor "$jump_off"
measure floor_stmt run_floor "$stmt_off"
measure line run_sonde "branchy.c:$line"
measure branch run_sonde "branch branchy.c:$line"
fj=$(per_hit floor_jump) fs=$(per_hit floor_stmt) l=$(per_hit line) b=$(per_hit branch)
echo "$n calls per run, median of $runs runs; per-hit cost added to the CPU time without probes ($(awk -v a="$(cat "$tmp/plain")" -v n="$n" 'BEGIN { printf "%.1f", a / n }') ns/call)"
printf 'empty program at the jump (%s, emulated):        %6s ns/hit\n' "$jump" "$fj"
printf 'sonde branch probe (2 outcome programs there):  %6s ns/hit, - floor %5s ns, ratio %s\n' "$b" "$((b - fj))" "$(ratio "$b" "$fj")"
printf 'empty program at the line (%s, single-stepped): %6s ns/hit\n' "$stmt" "$fs"
printf 'sonde line probe on branchy.c:%s:              %6s ns/hit, - floor %5s ns; branch / line %s\n' "$line" "$l" "$((l - fs))" "$(ratio "$b" "$l")"

# (2) From trace to counting, in a live session.
export SONDE_RUNTIME_DIR="$tmp/run"
"$prog" 100000000000000 >/dev/null &
target_pid=$!
sleep 0.5
"$sonde" top -b -i 0.2 -F 49 -p "$target_pid" >"$tmp/top.out" 2>"$tmp/top.err" &
top_pid=$!
for _ in $(seq 200); do
	"$sonde" ctl --list 2>/dev/null | grep -q "^$top_pid " && break
	sleep 0.1
done
counting_ms() { # the median of RUNS: trace until answered, and until a count shows
	local t0 t1 t2 c
	for _ in $(seq "$runs"); do
		t0=$(date +%s%N)
		"$sonde" ctl trace "branch branchy.c:$line" >/dev/null
		t1=$(date +%s%N)
		for _ in $(seq 500); do
			c=$("$sonde" ctl --json status | jq '[.data.probes[] | select(.name | startswith("branch ")) | .total_calls] | add // 0')
			[ "$c" -gt 0 ] && break
			sleep 0.01
		done
		t2=$(date +%s%N)
		"$sonde" ctl untrace "branch branchy.c:$line" >/dev/null
		echo "$(((t1 - t0) / 1000)) $(((t2 - t0) / 1000))"
	done >"$tmp/live"
	printf '  until attached (ctl answered) %s ms, until counting (ctl status shows hits) %s ms\n' \
		"$(cut -d' ' -f1 "$tmp/live" | median | awk '{ printf "%.1f", $1 / 1000 }')" \
		"$(cut -d' ' -f2 "$tmp/live" | median | awk '{ printf "%.1f", $1 / 1000 }')"
}
echo "live: 'sonde ctl trace \"branch branchy.c:$line\"', median of $runs:"
counting_ms
kill -TERM "$top_pid" 2>/dev/null || true
wait "$top_pid" 2>/dev/null || true
top_pid=

# (3) From the key b in top's explorer pane (tmux) to the outcomes
# counting: the pane open on pick, the cursor on the line; b sent, then
# ctl status polled until a count shows; untraced (ctl) after each.
if command -v tmux >/dev/null; then
	sock="sonde-bench-$$"
	tmux -L "$sock" new-session -d -s b -x 160 -y 40 \
		"SONDE_RUNTIME_DIR='$SONDE_RUNTIME_DIR' '$sonde' top -F 49 -i 0.2 -p $target_pid"
	for _ in $(seq 200); do
		tmux -L "$sock" capture-pane -p -t b | grep -q 'TOTAL%  SELF%  FUNCTION' && break
		sleep 0.1
	done
	# until pick is in the tree (its samples come at 49 Hz): search, x
	for _ in $(seq 60); do
		tmux -L "$sock" send-keys -t b / p i c k Enter x
		sleep 0.5
		tmux -L "$sock" capture-pane -p -t b | grep -q '^ explore pick ' && break
		tmux -L "$sock" send-keys -t b Escape
		sleep 0.5
	done
	# the cursor starts on pick's first line with code: down to the if's
	first=$("$sonde" explore -e "$prog" pick --json | jq '[.lines[] | select(.sites > 0) | .line] | min')
	for _ in $(seq $((line - first))); do tmux -L "$sock" send-keys -t b j; done
	for _ in $(seq "$runs"); do
		t0=$(date +%s%N)
		tmux -L "$sock" send-keys -t b b
		for _ in $(seq 500); do
			c=$("$sonde" ctl --json status | jq '[.data.probes[] | select(.name | startswith("branch ")) | select(.attached) | .total_calls] | add // 0')
			[ "$c" -gt 0 ] && break
			sleep 0.01
		done
		t1=$(date +%s%N)
		[ "$c" -gt 0 ] || { tmux -L "$sock" capture-pane -p -t b >&2; echo "the key b placed no probe" >&2; exit 1; }
		"$sonde" ctl untrace "branch branchy.c:$line" >/dev/null
		echo $(((t1 - t0) / 1000))
	done >"$tmp/key"
	tmux -L "$sock" send-keys -t b Escape q
	sleep 0.5
	tmux -L "$sock" kill-server 2>/dev/null || true
	printf "  top's explorer pane, key b until counting: %s ms (median of %s)\n" \
		"$(median <"$tmp/key" | awk '{ printf "%.1f", $1 / 1000 }')" "$runs"
else
	echo "  top's explorer pane: skipped (no tmux)"
fi
