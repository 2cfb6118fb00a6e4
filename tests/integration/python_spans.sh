# Slow calls of a Python function (issue 27 item 3): --trace py:... opens a
# span per call of one Python function, on pyenv's 3.12.1 and 3.13.0 run
# with -X perf (their calls go through the trampoline evaluator, where the
# probe is, filtered in the kernel to the function's code object), and on
# Debian's 3.11 through its USDT pair (filtered by the code object of the
# GIL holder's current frame, the line probe's semaphore raised so that
# entries fire). The truth is the script's own count of its calls:
#  - sonde probe --python says where py: probes go;
#  - py:app.Server.handle (a method), py:app.handle (a module function of
#    the same name, not the method) and py:app.py:slow_path each count
#    exactly the calls the script made, and every call is a span, the
#    slow_path calls nested in Server.handle's: on 3.12, 3.13 and 3.11;
#    flame --diff-slow of Server.handle's slow calls has app.slow_path, and
#    sonde lat counts every call, the slow ones in its top buckets;
#  - captures: py:app.Server.handle's arguments i and kind (an int; a str
#    of each width, or None) are read at every call, and --by kind splits
#    the calls as the script counted them, slow and fast; a name that is no
#    local of the function is counted apart at each call, never a value;
#  - -p on a running python (-X perf; 3.11 as it is): the calls made while
#    traced, exactly (the script counts from the ready file on);
#  - live: sonde ctl trace py:... in a running sonde top counts every call
#    made after it, as the script counted;
#  - sonde slow 'py:app.Server.handle:auto': the slow calls are the
#    script's (every tenth goes through slow_path, 100x longer) and >= 85%
#    of their samples are in app.slow_path;
#  - PYTHONPERFSUPPORT=1 in place of -X perf counts the same;
#  - bad input: a python not started with -X perf, 3.10 and pyenv's 3.11
#    (no -X perf, no SDT notes), a stripped libpython (no evaluator's
#    symbol), a spec that is not one,
#    a predicate or a capture that is not a name on a py: probe, a second
#    spec that may name a traced function (two probes cannot share a
#    call's stack slot).
. "$(dirname "$0")/lib.sh"
require_bpf
[ "$(uname -m)" = x86_64 ] || skip "the Python layouts are x86-64 only"
pyenv_pythons "py: spans are"

cat >"$WORK/app.py" <<'PYEOF'
import os, sys, time
calls = 0
slow = 0
def spin(n):
    x = 0
    for i in range(n):
        x += i
    return x
kinds = ["GET", "PUT", "caf\u00e9", "\u20ac", "\U0001f600", None]
by_kind = {}
class Server:
    def handle(self, i, kind):
        global calls, slow
        calls += 1
        key = ("slow " if i % 10 == 0 else "fast ") + repr(kind)
        by_kind[key] = by_kind.get(key, 0) + 1
        if i % 10 == 0:
            slow += 1
            return slow_path(i)
        return spin(200)
def slow_path(i):
    return spin(20000)
def handle(i):  # the module's own handle: not Server.handle
    return spin(10)
n, go = int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None
if go:
    while not os.path.exists(go):
        time.sleep(0.01)
s = Server()
for i in range(n):
    s.handle(i, kinds[i % 7 % 6])
    handle(i)
if os.environ.get("BY_KIND"):
    with open(os.environ["BY_KIND"], "w", encoding="utf-8") as f:
        for key, c in sorted(by_kind.items()):
            f.write("%s\t%d\n" % (key, c))
print("calls=%d slow=%d" % (calls, slow), flush=True)
# Alive a while after its work: sonde names Python frames by reading the
# code objects from the live process (python.md), and a reader behind on a
# busy machine finds the memory of an exited one gone.
time.sleep(float(os.environ.get("APP_LINGER", "0")))
if len(sys.argv) > 3:  # live: the count in a file, then stay to be saved
    open(sys.argv[3] + ".tmp", "w").write("calls=%d\n" % calls)
    os.rename(sys.argv[3] + ".tmp", sys.argv[3])
    time.sleep(120)
PYEOF

