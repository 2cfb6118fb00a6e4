# A real Debian program: redis-server as Debian ships it (only .dynsym;
# /usr/bin/redis-server is a symlink to redis-check-rdb) under
# redis-benchmark. sonde's count of processCommand calls must equal redis'
# own count of the commands it processed (INFO stats), exactly. Loopback
# only: redis listens on a unix socket in the test's directory, no TCP port.
. "$(dirname "$0")/lib.sh"
require_bpf
for p in redis-server redis-cli redis-benchmark; do
	command -v "$p" >/dev/null || fail "$p is not installed: run scripts/bootstrap.sh (packages redis-server, redis-tools)"
done
[ -L "$(command -v redis-server)" ] || echo "note: redis-server is not a symlink here; the symlink case is covered by probes_children.sh"

lat_calls() { sed -n "s/^$2: \([0-9]*\) calls.*/\1/p" "$1" | tail -n1; }
start_redis

processed() { redis-cli -s "$sock" INFO stats | tr -d '\r' | sed -n 's/^total_commands_processed://p'; }

# By the name it was started as (the symlink's), in a running process.
"$SONDE" lat -p "$rpid" redis-server:processCommand >"$WORK/lat.out" 2>"$WORK/lat.err" &
lat=$!
BG_PIDS+=("$lat")
for _ in $(seq 1200); do
	grep -q "^sonde: tracing" "$WORK/lat.err" && break
	kill -0 "$lat" 2>/dev/null || { cat "$WORK/lat.err"; fail "sonde lat ended early"; }
	sleep 0.05
done
grep -q "^sonde: tracing" "$WORK/lat.err" || fail "sonde lat did not start"

# Redis counts a command after running it: the INFO that reports t0 is in
# t1, the INFO that reports t1 in neither; both are traced.
t0=$(processed)
redis-benchmark -s "$sock" -n 20000 -c 4 -t set,get,incr,lpush,lpop -q >"$WORK/bench.out"
t1=$(processed)
kill -INT "$lat"
wait "$lat" || fail "sonde lat failed: $(cat "$WORK/lat.err")"
grep -q "lost" "$WORK/lat.err" && fail "sonde lost records: $(cat "$WORK/lat.err")"

traced=$(lat_calls "$WORK/lat.out" processCommand)
expected=$((t1 - t0 + 1))
[ "$expected" -ge 100000 ] || fail "redis processed only $((t1 - t0)) commands under the benchmark"
[ "$traced" = "$expected" ] || { cat "$WORK/lat.out" "$WORK/lat.err"; fail "processCommand: $traced calls traced, redis processed $expected (total_commands_processed $t0 -> $t1, + the last INFO)"; }
pass "redis-server:processCommand: $traced calls, = redis' total_commands_processed delta + 1 (the final INFO)"
