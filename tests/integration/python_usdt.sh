# USDT probes (issue 27 item 4) on Debian's python3.11, which has 8 SDT
# notes with semaphores:
#  - sonde probe -e BINARY --usdt lists each probe readelf -n and
#    bpftrace -l list;
#  - --trace usdt:BINARY:python:gc__start counts exactly the collections the
#    script counted itself (gc.callbacks), and the probe's semaphore is
#    raised while traced and back to 0 once sonde is gone (the script reads
#    its own memory at the semaphore readelf names);
#  - its argument (the generation) read at every hit equals, by generation,
#    what the script's callbacks saw; 'if arg0 > 0' on gc__done keeps the
#    collections that freed something, as the script counted them;
#  - function__entry's file, function and line (str(arg0) str(arg1) arg2)
#    are the script's own, at every call of its function;
#  - a glob over names (gc__*): a probe each, each counting exactly, each
#    with its own argument's type;
#  - a span pair (function__entry,function__return): a span per Python
#    call, nested as the script's calls are, its slow calls exactly the
#    script's, its returns paired with their entries by arg0 and arg1;
#  - bad input: a probe name the binary does not have (the names it has),
#    a binary without SDT notes, an argument it lacks, a path into one.
. "$(dirname "$0")/lib.sh"
require_bpf
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "Debian's python3.11 is not installed (scripts/bootstrap.sh test installs it)"
readelf -n "$PY" | grep -q "Provider: python" || skip "$PY has no SDT notes"

# The listing against readelf's.
readelf -n "$PY" | awk '/Provider:/ { p = $2 } /Name:/ { print "usdt:'"$PY"':" p ":" $2 }' | sort >"$WORK/want.txt"
"$SONDE" probe -e "$PY" --usdt | awk '{ print $1 }' | sort >"$WORK/got.txt"
[ -s "$WORK/want.txt" ] || fail "readelf lists no probes of $PY"
diff "$WORK/want.txt" "$WORK/got.txt" >&2 || fail "sonde probe --usdt differs from readelf -n"
command -v bpftrace >/dev/null || fail "bpftrace is not installed: run scripts/bootstrap.sh test"
bpftrace -l "usdt:$PY:*" | sort >"$WORK/bpftrace.txt"
[ -s "$WORK/bpftrace.txt" ] || fail "bpftrace -l lists no probes of $PY"
diff "$WORK/bpftrace.txt" "$WORK/got.txt" >&2 || fail "sonde probe --usdt differs from bpftrace -l"
pass "probe --usdt: the $(wc -l <"$WORK/want.txt") probes readelf and bpftrace -l list"

sema=$(readelf -n "$PY" | awk '/Name: gc__start$/ { on = 1 } on && /Semaphore:/ { print $NF; exit }')
[ -n "$sema" ] || fail "readelf names no semaphore of gc__start"
cat >"$WORK/gc.py" <<'EOF'
import gc, os, sys, time
go, done, out = sys.argv[1], sys.argv[2], sys.argv[3]
sema, load = int(sys.argv[4], 16), int(sys.argv[5], 16)
def semaphore():
    # Its address in this process: the file's first mapping less the
    # file's first load address (0 for a non-PIE python), plus its vaddr.
    real = os.path.realpath(sys.executable)
    for line in open("/proc/self/maps"):
        f = line.split()
        if len(f) >= 6 and f[5] == real and int(f[2], 16) == 0:
            bias = int(f[0].split("-")[0], 16) - load
            break
    with open("/proc/self/mem", "rb") as m:
        m.seek(bias + sema)
        return int.from_bytes(m.read(2), "little")
starts = 0
by_gen = [0, 0, 0]
freed = 0  # collections that freed something
def cb(phase, info):
    global starts, freed
    if phase == "start":
        starts += 1
        by_gen[info["generation"]] += 1
    elif info["collected"] > 0:
        freed += 1
gc.callbacks.append(cb)
gc.disable()  # no collection while sonde attaches: only the work's count
while not os.path.exists(go):
    time.sleep(0.01)
