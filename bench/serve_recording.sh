#!/usr/bin/env bash
# sonde serve FILE: the time to first render of a 100k-sample recording.
# Records bench/busy.c (two threads, ten stages traced) at a 10 kHz period
# per CPU until the recording holds at least 100,000 samples, then, three
# times: starts `sonde serve FILE`, and measures (1) from the start to the
# URL printed (the recording read and taken in by the view engine), and
# (2) from the page's navigation to its flame graph drawn in headless
# chromium (tests/js/check_recording.mjs --render-only). Prints each run and
# the medians.
#
# usage: bench/serve_recording.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "serve_recording: needs root (BPF)"; exit 1; }
[ -d tests/js/node_modules/playwright-core ] && [ -x /usr/bin/chromium ] ||
	{ echo "serve_recording: needs chromium and tests/js's npm packages (scripts/bootstrap.sh test)"; exit 1; }
sonde=$build/sonde
work=$(mktemp -d /tmp/sonde-serve-rec-bench.XXXXXX)
spid=
trap '[ -n "$spid" ] && kill -INT "$spid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

traces=()
for k in 0 1 2 3 4 5 6 7 8 9; do traces+=(--trace "stage_$k"); done
# 2 threads at 10 kHz each: 100k samples take about 5 s of both cores; a
# busy machine gives less, so record until there are enough.
for secs in 8 16 32; do
	"$sonde" record -c 100000 "${traces[@]}" -o "$work/run.sonde" -- "$build/bench/busy" "$secs" 2 \
		>/dev/null 2>"$work/record.err"
	samples=$(sqlite3 "$work/run.sonde" "SELECT count(*) FROM samples")
	[ "$samples" -ge 100000 ] && break
done
spans=$(sqlite3 "$work/run.sonde" "SELECT count(*) FROM spans")
echo "recording: $samples samples, $spans calls with a record, $(du -k "$work/run.sonde" | cut -f1) KiB"

ready=() render=()
for run in 1 2 3; do
	t0=$(date +%s%N)
	"$sonde" serve --no-ctl "$work/run.sonde" >"$work/serve.out" 2>"$work/serve.err" &
	spid=$!
	for _ in $(seq 600); do [ -s "$work/serve.out" ] && break; sleep 0.01; done
	t1=$(date +%s%N)
	url=$(head -n1 "$work/serve.out")
	ms=$(node tests/js/check_recording.mjs "$url" "$work/art" "$work/run.sonde" --render-only |
		sed -n 's/^first_render_ms=//p')
	kill -INT "$spid"
	wait "$spid" || true
	spid=
	ready+=($(((t1 - t0) / 1000000)))
	render+=("$ms")
	echo "run $run: URL after ${ready[-1]} ms; page navigation to flame graph drawn: $ms ms"
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
echo "median: server ready in $(median "${ready[@]}") ms, first render $(median "${render[@]}") ms" \
	"(a 1280x800 headless chromium), $samples samples"
