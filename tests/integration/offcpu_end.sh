# The end of an --off-cpu recording, with a thread that sleeps through it
# (tests/targets/longsleep: "sleeper" sleeps 30 s in nap() once told to
# start, "worker" spins through now_ns(), traced, and sleeps 1 ms, over and
# over), recorded with -d 3:
# - sonde ends within 1 s of the 3 s once sampling is on (measured here,
#   from its ready file to its exit), and the whole command within 1 s of
#   what it said its set-up took plus the 3 s: the sleeper's interval does
#   not hold it (it used to wait for threads to wake while it drained);
# - nothing in the recording is after its end: no sample taken at or after
#   end_ns, no off-CPU interval ending past it;
# - the sleeper's sleep counts up to the end and not beyond: one interval
#   from when it left the CPU (after it read start_ns, within 0.2 s) to
#   end_ns exactly, under nap() in [sleeping: clock_nanosleep]; its off-CPU
#   time is at most the recording's duration;
# - the [sonde] share of the report is that of the on-CPU samples (the
#   off-CPU intervals weigh nanoseconds and made it 0.00%): not 0, and the
#   recording's overhead_samples over its cpu-clock samples.
# The whole command's wall time is printed, not bounded: loading and
# verifying the BPF programs takes 0.5 s to 2.5 s here depending on the
# machine's load (the summary says it), before -d counts.
. "$(dirname "$0")/lib.sh"
require_bpf

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

"$TARGETS/longsleep" 30000 >"$WORK/l.out" &
target=$!
BG_PIDS+=("$target")
wait_exec "$target" "$TARGETS/longsleep"
t0=$(now)
"$SONDE" record -F 999 --off-cpu --trace now_ns -d 3 -p "$target" -o "$WORK/l.sonde" \
	--ready-file "$WORK/l.ready" 2>"$WORK/l.err" &
rec=$!
BG_PIDS+=("$rec")
go_when_sampling "$WORK/l.out" "$target" "$rec" "$WORK/l.ready" "$WORK/l.err"
t_ready=$(now)
wait "$rec" || { cat "$WORK/l.err"; fail "record --off-cpu -d 3 failed"; }
t_end=$(now)
cat "$WORK/l.err"
running "$target" || fail "the target ended before the test stopped it"
cat "$WORK/l.out"

# -d 3 ends within 1 s of its 3 s, and the command within 1 s of its set-up
# and the 3 s.
setup_s=$(meta "$WORK/l.sonde" setup_s)
duration_s=$(meta "$WORK/l.sonde" duration_s)
assert_near "recording's duration (s)" "$duration_s" 3 0.05
assert_le "from sampling on (ready file) to sonde's exit (s)" "$(elapsed "$t_ready" "$t_end")" 4
assert_le "set-up sonde says it took (s), within what the test saw before the ready file" \
	"$setup_s" "$(elapsed "$t0" "$t_ready")"
assert_le "the whole command (s), less its set-up and its -d 3" \
	"$(awk -v w="$(elapsed "$t0" "$t_end")" -v s="$setup_s" 'BEGIN { print w - s - 3 }')" 1
pass "record --off-cpu -d 3 took $(elapsed "$t0" "$t_end") s in all, $setup_s s of it set-up"

# Nothing after the end.
end_ns=$(meta "$WORK/l.sonde" end_ns)
start_ns=$(meta "$WORK/l.sonde" start_ns)
need_numbers "end_ns, start_ns" "$end_ns" "$start_ns"
q() { sqlite3 "$WORK/l.sonde" "$1"; }
OFF="s.event = (SELECT id FROM events WHERE name = 'off-cpu')"
intervals=$(q "SELECT count(*) FROM samples s WHERE $OFF")
assert_ge "off-CPU intervals recorded" "$intervals" 100
assert_le "samples taken at or after the end" "$(q "SELECT count(*) FROM samples WHERE time_ns >= $end_ns")" 0
assert_le "off-CPU intervals ending after the end" \
	"$(q "SELECT count(*) FROM samples s WHERE $OFF AND s.time_ns + s.weight > $end_ns")" 0
assert_ge "intervals still going at the end, cut there (offcpu_cut_at_end)" \
	"$(meta "$WORK/l.sonde" offcpu_cut_at_end)" 1
grep -Eq 'off-CPU intervals: [0-9]+ kept, [1-9][0-9]* of them still going at the end \(cut there\)' "$WORK/l.err" ||
	fail "the summary does not say how many intervals were cut at the end"

# The sleeper: its sleep up to the end, not beyond.
tid=$(kv "$WORK/l.out" tid)
slept_from=$(kv "$WORK/l.out" start_ns)
need_numbers "the sleeper's tid and start_ns" "$tid" "$slept_from"
SLEEPER="s.thread IN (SELECT id FROM threads WHERE tid = $tid)"
IFS='|' read -r left weight < <(q "SELECT time_ns, weight FROM samples s WHERE $OFF AND $SLEEPER ORDER BY time_ns DESC LIMIT 1")
need_numbers "the sleeper's last interval" "$left" "$weight"
assert_ge "the sleeper left the CPU after it read start_ns (ns)" "$left" "$slept_from"
assert_le "and soon after (ns)" "$((left - slept_from))" 200000000
assert_near "its interval, to the end (ns)" "$weight" "$((end_ns - left))" 0
assert_le "the sleeper's off-CPU time (ns), at most the recording's duration" \
	"$(q "SELECT sum(s.weight) FROM samples s WHERE $OFF AND $SLEEPER")" "$((end_ns - start_ns))"
"$SONDE" report "$WORK/l.sonde" --off-cpu --folded --tid "$tid" >"$WORK/sleeper.folded"
grep -Eq ';nap;(.*;)?\[sleeping: clock_nanosleep\] [0-9]+$' "$WORK/sleeper.folded" ||
	{ cat "$WORK/sleeper.folded"; fail "the sleeper's interval is not under nap in [sleeping: clock_nanosleep]"; }
pass "the sleeper: $(cat "$WORK/sleeper.folded")"

# sonde's own share, of the on-CPU samples.
"$SONDE" report "$WORK/l.sonde" --json >"$WORK/l.json"
osamples=$(jq -e .overhead.samples "$WORK/l.json") || fail "report --json has no overhead.samples"
share=$(jq -e .overhead.share "$WORK/l.json") || fail "report --json has no overhead.share"
on_cpu=$(q "SELECT count(*) FROM samples s WHERE s.event = (SELECT id FROM events WHERE name = 'cpu-clock')")
meta_over=$(meta "$WORK/l.sonde" overhead_samples)
need_numbers "overhead samples, share, on-CPU samples" "$osamples" "$share" "$on_cpu" "$meta_over"
assert_ge "on-CPU samples" "$on_cpu" 100
assert_ge "[sonde] samples (now_ns is traced in a spin)" "$osamples" 10
assert_near "[sonde] samples, the report's against the recording's overhead_samples" "$osamples" "$meta_over" 0
assert_near "[sonde] share" "$share" "$(ratio "$meta_over" "$on_cpu")" 0.000001
pct=$("$SONDE" report "$WORK/l.sonde" | sed -n 's/.* samples (\([0-9.]*\)%) were taken inside sonde.*/\1/p')
need_numbers "the text report's [sonde] share" "$pct"
assert_near "the text report's [sonde] share (%)" "$pct" "$(awk -v s="$share" 'BEGIN { print 100 * s }')" 0.005
