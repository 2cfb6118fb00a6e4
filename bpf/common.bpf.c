// SPDX-License-Identifier: GPL-2.0
/* common.bpf.c — the one definition of each map and global that several
 * program files share (declared extern in common.bpf.h, where the maps'
 * shapes are). */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

sonde_events_map events SEC(".maps");
sonde_targets_map targets SEC(".maps");
sonde_counters_map counters SEC(".maps");
sonde_threads_map threads SEC(".maps");
sonde_thread_now_map thread_now SEC(".maps");
sonde_tstate_tids_map tstate_tids SEC(".maps");
__u64 tstate_next = 0;
sonde_offcpu_stash_map offcpu_stash SEC(".maps");
sonde_tgids_heard_map tgids_heard SEC(".maps");
sonde_py_procs_map py_procs SEC(".maps");
sonde_py_threads_map py_threads SEC(".maps");
sonde_py_walk_map py_walk_scratch SEC(".maps");
sonde_py_verdicts_map py_verdicts SEC(".maps");
sonde_py_text_map py_text_scratch SEC(".maps");
sonde_py_call_map py_call_scratch SEC(".maps");
sonde_unwind_procs_map unwind_procs SEC(".maps");
sonde_unwind_requests_map unwind_requests SEC(".maps");
sonde_unwind_rows_map unwind_rows SEC(".maps");
sonde_unwind_mappings_map unwind_mappings SEC(".maps");
sonde_unwind_found_map unwind_found SEC(".maps");

const volatile __u32 filter_mode = SONDE_FILTER_ALL;
const volatile __u32 unwind_mode = SONDE_UNWIND_AUTO;
__u64 miss_wakeup_ns = 0;
__u64 walk_opaque_zero = 0; /* stacks.bpf.h: never written */
__u64 next_span_id = 0;
struct sonde_calibration calib = {};

/* Waking the reader for every record costs the thread that made it: for a
 * span record microseconds per call, for a sample about 20 us more of the
 * call it landed in (measured: sampled calls grew by 43 us with a wake-up
 * per sample, 20 us without). So samples and span records wake the reader
 * only once this much is waiting (it also drains on its poll timeout, at
 * least every 100 ms, so records are never stuck). Process events force a
 * wake-up: user space must read a new process's maps while it still lives;
 * so does the first sample of a process it has not heard of (tgids_heard).
 * (The default flag would not do: it wakes the reader only when it has
 * consumed everything before, which unread records prevent.) */
const volatile __u64 wakeup_bytes = 1u << 20;

/* Loaded tables by the file they were built from (struct sonde_unwind_file). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SONDE_UNWIND_FILES);
	__type(key, struct sonde_unwind_file_key);
	__type(value, struct sonde_unwind_file);
} unwind_files SEC(".maps");

/* What bpf_find_vma tells of the mapping holding a pc. */
struct vma_found {
	struct sonde_unwind_found m;
	int ok;
};

/* Where it tells it: off the stack, which the walk's frames fill (a
 * sampler or off-CPU program, its bpf_loop callback, find_by_file and
 * bpf_find_vma's callback: over the kernel's 512 bytes on kernels that give
 * tracepoint programs no private stack). Per CPU: the programs that walk
 * stacks never run nested on one CPU (perf-event and tracepoint programs
 * share the kernel's bpf_prog_active guard). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vma_found);
} vma_found_scratch SEC(".maps");

/* Kernels before 6.7 keep the modification time as a timespec64. */
struct inode___timespec {
	struct timespec64 i_mtime;
} __attribute__((preserve_access_index));

static long vma_found_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	__u32 zero = 0;
	struct vma_found *f = bpf_map_lookup_elem(&vma_found_scratch, &zero);
	if (!f)
		return 1;
	struct file *file = BPF_CORE_READ(vma, vm_file);
	if (!file || !(BPF_CORE_READ(vma, vm_flags) & 0x4 /* VM_EXEC */))
		return 0;
	struct inode *inode = BPF_CORE_READ(file, f_inode);
	f->m.start = BPF_CORE_READ(vma, vm_start);
	f->m.end = BPF_CORE_READ(vma, vm_end);
	f->m.offset = BPF_CORE_READ(vma, vm_pgoff) << 12;
	f->m.key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	f->m.key.ino = BPF_CORE_READ(inode, i_ino);
	f->m.size = BPF_CORE_READ(inode, i_size);
	if (bpf_core_field_exists(inode->i_mtime_sec)) {
		f->m.mtime_sec = BPF_CORE_READ(inode, i_mtime_sec);
		f->m.mtime_nsec = BPF_CORE_READ(inode, i_mtime_nsec);
	} else {
		struct inode___timespec *old = (void *)inode;
		f->m.mtime_sec = BPF_CORE_READ(old, i_mtime.tv_sec);
		f->m.mtime_nsec = BPF_CORE_READ(old, i_mtime.tv_nsec);
	}
	f->ok = 1;
	return 0;
}

/* A new process's set of found mappings (too large for the stack). */
struct sonde_unwind_found_set found_empty = {};

/* A found mapping as user space would have made it (src/engine/unwind.c,
 * add_mapping), into b->vm, when its file's table is in the rows. */
