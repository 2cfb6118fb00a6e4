# The headline question on a real server no one here wrote: Debian's
# redis-server serving SET/GET (~1 us per processCommand) from 4 clients and
# LRANGE of a 600-element list (~40 us) from one at the same time, recorded
# with -p at 999 Hz and --trace processCommand. The calls counted are redis'
# own count; the samples inside the slow calls are LRANGE's code, those of
# the fast calls not; and the sampled calls' corrected durations are those
# of the calls no sample landed in (sonde's own cost out, not more, not
# less). Twice: on a quiet machine, and with a CPU-bound process on every
# core (where a start-up calibration of the sample cost once said 71 us and
# inverted the answer). Loopback only: a unix socket in the test's folder.
. "$(dirname "$0")/lib.sh"
require_bpf
for p in redis-server redis-cli redis-benchmark; do
	command -v "$p" >/dev/null || fail "$p is not installed: run scripts/bootstrap.sh (packages redis-server, redis-tools)"
done

start_redis
redis-cli -s "$sock" RPUSH mylist $(seq 600) >/dev/null
[ "$(redis-cli -s "$sock" LLEN mylist)" = 600 ] || fail "the list does not have 600 elements"
processed() { redis-cli -s "$sock" INFO stats | tr -d '\r' | sed -n 's/^total_commands_processed://p'; }

# share FOLDED: the shares of the view's samples in LRANGE's code and in
# SET/GET's, as "SAMPLES LRANGE SETGET".
LRANGE_CODE='lrangeCommand|addListRangeReply|listTypeNext|quicklist'
SETGET_CODE='setCommand|getCommand|setGenericCommand|getGenericCommand'
share() {
	awk -v l="$LRANGE_CODE" -v s="$SETGET_CODE" '{ n = $NF; t += n; if ($0 ~ l) a += n; if ($0 ~ s) b += n }
		END { if (t) printf "%d %.4f %.4f\n", t, a / t, b / t; else print "0 0 0" }' "$1"
}

run() {
	local name=$1
	rm -f "$WORK/ready"
	"$SONDE" record -p "$rpid" -F 999 --trace processCommand --buffer-mb 64 --all-calls \
		--ready-file "$WORK/ready" -o "$WORK/$name.sonde" 2>"$WORK/$name.err" &
	local sp=$!
	BG_PIDS+=("$sp")
	wait_sampling "$sp" "$WORK/ready" "$WORK/$name.err"
	local t0 t1
	t0=$(processed)
	redis-benchmark -s "$sock" -c 4 -n 150000 -t set,get -q >"$WORK/$name.setget" &
	local b1=$!
	redis-benchmark -s "$sock" -c 1 -n 15000 -q LRANGE mylist 0 599 >"$WORK/$name.lrange" &
	local b2=$!
	wait "$b1" || fail "$name: redis-benchmark SET/GET failed"
	wait "$b2" || fail "$name: redis-benchmark LRANGE failed"
	t1=$(processed)
	kill -INT "$sp"
	wait "$sp" || { cat "$WORK/$name.err"; fail "$name: sonde record failed"; }
	# Redis counts a command after running it: the INFO that reports t0 is
	# in t1, the one that reports t1 in neither; both are traced.
	local expected=$((t1 - t0 + 1))
	"$SONDE" report "$WORK/$name.sonde" --json >"$WORK/$name.json"
	local calls
	calls=$(jq '.probes[] | select(.name == "processCommand") | .calls' "$WORK/$name.json")
	assert_ge "$name: commands redis processed under the benchmarks" "$expected" 165000
	[ "$calls" = "$expected" ] || fail "$name: processCommand $calls calls traced, redis processed $expected"
	pass "$name: processCommand $calls calls = redis' total_commands_processed delta + 1"
	# the reason and the modes it chose among, for a run whose auto view fails
	echo "$name: auto: $(jq -r '.probes[] | select(.name == "processCommand") | .auto |
		.reason + "; modes: " + ([.modes[] | "\(.ns)ns \(.share * 1000 | round / 10)%"] | join(", "))' "$WORK/$name.json")"

	# The slow views are checked against the 8 us view and the SET/GET calls
	# between their threshold and 8 us (below).
	local lr8 sg8 t e
	for view in "--slow processCommand:8us" "--slow processCommand:auto" "--slow processCommand:5us" \
		"--slow processCommand:2us" "--fast processCommand:auto"; do
		# shellcheck disable=SC2086 # the view is two words
		"$SONDE" report "$WORK/$name.sonde" --folded $view >"$WORK/$name.folded" ||
			fail "$name: report $view failed"
		read -r n lr sg <<<"$(share "$WORK/$name.folded")"
		# The fast calls (~300,000 SET/GET in processCommand) hold about
		# 0.12 s of redis' time (0.118 s measured): ~118 samples at 999 Hz;
		# the view held 37-134 of them over 13 runs here (the same on the
		# code of stop 37 as after it), the slow ones 0.33 s.
		case $view in
		*fast*) assert_ge "$name: samples in the view $view" "$n" 30 ;;
		*) assert_ge "$name: samples in the view $view" "$n" 100 ;;
		esac
		case $view in
		*fast*)
			assert_le "$name: LRANGE code in $view" "$lr" 0.05
			;;
		*8us)
			lr8=$lr sg8=$sg
			;;
		*)
			# The issue's 85% LRANGE and 5% SET/GET, unless redis' own calls
			# make it more than the machine has: SET/GET calls that took
			# longer than the threshold (LRANGE takes 17 us or more), held
			# up by the host, the kernel or the benchmark clients beside
			# redis on two CPUs, are slow calls, and samples land in them as
			# in any call as long. What they draw is read from the calls no
			# sample landed in (expected_slow_share, lib.sh): the view holds
			# the 8 us view's LRANGE share less that, within its error. On a
			# quiet hour 0.88-0.95 at 2-5 us; in an hour where 24% of the
			# unsampled SET/GET calls took over 2 us and 3.6% over 5 us
			# (10,622 calls), 0.80 at 2 us and 0.846 at 5 us, predicted
			# 0.72 and 0.85.
			case $view in
			*auto) t=$(jq '.probes[] | select(.name == "processCommand") | .auto.threshold_ns' "$WORK/$name.json") ;;
			*5us) t=5000 ;;
			*2us) t=2000 ;;
			esac
			need_numbers "$name: threshold of $view" "$t"
			e=$(expected_slow_share "$WORK/$name.sonde" processCommand "$t" 8000 1000000000000 "$lr8")
			need_numbers "$name: expected LRANGE share in $view" "$e"
			assert_ge "$name: LRANGE code in $view (the SET/GET calls over $t ns leave $e)" "$lr" \
				"$(awk -v e="$e" 'BEGIN { b = e - 0.08; print (b < 0.85 ? b : 0.85) }')"
			assert_le "$name: SET/GET code in $view (the 8 us view: $sg8)" "$sg" \
				"$(awk -v s="$sg8" -v e="$e" -v l="$lr8" 'BEGIN { b = s + (1 - e / l) + 0.03; print (b > 0.05 ? b : 0.05) }')"
			;;
		esac
	done

	# Sampled calls against the calls no sample landed in, per mode (the
	# modes are 20x apart: split at 8 us; SET/GET's calls fall in two
	# modes, at 0.3 and 1 us, and a sample lands in more of the longer
	# ones), where a sample costs these calls ~25 us give or take a few.
	assert_mode_medians "$name" "$WORK/$name.sonde" processCommand 8000
}

run_quiet_and_loaded run
