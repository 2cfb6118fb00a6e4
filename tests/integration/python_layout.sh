# What sonde reads of a CPython interpreter to walk its Python frames
# (sonde probe --python, symbols/pyruntime): pyenv's 3.10.13, 3.11.7,
# 3.12.1 (libpython with DWARF) and 3.13.0 (its _Py_DebugOffsets), and
# Debian's python3.11 (static, no DWARF: sonde's table). Each offset sonde
# uses is checked against gdb's reading of the same structure in the
# interpreter's DWARF, the independent truth; sonde's table must agree
# with every interpreter that publishes its layout.
. "$(dirname "$0")/lib.sh"
[ "$(uname -m)" = x86_64 ] || skip "the Python layouts are x86-64 only"
command -v gdb >/dev/null || skip "gdb is not installed (scripts/bootstrap.sh test installs it): it reads the interpreters' DWARF to compare with"
PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
for v in 3.10.13 3.11.7 3.12.1 3.13.0; do
	[ -x "$PYENV/$v/bin/python${v%.*}" ] || skip "pyenv's Python $v is not installed ($PYENV/$v): the layouts are checked on each of 3.10 to 3.13"
done

# gdb_offset LIB TYPE PATH: the byte offset of member PATH ("a.b") of TYPE
# (struct.NAME for a struct tag) in LIB's DWARF, as gdb computes it, or
# what it could not find.
cat >"$WORK/off.py" <<'EOF'
import gdb
def member_offset(type_name, path):
    try:
        t = gdb.lookup_type(type_name)
    except gdb.error:
        return "no type " + type_name
    off = 0
    for part in path.split('.'):
        t = t.strip_typedefs()
        f = [x for x in t.fields() if x.name == part]
        if not f:
            return "no member " + part
        off += f[0].bitpos // 8
        t = f[0].type
    return off
EOF
gdb_offset() {
	gdb -batch -nx -ex "source $WORK/off.py" -ex "python print(member_offset('${2/struct./struct }', '$3'))" "$1" 2>/dev/null | tail -n1
}
# field LINE NAME: the offset sonde printed for NAME in its LINE ("thread:")
field() {
	awk -v line="$1" -v name="$2" 'index($0, line " ") == 1 {
		n = split(substr($0, length(line) + 2), items, ", ")
		for (i = 1; i <= n; i++)
			if (index(items[i], name " +") == 1) { print substr(items[i], length(name) + 3) + 0; exit }
	}' "$WORK/out.txt"
}

check() { # VERSION SOURCE
	local v=$1 source=$2 minor=${1%.*} lib
	minor=${minor#3.}
	lib=$(ls "$PYENV/$v"/lib/libpython3.*.so.1.0)
	"$SONDE" probe -e "$PYENV/$v/bin/python3.$minor" --python >"$WORK/out.txt"
	head -n1 "$WORK/out.txt" | grep -q "^Python 3\\.$minor.* in $lib " ||
		fail "$v: $(head -n1 "$WORK/out.txt")"
	grep -q "^layout from: $source$" "$WORK/out.txt" || fail "$v: $(sed -n 2p "$WORK/out.txt"), expected $source"
	grep -q "^sonde's table for 3.$minor: the same$" "$WORK/out.txt" ||
		fail "$v: $(grep "^sonde's table" "$WORK/out.txt")"
	local frame_type=_PyInterpreterFrame prev=previous code=f_code instr=prev_instr threads=threads.head tframe=cframe
	case $minor in
	10) frame_type=_frame prev=f_back code=f_code instr=f_lasti threads=tstate_head tframe=frame ;;
	13) code=f_executable instr=instr_ptr tframe=current_frame ;;
	esac
	# What a py: probe reads of a call (the thread holding the GIL before
	# 3.12, the frame's locals from 3.11) and of the values it captures.
	local digits=ob_digit call
	[ "$minor" -ge 12 ] && digits=long_value.ob_digit
	case $minor in
	10) call="call:|tstate_current|struct.pyruntimestate|gilstate.tstate_current" ;;
	11) call="call:|tstate_current|struct.pyruntimestate|gilstate.tstate_current
call:|localsplus|struct._PyInterpreterFrame|localsplus
call:|localsplusnames|PyCodeObject|co_localsplusnames" ;;
	*) call="call:|localsplus|struct._PyInterpreterFrame|localsplus
call:|localsplusnames|PyCodeObject|co_localsplusnames" ;;
	esac
	local want got
	while IFS='|' read -r line name type path; do
		got=$(field "$line" "$name")
		want=$(gdb_offset "$lib" "$type" "$path")
		need_numbers "$v: $type.$path (sonde: '$got', gdb: '$want')" "$got" "$want"
		[ "$got" = "$want" ] || fail "$v: $type.$path is +$got to sonde, +$want to gdb"
	done <<EOF
runtime:|interpreters.head|struct.pyruntimestate|interpreters.head
interpreter:|first thread|struct._is|$threads
thread:|thread_id|struct._ts|thread_id
thread:|next|struct._ts|next
thread:|frame|struct._ts|$tframe
frame:|previous|struct.$frame_type|$prev
frame:|code|struct.$frame_type|$code
frame:|instruction|struct.$frame_type|$instr
code:|filename|PyCodeObject|co_filename
code:|firstlineno|PyCodeObject|co_firstlineno
code:|linetable|PyCodeObject|co_linetable
objects:|tuple items|PyTupleObject|ob_item
objects:|tp_flags|PyTypeObject|tp_flags
objects:|tp_name|PyTypeObject|tp_name
objects:|digits|PyLongObject|$digits
objects:|utf8|PyCompactUnicodeObject|utf8
$call
EOF
	pass "$v: $(sed -n 2p "$WORK/out.txt"), every offset as gdb reads the DWARF, sonde's table the same"
}
check 3.10.13 DWARF
check 3.11.7 DWARF
check 3.12.1 DWARF
check 3.13.0 "debug offsets"

# Debian's python3.11 has no DWARF: the table's 3.11 facts, which 3.11.7's
# DWARF gave above. Its _PyRuntime is as large as 3.11.7's.
if [ -x /usr/bin/python3.11 ]; then
	"$SONDE" probe -e /usr/bin/python3.11 --python >"$WORK/out.txt"
	grep -q "^Python 3\\.11\\.[0-9]* in /usr/bin/python3.11 " "$WORK/out.txt" || fail "Debian: $(head -n1 "$WORK/out.txt")"
	grep -q "^layout from: table (no DWARF)$" "$WORK/out.txt" || fail "Debian: $(sed -n 2p "$WORK/out.txt")"
	size() { readelf -sW "$1" | awk '$8 == "_PyRuntime" { print $3; exit }'; }
	[ "$(size /usr/bin/python3.11)" = "$(size "$(ls "$PYENV"/3.11.7/lib/libpython3.11.so.1.0)")" ] ||
		fail "Debian's _PyRuntime is $(size /usr/bin/python3.11) bytes, 3.11.7's $(size "$PYENV"/3.11.7/lib/libpython3.11.so.1.0)"
	pass "Debian's python3.11: the table's 3.11 layout (its _PyRuntime is 3.11.7's size)"
fi

# Other versions, and programs without Python: one line each.
if [ -x "$PYENV/3.9.18/bin/python3.9" ]; then
	expect_error "is Python 3\.9: sonde reads the interpreters of Python 3\.10 to 3\.13" "" -- \
		"$SONDE" probe -e "$PYENV/3.9.18/bin/python3.9" --python
fi
expect_error "runs no CPython interpreter sonde knows" "" -- "$SONDE" probe -e /bin/ls --python
pass "other versions and other programs are refused with one line"
