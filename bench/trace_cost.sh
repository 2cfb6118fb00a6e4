#!/usr/bin/env bash
# Per-call cost of tracing one function, two ways.
#
# Paired (the headline ratios): bench/callpairs calls three identical
# functions in turns, in batches of 256, and times each function's batches
# by the thread's own CPU time. An empty BPF program pair (the floor,
# bench/emptyprobe) is on floor_fn, sonde (`sonde record -F 1 --trace
# traced_fn`) on traced_fn, nothing on plain_fn; a run's ratio is
# (traced - plain) / (floor - plain). Both probes run in the same process at
# the same time, so the drift of a trap's cost on this machine (the same
# 300,000 calls took 263 to 429 ms, minutes apart) is in both: the runs'
# ratios agree within a few percent where sequential runs spread over
# 0.9-1.5. An empty pair on both functions gives 0.99-1.01. Done for
# uprobe_multi links (sonde's on Linux 6.11+) and perf-event links
# (SONDE_UPROBE_MULTI=0; the floor on the same kind), and, when bpftrace is
# there, for bpftrace's latency histogram on floor_fn against sonde.
#
# Sequential (the absolute costs): bench/calls calls an empty target_fn() N
# times and prints its own CPU time (user + system: the traps and BPF
# programs run in its context; other processes do not count); the added
# ns/call of a configuration is (its CPU time - the CPU time with no
# probes) / N, for:
#   floor     an empty BPF program on the same uprobe + uretprobe, on the
#             same kind of link as sonde's (bench/emptyprobe)
#   sonde     sonde record -F 1 --trace target_fn (sampling made negligible),
#             with uprobe_multi links and with SONDE_UPROBE_MULTI=0
#   bpftrace  an empty uprobe + uretprobe pair (bpftrace's floor)
#   bthist    bpftrace computing the same latency histogram
#   captures  sonde tracing it with three captures and a predicate
#             (--trace 'target_fn it->len it->id i if it->len > 4096'), and
#             bpftrace printing the same three values for the same calls
#             (its floor: an empty uprobe alone)
# Each configuration runs RUNS times; the median loop time counts. sonde's
# `calls` must equal N in every run (with the predicate, the calls with
# len > 4096), and `entered` N.
# bpftrace (Debian package, 0.17 on Debian 12) is installed with apt-get when
# missing; if that fails the bpftrace configurations are skipped.
# usage: bench/trace_cost.sh [BUILD_DIR] [N] [RUNS]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:-build}
n=${2:-1000000}
runs=${3:-3}
target="$(realpath "$build/bench/calls")"
sonde="$build/sonde"
tmp=$(mktemp -d)
bt_pid=
cleanup() {
	if [ -n "$bt_pid" ]; then kill -INT "$bt_pid" 2>/dev/null || true; wait "$bt_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench needs root (BPF, uprobes)"; exit 1; }

empty="$build/bench/emptyprobe"
fn_offset=$(file_offset "$target" "0x$(nm "$target" | awk '$3 == "target_fn" { print $1 }')")

have_bpftrace=1
if ! command -v bpftrace >/dev/null; then
	echo "bpftrace not found: installing the Debian package (apt-get install -y bpftrace)"
	if ! { apt-get install -y bpftrace >"$tmp/apt.log" 2>&1 && command -v bpftrace >/dev/null; }; then
		echo "could not install bpftrace (see apt-get's output below): the floor and bpftrace rows are skipped"
		tail -n 5 "$tmp/apt.log"
		have_bpftrace=0
	fi
fi

