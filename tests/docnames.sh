#!/bin/bash
# docs/architecture.md names the code: functions, maps, files. This check
# keeps it true: every name it cites in backticks that looks like code (a
# snake_case word, a word before "(", a file name with a source suffix)
# must still exist in the sources, and fails naming every one that does
# not (renamed or removed: fix the document).
set -u
SRC=${SRC:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$SRC" || exit 1
DOC=${1:-docs/architecture.md}

# Where names may live: the code, its build, its tests and scripts.
WHERE=(src bpf tests/targets tests/layers.sh scripts CMakeLists.txt Makefile)

# The backticked spans of the document (`...`, on one line), one a line;
# fenced blocks are left out: they quote shell and diagrams.
spans=$(awk '/^```/ {fence = !fence; next} !fence' "$DOC" | grep -o '`[^`]*`' | tr -d '`')

# Names that look like code: file names (a source suffix), snake_case
# identifiers (a letter, then an underscore somewhere) and identifiers
# followed by "(" outside them. Patterns (`CMD_*`, `*.bpf.c`) and the
# placeholder of the "where a change goes" examples (foo) are no names.
FILES='[A-Za-z0-9_./*-]+\.(c|h|sh|js|css|html|cmake|mjs)\b'
names=$( {
	grep -oE "$FILES" <<<"$spans"
	sed -E "s#$FILES##g" <<<"$spans" | grep -oE '\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_*]*'
	sed -E "s#$FILES##g" <<<"$spans" | grep -oE '\b[A-Za-z_][A-Za-z0-9_]*\(' | tr -d '('
} | grep -v -e '\*' -e '_$' -e 'foo' | sort -u)

# Every word of the sources, once.
declare -A word
while read -r w; do
	word[$w]=1
done < <(grep -rhoE '[A-Za-z_][A-Za-z0-9_]*' "${WHERE[@]}" 2>/dev/null | sort -u)

missing=0
for n in $names; do
	case $n in
	*/*)
		# A path: from the top, from src/ (`engine/unwind.c`), or a
		# system header the sources include (`asm/unistd.h`).
		[ -e "$n" ] || [ -e "src/$n" ] && continue
		grep -rqF -- "<$n>" src scripts 2>/dev/null && continue
		;;
	*.*)
		# A file name: anywhere in the tree.
		base=$n
		found=$(find src bpf tests scripts docs -name "$base" -print -quit 2>/dev/null)
		[ -n "$found" ] && continue
		# A file the build makes (the skeleton): named where it is made.
		grep -rqF -- "$base" CMakeLists.txt scripts 2>/dev/null && continue
		;;
	*)
		[ -n "${word[$n]+x}" ] && continue
		;;
	esac
	echo "docnames: $DOC cites \`$n\`, which is nowhere in the sources"
	missing=1
done
n=$(wc -w <<<"$names")
[ $missing = 0 ] && echo "docnames: all $n code names $DOC cites exist"
exit $missing
