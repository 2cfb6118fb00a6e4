# Every thread's Python frames read from a running interpreter's memory
# (sonde probe -p PID --python, symbols/pyframes): pyenv's 3.10.13, 3.11.7,
# 3.12.1, 3.13.0 and Debian's python3.11 (whose layout is sonde's table).
# The truth is the script's own: each of its two threads writes the stack
# Python itself gives (traceback.extract_stack, with co_qualname where the
# version has one) and then spins at known lines; sonde must name the same
# frames, innermost first, with the same lines (the leaf: a line of its
# spin loop).
. "$(dirname "$0")/lib.sh"
[ "$(uname -m)" = x86_64 ] || skip "the Python layouts are x86-64 only"
pyenv_pythons "the frames are"
[ -x /usr/bin/python3.11 ] && pythons+=(/usr/bin/python3.11)

cat >"$WORK/spin.py" <<'EOF'
import sys, threading, traceback

def stack(out):
    # Innermost first: name (qualified where the code has one), line.
    names = []
    for fr, line in traceback.walk_stack(sys._getframe(1)):
        code = fr.f_code
        names.append("%s %d" % (getattr(code, "co_qualname", code.co_name), line))
    with open(out, "w") as f:
        f.write("pthread %x\n" % threading.get_ident())
        f.write("\n".join(names) + "\n")

class Worker:
    def run(self, out):
        return self.deep(3, out)

    def deep(self, n, out):
        if n == 0:
            stack(out)
            x = 0
            while True:  # SPIN-A
                x += 1   # SPIN-A
        return self.deep(n - 1, out)

class Other:
    def loop(self, out):
        stack(out)
        y = 0
        while True:  # SPIN-B
            y += 2   # SPIN-B

t = threading.Thread(target=Other().loop, args=(sys.argv[2],), daemon=True)
t.start()
Worker().run(sys.argv[1])
EOF
spin_lines() { grep -n "# $1" "$WORK/spin.py" | cut -d: -f1 | tr '\n' ' '; }

# compare TRUTH OUT SPIN: the thread of TRUTH in sonde's OUT, frame by frame.
compare() {
	local truth=$1 out=$2 spin=$3 tid got want i=0
	tid=$(sed -n 's/^pthread //p' "$truth")
	awk -v t="pthread 0x$tid)" 'index($0, t) { on = 1; next } /^thread / { on = 0 } on' "$out" |
		sed -E 's/^  (.*) \(.*:([0-9]+)\)$/\1 \2/' >"$WORK/got.txt"
	tail -n +2 "$truth" >"$WORK/want.txt"
	[ -s "$WORK/got.txt" ] || { cat "$out" >&2; fail "$py: no frames of thread 0x$tid"; }
	[ "$(wc -l <"$WORK/got.txt")" = "$(wc -l <"$WORK/want.txt")" ] ||
		fail "$py: thread 0x$tid has $(wc -l <"$WORK/got.txt") frames to sonde, $(wc -l <"$WORK/want.txt") to Python: $(tr '\n' ';' <"$WORK/got.txt")"
	while IFS= read -r got <&3 && IFS= read -r want <&4; do
		i=$((i + 1))
		if [ "$i" = 1 ]; then # the leaf: its name, at a line of its loop
			[ "${got% *}" = "${want% *}" ] || fail "$py: leaf '$got', Python says '$want'"
			case " $spin " in *" ${got##* } "*) ;; *) fail "$py: leaf at line ${got##* }, its loop is at $spin" ;; esac
		else
			[ "$got" = "$want" ] || fail "$py: frame $i is '$got' to sonde, '$want' to Python"
		fi
	done 3<"$WORK/got.txt" 4<"$WORK/want.txt"
}

for py in "${pythons[@]}"; do
	rm -f "$WORK/a.txt" "$WORK/b.txt"
	"$py" "$WORK/spin.py" "$WORK/a.txt" "$WORK/b.txt" &
	pid=$!
	for _ in $(seq 100); do [ -s "$WORK/a.txt" ] && [ -s "$WORK/b.txt" ] && break; sleep 0.1; done
	[ -s "$WORK/a.txt" ] && [ -s "$WORK/b.txt" ] || fail "$py: the script did not write its stacks"
	"$SONDE" probe -p "$pid" --python >"$WORK/out.txt"
	kill "$pid"
	wait "$pid" 2>/dev/null || true # killed: its status is the signal's
	compare "$WORK/a.txt" "$WORK/out.txt" "$(spin_lines SPIN-A)"
	compare "$WORK/b.txt" "$WORK/out.txt" "$(spin_lines SPIN-B)"
	pass "$py ($(sed -n 2p "$WORK/out.txt")): both threads' frames as Python gives them ($(wc -l <"$WORK/want.txt") and $(wc -l <"$WORK/a.txt" | awk '{ print $1 - 1 }'))"
done

expect_error "process $$ runs no CPython interpreter sonde knows" "" -- "$SONDE" probe -p $$ --python