# bt_start SCRIPT NPROBES: starts bpftrace and waits until its NPROBES
# uprobes are attached. bpftrace prints "Attaching N probes..." before it
# attaches, so the probes themselves are looked for with bpftool.
bt_start() {
	local script=$1 nprobes=$2
	bpftrace -e "$script" >"$tmp/bt.out" 2>"$tmp/bt.err" &
	bt_pid=$!
	for _ in $(seq 300); do
		if grep -q '^Attaching' "$tmp/bt.out"; then
			if ! command -v bpftool >/dev/null; then sleep 1; return 0; fi
			[ "$(bpftool perf list 2>/dev/null | grep -c "^pid $bt_pid ")" -ge "$nprobes" ] && return 0
		fi
		kill -0 "$bt_pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "bpftrace did not attach its probes:" >&2
	grep -v RLIMIT_MEMLOCK "$tmp/bt.err" >&2 || true
	return 1
}
bt_stop() { # SIGINT prints the maps; bpftrace can miss one sent while it is still setting up
	for _ in 1 2 3; do
		kill -INT "$bt_pid" 2>/dev/null || break
		for _ in $(seq 25); do
			kill -0 "$bt_pid" 2>/dev/null || break 2
			sleep 0.2
		done
	done
	kill -0 "$bt_pid" 2>/dev/null && kill -TERM "$bt_pid"
	wait "$bt_pid" || true
	bt_pid=
}

run_plain() { "$target" "$n" | loop_ns; }
run_floor() { "$empty" --return "$@" "$target" "$fn_offset" -- "$target" "$n" | loop_ns; }
run_bpftrace() { # SCRIPT NPROBES
	bt_start "$1" "$2" || return 1
	"$target" "$n" | loop_ns
	bt_stop
}
sonde_bad=0
capture_spec='target_fn it->len it->id i if it->len > 4096'
# The calls with len > 4096: with the predicate, the calls sonde times.
matching=$(awk -v n="$n" 'BEGIN { c = int(n / 8192) * 4095; r = n % 8192; if (r > 4097) c += r - 4097; print c }')
run_sonde_perf() { SONDE_UPROBE_MULTI=0 run_sonde; }
run_sonde() { # [SPEC]
	local out="$tmp/s.sonde" calls kcalls lost entered
	rm -f "$out"
	"$sonde" record -F 1 --trace "${1:-target_fn}" -o "$out" -- "$target" "$n" 2>"$tmp/sonde.err" | loop_ns
	if [ -n "${1:-}" ]; then # the hits the predicate kept: the calls with len > 4096
		echo "$("$sonde" report "$out" --json | jq '.probes[0].hits')" \
			"(lost_values $(sqlite3 "$out" "select value from meta where key = 'lost_values'"))" >>"$tmp/sonde_hits"
	fi
	calls=$("$sonde" report "$out" --json | jq '[.probes[] | select(.name == "target_fn") | .calls] | add // 0')
	kcalls=$("$sonde" report "$out" --json | jq '[.probes[] | select(.name == "target_fn") | .kernel_calls] | add // 0')
	lost=$(sqlite3 "$out" "select value from meta where key = 'lost_spans'")
	entered=$("$sonde" report "$out" --json | jq '[.probes[] | select(.name == "target_fn") | .entered] | add // 0')
	echo "$calls $kcalls $lost" >>"$tmp/sonde_calls"
	# With the predicate, the calls where it held; every call entered.
	[ "$calls" -eq "$([ -n "${1:-}" ] && echo "$matching" || echo "$n")" ] && [ "$entered" -eq "$n" ] || sonde_bad=1
}

measure() { # label function args...: the median loop time of RUNS runs, in ns
	local label=$1
	shift
	for _ in $(seq "$runs"); do
		"$@" || { echo "$label: a run failed (no loop time from $target)" >&2; return 1; }
	done >"$tmp/$label.runs"
	median <"$tmp/$label.runs" >"$tmp/$label"
	if [ "$(wc -l <"$tmp/$label.runs")" -ne "$runs" ] || [ ! -s "$tmp/$label" ]; then
		echo "$label: expected $runs loop times, got: $(paste -sd' ' "$tmp/$label.runs")" >&2
		return 1
	fi
}

per_call() { # added ns per call of a configuration over the baseline
	awk -v a="$(cat "$tmp/$1")" -v b="$(cat "$tmp/baseline")" -v n="$n" 'BEGIN { printf "%.1f", (a - b) / n }'
}
row() { # label description
	if [ -s "$tmp/$1" ]; then
		printf '%-44s loop %8.1f ms   +%7s ns/call\n' "$2:" "$(awk -v a="$(cat "$tmp/$1")" 'BEGIN { print a / 1e6 }')" "$(per_call "$1")"
	else
		printf '%-44s skipped\n' "$2:"
	fi
}
ratio() { # a b
	if [ -s "$tmp/$1" ] && [ -s "$tmp/$2" ]; then
		awk -v a="$(per_call "$1")" -v b="$(per_call "$2")" 'BEGIN { printf "%.2f", a / b }'
	else
		echo "n/a"
	fi
}