# counts NAME PYTHON [-X perf]: every call of the three functions, exactly,
# each a span, slow_path's inside Server.handle's.
counts() {
	local v=$1 py=$2
	shift 2
	local rec=$WORK/$v.sonde
	# (the script starts once sonde samples, every probe attached: its
	# ready file, which the script waits for)
	rm -f "$WORK/$v.go"
	APP_LINGER=3 "$SONDE" record -F 999 --all-calls --ready-file "$WORK/$v.go" --trace py:app.Server.handle \
		--trace py:app.handle --trace py:app.py:slow_path -o "$rec" -- "$py" "$@" "$WORK/app.py" 2000 "$WORK/$v.go" \
		>"$WORK/$v.out" 2>"$WORK/$v.err" || { cat "$WORK/$v.err" >&2; fail "$v: record --trace py: failed"; }
	calls=$(kv "$WORK/$v.out" calls) slow=$(kv "$WORK/$v.out" slow)
	need_numbers "$v: the script's counts" "$calls" "$slow"
	q() { sqlite3 "$rec" "$1"; }
	assert_near "$v: py:app.Server.handle calls, as the script counted" \
		"$(q "select entered from probes where name = 'py:app.Server.handle'")" "$calls" 0
	assert_near "$v: py:app.handle calls (the module's, not the method)" \
		"$(q "select entered from probes where name = 'py:app.handle'")" 2000 0
	assert_near "$v: py:app.py:slow_path calls" \
		"$(q "select entered from probes where name = 'py:app.py:slow_path'")" "$slow" 0
	assert_near "$v: spans of Server.handle" \
		"$(q "select count(*) from spans s join probes p on p.id = s.probe where p.name = 'py:app.Server.handle'")" "$calls" 0
	assert_near "$v: slow_path spans inside a Server.handle span" \
		"$(q "select count(*) from spans c join spans pa on pa.id = c.parent
			join probes pc on pc.id = c.probe join probes pp on pp.id = pa.probe
			where pc.name = 'py:app.py:slow_path' and pp.name = 'py:app.Server.handle'")" "$slow" 0
	# The differential flame graph of its slow calls against its fast ones.
	"$SONDE" flame "$rec" --diff-slow 'py:app.Server.handle:auto' -o "$WORK/$v-diff.svg" ||
		fail "$v: flame --diff-slow py: failed"
	xmllint --noout "$WORK/$v-diff.svg" || fail "$v: the differential flame graph is not well-formed"
	grep -q '<title>app\.slow_path ' "$WORK/$v-diff.svg" || {
		sqlite3 "$rec" "select f.name, count(distinct s.id) from samples s join stack_frames sf on sf.stack = s.stack
			join frames f on f.id = sf.frame where f.kind = 'python' group by f.name" >&2
		grep -o '<title>[^<]*' "$WORK/$v-diff.svg" | head -20 >&2
		fail "$v: app.slow_path is not in the differential graph (the recording's Python frames and the graph's titles above)"
	}
	# lat: every call, and the slow ones in the histogram's top buckets.
	"$SONDE" lat py:app.Server.handle -- "$py" "$@" "$WORK/app.py" 1000 >"$WORK/$v-lat.txt" 2>&1 ||
		{ cat "$WORK/$v-lat.txt" >&2; fail "$v: lat py: failed"; }
	local lcalls lslow lover
	lcalls=$(kv "$WORK/$v-lat.txt" calls) lslow=$(kv "$WORK/$v-lat.txt" slow)
	need_numbers "$v: lat's script's counts" "$lcalls" "$lslow"
	assert_near "$v: lat: py:app.Server.handle's calls" \
		"$(sed -n 's/^py:app\.Server\.handle: \([0-9]*\) calls,.*/\1/p' "$WORK/$v-lat.txt")" "$lcalls" 0
	# Buckets from 131 us (the slow calls take ~1 ms, the others ~10 us).
	lover=$(awk '/^ *[0-9.]+[unm]?s -> / { lo = $1; unit = lo; sub(/[0-9.]+/, "", unit); sub(/[a-z]+$/, "", lo)
		ns = lo * (unit == "us" ? 1000 : unit == "ms" ? 1000000 : unit == "s" ? 1e9 : 1)
		if (ns >= 131000) n += $5 } END { print n + 0 }' "$WORK/$v-lat.txt")
	assert_ge "$v: lat: calls of 131 us and more, at least the script's slow ones" "$lover" "$lslow"
	assert_le "$v: lat: calls of 131 us and more, at most the slow ones + 10% (fast calls the host stalled)" \
		"$lover" $((lslow + lslow / 10 + 1))
}

