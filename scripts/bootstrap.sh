#!/usr/bin/env bash
# Installs the Debian packages sonde needs, and only those that are missing.
# Safe to run repeatedly; make calls it before building.
#
#   scripts/bootstrap.sh build   what `make`, `make demo` need: the compilers,
#                                the libraries sonde links, Criterion (the
#                                default build compiles the unit tests too),
#                                Node.js and the npm packages sonde serve's
#                                page is built from (src/web/page, npm ci)
#   scripts/bootstrap.sh test    that, plus everything `make test` uses: the
#                                clang sanitizer/libFuzzer runtimes, the tools
#                                the tests compare against, chromium for the
#                                page's tests, and the npm packages of tests/js
# The two npm steps (npm ci in src/web/page, npm install in tests/js) are the
# only ones that need the npm registry.
#
# Packages are installed without their Recommends, so everything used is
# named here.
set -euo pipefail

mode=${1:-build}
case "$mode" in
build | test) ;;
*)
	echo "usage: $0 [build|test]" >&2
	exit 2
	;;
esac

packages=(
	build-essential cmake pkg-config
	clang llvm # clang compiles the BPF programs (and the sanitizer build)
	libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libsqlite3-dev libncurses-dev
	libcapstone-dev # decodes instructions: a probe address must start one
	libiberty-dev # demangles C++ and Rust names (binutils' and GCC's demangler)
	libmicrohttpd-dev # sonde serve's HTTP server
	libcriterion-dev # tests/unit, built by the default build
)
if [ "$mode" = test ]; then
	packages+=(
		# ASan/UBSan and libFuzzer runtimes (libclang_rt.*.a): only a
		# Recommends of clang, so not there with --no-install-recommends
		libclang-rt-dev
		# what the tests compare against or drive
		binutils elfutils libc6-dbg # addr2line, readelf, nm, objdump; libc's debug info
		linux-perf                  # names_debian.sh compares against perf
		sqlite3 jq libxml2-utils procps tmux util-linux
		time # /usr/bin/time: the off-CPU test reads sonde's peak memory
		curl # the HTTP tests of sonde serve
		# a real program for tests/integration/probes_redis.sh (which runs its
		# own server on a unix socket; Debian also enables the redis-server
		# service)
		redis-server redis-tools
		chromium # a real browser for tests/integration/serve_page.sh
		python3.11 # a real interpreter without frame pointers: unwind_python.sh
		gdb # reads the Python interpreters' DWARF: python_layout.sh compares with it
		systemtap-sdt-dev # <sys/sdt.h>: the SDT probes of tests/targets/usdt
		bpftrace # python_usdt.sh compares sonde's list of USDT probes with bpftrace -l
	)
fi
# Node.js: npm installs the packages the page is built from, and node runs
# the independent format checkers and the browser tests. Some images ship
# their own build (which conflicts with Debian's npm package), so only add
# Debian's when the commands are missing.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	echo "bootstrap: installing ${missing[*]}"
	sudo_cmd=()
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || {
			echo "bootstrap: need root (or sudo) to install: ${missing[*]}" >&2
			exit 1
		}
		sudo_cmd=(sudo)
	fi
	export DEBIAN_FRONTEND=noninteractive
	"${sudo_cmd[@]}" apt-get update -q
	"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The npm packages sonde serve's page is built from, exactly as
# src/web/page/package-lock.json pins them.
# node_modules/.sonde-installed marks an install that ended well: one cut
# short (no registry) leaves packages half there, and the next run must
# install them again, not take them for complete.
page="$(dirname "$0")/../src/web/page"
stamp="$page/node_modules/.sonde-installed"
if [ ! -f "$stamp" ] || [ "$page/package-lock.json" -nt "$stamp" ]; then
	echo "bootstrap: installing the npm packages of src/web/page (npm ci)"
	(cd "$page" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || {
		echo "bootstrap: npm ci in src/web/page failed (the page's packages come from the npm registry)" >&2
		exit 1
	}
	touch "$stamp"
fi

if [ "$mode" = test ]; then
	# Independent decoders/schemas the format tests use (tests/js/package.json).
	js="$(dirname "$0")/../tests/js"
	stamp="$js/node_modules/.sonde-installed"
	if [ ! -f "$stamp" ] || [ "$js/package.json" -nt "$stamp" ]; then
		echo "bootstrap: installing the npm packages of tests/js"
		(cd "$js" && npm install --no-audit --no-fund --loglevel=error >/dev/null) || {
			echo "bootstrap: npm install in tests/js failed (the format tests need the npm registry)" >&2
			exit 1
		}
		touch "$stamp"
	fi
fi