static __always_inline int use_found(struct by_file *b, const struct sonde_unwind_found *f)
{
	struct sonde_unwind_file *uf = bpf_map_lookup_elem(&unwind_files, &f->key);
	if (!uf || uf->size != f->size || uf->mtime_sec != f->mtime_sec ||
	    uf->mtime_nsec != f->mtime_nsec)
		return 0;
	for (int i = 0; i < SONDE_UNWIND_FILE_SEGS; i++) {
		if (i >= uf->nsegs)
			break;
		if (f->offset - uf->segs[i].offset < uf->segs[i].filesz) {
			__u64 vaddr = f->offset - uf->segs[i].offset + uf->segs[i].vaddr;
			b->vm.start = f->start;
			b->vm.end = f->end;
			b->vm.adj = f->start - vaddr + uf->base;
			b->vm.first = uf->first;
			b->vm.count = uf->count;
			b->known = 1;
			return 1;
		}
	}
	return 0;
}

/* A pc (b->pc) in no mapping user space has read for the process (mapped
 * since: exec, dlopen): the mapping the kernel has there into b->vm, with
 * its file's table when that table is in the rows already — one this
 * process's samples found before, or, once per walk, one looked up now
 * (see struct sonde_unwind_found). 0 otherwise: user space loads it at
 * the miss. */
__noinline int find_by_file(struct by_file *b)
{
	if (!b)
		return 0;
	__u64 pc = b->pc;
	__u32 tgid = b->tgid;
	if (b->known && pc >= b->vm.start && pc < b->vm.end)
		return 1;
	struct sonde_unwind_found_set *set = bpf_map_lookup_elem(&unwind_found, &tgid);
	if (set) {
		__u32 k = SONDE_UNWIND_FOUND;
		for (__u32 i = 0; i < SONDE_UNWIND_FOUND; i++) {
			if (i >= set->n)
				break;
			if (pc >= set->v[i].start && pc < set->v[i].end) {
				k = i;
				break;
			}
		}
		if (k < SONDE_UNWIND_FOUND)
			return use_found(b, &set->v[k]);
	}
	if (b->tried)
		return 0;
	b->tried = 1;
	__u32 zero = 0;
	struct vma_found *f = bpf_map_lookup_elem(&vma_found_scratch, &zero);
	if (!f)
		return 0;
	f->ok = 0;
	if (bpf_find_vma(bpf_get_current_task_btf(), pc, vma_found_cb, NULL, 0) || !f->ok ||
	    !use_found(b, &f->m))
		return 0;
	count(SONDE_CNT_FILE_FOUND);
	if (!set) {
		bpf_map_update_elem(&unwind_found, &tgid, &found_empty, BPF_NOEXIST);
		set = bpf_map_lookup_elem(&unwind_found, &tgid);
		if (!set)
			return 1;
	}
	__u32 k = set->n < SONDE_UNWIND_FOUND ? set->n : set->next;
	if (k < SONDE_UNWIND_FOUND) {
		set->v[k] = f->m;
		if (set->n < SONDE_UNWIND_FOUND)
			set->n++;
		else
			set->next = (set->next + 1) % SONDE_UNWIND_FOUND;
	}
	return 1;
}

/* Both searches of the walk (stacks.bpf.h) run over absolute indexes
 * [first, first + n), all read from maps: the verifier knows none of them,
 * so no branch on them is decided for it, nothing is marked precise, and
 * the states of a halving merge instead of doubling. Entries are read
 * through map lookups (not indexed) so no index needs bounds either. Both
 * are global functions of scalars: verified once on their own, not again
 * in every state of the walk that calls them. */

/* 1 + the index in unwind_mappings of the mapping of the process whose
 * mappings are [first, first + n) that holds pc; 0: none. */
__noinline __u32 unwind_find_mapping(__u32 first, __u32 n, __u64 pc)
{
	__u32 lo = first, hi = first + n;
	/* The first mapping with start > pc is at lo after the search. */
	for (int k = 0; k < SONDE_UNWIND_MAP_STEPS; k++) {
		if (lo >= hi)
			break;
		__u32 mid = lo + (hi - lo) / 2;
		const struct sonde_unwind_mapping *m = bpf_map_lookup_elem(&unwind_mappings, &mid);
		if (!m)
			return 0;
		if (m->start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == first)
		return 0;
	__u32 idx = lo - 1;
	const struct sonde_unwind_mapping *m = bpf_map_lookup_elem(&unwind_mappings, &idx);
	return m && pc >= m->start && pc < m->end ? lo : 0;
}

/* The rule of the last row at or below key among rows [first,
 * first + count), or CFI_CFA_NONE (0) below the first row. */
__noinline __u32 unwind_find_rule(__u32 first, __u32 count, __u64 key)
{
	if (key > 0xffffffffull)
		return CFI_CFA_NONE;
	__u32 lo = first, hi = first + count;
	for (int k = 0; k < SONDE_UNWIND_ROW_STEPS; k++) {
		if (lo >= hi)
			break;
		__u32 mid = lo + (hi - lo) / 2;
		struct sonde_unwind_row *r = bpf_map_lookup_elem(&unwind_rows, &mid);
		if (!r)
			return CFI_CFA_UNSUPPORTED; /* outside the array: never a guess */
		if (r->pc <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == first)
		return CFI_CFA_NONE;
	__u32 idx = lo - 1;
	struct sonde_unwind_row *r = bpf_map_lookup_elem(&unwind_rows, &idx);
	return r ? r->rule : CFI_CFA_UNSUPPORTED;
}
