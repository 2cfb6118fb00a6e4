#!/usr/bin/env bash
# Symbolization throughput: `sonde symbolize -e BIN` against binutils'
# `addr2line -f -i -e BIN` on the same addresses, spread at random (fixed
# seed) over BIN's .text. The default BIN is libc.so.6, whose DWARF comes
# from libc6-dbg through its build-id. Each tool runs RUNS times on the whole
# list from stdin; the fastest run counts (start-up and debug-info loading
# included, as a user would pay them). Then both answer again with -a so the
# answers can be compared address by address.
# usage: bench/symbolize.sh [BUILD_DIR] [COUNT] [BINARY] [RUNS]
#        (SONDE=path overrides BUILD_DIR/sonde)
set -euo pipefail
build=${1:-build}
count=${2:-20000}
bin=${3:-$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)}
runs=${4:-3}
sonde=${SONDE:-$build/sonde}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v addr2line >/dev/null || { echo "symbolize bench: addr2line (binutils) is not installed"; exit 1; }
"$sonde" symbolize --help >/dev/null 2>&1 ||
	{ echo "symbolize bench: '$sonde symbolize' does not run; build sonde first (make)"; exit 1; }

# .text as "start size" in hex, from the section headers.
read -r text_start text_size < <(readelf -SW "$bin" |
	awk '$2 == ".text" { print $4, $6 } $3 == ".text" { print $5, $7 }' | head -1)
[ -n "${text_start:-}" ] || { echo "symbolize bench: $bin has no .text"; exit 1; }

# COUNT addresses, reproducible: bash's RANDOM with a fixed seed (awk here
# may be mawk, whose printf cannot print 64-bit hex).
RANDOM=42
start=$((16#$text_start)) size=$((16#$text_size))
for ((i = 0; i < count; i++)); do
	printf '0x%x\n' $((start + ((RANDOM << 15 | RANDOM) % size)))
done >"$tmp/addrs"

now() { date +%s.%N; }
fastest() { # command... (stdin: the address list) -> best wall time in s
	local best="" s e t
	for _ in $(seq "$runs"); do
		s=$(now)
		"$@" <"$tmp/addrs" >/dev/null
		e=$(now)
		t=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.4f", e - s }')
		best=$(awk -v a="$t" -v b="${best:-$t}" 'BEGIN { print (a < b ? a : b) }')
	done
	echo "$best"
}

a2l_time=$(fastest addr2line -f -i -e "$bin")
sonde_time=$(fastest "$sonde" symbolize -e "$bin")

addr2line -a -f -i -e "$bin" <"$tmp/addrs" >"$tmp/a2l.out"
"$sonde" symbolize -a -e "$bin" <"$tmp/addrs" >"$tmp/sonde.out"

# Answers are the lines after each "0x%016x" address line. Prints: answers,
# identical answers, answers with identical function names (every other line).
compare() {
	awk '
		FNR == 1 { f++ }
		/^0x[0-9a-f]+$/ && length($0) == 18 { n[f]++; line = 0; next }
		{
			k = n[f]
			all[f, k] = all[f, k] $0 "\n"
			if (line++ % 2 == 0)
				names[f, k] = names[f, k] $0 "\n"
		}
		END {
			for (i = 1; i <= n[1]; i++) {
				same += all[1, i] == all[2, i]
				same_names += names[1, i] == names[2, i]
			}
			print n[1], same, same_names
		}' "$1" "$2"
}
read -r answers same same_names < <(compare "$tmp/a2l.out" "$tmp/sonde.out")
[ "$answers" -eq "$count" ] || echo "warning: addr2line answered $answers of $count addresses"

rate() { awk -v n="$count" -v t="$1" 'BEGIN { printf "%.0f", n / t }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", 100 * a / b }'; }
echo "binary:    $bin ($count addresses in .text, best of $runs runs)"
echo "addr2line: $a2l_time s, $(rate "$a2l_time") addresses/s"
echo "sonde:     $sonde_time s, $(rate "$sonde_time") addresses/s"
echo "throughput ratio sonde/addr2line: $(awk -v a="$a2l_time" -v s="$sonde_time" 'BEGIN { printf "%.2f", a / s }')"
echo "agreement: $(pct "$same" "$count")% identical answers, $(pct "$same_names" "$count")% identical function names"
