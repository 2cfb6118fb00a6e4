# Bad probe specs: one clear line each, no recording left behind.
. "$(dirname "$0")/lib.sh"
require_bpf

out="$WORK/x.sonde"
expect_error "no function 'handle_reqest' in .*requests; nearest: handle_request" "$out" -- \
	"$SONDE" record --trace handle_reqest -o "$out" -- "$TARGETS/requests" 10
expect_error "no function in .*requests matches 'zzz_\*'" "$out" -- \
	"$SONDE" record --trace 'zzz_*' -o "$out" -- "$TARGETS/requests" 10
expect_error "cannot find the binary or library 'libnosuch'" "$out" -- \
	"$SONDE" record --trace libnosuch:foo -o "$out" -- "$TARGETS/requests" 10
expect_error "'request_is_slow' exists only inlined in .*requests \(1 place: handle_request at requests.c:[0-9]+\); trace a caller instead" "$out" -- \
	"$SONDE" record --trace request_is_slow -o "$out" -- "$TARGETS/requests" 10
cp "$TARGETS/requests" "$WORK/stripped"
strip --strip-all "$WORK/stripped"
expect_error "^sonde: --trace handle_request: no symbol handle_request: .*/stripped has no debug info; install its -dbgsym package or build with -g$" "$out" -- \
	"$SONDE" record --trace handle_request -o "$out" -- "$WORK/stripped" 10