starts = 0
by_gen = [0, 0, 0]
freed = 0
gc.enable()
junk = []
for i in range(3000):
    junk.append([[] for _ in range(50)])
    if i % 20 == 0:  # garbage for every other collection: a cycle
        cycle = []
        cycle.append(cycle)
        del cycle
    if i % 10 == 0:
        gc.collect((i // 10) % 3)
gc.disable()
n = starts
during = semaphore()
with open(out, "w") as f:
    f.write("%d %d %d %d %d %d\n" % (n, during, by_gen[0], by_gen[1], by_gen[2], freed))
while not os.path.exists(done):
    time.sleep(0.01)
with open(out, "a") as f:
    f.write("%d\n" % semaphore())
os._exit(0)  # no collections of the interpreter's end
EOF
load=$(readelf -lW "$PY" | awk '$1 == "LOAD" { print $3; exit }')
"$PY" "$WORK/gc.py" "$WORK/go" "$WORK/done" "$WORK/gc.out" "$sema" "$load" &
pypid=$!
BG_PIDS+=("$pypid")
"$SONDE" record -p "$pypid" -d 4 --trace "usdt:$PY:python:gc__start arg0" --ready-file "$WORK/go" \
	--trace "usdt:$PY:python:gc__done arg0 if arg0 > 0" -o "$WORK/gc.sonde" >"$WORK/rec.out" 2>&1 || { cat "$WORK/rec.out" >&2; fail "record --trace usdt: failed"; }
touch "$WORK/done"
wait "$pypid"
read -r counted during gen0 gen1 gen2 freed <"$WORK/gc.out"
after=$(sed -n 2p "$WORK/gc.out")
hits=$(sqlite3 "$WORK/gc.sonde" "select entered from probes where name = 'usdt:$PY:python:gc__start'")
assert_ge "the script's own collections" "$counted" 300
assert_near "gc__start hits against the script's collections" "$hits" "$counted" 0
assert_ge "gc__start's semaphore while traced" "$during" 1
# arg0 of gc__start is the generation collected: read at every hit, by
# generation as the script's callbacks saw them.
for g in 0 1 2; do
	want=$(eval echo "\$gen$g")
	got=$(sqlite3 "$WORK/gc.sonde" "select count(*) from hit_values v join hits h on h.id = v.hit
		join probes p on p.id = h.probe where p.name = 'usdt:$PY:python:gc__start' and v.value = $g")
	assert_near "gc__start arg0 = $g (generation $g's collections)" "$got" "$want" 0
done
# gc__done's arg0 is the objects it collected: 'if arg0 > 0' keeps the
# collections that freed something, as the script's callbacks counted them.
done_hits=$(sqlite3 "$WORK/gc.sonde" "select count(*) from hits h join probes p on p.id = h.probe
	where p.name = 'usdt:$PY:python:gc__done'")
assert_ge "collections that freed something (the script's count)" "$freed" 50
assert_le "... and some that did not" "$freed" $((counted - 50))
assert_near "gc__done hits with 'if arg0 > 0'" "$done_hits" "$freed" 0
assert_le "gc__start's semaphore after sonde" "$after" 0

# A glob over the names: gc__* is two probes, gc__start and gc__done, each
# a probe of its own with its own argument (a 4-byte generation, an 8-byte
# count), each counting every collection the script counted.
"$PY" "$WORK/gc.py" "$WORK/go2" "$WORK/done2" "$WORK/gc2.out" "$sema" "$load" &
pypid=$!
BG_PIDS+=("$pypid")
"$SONDE" record -p "$pypid" -d 4 --trace "usdt:$PY:python:gc__* arg0" --ready-file "$WORK/go2" \
	-o "$WORK/glob.sonde" >"$WORK/rec.out" 2>&1 || { cat "$WORK/rec.out" >&2; fail "record --trace usdt:...:gc__* failed"; }
touch "$WORK/done2"
wait "$pypid"
read -r counted _ gen0 _ _ freed <"$WORK/gc2.out"
assert_ge "glob: the script's own collections" "$counted" 300
for probe in gc__start gc__done; do
	hits=$(sqlite3 "$WORK/glob.sonde" "select entered from probes where name = 'usdt:$PY:python:$probe'")
	assert_near "glob gc__*: $probe hits against the script's collections" "$hits" "$counted" 0
done
assert_near "glob gc__*: two probes" "$(sqlite3 "$WORK/glob.sonde" "select count(*) from probes")" 2 0
got=$(sqlite3 "$WORK/glob.sonde" "select count(*) from hit_values v join hits h on h.id = v.hit
	join probes p on p.id = h.probe where p.name = 'usdt:$PY:python:gc__start' and v.value = 0")
assert_near "glob gc__*: gc__start arg0 = 0 (generation 0's collections)" "$got" "$gen0" 0
got=$(sqlite3 "$WORK/glob.sonde" "select count(*) from hit_values v join hits h on h.id = v.hit
	join probes p on p.id = h.probe where p.name = 'usdt:$PY:python:gc__done' and v.value > 0")
assert_near "glob gc__*: gc__done arg0 > 0 (the collections that freed something)" "$got" "$freed" 0
# refused WHY SPEC: --trace SPEC is refused, its line matching WHY.
refused() {
	expect_error "$1" "" -- "$SONDE" record -d 1 --trace "$2" -o "$WORK/x.sonde" -- "$PY" -c pass
}
refused "has no USDT probe matching python:nothing\* .it has python:audit" "usdt:$PY:python:nothing*"

# function__entry's arguments, read as strings and a number: the file, the
# function and its first line, as the script itself says them. (3.11 fires
# it only while a trace function is set: the script sets one.)
cat >"$WORK/fe.py" <<'EOF'
import sys
def f(i):
    return i + 1
sys.settrace(lambda *a: None)
for i in range(int(sys.argv[1])):
    f(i)
sys.settrace(None)
print(sys.argv[1], f.__code__.co_firstlineno, __file__)
EOF
"$SONDE" record --trace "usdt:$PY:python:function__entry str(arg0) str(arg1) arg2" \
	-o "$WORK/fe.sonde" -- "$PY" "$WORK/fe.py" 1000 >"$WORK/fe.out" 2>"$WORK/rec.out" ||
	{ cat "$WORK/rec.out" >&2; fail "record --trace function__entry's arguments failed"; }
read -r calls first file <"$WORK/fe.out"
cap() { sqlite3 "$WORK/fe.sonde" "select id from captures where name = '$1'"; }
c0=$(cap 'str(arg0)')
c1=$(cap 'str(arg1)')
c2=$(cap arg2)
same=$(sqlite3 "$WORK/fe.sonde" "select count(*) from hits h
	where (select text from hit_values where hit = h.id and capture = $c0) = '$file'
	  and (select text from hit_values where hit = h.id and capture = $c1) = 'f'
	  and (select value from hit_values where hit = h.id and capture = $c2) = $first")
assert_near "function__entry hits naming the script's file, f and its first line" "$same" "$calls" 0

# A span pair: function__entry,function__return, a span per Python call.
# 3.11 fires its function__return at every return, but its entry only
# while a trace function is set (the script sets one, whose own calls
# show no entry): a return closes the innermost call whose entry had the
# same file and function names (arg0 and arg1, the pair's key), so the
# trace function's returns close nothing. The truth is the script's: N
# calls of outer, each calling leaf twice, a fifth of the leaves sleeping
# 2 ms, and the outers around them.
cat >"$WORK/pair.py" <<'EOF'
import sys, time
def leaf(i):
    if i % 10 == 0:
        time.sleep(0.002)
    return i + 1
def outer(i):
    return leaf(i) + leaf(i + 1)
N = int(sys.argv[1])
sys.settrace(lambda *a: None)
for i in range(N):
    outer(i)
sys.settrace(None)
print(N)
EOF
pair="usdt:$PY:python:function__entry,function__return"
"$SONDE" record -v --all-calls --trace "$pair" -o "$WORK/pair.sonde" -- "$PY" "$WORK/pair.py" 1000 \
	>"$WORK/pair.out" 2>"$WORK/rec.out" || { cat "$WORK/rec.out" >&2; fail "record --trace $pair failed"; }
grep -q "a return closes the innermost call whose entry had the same arg0 arg1" "$WORK/rec.out" ||
	{ grep -v libbpf "$WORK/rec.out" >&2; fail "the pair's key is not arg0 arg1"; }
n=$(cat "$WORK/pair.out")
q() { sqlite3 "$WORK/pair.sonde" "$1"; }
assert_near "span pair: the leaves' calls (depth 2)" "$(q "select count(*) from spans where depth = 2")" $((2 * n)) 0
# Depth 1: the outers, and the few calls the interpreter makes itself
# under the trace function (5 here).
assert_ge "span pair: the outers' calls (depth 1)" "$(q "select count(*) from spans where depth = 1")" "$n"
assert_le "... and hardly more" "$(q "select count(*) from spans where depth = 1")" $((n + 20))
assert_near "span pair: calls nested in their parent's interval" \
	"$(q "select count(*) from spans c join spans p on p.id = c.parent
		where p.start_ns <= c.start_ns and p.start_ns + p.raw_duration_ns >= c.start_ns + c.raw_duration_ns")" \
	"$(q "select count(*) from spans where parent is not null")" 0
assert_near "span pair: the leaves that slept (over 1 ms)" \
	"$(q "select count(*) from spans where depth = 2 and duration_ns >= 1000000")" $((n / 5)) 0
assert_near "span pair: the outers around them (over 1 ms)" \
	"$(q "select count(*) from spans where depth = 1 and duration_ns >= 1000000")" $((n / 5)) 0
refused "has no USDT probe python:function__exit .it has python:audit" "usdt:$PY:python:function__entry,function__exit"
refused "a span pair is usdt:BINARY:PROVIDER:ENTRY,RETURN, two probe names without globs" "usdt:$PY:python:function__*,function__return"
refused "takes no predicate yet" "$pair if arg2 > 1"

refused "has no USDT probe python:gc__begin .it has python:audit, python:gc__done, python:gc__start" "usdt:$PY:python:gc__begin"
"$SONDE" probe -e "$TARGETS/blocking" --usdt >"$WORK/none.txt"
grep -q "blocking has no USDT probes (no .note.stapsdt)" "$WORK/none.txt" ||
	{ cat "$WORK/none.txt" >&2; fail "probe --usdt of a binary without notes"; }
pass "probe --usdt of a binary without notes says so"
expect_error "has no USDT probes .no .note.stapsdt." "" -- \
	"$SONDE" record -d 1 --trace "usdt:$TARGETS/blocking:p:n" -o "$WORK/x.sonde" -- "$TARGETS/blocking"
refused "no argument arg3 .the probe has 1." "usdt:$PY:python:gc__start arg3"
refused "is a capture of its own, not a value in an expression" "usdt:$PY:python:gc__start if str(arg0) > 1"
refused "arguments are numbers without types" "usdt:$PY:python:gc__start arg0->x"
