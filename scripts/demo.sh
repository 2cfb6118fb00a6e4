#!/usr/bin/env bash
# make demo: profile the bundled demo workload and show what sonde found.
# Writes demo-out/demo.sonde (the recording), demo.folded and demo.svg.
set -euo pipefail
build=${1:-build}
sonde="$build/sonde"
out=demo-out
mkdir -p "$out"

run() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

echo "== sonde record -F 999 -o $out/demo.sonde -- $build/demo/workload 5"
run "$sonde" record -F 999 -o "$out/demo.sonde" -- "$build/demo/workload" 5
run chown "$(id -u):$(id -g)" "$out/demo.sonde" 2>/dev/null || true
echo
"$sonde" report "$out/demo.sonde" --top 12
"$sonde" report "$out/demo.sonde" --folded -o "$out/demo.folded"
"$sonde" flame "$out/demo.sonde" -o "$out/demo.svg" --title "sonde demo: workload"
echo
echo "Folded stacks: $out/demo.folded ($(wc -l <"$out/demo.folded") distinct stacks)"
echo "Flame graph:   $out/demo.svg (open it in a browser: hover, click to zoom, Ctrl-F to search)"
echo
echo "== live: sonde top -b -i 1 -n 3 --cmd 'trace handle_request' --cmd 'slow handle_request auto' -- $build/demo/workload 5"
echo "   (a session steered while it runs: the terminal UI is sonde top without -b; the last snapshot:)"
run "$sonde" top -b -i 1 -n 3 --top 8 --cmd 'trace handle_request' --cmd 'slow handle_request auto' \
	-- "$build/demo/workload" 5 2>/dev/null >"$out/top.txt"
awk '/^--- sonde top at/ { n++; s = "" } n { s = s $0 "\n" } END { printf "%s", s }' "$out/top.txt" | grep -v '^$'
