# A code object's memory reused by another (issue 27 item 1: user space
# names frames by code object, cached, and notices when a code object's
# memory is reused): the script compiles a new function, gen.f_G, in each
# of 4 generations, runs it for 2 s, then drops it; CPython gives the next
# generation's code object the same address (the script checks, and
# records when each generation ran by CLOCK_MONOTONIC, the samples' clock).
# sonde names a code object from its cache, read again at most a second
# later, when it symbolizes a sample (the reader takes samples in batches,
# up to ~0.1 s after they were taken, later on a busy machine), so:
#  - from 1.3 s into each generation to 0.3 s before its end (the cache's
#    second and the reader's batches at the start; at the end, a sample
#    symbolized after the next generation was read is named by it: one of
#    556 in a fresh-clone run), every sample in gen.f_* names that
#    generation's function, on Debian's 3.11 and pyenv's 3.12;
#  - each generation's function appears by its own name.
. "$(dirname "$0")/lib.sh"
require_bpf
[ "$(uname -m)" = x86_64 ] || skip "the Python layouts are x86-64 only"
pythons=(/usr/bin/python3.11 "${PYENV_ROOT:-/root/.pyenv}/versions/3.12.1/bin/python3.12")
for py in "${pythons[@]}"; do
	[ -x "$py" ] || skip "$py is not installed (scripts/bootstrap.sh test installs both)"
done

cat >"$WORK/gen.py" <<'PYEOF'
import gc, sys, time
src = ("def f_%d(t):\n"
       "    end = time.monotonic() + t\n"
       "    x = 0\n"
       "    while time.monotonic() < end:\n"
       "        x += 1\n"
       "    return x\n")
ids = []
with open(sys.argv[1], "w") as out:
    for g in range(4):
        ns = {"time": time}
        exec(compile(src % g, "gen.py", "exec"), ns)
        f = ns["f_%d" % g]
        ids.append(id(f.__code__))
        t0 = time.monotonic_ns()
        f(2.0)
        out.write("%d %d %d\n" % (g, t0, time.monotonic_ns()))
        del f, ns
        gc.collect()
print("reused=%d" % (len(set(ids)) == 1))
PYEOF

for py in "${pythons[@]}"; do
	v=$(basename "$py")
	"$SONDE" record -F 499 -o "$WORK/$v.sonde" -- "$py" "$WORK/gen.py" "$WORK/$v.gens" >"$WORK/$v.out" 2>"$WORK/$v.err" ||
		{ cat "$WORK/$v.err" >&2; fail "$v: record failed"; }
	[ "$(kv "$WORK/$v.out" reused)" = 1 ] ||
		skip "$v: the generations' code objects did not share an address ($(cat "$WORK/$v.out")): nothing reused to check"
	[ "$(wc -l <"$WORK/$v.gens")" = 4 ] || fail "$v: the script ran $(wc -l <"$WORK/$v.gens") of its 4 generations"
	# Each sample in a gen.f_* frame: its time and the generation it names.
	sqlite3 -separator ' ' "$WORK/$v.sonde" "SELECT s.time_ns, substr(f.name, 7) FROM samples s
		JOIN stack_frames sf ON sf.stack = s.stack JOIN frames f ON f.id = sf.frame
		WHERE f.kind = 'python' AND f.name LIKE 'gen.f\_%' ESCAPE '\'" >"$WORK/$v.named"
	read -r checked right names <<<"$(awk 'FNR == NR { from[$1] = $2 + 1300000000; to[$1] = $3 - 300000000; next }
		{ for (g in from) if ($1 >= from[g] && $1 <= to[g]) { n++; if ($2 == g) ok++ }
		  seen[$2] = 1 }
		END { k = 0; for (g in seen) k++; print n + 0, ok + 0, k }' "$WORK/$v.gens" "$WORK/$v.named")"
	assert_ge "$v: samples from 1.3 s into a generation to 0.3 s before its end" "$checked" 100
	assert_near "$v: of them, those naming their own generation's function" "$right" "$checked" 0
	assert_near "$v: generations named (gen.f_0 .. gen.f_3)" "$names" 4 0
done
