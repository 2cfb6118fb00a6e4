# A multi-threaded target: every worker thread is sampled, threads created
# after attach included, each as often as its own CPU time gives at 199 Hz;
# the two worker functions split as the threads' CPU times do.
. "$(dirname "$0")/lib.sh"
require_bpf

# The threads are created only once sonde samples (however long it takes to
# start on a busy machine), and run 3 s each.
"$TARGETS/threads" 3 4 wait >"$WORK/target.out" &
BG_PIDS+=($!)
pid=$!
wait_exec "$pid" "$TARGETS/threads"
"$SONDE" record -F 199 -p "$pid" -o "$WORK/r.sonde" --ready-file "$WORK/r.ready" &
sonde=$!
go_when_sampling "$WORK/target.out" "$pid" "$sonde" "$WORK/r.ready"
wait "$sonde" || fail "sonde record failed"
"$SONDE" report "$WORK/r.sonde" --json >"$WORK/r.json"

created=$(kv "$WORK/target.out" created_ns)
start=$(meta "$WORK/r.sonde" start_ns)
awk -v c="$created" -v s="$start" 'BEGIN { exit !(c > s) }' ||
	fail "threads created at $created, before the recording started ($start)"
pass "the threads were created after sampling began"

# Each worker: its samples against the CPU time it measured itself.
[ "$(grep -c '^thread=' "$WORK/target.out")" -eq 4 ] || fail "the target reported $(grep -c '^thread=' "$WORK/target.out") threads, expected 4"
while read -r line; do
	tid=$(sed -n 's/.* tid=\([0-9]*\).*/\1/p' <<<"$line")
	cpu=$(sed -n 's/.* cpu_s=\([0-9.]*\).*/\1/p' <<<"$line")
	got=$(jq --argjson p "$pid" --argjson t "$tid" '[.threads[] | select(.pid == $p and .tid == $t) | .samples] | add // 0' "$WORK/r.json")
	assert_samples_match_cpu "samples of worker thread $tid" "$got" "$cpu" 199
done < <(grep '^thread=' "$WORK/target.out")

# Even threads run worker_even, odd ones worker_odd: the shares follow the
# CPU time each pair got (an even split on an idle machine).
even_cpu=$(awk -F'[ =]' '/^thread=/ { s[$2 % 2] += $6 } END { print s[0] / (s[0] + s[1]) }' "$WORK/target.out")
n=$(jq .samples "$WORK/r.json")
assert_share "worker_even share" "$(function_share "$WORK/r.json" worker_even)" "$even_cpu" "$n"
assert_share "worker_odd share" "$(function_share "$WORK/r.json" worker_odd)" "$(awk -v e="$even_cpu" 'BEGIN { print 1 - e }')" "$n"
# The recording ended by itself when the process exited (-p without -d),
# within a second of the target's own end.
assert_le "recording end after the target's end (s)" \
	"$(awk -v e="$(meta "$WORK/r.sonde" end_ns)" -v x="$(kv "$WORK/target.out" end_ns)" 'BEGIN { print (e - x) / 1e9 }')" 1

# --pid, --tid and --comm select the same samples the per-thread table
# counts (one view definition for every command), and combine.
comm=$(jq -r '.threads[0].comm' "$WORK/r.json")
tid0=$(jq '.threads[0].tid' "$WORK/r.json")
by_comm=$(jq --arg c "$comm" '[.threads[] | select(.comm == $c) | .samples] | add' "$WORK/r.json")
[ "$("$SONDE" report "$WORK/r.sonde" --json --comm "$comm" | jq .samples)" -eq "$by_comm" ] ||
	fail "report --comm $comm: not the $by_comm samples of the threads named so"
[ "$("$SONDE" report "$WORK/r.sonde" --json --pid "$pid" --tid "$tid0" --comm "$comm" | jq .samples)" -eq \
	"$(jq '.threads[0].samples' "$WORK/r.json")" ] || fail "report --pid --tid --comm: not thread $tid0's samples"
[ "$("$SONDE" report "$WORK/r.sonde" --json --comm "no such name" | jq .samples)" -eq 0 ] ||
	fail "report --comm with a name no thread has took samples"
pass "report --pid/--tid/--comm take the samples of the threads they name"