# by_kind NAME PYTHON [-X perf]: Server.handle's arguments read at each
# call: i, every call's own (their sum the script's), and kind split by
# --by as the script counted, in its slow calls and its fast ones.
by_kind() {
	local v=$1 py=$2
	shift 2
	local rec=$WORK/$v-by.sonde
	BY_KIND=$WORK/$v.kinds "$SONDE" record --all-calls --trace 'py:app.Server.handle i kind nosuch' \
		-o "$rec" -- "$py" "$@" "$WORK/app.py" 2000 >"$WORK/$v-by.out" 2>"$WORK/$v-by.err" ||
		{ cat "$WORK/$v-by.err" >&2; fail "$v: record --trace 'py:... i kind' failed"; }
	[ "$(wc -l <"$WORK/$v.kinds")" = 12 ] || fail "$v: the script counted $(wc -l <"$WORK/$v.kinds") kinds of call, expected 12"
	"$SONDE" report "$rec" --json >"$WORK/$v-all.json"
	local reads sum
	reads=$(jq '.probes[0].values.i.count' "$WORK/$v-all.json")
	assert_near "$v: values of i read, one a call" "$reads" 2000 0
	assert_near "$v: nosuch, no local of Server.handle: not read, at every call" \
		"$(jq '.probes[0].values.nosuch.unavailable' "$WORK/$v-all.json")" 2000 0
	assert_near "$v: nosuch's values" "$(jq '.probes[0].values.nosuch.count' "$WORK/$v-all.json")" 0 0
	sum=$(sqlite3 "$rec" "select sum(cast(v.text as integer)) from hit_values v join captures c on c.id = v.capture where c.name = 'i' and v.status = 'ok'")
	assert_near "$v: the sum of i over the calls (0 + 1 + ... + 1999)" "$sum" 1999000 0
	# The slow view is the calls over p90: 200 of 2000, the script's slow
	# ones unless the host stalled fast calls past some slow ones. Those
	# (m: fast calls in the slow view, by i, every tenth i the script's
	# slow) are each a slow call in the fast view, so a kind's counts may be
	# m off either way; their sum over both views is the script's, exactly.
	local m class want got kind
	m=$("$SONDE" report "$rec" --json --slow 'py:app.Server.handle:p90' --by i |
		jq '[.by.rows[] | select((.value | tonumber) % 10 != 0) | .view_calls] | add // 0')
	need_numbers "$v: fast calls the host stalled into the slow view" "$m"
	assert_le "$v: fast calls the host stalled into the slow view" "$m" 20
	for class in slow fast; do
		"$SONDE" report "$rec" --json --"$class" 'py:app.Server.handle:p90' --by kind >"$WORK/$v-$class.json"
	done
	while IFS=$'\t' read -r key want; do
		class=${key%% *} kind=${key#* }
		got=$(jq --arg k "$kind" '[.by.rows[] | select(.value == $k) | .view_calls] | add // 0' "$WORK/$v-$class.json")
		assert_near "$v: $class calls with kind $kind, as the script counted (the host stalled $m)" "$got" "$want" "$m"
	done <"$WORK/$v.kinds"
	local total_got total_want
	for kind in $(cut -f1 "$WORK/$v.kinds" | cut -d' ' -f2- | sort -u); do
		total_want=$(awk -F'\t' -v k="$kind" '{ split($1, a, " "); sub(/^[a-z]+ /, "", $1) } $1 == k { n += $2 } END { print n + 0 }' "$WORK/$v.kinds")
		total_got=$(jq -s --arg k "$kind" '[.[].by.rows[] | select(.value == $k) | .view_calls] | add // 0' \
			"$WORK/$v-slow.json" "$WORK/$v-fast.json")
		assert_near "$v: calls with kind $kind, slow and fast, as the script counted" "$total_got" "$total_want" 0
	done
}

for py in "${pythons[@]:2}"; do
	v=$(basename "$py")
	"$SONDE" probe -e "$py" --python | grep -q "^py: probes: on py_trampoline_evaluator (0x[0-9a-f]*), in processes run with -X perf$" ||
		fail "$v: probe --python does not say where py: probes go"
	counts "$v" "$py" -X perf
	by_kind "$v" "$py" -X perf
done

# Debian's 3.11: through its USDT pair, the call's code object that of the
# current frame of the thread holding the GIL.
PY311=/usr/bin/python3.11
if [ -x "$PY311" ] && readelf -n "$PY311" | grep -q "Provider: python"; then
	"$SONDE" probe -e "$PY311" --python | grep -q "^py: probes: through function__entry,function__return (the GIL holder's current frame), with the line probe's semaphore raised$" ||
		fail "probe --python on 3.11 does not say how py: probes go"
	counts 311 "$PY311"
	by_kind 311 "$PY311"
	# -p: the running interpreter's line semaphore raised for its entries.
	"$PY311" "$WORK/app.py" 3000 "$WORK/go311" >"$WORK/p311.out" &
	pypid=$!
	BG_PIDS+=($pypid)
	"$SONDE" record -p "$pypid" --trace py:app.py:slow_path --ready-file "$WORK/go311" \
		-o "$WORK/p311.sonde" >"$WORK/rec.out" 2>&1 || { cat "$WORK/rec.out" >&2; fail "3.11: record -p --trace py: failed"; }
	wait "$pypid"
	assert_near "3.11 -p: py:app.py:slow_path calls, as the script counted" \
		"$(sqlite3 "$WORK/p311.sonde" "select entered from probes where name = 'py:app.py:slow_path'")" \
		"$(kv "$WORK/p311.out" slow)" 0
else
	skip311="Debian's python3.11 with SDT notes is not installed (scripts/bootstrap.sh test installs it): py: on 3.11 not checked"
fi

# -p: a python already running (with -X perf), traced from the ready file on.
py=${pythons[2]}
"$py" -X perf "$WORK/app.py" 3000 "$WORK/go" >"$WORK/p.out" &
pypid=$!
BG_PIDS+=($pypid)
"$SONDE" record -p "$pypid" --trace py:app.Server.handle --ready-file "$WORK/go" \
	-o "$WORK/p.sonde" >"$WORK/rec.out" 2>&1 || { cat "$WORK/rec.out" >&2; fail "record -p --trace py: failed"; }
wait "$pypid"
assert_near "-p: py:app.Server.handle calls, as the script counted" \
	"$(sqlite3 "$WORK/p.sonde" "select entered from probes where name = 'py:app.Server.handle'")" \
	"$(kv "$WORK/p.out" calls)" 0

# PYTHONPERFSUPPORT=1 in place of -X perf: the same trampolines.
PYTHONPERFSUPPORT=1 "$SONDE" record --trace py:app.Server.handle -o "$WORK/env.sonde" -- \
	"$py" "$WORK/app.py" 500 >"$WORK/env.out" 2>"$WORK/env.err" || { cat "$WORK/env.err" >&2; fail "PYTHONPERFSUPPORT=1: record failed"; }
assert_near "PYTHONPERFSUPPORT=1: py:app.Server.handle calls, as the script counted" \
	"$(sqlite3 "$WORK/env.sonde" "select entered from probes where name = 'py:app.Server.handle'")" \
	"$(kv "$WORK/env.out" calls)" 0

# Live: a running session (sonde top) traces a Python method when told
# (sonde ctl trace py:...), and counts every call made after.
export SONDE_RUNTIME_DIR="$WORK/run"
mkdir -m 700 "$SONDE_RUNTIME_DIR"
"$py" -X perf "$WORK/app.py" 2000 "$WORK/live.go" "$WORK/live.done" >/dev/null &
livepid=$!
BG_PIDS+=($livepid)
"$SONDE" top -b -i 0.5 -p "$livepid" >"$WORK/top.out" 2>"$WORK/top.err" &
toppid=$!
BG_PIDS+=($toppid)
for _ in $(seq 100); do
	grep -q "^$toppid " <<<"$("$SONDE" ctl --list 2>/dev/null)" && break
	kill -0 "$toppid" 2>/dev/null || { cat "$WORK/top.err" >&2; fail "sonde top exited"; }
	sleep 0.1
done
out=$("$SONDE" ctl trace py:app.Server.handle 2>&1) || fail "ctl trace py: failed: $out"
[ "$out" = "tracing 1 function: py:app.Server.handle" ] || fail "ctl trace py: answered '$out'"
touch "$WORK/live.go"
for _ in $(seq 300); do [ -f "$WORK/live.done" ] && break; sleep 0.1; done
[ -f "$WORK/live.done" ] || fail "the live script did not finish its calls"
"$SONDE" ctl save "$WORK/live.sonde" >/dev/null || fail "ctl save failed"
assert_near "live: py:app.Server.handle calls after ctl trace, as the script counted" \
	"$(sqlite3 "$WORK/live.sonde" "select entered from probes where name = 'py:app.Server.handle'")" \
	"$(kv "$WORK/live.done" calls)" 0
stop_gently "$toppid"
stop_gently "$livepid"

# The headline: the slow calls of a Python method, and where they were.
"$SONDE" slow 'py:app.Server.handle:auto' -- "$py" -X perf "$WORK/app.py" 3000 \
	>"$WORK/slow.txt" 2>"$WORK/slow.err" || { cat "$WORK/slow.err" >&2; fail "slow py: failed"; }
slow=$(kv "$WORK/slow.txt" slow)
need_numbers "the script's slow calls" "$slow"
found=$(sed -n 's/.*auto: \([0-9]*\) of \([0-9]*\) calls.*/\1/p' "$WORK/slow.txt")
assert_ge "slow calls found (auto) at least the script's" "$found" "$slow"
assert_le "slow calls found (auto), at most the script's + 10% (fast calls the host stalled)" \
	"$found" $((slow + slow / 10))
share=$(awk '$NF == "app.slow_path" && $1 ~ /%$/ { sub("%", "", $1); print $1; exit }' "$WORK/slow.txt")
assert_ge "share of the slow calls' samples in app.slow_path (%)" "$share" 85

# Bad input, each one line.
expect_error "not started with -X perf or PYTHONPERFSUPPORT=1" "$WORK/x.sonde" -- \
	"$SONDE" record -d 1 --trace py:app.handle -o "$WORK/x.sonde" -- "$py" "$WORK/app.py" 10
expect_error "is Python 3.10, which has neither -X perf trampolines \(3.12 on\) nor the function__entry probe" "$WORK/x.sonde" -- \
	"$SONDE" record -d 1 --trace py:app.handle -o "$WORK/x.sonde" -- "${pythons[0]}" "$WORK/app.py" 10
expect_error "sonde times Python 3.11's calls through its function__entry and line USDT probes: .*libpython3.11.so.1.0 has no USDT probes" "$WORK/x.sonde" -- \
	"$SONDE" record -d 1 --trace py:app.handle -o "$WORK/x.sonde" -- "${pythons[1]}" "$WORK/app.py" 10
# A libpython without its symbol table (strip --strip-all): no
# py_trampoline_evaluator to put the probe on.
mkdir -p "$WORK/stripped"
cp "$(dirname "$(dirname "$py")")/lib/libpython3.12.so.1.0" "$WORK/stripped/"
strip --strip-all "$WORK/stripped/libpython3.12.so.1.0"
LD_LIBRARY_PATH=$WORK/stripped expect_error "libpython3.12.so.1.0 has no py_trampoline_evaluator to trace" "$WORK/x.sonde" -- \
	"$SONDE" record -d 1 --trace py:app.handle -o "$WORK/x.sonde" -- "$py" -X perf "$WORK/app.py" 10
expect_error "bad probe 'py:handle': expected py:MODULE.FUNCTION" "$WORK/x.sonde" -- \
	"$SONDE" record -d 1 --trace py:handle -o "$WORK/x.sonde" -- "$py" -X perf "$WORK/app.py" 10
expect_error "a py: probe takes no predicate yet \(if i > 3\)" "$WORK/x.sonde" -- \
	"$SONDE" record -d 1 --trace 'py:app.handle i if i > 3' -o "$WORK/x.sonde" -- "$py" -X perf "$WORK/app.py" 10
expect_error "a py: probe captures its function's arguments and locals by name \(py:app.handle n\): 'self.x' is not a name" "$WORK/x.sonde" -- \
	"$SONDE" record -d 1 --trace 'py:app.handle self.x' -o "$WORK/x.sonde" -- "$py" -X perf "$WORK/app.py" 10
expect_error "py:app.handle, traced already, may name the same Python function" "$WORK/x.sonde" -- \
	"$SONDE" record -d 1 --trace py:app.handle --trace py:app.py:handle -o "$WORK/x.sonde" -- "$py" -X perf "$WORK/app.py" 10
expect_error "is not a Python interpreter" "$WORK/x.sonde" -- \
	"$SONDE" record -d 1 --trace py:app.handle -o "$WORK/x.sonde" -- "$TARGETS/blocking"
[ -z "${skip311:-}" ] || skip "$skip311"
