#!/usr/bin/env bash
# Unwind-table builds (src/symbols/cfi.h): for each binary, the rows and
# bytes of its table and the build time (best of RUNS, the file's pages
# already cached), then the same rows walked with libdw's per-address query
# (dwarf_cfi_addrframe once per row), the alternative the builder replaces.
# Binaries: Debian's libc, pyenv's libpython 3.11 and python 3.11,
# redis-server, sqlite3 and libsqlite3, libcrypto, where installed.
# usage: bench/cfi.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-5}
tool=$build/bench/cfitables
[ -x "$tool" ] || { echo "cfi bench: $tool is missing; build first (make)"; exit 1; }

bins=()
for f in /lib/x86_64-linux-gnu/libc.so.6 \
	/root/.pyenv/versions/3.11*/lib/libpython3.11.so.1.0 \
	/root/.pyenv/versions/3.11*/bin/python3.11 \
	/usr/bin/redis-server /usr/bin/sqlite3 \
	/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 /usr/lib/x86_64-linux-gnu/libcrypto.so.3; do
	[ -r "$f" ] && bins+=("$f")
done
[ ${#bins[@]} -gt 0 ] || { echo "cfi bench: none of the binaries is installed"; exit 1; }

echo "| binary | .text | FDEs | rows | table bytes | build ms | libdw ms (per row) |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for b in "${bins[@]}"; do
	line=$("$tool" --runs "$runs" "$b")
	dw=$("$tool" --libdw --runs "$runs" "$b" | sed -E 's/.* ([0-9.]+) ms$/\1/')
	text=$(readelf -SW "$b" | awk '$2 == ".text" { print $6 } $3 == ".text" { print $7 }' | head -1)
	text=$((16#${text:-0}))
	rows=$(sed -E 's/.*: ([0-9]+) rows.*/\1/' <<<"$line")
	bytes=$(sed -E 's/.* ([0-9]+) bytes.*/\1/' <<<"$line")
	ms=$(sed -E 's/.* ([0-9.]+) ms.*/\1/' <<<"$line")
	fdes=$(sed -E 's/.* ([0-9]+) FDEs.*/\1/' <<<"$line")
	printf '| %s | %d KiB | %s | %s | %d KiB | %s | %s |\n' "$(basename "$b")" $((text / 1024)) \
		"$fdes" "$rows" $((bytes / 1024)) "$ms" "$dw"
done
echo
echo "Rows by CFA rule:"
for b in "${bins[@]}"; do "$tool" "$b" | sed -E 's/^.*FDEs \(/(/; s/^/  '"$(basename "$b")"': /'; done
