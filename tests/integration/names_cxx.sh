# C++ names as people read them (issue 24): tests/targets/cxx/shop.cpp's
# functions are linked as _ZNK4shop4Cart5totalEi and the like; every output
# shows shop::Cart::total (report text and JSON, folded, the flame graph in
# the C++ colour, pprof with the linkage name as system_name, the
# recording's frames), --trace and lat take the demangled name, its
# whole signature and globs over demangled names, and symbolize prints what
# `addr2line -C` prints. Counts are the target's own.
. "$(dirname "$0")/lib.sh"
require_bpf
SHOP="$TARGETS/shop"
N=3000

"$SONDE" record -F 999 --trace 'shop::Cart::total' --trace 'shop::scale<long>' -o "$WORK/r.sonde" -- \
	"$SHOP" "$N" >"$WORK/out.txt"
calls=$(kv "$WORK/out.txt" calls)
[ "$calls" = "$N" ] || fail "the target made $calls calls, expected $N"
"$SONDE" report --json "$WORK/r.sonde" >"$WORK/r.json"
for f in 'shop::Cart::total' 'shop::scale<long>'; do
	got=$(jq --arg f "$f" '.probes[] | select(.name == $f) | .kernel_calls' "$WORK/r.json")
	[ "$got" = "$N" ] || fail "--trace '$f': '$got' calls counted in the kernel, expected $N"
done
pass "--trace by demangled name: shop::Cart::total and shop::scale<long>, $N calls each"
jq -e '[.functions[].name] | index("shop::Cart::total") != null' "$WORK/r.json" >/dev/null ||
	fail "report --json: no function shop::Cart::total: $(jq -c '[.functions[].name]' "$WORK/r.json")"

# No linkage name in any output a person reads.
"$SONDE" report "$WORK/r.sonde" >"$WORK/r.txt"
"$SONDE" report --folded "$WORK/r.sonde" >"$WORK/r.folded"
"$SONDE" flame "$WORK/r.sonde" -o "$WORK/r.svg"
"$SONDE" convert "$WORK/r.sonde" -o "$WORK/c.folded"
for out in r.txt r.json r.folded r.svg c.folded; do
	grep -q 'shop::Cart::total' "$WORK/$out" || fail "$out does not name shop::Cart::total"
	if grep -Eq '_ZN|_ZZ' "$WORK/$out"; then
		fail "$out shows linkage names: $(grep -Eo '_Z[A-Za-z0-9_]+' "$WORK/$out" | sort -u | head -3)"
	fi
done
pass "report, JSON, folded, flame graph and convert show demangled names only"

# The C++ colour: yellow (red and green high, blue low), not the C red.
fill=$(grep -o '<g class="f" data-name="shop::Cart::total"[^>]*><title>[^<]*</title><rect [^>]*fill="rgb([0-9,]*)"' \
	"$WORK/r.svg" | head -n1 | grep -o 'rgb([0-9,]*)' | tr -d 'rgb()')
IFS=, read -r red green blue <<<"$fill"
need_numbers "the fill of shop::Cart::total" "$red" "$green" "$blue"
[ "$red" -ge 200 ] && [ "$green" -ge 150 ] && [ "$blue" -le 110 ] ||
	fail "shop::Cart::total is drawn rgb($fill), not in the C++ yellow"
pass "the flame graph draws C++ frames yellow: rgb($fill)"

# The recording keeps the linkage name beside the name; pprof too.
[ "$(sqlite3 "$WORK/r.sonde" "SELECT DISTINCT system_name FROM frames WHERE name = 'shop::Cart::total'")" = _ZNK4shop4Cart5totalEi ] ||
	fail "frames.system_name of shop::Cart::total: $(sqlite3 "$WORK/r.sonde" "SELECT DISTINCT system_name FROM frames WHERE name = 'shop::Cart::total'")"
