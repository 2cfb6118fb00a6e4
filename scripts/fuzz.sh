#!/usr/bin/env bash
# Runs every libFuzzer target a sanitizer build has for a set time each.
# usage: scripts/fuzz.sh BUILD_DIR SECONDS [NAME...]
#
# The targets are found in the build (BUILD_DIR/tests/fuzz_*), so one added
# as tests/fuzz/fuzz_NAME.c joins by itself. Each starts from its corpus
# tests/fuzz/corpus/NAME/ (FUZZ_CORPUS=DIR: DIR/NAME/), writes what it finds
# in BUILD_DIR/fuzz-work/NAME/, and then the inputs that reach code the
# corpus did not are merged into the corpus (libFuzzer's -merge=1), so it
# grows by what adds coverage only: commit the small ones as seeds.
# Crashes, leaks and timeouts are written to BUILD_DIR/fuzz-artifacts/NAME/
# and make the run fail, naming the target and the input that reproduces
# them.
set -uo pipefail

build=${1:?usage: fuzz.sh BUILD_DIR SECONDS [NAME...]}
seconds=${2:?usage: fuzz.sh BUILD_DIR SECONDS [NAME...]}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
corpora=${FUZZ_CORPUS:-$root/tests/fuzz/corpus}

case $seconds in
'' | *[!0-9]*) echo "fuzz: FUZZ_SECONDS must be a whole number of seconds, not '$seconds'" >&2; exit 2 ;;
esac

targets=()
if [ $# -gt 0 ]; then
	for name in "$@"; do targets+=("$build/tests/fuzz_$name"); done
else
	for bin in "$build"/tests/fuzz_*; do
		[ -f "$bin" ] && [ -x "$bin" ] && targets+=("$bin")
	done
fi
if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz: no fuzz targets in $build/tests: build them with 'make sanitize'" >&2
	exit 2
fi

failed=()
for bin in "${targets[@]}"; do
	name=$(basename "$bin")
	name=${name#fuzz_}
	[ -x "$bin" ] || { echo "fuzz: no target $bin" >&2; failed+=("$name"); continue; }
	corpus="$corpora/$name"
	work="$build/fuzz-work/$name"
	artifacts="$build/fuzz-artifacts/$name"
	mkdir -p "$corpus" "$work" "$artifacts"
	before=$(find "$corpus" -type f | wc -l)
	echo "fuzz: $name for ${seconds}s from $corpus ($before inputs)"
	touch "$artifacts/.started" # what is newer is this run's
	# A reader's larger inputs and the shared corpus's captures
	# (tests/fuzz/readers.txt).
	extra=()
	read -r -a reader < <(awk -v n="$name" '$1 == n' "$root/tests/fuzz/readers.txt")
	if [ ${#reader[@]} -gt 0 ]; then
		extra+=("-max_len=${reader[1]}")
		for d in "${reader[@]:2}"; do
			[ -d "$root/../shared/corpus/$d" ] ||
				{ echo "fuzz: $name: $root/../shared/corpus/$d is missing: the shared corpus belongs beside the repository" >&2; failed+=("$name"); continue 2; }
			extra+=("$root/../shared/corpus/$d")
		done
	fi
	if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$artifacts/" -print_final_stats=1 "${extra[@]:0:1}" "$work" "$corpus" \
		"${extra[@]:1}" >"$artifacts/log" 2>&1; then
		echo "fuzz: $name FAILED: $(grep -m1 -E '(ERROR|runtime error|SUMMARY)' "$artifacts/log")" >&2
		input=$(find "$artifacts" -type f ! -name '*log' -newer "$artifacts/.started" -printf '%T@ %p\n' |
			sort -n | tail -1 | cut -d' ' -f2-)
		echo "fuzz:   ${input:+reproduce with: $bin $input; }log: $artifacts/log" >&2
		failed+=("$name")
		continue
	fi
	runs=$(grep -m1 -o 'number_of_executed_units: *[0-9]*' "$artifacts/log" | grep -o '[0-9]*$')
	if ! "$bin" -merge=1 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$artifacts/" \
		"$corpus" "$work" >"$artifacts/merge.log" 2>&1; then
		echo "fuzz: $name: merging into $corpus failed (log: $artifacts/merge.log)" >&2
		failed+=("$name")
		continue
	fi
	echo "fuzz: $name ok: ${runs:-?} runs; corpus $before -> $(find "$corpus" -type f | wc -l) inputs"
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: failed: ${failed[*]}" >&2
	exit 1
fi