up="uprobe:$target:target_fn"
urp="uretprobe:$target:target_fn"

# Paired runs: PROBER (a command that puts a probe on floor_fn and runs the
# rest) around sonde on traced_fn; prints the run's ratio, the floor's and
# sonde's added ns/call; sonde must count N calls.
pairs="$(realpath "$build/bench/callpairs")"
floor_fn_offset=$(file_offset "$pairs" "0x$(nm "$pairs" | awk '$3 == "floor_fn" { print $1 }')")
pair_ratio() { awk '/^[0-9]+ [0-9]+ [0-9]+ [0-9]+$/ {
	printf "%.3f %.1f %.1f\n", ($3 - $1) / ($2 - $1), ($2 - $1) / $4, ($3 - $1) / $4 }'; }
run_pair() { # PROBER...
	local out="$tmp/p.sonde" calls
	rm -f "$out"
	"$@" "$sonde" record -F 1 --trace traced_fn -o "$out" -- "$pairs" "$n" 2>"$tmp/sonde.err" | pair_ratio
	calls=$("$sonde" report "$out" --json | jq '[.probes[] | select(.name == "traced_fn") | .calls] | add // 0')
	[ "$calls" -eq "$n" ] || sonde_bad=1
}
run_pair_bthist() {
	local script="uprobe:$pairs:floor_fn { @s[tid] = nsecs; } uretprobe:$pairs:floor_fn /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }"
	bt_start "$script" 2 || return 1
	run_pair
	bt_stop
}
for _ in $(seq "$runs"); do
	run_pair "$empty" --return --multi "$pairs" "$floor_fn_offset" -- >>"$tmp/pair_multi"
	SONDE_UPROBE_MULTI=0 run_pair "$empty" --return "$pairs" "$floor_fn_offset" -- >>"$tmp/pair_perf"
	if [ "$have_bpftrace" = 1 ]; then
		run_pair_bthist >>"$tmp/pair_bthist" || true
	fi
done
# The floors, sonde and the baseline take turns in each round: the cost of
# a trap drifts with the machine's load by more than sonde adds to it, so
# the ratio of each round's pair is taken, and its median.
for _ in $(seq "$runs"); do
	run_plain >>"$tmp/baseline.runs"
	run_floor --multi >>"$tmp/floor_multi.runs"
	run_sonde >>"$tmp/sonde.runs"
	run_plain >>"$tmp/baseline.runs"
	run_floor >>"$tmp/floor_perf.runs"
	run_sonde_perf >>"$tmp/sonde_perf.runs"
done
for l in baseline floor_multi sonde floor_perf sonde_perf; do median <"$tmp/$l.runs" >"$tmp/$l"; done
round_ratios() { # SONDE FLOOR BASELINE-RUNS: each round's (sonde - base) / (floor - base)
	paste "$tmp/$1.runs" "$tmp/$2.runs" "$3" | awk '{ printf "%.3f\n", ($1 - $3) / ($2 - $3) }'
}
round_ratios sonde floor_multi <(awk 'NR % 2 == 1' "$tmp/baseline.runs") >"$tmp/ratio_multi"
round_ratios sonde_perf floor_perf <(awk 'NR % 2 == 0' "$tmp/baseline.runs") >"$tmp/ratio_perf"
if [ "$have_bpftrace" = 1 ]; then
	measure floor run_bpftrace "$up {} $urp {}" 2 || rm -f "$tmp/floor"
fi
if [ "$have_bpftrace" = 1 ]; then
	# The last run's histogram must have counted every call.
	measure bthist run_bpftrace \
		"$up { @s[tid] = nsecs; } $urp /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }" 2 ||
		rm -f "$tmp/bthist"
	bt_counted=$(awk '/^\[/ { sub(/^[^)]*\)/, ""); c += $1 } END { print c + 0 }' "$tmp/bt.out")
