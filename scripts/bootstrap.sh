#!/usr/bin/env bash
# Installs the Debian packages sonde needs to build, test and run, and only
# those that are missing. Safe to run repeatedly; `make` calls it when a tool
# or library is absent.
set -euo pipefail

packages=(
	build-essential cmake pkg-config clang llvm
	libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libsqlite3-dev libcapstone-dev
	libcriterion-dev
	binutils elfutils libc6-dbg
	libncurses-dev
	sqlite3 jq libxml2-utils procps tmux
	# a real program for tests/integration/probes_redis.sh (which runs its own
	# server on a unix socket; Debian also enables the redis-server service)
	redis-server redis-tools
)
# Node.js runs the independent format checkers; some images ship their own
# build (which conflicts with Debian's npm package), so only add Debian's
# when the commands are missing.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

install_js_checkers() {
	# Independent decoders/schemas the format tests use (tests/js/package.json).
	local js
	js="$(dirname "$0")/../tests/js"
	if [ ! -d "$js/node_modules/pprof-format" ] || [ "$js/package.json" -nt "$js/node_modules" ]; then
		echo "bootstrap: installing the npm packages of tests/js"
		(cd "$js" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
		touch "$js/node_modules"
	fi
}

if [ ${#missing[@]} -eq 0 ]; then
	install_js_checkers
	exit 0
fi

echo "bootstrap: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "bootstrap: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
	sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
install_js_checkers
