# A small ring buffer loses nothing silently:
# with --buffer-mb 1 and a record for every call (--all-calls) of a ~2 us
# function, every call the kernel counted has its record or is counted as
# lost, and the report says so. Records used to wake the reader only once
# 1 MB was waiting, which a 1 MB buffer never holds: 45-60% were lost then.
# How many are lost now depends on how fast this machine's traced calls are
# against the reader's wake-ups: 14-37% on an idle 2-CPU VM at ~220,000
# calls/s (the kernel's traps got cheaper), none with 2 MB, none when the
# machine is busy (the target runs at nice 19 and slows with it). That share
# overlaps the old failure's, so it is shown, not asserted; the accounting is.
. "$(dirname "$0")/lib.sh"
require_bpf

N=100000
"$SONDE" record -F 99 --buffer-mb 1 --all-calls --trace "$TARGETS/microcalls:handle" -o "$WORK/r.sonde" -- \
	nice -n 19 "$TARGETS/microcalls" "$N" 2 >"$WORK/out.txt"
lost=$(sqlite3 "$WORK/r.sonde" "SELECT value FROM meta WHERE key = 'lost_spans'")
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/r.json"
kernel=$(jq '.probes[] | select(.name == "handle") | .kernel_calls' "$WORK/r.json")
records=$(jq '.probes[] | select(.name == "handle") | .records' "$WORK/r.json")
[ "$kernel" = "$N" ] || fail "the kernel counted $kernel calls, expected $N"
[ $((records + lost)) = "$N" ] || fail "$records records kept + $lost lost != $N calls"
# The text report puts the kernel's count and the records lost beside the
# calls received.
"$SONDE" report "$WORK/r.sonde" >"$WORK/r.txt"
line="Traced calls of handle: $records calls; the kernel counted $N completed of $N entered; $records kept with a record"
[ "$lost" -gt 0 ] && line="$line ($lost records lost: ring buffer full"
grep -qF "$line" "$WORK/r.txt" || { grep "^Traced calls" "$WORK/r.txt"; fail "report: expected '$line'"; }
pass "report: $line"
# The summary's lost line counts them too, whatever the probes' mode.
lost_samples=$(sqlite3 "$WORK/r.sonde" "SELECT value FROM meta WHERE key = 'lost_samples'")
grep -qE "^  lost: +$lost_samples samples, $lost call records" "$WORK/r.txt" ||
	{ grep "lost:" "$WORK/r.txt"; fail "report: the lost line does not say $lost_samples samples, $lost call records"; }
[ "$(jq .lost_spans "$WORK/r.json")" = "$lost" ] || fail "report --json: lost_spans $(jq .lost_spans "$WORK/r.json"), expected $lost"
pass "1 MB ring buffer: $records of $N call records kept, $lost lost and counted"
