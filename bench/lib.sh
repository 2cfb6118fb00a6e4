# Helpers shared by the bench scripts (sourced).

# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# The CPU time bench/calls printed ("LOOP_NS CALLS CPU_NS") in the output
# on stdin.
loop_ns() { awk '/^[0-9]+ [0-9]+ [0-9]+$/ { ns = $3 } END { if (ns == "") exit 1; print ns }'; }

# file_offset BINARY VADDR: the file offset of a code address (what a
# uprobe is placed by): vaddr - p_vaddr + p_offset of its executable LOAD
# segment.
file_offset() {
	local binary=$1 vaddr=$(($2)) _ off va sz flags
	while read -r _ off va _ _ sz flags; do
		[[ $flags == *E* ]] || continue
		if ((vaddr >= va && vaddr < va + sz)); then
			printf '0x%x\n' $((vaddr - va + off))
			return 0
		fi
	done < <(readelf -lW "$binary" | awk '$1 == "LOAD"')
	return 1
}
