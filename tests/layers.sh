#!/bin/bash
# The layers of ../shared/DESIGN.md are the folders of src/: a file includes
# headers of its own folder and of layers below it, never above or beside.
# The build enforces this for what it compiles (each layer's library sees
# only its own folder and what it links); this check states the rule on the
# sources themselves, headers included, and fails naming every break.
set -u
SRC=${SRC:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$SRC" || exit 1

# Rank of each layer, bottom up. Equal ranks are siblings, which may not
# include each other (formats and render; the live frontends).
declare -A rank=([base]=0 [symbols]=1 [engine]=2 [model]=3 [formats]=4 [render]=4
		 [session]=5 [tui]=6 [web]=6 [cli]=7)
fail=0
complain() { echo "layers: $*"; fail=1; }

# Only the folders DESIGN.md names; and no loose files beside them.
for d in src/*; do
	name=${d#src/}
	if [ -d "$d" ]; then
		[ -n "${rank[$name]+x}" ] || complain "src/$name is not a layer of DESIGN.md"
	else
		complain "$d sits outside the layer folders"
	fi
done

# Header names are unique across layers (includes name the file alone).
dups=$(ls src/*/*.h | xargs -n1 basename | sort | uniq -d)
[ -z "$dups" ] || complain "header names used in two layers: $dups"

