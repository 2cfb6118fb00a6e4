# The kernel's verifier checks each of sonde's BPF programs at every start
# (record, lat, top, serve...), before the first sample: its work is most
# of sonde's start-up and, past 1,000,000 instructions for one program, the
# program does not load at all. The stack walk (bpf/stacks.bpf.h) and the
# span programs once took 430,000-850,000 each (4-6 s a start on this
# machine); written so that the verifier's states merge, they take < 90,000.
# This keeps every program under a quarter of the limit, so that a change
# that makes the states multiply again fails here, where it is cheap to see,
# not as slow tests or a program that stops loading on another kernel.
. "$(dirname "$0")/lib.sh"
require_bpf
MAX=250000
"$BUILD/bench/verifier" "$BUILD/bpf/sonde.bpf.o" "$MAX" >"$WORK/stats.txt" ||
	{ cat "$WORK/stats.txt"; fail "a BPF program does not load or takes the verifier over $MAX instructions"; }
cat "$WORK/stats.txt"
n=$(awk 'NR > 1 && $1 != "total"' "$WORK/stats.txt" | wc -l)
assert_ge "programs verified" "$n" 12
pass "every program verified in <= $MAX instructions (total $(awk '$1 == "total" { print $2 }' "$WORK/stats.txt"))"
