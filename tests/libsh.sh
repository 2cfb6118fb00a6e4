# The integration tests' numeric assertions (tests/integration/lib.sh) refuse
# what is not a number: jq prints "null" for a missing key, a failed command
# substitution gives "", and awk compared those as strings, so a check on
# them passed. Each assertion runs in a subshell (fail exits); a pass must
# print "ok:", a refusal must exit 1 and say why.
set -u
SONDE=/bin/true TARGETS=/nonexistent
export SONDE TARGETS
fails=0
checks=0
expect() { # RESULT(pass|fail) ASSERTION ARGS...
	local want=$1 out rc
	shift
	checks=$((checks + 1))
	out=$(bash -c '. "$0"; "$@"' "$(dirname "$0")/integration/lib.sh" "$@" 2>&1)
	rc=$?
	case $want in
	pass) [ "$rc" = 0 ] && grep -q "^ok:" <<<"$out" || { echo "FAIL: $* should pass: rc=$rc $out"; fails=$((fails + 1)); } ;;
	fail) [ "$rc" = 1 ] && grep -q "^FAIL:" <<<"$out" || { echo "FAIL: $* should fail: rc=$rc $out"; fails=$((fails + 1)); } ;;
	esac
}
expect pass assert_ge x 2 1
expect pass assert_ge x 1.5 1.5
expect pass assert_le x -3 1e2
expect pass assert_near x 10 11 1
expect fail assert_ge x 0 1
expect fail assert_le x 2 1
expect fail assert_near x 10 12 1
for bad in null "" abc 1e 1.2.3 "1 2" " 1" nan inf 0x10; do
	expect fail assert_ge x "$bad" 1
	expect fail assert_le x "$bad" 1
	expect fail assert_near x "$bad" 0 1
	expect fail assert_ge x 1 "$bad"
	expect fail assert_near x 1 1 "$bad"
done
if [ "$fails" = 0 ]; then
	echo "ok: $checks checks of lib.sh's numeric assertions"
	exit 0
fi
echo "$fails of $checks checks of lib.sh's numeric assertions went wrong"
exit 1
