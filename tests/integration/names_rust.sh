# Rust names as people read them (issue 24), in both manglings:
# tests/targets/rustnames.rs built by rustc with the legacy mangling
# (_ZN9rustnames6shapes6Sorter6crunch17h...E) and with v0
# (_RNvMNtCs..._9rustnames6shapesNtB2_6Sorter6crunch): --trace takes
# rustnames::shapes::Sorter::crunch in both, every output shows that name
# (no hash, no linkage name), and pprof keeps the linkage name as
# system_name. Counts are the target's own. Needs rustc (skipped without).
. "$(dirname "$0")/lib.sh"
require_bpf
RUSTC=$(command -v rustc || true)
for c in "$HOME/.cargo/bin/rustc" /root/.cargo/bin/rustc; do
	[ -n "$RUSTC" ] || { [ -x "$c" ] && RUSTC=$c; }
done
[ -n "$RUSTC" ] || skip "rustc is not installed (rustup or Debian's rustc): the Rust names need a Rust program"
N=2000
NAME='rustnames::shapes::Sorter::crunch'

for mangling in legacy v0; do
	# (legacy is rustc's default, and naming it needs -Z unstable-options)
	flags=()
	[ "$mangling" = v0 ] && flags=(-C symbol-mangling-version=v0)
	"$RUSTC" -C opt-level=2 -g -C force-frame-pointers=yes "${flags[@]}" \
		-o "$WORK/rn-$mangling" "$SRC/tests/targets/rustnames.rs" 2>"$WORK/rustc.err" ||
		{ cat "$WORK/rustc.err"; fail "rustc could not build rustnames.rs ($mangling mangling)"; }
	linkage=$(nm "$WORK/rn-$mangling" | awk '/6crunch/ && !seen { print $3; seen = 1 }')
	case $mangling/$linkage in
	legacy/_ZN*17h*E | v0/_R*) ;;
	*) fail "$mangling: crunch is linked as '$linkage'" ;;
	esac
	"$SONDE" record -F 999 --trace "$NAME" -o "$WORK/$mangling.sonde" -- "$WORK/rn-$mangling" "$N" >"$WORK/out.txt"
	[ "$(kv "$WORK/out.txt" calls)" = "$N" ] || fail "$mangling: the target made $(kv "$WORK/out.txt" calls) calls"
	"$SONDE" report --json "$WORK/$mangling.sonde" >"$WORK/r.json"
	[ "$(jq --arg f "$NAME" '.probes[] | select(.name == $f) | .kernel_calls' "$WORK/r.json")" = "$N" ] ||
		fail "$mangling: --trace $NAME: probes $(jq -c '[.probes[] | {name, kernel_calls}]' "$WORK/r.json")"
	"$SONDE" report "$WORK/$mangling.sonde" >"$WORK/r.txt"
	"$SONDE" report --folded "$WORK/$mangling.sonde" >"$WORK/r.folded"
	"$SONDE" flame "$WORK/$mangling.sonde" -o "$WORK/r.svg"
	for out in r.txt r.json r.folded r.svg; do
		grep -qF "$NAME" "$WORK/$out" || fail "$mangling: $out does not name $NAME"
		if grep -Eq '_ZN[0-9]|_RN[a-zA-Z]|17h[0-9a-f]{16}' "$WORK/$out"; then
			fail "$mangling: $out shows linkage names or hashes: $(grep -Eo '_(ZN|RN)[A-Za-z0-9_$.]+|17h[0-9a-f]{16}' "$WORK/$out" | sort -u | head -3)"
		fi
	done
	"$SONDE" convert "$WORK/$mangling.sonde" -o "$WORK/r.pb.gz"
	node "$SRC/tests/js/check_pprof.mjs" "$WORK/r.pb.gz" >"$WORK/pp.json" ||
		fail "$mangling: pprof-format could not decode the pprof"
	jq -e --arg n "$NAME" --arg s "$linkage" '.function_names | index({"name": $n, "system_name": $s}) != null' \
		"$WORK/pp.json" >/dev/null ||
		fail "$mangling: pprof functions: $(jq -c --arg n "$NAME" '[.function_names[] | select(.name == $n)]' "$WORK/pp.json")"
	pass "$mangling mangling ($linkage): --trace $NAME counted $N calls; every output shows the name, pprof the linkage name"
done
