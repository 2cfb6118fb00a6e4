#!/usr/bin/env bash
# The hash tables and string pools under sonde's work: callgrind
# instruction counts (deterministic for the offline commands, so a busy
# machine does not matter; see record's row below) of report, convert,
# symbolize and record, for BASE (default main, built from
# git into a separate directory) and for BUILD_DIR's sonde, and their ratio
# after/before (< 1: fewer instructions now). The offline inputs are the
# shared corpus's perf script capture, a generated folded file of 50,000
# distinct stacks, a recording converted from it, and libc.so.6; the live
# window (per-second maps, views) runs as bench/windowfeed.c, compiled
# against each build's model and base libraries. The record row records
# bench/cpubound with BPF (root only; skipped with a line otherwise).
# usage: bench/tables.sh [BUILD_DIR] [BASE_REF]
#        (BASE_SONDE=path skips building BASE_REF and uses that binary)
set -euo pipefail
build=${1:-build}
base_ref=${2:-main}
src=$(cd "$(dirname "$0")/.." && pwd)
after=$(readlink -f "$build/sonde")
corpus="$src/../shared/corpus/flamegraph/example-perf-stacks.txt.gz"
command -v valgrind >/dev/null || { echo "tables bench: valgrind is not installed (apt-get install valgrind)"; exit 1; }
[ -x "$after" ] || { echo "tables bench: no $build/sonde; build sonde first (make)"; exit 1; }
[ -f "$corpus" ] || { echo "tables bench: needs $corpus (the shared corpus)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

before=${BASE_SONDE:-}
if [ -z "$before" ]; then
	sha=$(git -C "$src" rev-parse --verify "$base_ref^{commit}")
	bdir="$build/tables-base-${sha:0:12}"
	if [ ! -x "$bdir/sonde" ]; then
		echo "building $base_ref (${sha:0:12}) into $bdir ..."
		rm -rf "$bdir.src" && mkdir -p "$bdir.src"
		git -C "$src" archive "$sha" | tar -x -C "$bdir.src"
		# sonde serve's page is built from npm packages (not in git): this
		# tree's, when BASE has the page and the same lock file.
		if [ -f "$bdir.src/src/web/page/package-lock.json" ] &&
			cmp -s "$bdir.src/src/web/page/package-lock.json" "$src/src/web/page/package-lock.json"; then
			ln -s "$src/src/web/page/node_modules" "$bdir.src/src/web/page/node_modules"
		fi
		cmake -S "$bdir.src" -B "$bdir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$bdir.log" 2>&1 &&
			cmake --build "$bdir" -j "$(nproc)" --target sonde >>"$bdir.log" 2>&1 ||
			{ echo "tables bench: building $base_ref failed, see $bdir.log"; exit 1; }
	fi
	before="$bdir/sonde"
fi

# Inputs.
gzip -dc "$corpus" >"$tmp/perf.txt"
# 50,000 distinct stacks, 4 to 40 frames deep, over 3,000 function names
# and 8 threads: a large profile's shape (a deterministic generator).
awk 'BEGIN {
	s = 12345
	for (i = 0; i < 50000; i++) {
		s = (s * 1103515245 + 12345) % 2147483648
		d = 4 + s % 37
		line = "proc" (i % 8)
		for (k = 0; k < d; k++) {
			f = (i * 7 + k * 131 + (k > d - 3 ? i : 0)) % 3000
			line = line ";func_" f (k % 5 == 0 ? "_[k]" : "")
		}
		print line " " (1 + s % 97)
	}
}' >"$tmp/stacks.folded"
"$after" convert "$tmp/stacks.folded" -o "$tmp/stacks.sonde" 2>/dev/null
libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
read -r text_start text_size < <(readelf -SW "$libc" |
	awk '$2 == ".text" { print $4, $6 } $3 == ".text" { print $5, $7 }' | head -1)
