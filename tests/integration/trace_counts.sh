# Span probes count every call exactly: single- and multi-threaded, nested
# and recursive calls, a libc function, globs; the in-kernel histogram agrees.
. "$(dirname "$0")/lib.sh"
require_bpf

check_counts() { # json requests
	local j=$1 n=$2
	for spec in "handle_request $n" "parse_request $n" "slow_path $((n / 10))" "nested $n" \
		"inner $((3 * n))" "recurse $((5 * n))" "getppid $n"; do
		set -- $spec
		got=$(jq --arg f "$1" '.probes[] | select(.name == $f) | .calls' "$j")
		kernel=$(jq --arg f "$1" '.probes[] | select(.name == $f) | .kernel_calls' "$j")
		[ "$got" = "$2" ] || fail "$1: $got calls recorded, expected exactly $2"
		[ "$kernel" = "$2" ] || fail "$1: in-kernel histogram counted $kernel, expected $2"
	done
	pass "exact call counts for $n requests (spans and in-kernel histograms)"
}

# --no-children on libc probes: on the target alone, not in every process on
# the machine (a valgrind run there would stop with SIGTRAP; docs/safety.md).
"$SONDE" record -F 99 --no-children --all-calls --trace handle_request --trace parse_request --trace slow_path \
	--trace nested --trace inner --trace recurse --trace libc:getppid \
	-o "$WORK/one.sonde" -- "$TARGETS/requests" 300 1 >"$WORK/one.out"
"$SONDE" report "$WORK/one.sonde" --json >"$WORK/one.json"
check_counts "$WORK/one.json" 300

# Four threads, and by default: only the calls samples landed in and the
# slowest cross to user space; the counts are the kernel's. The glob picks up
# handle_request only (no other handle_*).
"$SONDE" record -F 99 --no-children --trace 'handle_*' --trace parse_request --trace slow_path \
	--trace nested --trace inner --trace recurse --trace libc:getppid \
	-o "$WORK/four.sonde" -- "$TARGETS/requests" 400 4 >"$WORK/four.out"
"$SONDE" report "$WORK/four.sonde" --json >"$WORK/four.json"
check_counts "$WORK/four.json" 400
[ "$(jq '[.probes[] | select(.name | startswith("handle_"))] | length' "$WORK/four.json")" = 1 ] ||
	fail "glob handle_* matched more than handle_request"

# The default keeps fewer records than calls, and every call a sample names.
records=$(jq '[.probes[].records] | add' "$WORK/four.json")
calls=$(jq '[.probes[].calls] | add' "$WORK/four.json")
[ "$records" -lt "$calls" ] || fail "default record kept $records records of $calls calls: expected fewer"
unjoined=$(sqlite3 "$WORK/four.sonde" "SELECT count(*) FROM sample_spans ss LEFT JOIN spans s ON s.id = ss.span WHERE s.id IS NULL")
[ "$unjoined" = 0 ] || fail "$unjoined sample links name a call with no record"
pass "default: $records of $calls calls kept with a record; every sampled call among them"

# The kernel's log-linear histogram is the calls' corrected durations,
# bucket for bucket (with --all-calls every call has a record to compare).
mismatch=$(sqlite3 -separator ' ' "$WORK/one.sonde" "SELECT probe, duration_ns FROM spans WHERE open = 0" | awk '
	function bucket(v,   k, p) {
		if (v < 16) return v
		k = 0; p = 1
		while (p * 2 <= v) { p *= 2; k++ }
		return (k - 3) * 16 + int(v / (p / 16)) % 16
	}
	{ n[$1 " " bucket($2)]++ }
	END { for (key in n) print key, n[key] }' | sort >"$WORK/from_spans.txt"
sqlite3 -separator ' ' "$WORK/one.sonde" "SELECT probe, bucket, count FROM probe_hist" | sort >"$WORK/from_kernel.txt"
diff "$WORK/from_spans.txt" "$WORK/from_kernel.txt" | wc -l)
[ "$mismatch" = 0 ] || { diff "$WORK/from_spans.txt" "$WORK/from_kernel.txt" | head; fail "kernel histogram and spans differ"; }
pass "the kernel's histogram counts each call's duration in its log-linear bucket ($(wc -l <"$WORK/from_kernel.txt") buckets)"

# Recursion: every recurse span of one request nests in the previous one.
depth=$(sqlite3 "$WORK/one.sonde" "SELECT max(depth) FROM spans s JOIN probes p ON p.id = s.probe WHERE p.name = 'recurse'")
# handle_request(1) > recurse x5 (depths 2..6)
[ "$depth" = 6 ] || fail "recursive spans: max depth $depth, expected 6"
pass "recursive calls nest (max depth $depth)"
parents=$(sqlite3 "$WORK/one.sonde" "SELECT count(*) FROM spans s JOIN probes p ON p.id = s.probe JOIN spans q ON q.id = s.parent JOIN probes pq ON pq.id = q.probe WHERE p.name = 'inner' AND pq.name = 'nested'")
[ "$parents" = 900 ] || fail "inner spans with a nested parent: $parents, expected 900"
pass "nested calls record their parent span"

# Two specs naming one function share one probe (two uprobe pairs on one
# function would garble the span stack), and --sample-in reuses it.
"$SONDE" record -F 99 --no-children --trace libc:getppid --trace libc.so.6:getppid --sample-in libc:getppid \
	-o "$WORK/dup.sonde" -- "$TARGETS/requests" 200 1 >/dev/null
"$SONDE" report "$WORK/dup.sonde" --json >"$WORK/dup.json"
[ "$(jq '.probes | length' "$WORK/dup.json")" = 1 ] || fail "one function, $(jq '.probes | length' "$WORK/dup.json") probes"
[ "$(jq '.probes[0].calls' "$WORK/dup.json")" = 200 ] || fail "shared probe counted $(jq '.probes[0].calls' "$WORK/dup.json") calls, expected 200"
[ "$(sqlite3 "$WORK/dup.sonde" "SELECT value FROM meta WHERE key = 'span_orphans'")" = 0 ] || fail "orphaned spans with a shared probe"
pass "specs naming one function share one probe (200 calls, no orphans)"
