#!/usr/bin/env bash
# The documentation has a page for every command and a row for every test,
# and its links lead somewhere:
#  - every command of src/cli/main.c's table has docs/COMMAND.md, starting
#    "# sonde COMMAND", a synopsis line "`sonde COMMAND ...`", then the
#    sections OPTIONS and EXAMPLES in that order (the man pages will be made
#    from them); README.md and docs/README.md link it;
#  - every test file (tests/integration/*.sh but lib.sh, tests/unit/*/test_*.c,
#    tests/fuzz/fuzz_*.c, tests/*.sh) has its row in tests/README.md;
#  - every relative link of README.md, docs/*.md, tests/README.md and
#    bench/README.md names a file that exists, and a #fragment one of its
#    headings (GitHub's anchors).
# (The OPTIONS of each page against `sonde COMMAND --help`:
# tests/integration/docs_help.sh.)
set -u
cd "${SRC:-$(dirname "$0")/..}" || exit 1
fails=0
complain() { echo "docpages: $*" >&2; fails=$((fails + 1)); }

commands=$(sed -n 's/^[[:space:]]*{"\([a-z]*\)", cmd_.*/\1/p' src/cli/main.c)
[ -n "$commands" ] || complain "no command table found in src/cli/main.c"
for cmd in $commands; do
	page=docs/$cmd.md
	if [ ! -f "$page" ]; then
		complain "sonde $cmd has no page $page"
		continue
	fi
	[ "$(sed -n 1p "$page")" = "# sonde $cmd" ] || complain "$page: line 1 is not '# sonde $cmd'"
	sed -n 3p "$page" | grep -q "^\`sonde $cmd[ \`]" ||
		complain "$page: line 3 is not the synopsis, \`sonde $cmd ...\`"
	opt=$(grep -n '^## OPTIONS$' "$page" | head -1 | cut -d: -f1)
	ex=$(grep -n '^## EXAMPLES$' "$page" | head -1 | cut -d: -f1)
	[ -n "$opt" ] || complain "$page has no '## OPTIONS' section"
	[ -n "$ex" ] || complain "$page has no '## EXAMPLES' section"
	[ -n "$opt" ] && [ -n "$ex" ] && [ "$opt" -ge "$ex" ] && complain "$page: OPTIONS comes after EXAMPLES"
	grep -q "](docs/$cmd.md)" README.md || complain "README.md does not link docs/$cmd.md"
	grep -q "]($cmd.md)" docs/README.md || complain "docs/README.md does not link $cmd.md"
done

for f in tests/integration/*.sh tests/unit/*/test_*.c tests/fuzz/fuzz_*.c tests/*.sh; do
	[ "$f" = tests/integration/lib.sh ] && continue
	rel=${f#tests/}
	grep -qF "| \`$rel\` |" tests/README.md || complain "tests/README.md has no row for $rel"
done

# GitHub's anchor of a heading: lower case, punctuation but - and _ dropped,
# spaces to -.
anchors() {
	grep '^#\{1,6\} ' "$1" | sed 's/^#* //' | tr 'A-Z' 'a-z' |
		sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}
for doc in README.md docs/*.md tests/README.md bench/README.md; do
	dir=$(dirname "$doc")
	# [text](target) outside code: targets without a scheme are files here
	grep -o '\]([^)]*)' "$doc" | sed 's/^](//; s/)$//' | while read -r target; do
		case $target in
		http://* | https://* | mailto:*) continue ;;
		esac
		file=${target%%#*}
		frag=
		[ "$file" != "$target" ] && frag=${target#*#}
		[ -n "$file" ] && path=$dir/$file || path=$doc
		if [ ! -e "$path" ]; then
			echo "docpages: $doc links $target: $path does not exist" >&2
			echo x
			continue
		fi
		if [ -n "$frag" ] && [ "${path%.md}" != "$path" ] &&
			! anchors "$path" | grep -qxF -- "$frag"; then
			echo "docpages: $doc links $target: $path has no heading with that anchor" >&2
			echo x
		fi
	done | grep -q x && fails=$((fails + 1))
done

[ "$fails" = 0 ] || { echo "docpages: $fails problems" >&2; exit 1; }
echo "docpages: every command has its page, every test its row, every link its target"