RANDOM=42
start=$((16#$text_start)) size=$((16#$text_size))
for ((i = 0; i < 2000; i++)); do
	printf '0x%x\n' $((start + ((RANDOM << 15 | RANDOM) % size)))
done >"$tmp/addrs"

instructions() { # sonde args... -> instructions executed (callgrind's Ir)
	local bin=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" \
		<"${STDIN:-/dev/null}" >/dev/null 2>"$tmp/vg" || { echo "failed: $bin $*" >&2; cat "$tmp/vg" >&2; exit 1; }
	awk '/Collected :/ { print $NF }' "$tmp/vg"
}

# The window feeder, built against each side's libraries and headers (its
# source tree: BUILD.src for a build made here, else this one); both must
# print the same checksum of their views.
feeder() { # build dir, output
	local inc=$src
	[ -d "$1.src" ] && inc="$1.src"
	cc -O2 -g -I"$inc/src/model" -I"$inc/src/engine" -I"$inc/src/base" -I"$inc/src/symbols" \
		-I"$inc/bpf" "$src/bench/windowfeed.c" "$1/libsonde_model.a" "$1/libsonde_symbols.a" \
		"$1/libsonde_base.a" -lm \
		-o "$2"
}
feeder "$(dirname "$before")" "$tmp/feed-before"
feeder "$(dirname "$after")" "$tmp/feed-after"
[ "$("$tmp/feed-before")" = "$("$tmp/feed-after")" ] ||
	{ echo "tables bench: the window's views differ between the builds"; exit 1; }

printf '%-44s %15s %15s %7s\n' workload "before (Ir)" "after (Ir)" ratio
row() { # label, args... (BEFORE/AFTER: other programs than sonde)
	local label=$1 b a
	shift
	b=$(instructions "${BEFORE:-$before}" "$@")
	a=$(instructions "${AFTER:-$after}" "$@")
	printf '%-44s %15s %15s %7s\n' "$label" "$b" "$a" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
}
row "report (perf script, 3.1 MB)" report "$tmp/perf.txt"
row "report (folded, 50k stacks)" report "$tmp/stacks.folded"
row "report (recording, 50k stacks)" report "$tmp/stacks.sonde"
row "flame (folded, 50k stacks)" flame "$tmp/stacks.folded" -o -
row "convert perf script -> folded" convert "$tmp/perf.txt" --to folded -o -
row "convert perf script -> pprof" convert "$tmp/perf.txt" --to pprof -o -
row "convert perf script -> speedscope" convert "$tmp/perf.txt" --to speedscope -o -
row "convert folded 50k -> pprof" convert "$tmp/stacks.folded" --to pprof -o -
row "convert folded 50k -> speedscope" convert "$tmp/stacks.folded" --to speedscope -o -
row "convert folded 50k -> nflx" convert "$tmp/stacks.folded" --to nflx -o -
row "convert folded 50k -> chrome" convert "$tmp/stacks.folded" --to chrome -o -
STDIN="$tmp/addrs" row "symbolize -e libc.so.6 (2,000 addresses)" symbolize -e "$libc"
BEFORE="$tmp/feed-before" AFTER="$tmp/feed-after" row "live window: 120 s x 2,000 samples, views" 120 2000 5000

# sonde record: the recorder's user-side work, in all of sonde's processes
# (callgrind follows the helpers sonde forks to attach and detach uprobes,
# and the target until its exec; the target's own work runs natively, not
# counted), recording cpubound (fixed CPU work under a 20-frame stack, one
# binary built here for both sides) at 999 Hz with one traced function, its
# calls all recorded. Under callgrind sonde's calibration sees no calls
# (its probes are on code valgrind runs translated copies of), the same on
# both sides. Unlike the offline rows this is not deterministic: the
# samples are as many as the target's CPU time gives, and the ring-buffer
# polls and unwind-table loads follow time; so each side runs ROUNDS (3)
# times, alternating, and the row gives the medians; each run's count is
# printed below it.
if [ "$(id -u)" != 0 ]; then
	echo "record: skipped (recording needs BPF: run as root)"
	exit 0
fi
cc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer "$src/bench/cpubound.c" -o "$tmp/cpubound"
record_ir() { # sonde -> "instructions samples"
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" record -F 999 --trace 'leaf*' \
		--all-calls -o "$tmp/rec.sonde" -- "$tmp/cpubound" 1000 >/dev/null 2>"$tmp/vg" ||
		{ echo "failed: $1 record" >&2; cat "$tmp/vg" >&2; exit 1; }
	awk '/Collected :/ { ir += $NF } /recorded to/ { for (i = 1; i <= NF; i++) if ($i ~ /^samples/) n = $(i - 1) }
	     END { print ir, n }' "$tmp/vg"
}
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
rb=() ra=() runs_b="" runs_a=""
for ((r = 0; r < ${ROUNDS:-3}; r++)); do
	read -r ir n < <(record_ir "$before")
	rb+=("$ir") runs_b+=" $ir ($n samples)"
	read -r ir n < <(record_ir "$after")
	ra+=("$ir") runs_a+=" $ir ($n samples)"
done
mb=$(median "${rb[@]}") ma=$(median "${ra[@]}")
printf '%-44s %15s %15s %7s\n' "record (cpubound 1000, -F 999, --trace leaf*)" "$mb" "$ma" \
	"$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.3f", a / b }')"
echo "record, before:$runs_b"
echo "record, after: $runs_a"
