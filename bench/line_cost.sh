#!/usr/bin/env bash
# Line probes: (1) the cost per hit of sonde's line probe against the floor,
# an empty BPF program as a uprobe on the same address (bench/emptyprobe.c),
# bare and with three captures and a predicate; (2) the time from `trace
# FILE:LINE [VAR]` sent to a live session to the probe attached (sonde ctl
# answers once it is), for a line of bench/calls.c and for a line of libc's
# malloc.c (its DWARF from libc6-dbg), without and with a capture.
#
# (1) bench/calls calls target_fn() N times and prints its loop time. Two
# lines of target_fn (found in calls.c by their text): the line of its `{`
# begins at the function's first instruction (push %rbp: the kernel
# emulates it) and the line of `(void)frame;` at a movzbl (the kernel
# single-steps it, a second trap). Per configuration, the median loop time
# of RUNS runs of the process's CPU time (user + system: the traps and the
# programs run in the target's context); added ns/hit = (median - median
# without probes) / N. sonde's hits must equal N, and with the predicate
# its hits with values the calls where it->len > 4096.
# (2) LIBC_LINE (default 3300: in Debian 12's glibc 2.36, a line of
# __libc_malloc where its argument `bytes` is readable) is captured with
# `bytes`.
# usage: bench/line_cost.sh [BUILD_DIR] [N] [RUNS]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:-build}
n=${2:-300000}
runs=${3:-5}
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, uprobes)"; exit 1; }
calls="$(realpath "$build/bench/calls")"
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

# The file offset of a line's statement address in target_fn (the lowest).
line_offset() {
	local vaddr
	vaddr=$(readelf --wide --debug-dump=decodedline "$calls" |
		awk -v l="$1" '$1 == "calls.c" && $2 == l && $NF == "x" { print $3 }' | sort | head -n1)
	file_offset "$calls" "$vaddr"
}

run_plain() { "$calls" "$n" | loop_ns; }
run_floor() { "$empty" "$calls" "$1" -- "$calls" "$n" | loop_ns; }
run_sonde() { # LINE [VAR... if EXPR]
	"$sonde" record -F 1 --no-children --trace "calls.c:$1${2:+ $2}" -o "$tmp/s.sonde" -- "$calls" "$n" 2>/dev/null | loop_ns
	local hits kept
	hits=$("$sonde" report "$tmp/s.sonde" --json | jq --arg l "calls.c:$1" '.probes[] | select(.name == $l) | .calls')
	[ "$hits" = "$n" ] || { echo "sonde counted $hits hits of calls.c:$1, expected $n" >&2; return 1; }
	[ -z "${2:-}" ] && return 0
	kept=$("$sonde" report "$tmp/s.sonde" --json | jq --arg l "calls.c:$1" '.probes[] | select(.name == $l) | .hits')
	[ "$kept" = "$big" ] || { echo "sonde kept $kept hits of calls.c:$1 with values, expected $big" >&2; return 1; }
}
# The calls with it->len > 4096 (it->len = i & 8191).
big=$(awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) c += (i % 8192) > 4096; print c }')
src="$(dirname "$0")/calls.c"
entry_line=$(($(grep -n 'void target_fn(' "$src" | cut -d: -f1) + 1))
step_line=$(grep -n '(void)frame;' "$src" | cut -d: -f1)
caps='it->len it->id i if it->len > 4096'
measure() { # name command...
	local name=$1
	shift
	for _ in $(seq "$runs"); do "$@"; done >"$tmp/$name.runs"
	median <"$tmp/$name.runs" >"$tmp/$name"
}
per_hit() { awk -v a="$(cat "$tmp/$1")" -v b="$(cat "$tmp/plain")" -v n="$n" 'BEGIN { printf "%.0f", (a - b) / n }'; }

measure plain run_plain
echo "$n hits per run, median of $runs runs; per-hit cost added to the CPU time without probes ($(awk -v a="$(cat "$tmp/plain")" -v n="$n" 'BEGIN { printf "%.1f", a / n }') ns/call, start-up included)"
for line in "$entry_line" "$step_line"; do
	off=$(line_offset "$line")
	measure "floor$line" run_floor "$off"
	measure "sonde$line" run_sonde "$line"
	f=$(per_hit "floor$line") s=$(per_hit "sonde$line")
	printf 'calls.c:%s (file offset %s): empty program %6s ns/hit, sonde line probe %6s ns/hit, sonde - floor %5s ns, ratio %s\n' \
		"$line" "$off" "$f" "$s" "$((s - f))" "$(awk -v a="$s" -v b="$f" 'BEGIN { printf "%.2f", a / b }')"
done
measure "caps" run_sonde "$entry_line" "$caps"
c=$(per_hit caps) f=$(per_hit "floor$entry_line") s=$(per_hit "sonde$entry_line")
printf "calls.c:%s '%s': %6s ns/hit, - floor %5s ns, - bare line probe %5s ns (%s of %s hits sent values)\n" \
	"$entry_line" "$caps" "$c" "$((c - f))" "$((c - s))" "$big" "$n"

# (2) Attach latency in a live session.
export SONDE_RUNTIME_DIR="$tmp/run"
"$calls" 100000000000000 >/dev/null &
target_pid=$!
sleep 0.5
"$sonde" top -b -i 1 -F 49 -p "$target_pid" >"$tmp/top.out" 2>"$tmp/top.err" &
top_pid=$!
for _ in $(seq 200); do
	"$sonde" ctl --list 2>/dev/null | grep -q "^$top_pid " && break
	sleep 0.1
done
# A spec: untraced by its location (the text before the first blank).
attach_ms() { # spec: the median of RUNS trace round trips (each untraced after)
	local spec=$1 t0 t1
	for _ in $(seq "$runs"); do
		t0=$(date +%s%N)
		"$sonde" ctl trace "$spec" >/dev/null || { echo "ctl trace $spec failed" >&2; return 1; }
		t1=$(date +%s%N)
		"$sonde" ctl untrace "${spec%% *}" >/dev/null
		echo $(((t1 - t0) / 1000))
	done | median | awk '{ printf "%.1f", $1 / 1000 }'
}
echo "live: 'sonde ctl trace SPEC' until answered (attached), median of $runs:"
printf '  %-48s %s ms\n' "calls.c:$step_line (1 address)" "$(attach_ms "calls.c:$step_line")"
printf '  %-48s %s ms\n' "calls.c:$step_line it->len (1 address, a capture)" "$(attach_ms "calls.c:$step_line it->len")"
printf '  %-48s %s ms\n' "target_fn (function, entry + return)" "$(attach_ms target_fn)"
line=${LIBC_LINE:-3300}
if [ -e /usr/lib/debug/.build-id ] && dpkg -s libc6-dbg >/dev/null 2>&1; then
	printf '  %-48s %s ms\n' "libc.so.6:malloc.c:$line (libc6-dbg DWARF)" "$(attach_ms "libc.so.6:malloc.c:$line")"
	printf '  %-48s %s ms\n' "libc.so.6:malloc.c:$line bytes (a capture)" "$(attach_ms "libc.so.6:malloc.c:$line bytes")"
else
	echo "  libc.so.6:malloc.c: skipped (no libc6-dbg)"
fi