# Where each header lives.
declare -A home
for h in src/*/*.h; do
	f=${h#src/}
	home[${f#*/}]=${f%%/*}
done

for file in src/*/*.[ch]; do
	layer=${file#src/}
	layer=${layer%%/*}
	while IFS= read -r inc; do
		case "$inc" in
		sonde_abi.h) continue ;; # bpf/: below, with what reaches it through headers
		sonde.skel.h | vmlinux.h)               # generated from bpf/: the engine's
			[ "$layer" = engine ] || complain "$file includes $inc: only the engine loads the BPF object"
			continue ;;
		esac
		to=${home[$inc]:-}
		if [ -z "$to" ]; then
			complain "$file includes \"$inc\", which is in no layer"
		elif [ "$to" != "$layer" ] && [ "${rank[$to]}" -ge "${rank[$layer]}" ]; then
			complain "$file ($layer) includes $inc from $to, a layer above or beside it"
		elif [ "$to" = engine ] && [[ $layer =~ ^(model|formats|render)$ ]]; then
			complain "$file ($layer) includes $inc: profiles are read, written and drawn without the kernel (the session runs the engine)"
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done

# sonde_abi.h (bpf/) is what the kernel and sonde share: it stays with the
# engine, the record decoders (model/collector, values, latency) and the
# writers of kernel data (symbols/cfi.c and cficache.c: unwind rows;
# dwarfexpr and dwarfvar.c: fetch programs; probepy.c: which Python
# calls a py: probe times). No other file
# reaches it, directly or through headers: a header of theirs that included
# it would hand the kernel's ABI to every file above that includes the
# header (engine.h to the whole session), so such a header names its own
# types and declares the kernel's opaquely (struct sonde_fetch_prog;).
abi_reader() {
	case "$1" in
	src/engine/* | src/model/collector.c | src/model/values.c | src/model/latency.c | \
		src/symbols/cfi.c | src/symbols/cficache.c | src/symbols/dwarfexpr.[ch] | \
		src/symbols/dwarfvar.c | src/symbols/usdtfetch.c | src/symbols/probepy.c) return 0 ;;
	esac
	return 1
}
quoted_includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"; }
# abi_path[h]: how header h reaches sonde_abi.h ("engine.h -> sonde_abi.h"),
# to a fixed point over the headers' includes.
declare -A abi_path
changed=1
while [ "$changed" = 1 ]; do
	changed=0
	for h in src/*/*.h; do
		name=${h##*/}
		[ -n "${abi_path[$name]:-}" ] && continue
		while IFS= read -r inc; do
			if [ "$inc" = sonde_abi.h ]; then
				abi_path[$name]="$name -> sonde_abi.h"
			elif [ -n "${abi_path[$inc]:-}" ]; then
				abi_path[$name]="$name -> ${abi_path[$inc]}"
			else
				continue
			fi
			changed=1
			break
		done < <(quoted_includes "$h")
	done
done
for file in src/*/*.[ch]; do
	abi_reader "$file" && continue
	while IFS= read -r inc; do
		if [ "$inc" = sonde_abi.h ]; then
			complain "$file includes sonde_abi.h: the kernel's ABI stays with the engine, the record decoders and the writers of kernel data"
		elif [ -n "${abi_path[$inc]:-}" ]; then
			complain "$file reaches sonde_abi.h through ${abi_path[$inc]}: the kernel's ABI stays with the engine, the record decoders and the writers of kernel data"
		fi
	done < <(quoted_includes "$file")
done

# Each external library is private to the layer that owns it: its headers
# are included by that layer's .c files only. A header of the layer would
# hand the library to every layer above (they see its headers), so a
# header names a library's types opaquely (typedef struct Elf Elf;), or is
# the layer's private header: its first line says "(private to LAYER)",
# and only files of its own layer include it (libdw's Dwarf_Die is an
# unnamed struct, which no header can name opaquely).
declare -A private
for file in src/*/*.h; do
	layer=${file#src/}
	layer=${layer%%/*}
	head -1 "$file" | grep -q "(private to $layer)" && private[${file##*/}]=$layer
done
for file in src/*/*.[ch]; do
	layer=${file#src/}
	layer=${layer%%/*}
	while IFS= read -r inc; do
		own=${private[$inc]:-}
		[ -n "$own" ] && [ "$own" != "$layer" ] &&
			complain "$file ($layer) includes $inc, which is private to $own"
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done
declare -A owner=([zlib.h]=base [elfutils]=symbols [libelf.h]=symbols [gelf.h]=symbols
		  [dwarf.h]=symbols [capstone]=symbols [bpf]=engine [sqlite3.h]=formats
		  [curses.h]=tui [ncurses.h]=tui [ncursesw]=tui [microhttpd.h]=web)
for file in src/*/*.[ch]; do
	layer=${file#src/}
	layer=${layer%%/*}
	while IFS= read -r inc; do
		lib=${inc%%/*}
		own=${owner[$lib]:-}
		[ -n "$own" ] || continue
		if [ "$own" != "$layer" ]; then
			complain "$file ($layer) includes <$inc>: that library is $own's own"
		elif [ "${file%.h}" != "$file" ] && [ -z "${private[${file##*/}]:-}" ]; then
			complain "$file includes <$inc>: a header would hand $own's library to the layers above"
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' "$file")
done

# Inside a layer, modules (a .c and its .h) form no circle: when a.c or a.h
# includes b.h and b's files include a.h, neither can be read or tested
# without the other, so one of them holds a job of the other's. Depth-first
# search over the module graph; each circle is named once, by its path.
declare -A deps
for file in src/*/*.[ch]; do
	layer=${file#src/}
	layer=${layer%%/*}
	base=${file##*/}
	mod=$layer/${base%.*}
	while IFS= read -r inc; do
		to=${home[$inc]:-}
		[ "$to" = "$layer" ] || continue
		dep=$layer/${inc%.h}
		[ "$dep" = "$mod" ] && continue
		case " ${deps[$mod]:-} " in *" $dep "*) ;; *) deps[$mod]="${deps[$mod]:-} $dep" ;; esac
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done
declare -A state # 1: on the current path, 2: done
path=()
visit() {
	local m=$1 d i
	state[$m]=1
	path+=("$m")
	for d in ${deps[$m]:-}; do
		if [ "${state[$d]:-0}" = 1 ]; then
			local circle=""
			for ((i = ${#path[@]} - 1; i >= 0; i--)); do
				circle="${path[i]} -> $circle"
				[ "${path[i]}" = "$d" ] && break
			done
			complain "include circle inside a layer: $circle$d"
		elif [ "${state[$d]:-0}" = 0 ]; then
			visit "$d"
		fi
	done
	unset 'path[${#path[@]}-1]'
	state[$m]=2
}
for m in $(printf '%s\n' "${!deps[@]}" | sort); do
	[ "${state[$m]:-0}" = 0 ] && visit "$m"
done

[ "$fail" = 0 ] && echo "layers: every include goes down or stays in its layer, no circle inside a layer, every library stays with its owner"
exit "$fail"