fi
measure sonde_caps run_sonde "$capture_spec"
if [ "$have_bpftrace" = 1 ]; then
	measure floor_entry run_bpftrace "$up {}" 1 || rm -f "$tmp/floor_entry"
	measure bt_caps run_bpftrace \
		"struct item { long id; int len; }; $up /((struct item *)arg0)->len > 4096/ { printf(\"%d %d %d\\n\", ((struct item *)arg0)->len, ((struct item *)arg0)->id, arg1); }" 1 ||
		rm -f "$tmp/bt_caps"
	bt_lines=$(grep -c '^[0-9]* 42 [0-9]*$' "$tmp/bt.out" || true)
fi

echo "$n calls of target_fn per run, median of $runs runs; loop time, and per-call cost added to the no-probe loop"
printf '%-44s loop %8.1f ms   %8s ns/call\n' "no probes:" "$(awk -v a="$(cat "$tmp/baseline")" 'BEGIN { print a / 1e6 }')" \
	"$(awk -v a="$(cat "$tmp/baseline")" -v n="$n" 'BEGIN { printf "%.1f", a / n }')"
row floor_multi "floor: empty pair, uprobe_multi links"
row sonde "sonde record -F 1 --trace target_fn"
row floor_perf "floor: empty pair, perf-event links"
row sonde_perf "the same, SONDE_UPROBE_MULTI=0"
row floor "empty uprobe+uretprobe (bpftrace)"
row bthist "bpftrace latency histogram"
echo
echo "sonde per run (calls received, kernel_calls, lost_spans): $(paste -sd, "$tmp/sonde_calls" | sed 's/,/; /g')"
if [ "$sonde_bad" = 0 ]; then
	echo "sonde calls == N ($n) in every run (with the predicate, the $matching matching; $n entered): yes"
else
	echo "sonde calls == N ($n) in every run (with the predicate, the $matching matching; $n entered): NO"
fi
[ -n "${bt_counted:-}" ] && echo "bpftrace histogram total (last run): $bt_counted"
echo "sequential: ratio sonde/floor, uprobe_multi links:  $(median <"$tmp/ratio_multi") (the rounds: $(paste -sd' ' "$tmp/ratio_multi"))"
echo "sequential: ratio sonde/floor, perf-event links:    $(median <"$tmp/ratio_perf") (the rounds: $(paste -sd' ' "$tmp/ratio_perf"))"
echo
echo "Paired (bench/callpairs: the floor or bpftrace on floor_fn, sonde on traced_fn, same process, in turns; $n calls each):"
pair_row() { # FILE LABEL
	[ -s "$tmp/$1" ] || { printf '%-34s skipped\n' "$2:"; return; }
	printf '%-34s %s (runs: %s); added ns/call: other %s, sonde %s (medians)\n' "$2:" \
		"$(awk '{ print $1 }' "$tmp/$1" | median)" "$(awk '{ print $1 }' "$tmp/$1" | paste -sd' ')" \
		"$(awk '{ print $2 }' "$tmp/$1" | median)" "$(awk '{ print $3 }' "$tmp/$1" | median)"
}
pair_row pair_multi "sonde/floor, uprobe_multi links"
pair_row pair_perf "sonde/floor, perf-event links"
pair_row pair_bthist "sonde/bpftrace histogram"
echo "per-call cost ratio sonde/bpftrace's empty pair:      $(ratio sonde floor)"
echo "per-call cost ratio sonde/bpftrace-hist:  $(ratio sonde bthist)"
echo
echo "Three captures and a predicate (it->len it->id i if it->len > 4096; $matching of $n calls match, the calls sonde times):"
row floor_entry "empty uprobe (bpftrace, floor)"
row sonde_caps "sonde --trace '$capture_spec'"
row bt_caps "bpftrace printf of the same, same predicate"
echo "sonde hits per run (values received): $(paste -sd, "$tmp/sonde_hits" | sed 's/,/; /g')"
[ -n "${bt_lines:-}" ] && echo "bpftrace lines printed (last run): $bt_lines"
echo "added by the captures, per call (sonde with captures - sonde): $(awk -v a="$(per_call sonde_caps)" -v b="$(per_call sonde)" 'BEGIN { printf "%.1f", a - b }') ns"
echo "per-call cost ratio sonde-captures/bpftrace-printf: $(ratio sonde_caps bt_caps)"
