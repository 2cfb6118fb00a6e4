# make fuzz (scripts/fuzz.sh): every fuzz target a build has runs for the
# time given, from its corpus; what adds coverage is merged back into the
# corpus; a crash fails the run, naming the target and the input. Fake
# libFuzzer binaries stand in for the real ones (only the sanitizer build
# has those) and log how they were run.
. "$(dirname "$0")/lib.sh"

B="$WORK/build"
mkdir -p "$B/tests" "$WORK/corpus/alpha"
echo seed >"$WORK/corpus/alpha/seed"
cat >"$WORK/fake" <<'EOF'
#!/usr/bin/env bash
# A libFuzzer stand-in: a run adds one input to the first directory (and a
# crashing target writes a crash input); -merge=1 copies the second
# directory's inputs into the first.
echo "$(basename "$0") $*" >>"$(dirname "$0")/../../calls"
merge=0 prefix= dirs=()
for a; do
	case $a in
	-merge=1) merge=1 ;;
	-artifact_prefix=*) prefix=${a#*=} ;;
	-*) ;;
	*) dirs+=("$a") ;;
	esac
done
if [ "$merge" = 1 ]; then
	cp "${dirs[1]}"/* "${dirs[0]}"/
	exit 0
fi
echo found >"${dirs[0]}/found-$(basename "$0")"
case $0 in *crashy)
	echo "==42==ERROR: AddressSanitizer: heap-buffer-overflow"
	echo boom >"${prefix}crash-abc"
	exit 1 ;;
esac
echo "stat::number_of_executed_units: 1234"
EOF
for t in alpha beta crashy; do
	cp "$WORK/fake" "$B/tests/fuzz_$t"
	chmod +x "$B/tests/fuzz_$t"
done
echo "not a target" >"$B/tests/fuzz_notes.txt" # not executable: not a target

rc=0
FUZZ_CORPUS="$WORK/corpus" "$SRC/scripts/fuzz.sh" "$B" 7 >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" = 1 ] || fail "a crashing target: exit $rc, expected 1"
grep -qx "fuzz: alpha ok: 1234 runs; corpus 1 -> 2 inputs" "$WORK/out" || fail "alpha: $(cat "$WORK/out")"
grep -qx "fuzz: beta ok: 1234 runs; corpus 0 -> 1 inputs" "$WORK/out" || fail "beta: $(cat "$WORK/out")"
grep -qx "fuzz: crashy FAILED: ==42==ERROR: AddressSanitizer: heap-buffer-overflow" "$WORK/err" ||
	fail "crashy: $(cat "$WORK/err")"
grep -qF "reproduce with: $B/tests/fuzz_crashy $B/fuzz-artifacts/crashy/crash-abc; log: $B/fuzz-artifacts/crashy/log" "$WORK/err" ||
	fail "crashy: no reproducer named: $(cat "$WORK/err")"
grep -qx "fuzz: failed: crashy" "$WORK/err" || fail "the failures are not listed: $(cat "$WORK/err")"
[ -f "$WORK/corpus/alpha/found-fuzz_alpha" ] && [ -f "$WORK/corpus/beta/found-fuzz_beta" ] ||
	fail "what the runs found was not merged into the corpora"
[ ! -e "$WORK/corpus/crashy/found-fuzz_crashy" ] || fail "a crashed run was merged"
# Each ran for the time given, writing to its work directory, from its corpus.
grep -qxF "fuzz_alpha -max_total_time=7 -timeout=10 -rss_limit_mb=2048 -artifact_prefix=$B/fuzz-artifacts/alpha/ -print_final_stats=1 $B/fuzz-work/alpha $WORK/corpus/alpha" \
	"$WORK/calls" || fail "alpha was not run as expected: $(cat "$WORK/calls")"
[ "$(grep -c -- '-max_total_time=7' "$WORK/calls")" = 3 ] || fail "not every target ran: $(cat "$WORK/calls")"
pass "every target of the build ran for 7 s; corpora grew; the crash failed the run and named its input"

# A reader of tests/fuzz/readers.txt runs with its larger inputs and the
# shared corpus's captures as seeds.
cp "$WORK/fake" "$B/tests/fuzz_perfscript"
chmod +x "$B/tests/fuzz_perfscript"
: >"$WORK/calls"
FUZZ_CORPUS="$WORK/corpus" "$SRC/scripts/fuzz.sh" "$B" 2 perfscript >"$WORK/out" ||
	fail "perfscript alone failed: $(cat "$WORK/out")"
SHARED=$SRC/../shared/corpus
grep -qxF "fuzz_perfscript -max_total_time=2 -timeout=10 -rss_limit_mb=2048 -artifact_prefix=$B/fuzz-artifacts/perfscript/ -print_final_stats=1 -max_len=2097152 $B/fuzz-work/perfscript $WORK/corpus/perfscript $SHARED/flamegraph $SHARED/flamescope" \
	"$WORK/calls" || fail "perfscript was not run with readers.txt's options: $(cat "$WORK/calls")"
rm "$B/tests/fuzz_perfscript"
pass "a reader runs with -max_len=2097152 and the shared corpus's captures"

# Some targets only; bad arguments.
: >"$WORK/calls"
FUZZ_CORPUS="$WORK/corpus" "$SRC/scripts/fuzz.sh" "$B" 3 alpha beta >"$WORK/out" ||
	fail "alpha and beta alone failed"
[ "$(grep -c -- '-max_total_time=3' "$WORK/calls")" = 2 ] && ! grep -q crashy "$WORK/calls" ||
	fail "named targets: $(cat "$WORK/calls")"
pass "named targets only"
expect_error "FUZZ_SECONDS must be a whole number of seconds, not '1m'" "" -- \
	"$SRC/scripts/fuzz.sh" "$B" 1m
expect_error "no fuzz targets in $WORK/none/tests: build them with 'make sanitize'" "" -- \
	"$SRC/scripts/fuzz.sh" "$WORK/none" 5

# The Makefile passes its variables on.
make -n -C "$SRC" fuzz FUZZ_SECONDS=5 FUZZ_TARGETS="nflx pprof" SAN_BUILD=/x >"$WORK/make.out" ||
	fail "make -n fuzz failed"
grep -qxF "./scripts/fuzz.sh /x 5 nflx pprof" "$WORK/make.out" || fail "make fuzz runs: $(cat "$WORK/make.out")"
grep -qxF "./scripts/fuzz.sh build-san 60 " < <(make -n -C "$SRC" fuzz) ||
	fail "make fuzz does not default to 60 s on build-san"
pass "make fuzz: FUZZ_SECONDS (default 60), FUZZ_TARGETS, SAN_BUILD"