"$SONDE" convert "$WORK/r.sonde" -o "$WORK/r.pb.gz"
command -v node >/dev/null && [ -d "$SRC/tests/js/node_modules/pprof-format" ] ||
	fail "node or tests/js/node_modules is missing: run make test-deps (the pprof decoder check needs them)"
node "$SRC/tests/js/check_pprof.mjs" "$WORK/r.pb.gz" >"$WORK/pp.json" || fail "pprof-format could not decode the pprof"
jq -e '.function_names | index({"name": "shop::Cart::total", "system_name": "_ZNK4shop4Cart5totalEi"}) != null' \
	"$WORK/pp.json" >/dev/null || fail "pprof functions: $(jq -c .function_names "$WORK/pp.json")"
"$SONDE" report --json "$WORK/r.pb.gz" | jq -e '[.functions[].name] | index("shop::Cart::total") != null' >/dev/null ||
	fail "the pprof read back lost the demangled name"
"$SONDE" convert "$WORK/r.pb.gz" -o "$WORK/back.sonde"
[ "$(sqlite3 "$WORK/back.sonde" "SELECT DISTINCT system_name FROM frames WHERE name = 'shop::Cart::total'")" = _ZNK4shop4Cart5totalEi ] ||
	fail "recording -> pprof -> recording lost the linkage name"
pass "frames.system_name and pprof's Function.system_name hold _ZNK4shop4Cart5totalEi"

# Specs: the whole signature, globs over demangled names, lat; a near miss
# suggests demangled names.
"$SONDE" record -F 49 --trace 'shop::Cart::total(int) const' -o "$WORK/sig.sonde" -- "$SHOP" 200 >/dev/null
[ "$("$SONDE" report --json "$WORK/sig.sonde" | jq '.probes[0].kernel_calls')" = 200 ] ||
	fail "--trace 'shop::Cart::total(int) const' did not trace the 200 calls"
"$SONDE" record -F 49 --trace 'shop::*' -o "$WORK/glob.sonde" -- "$SHOP" 200 >/dev/null
[ "$("$SONDE" report --json "$WORK/glob.sonde" | jq -r '[.probes[].name] | sort | join(",")')" = 'shop::Cart::total,shop::scale<long>' ] ||
	fail "--trace 'shop::*' traced: $("$SONDE" report --json "$WORK/glob.sonde" | jq -c '[.probes[].name]')"
"$SONDE" lat 'shop::Cart::total' -- "$SHOP" 300 >"$WORK/lat.out" 2>"$WORK/lat.err" ||
	{ cat "$WORK/lat.err"; fail "lat 'shop::Cart::total' failed"; }
grep -q '^shop::Cart::total: 300 calls, ' "$WORK/lat.out" ||
	{ cat "$WORK/lat.out"; fail "lat 'shop::Cart::total' did not count its 300 calls"; }
expect_error "no function 'shop::Cart::totl' .*nearest: shop::Cart::total" "" -- \
	"$SONDE" record -F 49 --trace 'shop::Cart::totl' -o "$WORK/x.sonde" -- "$SHOP" 1
pass "specs: the whole signature, 'shop::*', lat, and a near miss's suggestion"

# symbolize: as addr2line -C; --mangled as addr2line.
addr=0x$(nm "$SHOP" | awk '$3 == "_ZNK4shop4Cart5totalEi" { print $1 }')
cmp -s <("$SONDE" symbolize -e "$SHOP" "$addr") <(addr2line -f -i -C -e "$SHOP" "$addr") ||
	fail "symbolize: $("$SONDE" symbolize -e "$SHOP" "$addr" | head -1), addr2line -C: $(addr2line -f -C -e "$SHOP" "$addr" | head -1)"
cmp -s <("$SONDE" symbolize --mangled -e "$SHOP" "$addr") <(addr2line -f -i -e "$SHOP" "$addr") ||
	fail "symbolize --mangled differs from addr2line"
pass "symbolize prints what addr2line -C prints; --mangled what addr2line prints"
