# Each command's page, docs/COMMAND.md, shows under OPTIONS exactly what
# `sonde COMMAND --help` prints, and docs/README.md's table says what
# `sonde --help` says of each command: the docs and --help agree (no BPF,
# no root).
set -u
fails=0
cd "$SRC" || exit 1
commands=$(sed -n 's/^[[:space:]]*{"\([a-z]*\)", cmd_.*/\1/p' src/cli/main.c)
[ -n "$commands" ] || { echo "no command table in src/cli/main.c"; exit 1; }
for cmd in $commands; do
	page=docs/$cmd.md
	# the first ```text block after "## OPTIONS"
	doc=$(awk '/^## OPTIONS$/ { opt = 1; next }
		opt && /^```text$/ { inblock = 1; next }
		inblock && /^```$/ { exit }
		inblock { print }' "$page")
	help=$("$SONDE" "$cmd" --help 2>&1)
	if [ -z "$doc" ]; then
		echo "FAIL: $page has no \`\`\`text block under ## OPTIONS"
		fails=$((fails + 1))
	elif [ "$doc" != "$help" ]; then
		echo "FAIL: $page's OPTIONS differ from sonde $cmd --help (< page, > --help):"
		diff <(printf '%s\n' "$doc") <(printf '%s\n' "$help") | head -20
		fails=$((fails + 1))
	fi
	# sonde --help's line for the command, against docs/README.md's row
	line=$("$SONDE" --help 2>&1 | sed -n "s/^  $cmd  *//p")
	if [ -z "$line" ]; then
		echo "FAIL: sonde --help does not list $cmd"
		fails=$((fails + 1))
	elif ! grep -qxF "| [$cmd]($cmd.md) | $line |" docs/README.md; then
		echo "FAIL: docs/README.md's row for $cmd is not '| [$cmd]($cmd.md) | $line |'"
		fails=$((fails + 1))
	fi
done
[ "$fails" = 0 ] || exit 1
echo "docs_help: every page's OPTIONS are its command's --help"
