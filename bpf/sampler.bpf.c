// SPDX-License-Identifier: GPL-2.0
/* sampler.bpf.c — the sampler: `sample_perf` runs on perf software events
 * (cpu-clock, page-faults, ...) opened per CPU by user space, `sample_tp` on
 * any tracepoint user space attaches it to. Both read the thread's spans in
 * flight (written by spans.bpf.c), apply the in-kernel filters, and emit a
 * `struct sonde_sample` with user and kernel stacks into the ring buffer
 * (no stack-id map, so no collisions), only as long as the frames walked.
 *
 * User stacks are walked with the unwind tables user space loaded into
 * `unwind_procs` and `unwind_rows` (src/engine/unwind.h; the row format and
 * the reference unwinder are src/symbols/cfi.h), frame pointers where a
 * binary has no table (--unwind auto), or by the kernel's frame-pointer
 * walk alone (--unwind fp). The kernel stack is the kernel's walk. */
#include "common.bpf.h"

const volatile __u32 sample_event_index = 0; /* event index for sample_perf */
const volatile __u32 tp_event_index = 0;     /* event index for sample_tp */
const volatile __u32 unwind_mode = SONDE_UNWIND_AUTO; /* enum sonde_unwind_mode */

/* Every loaded binary's rows, back to back (user space places each table
 * and sizes the array before load: its memory budget). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* written by user space in place */
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sonde_unwind_row);
} unwind_rows SEC(".maps");

/* Every process's mappings (struct sonde_unwind_proc says which are whose). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SONDE_UNWIND_MAP_SLOTS);
	__type(key, __u32);
	__type(value, struct sonde_unwind_mapping);
} unwind_mappings SEC(".maps");

/* Loaded tables by the file they were built from (struct sonde_unwind_file). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SONDE_UNWIND_FILES);
	__type(key, struct sonde_unwind_file_key);
	__type(value, struct sonde_unwind_file);
} unwind_files SEC(".maps");

/* The sample being built: too large for the BPF stack, and sent with only
 * the frames walked, so not reserved in the ring buffer at full size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sonde_sample);
} sample_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sonde_sampler_config);
} sampler_cfg SEC(".maps");

__u64 calib_samples = 0; /* samples of calib.calib_tid, for calibration */
/* When a sample with a table miss last asked user space to load tables,
 * and woke it: at most once a millisecond (user space backs off per
 * process when reloads do not help). */
__u64 miss_wakeup_ns = 0;
/* When each of the first SONDE_CALIB_TIMES calibration samples was taken:
 * user space finds the gap in its own timeline that each one made. */
__u64 calib_times[SONDE_CALIB_TIMES] = {};

/* Applies the in-kernel sampling decisions to the thread's span stack:
 * "only inside probe P" and "only when P's current call already ran longer
 * than T". Returns 1 to take the sample. */
static __always_inline int sampler_wants(const struct sonde_thread_state *st, __u64 now)
{
	__u32 zero = 0;
	struct sonde_sampler_config *cfg = bpf_map_lookup_elem(&sampler_cfg, &zero);
	if (!cfg || (!cfg->only_in_probe && !cfg->only_slow_probe && !cfg->when_points))
		return 1;
	if (!st)
		return 0;
	__u32 depth = st->depth < SONDE_SPAN_DEPTH ? st->depth : SONDE_SPAN_DEPTH;
	if (cfg->only_in_probe || cfg->only_slow_probe) {
		int in_ok = !cfg->only_in_probe, slow_ok = !cfg->only_slow_probe;
		for (__u32 i = 0; i < SONDE_SPAN_DEPTH; i++) {
			if (i >= depth)
				break;
			const struct sonde_span_frame *f = &st->frames[i];
			if (f->probe + 1 == cfg->only_in_probe)
				in_ok = 1;
			if (f->probe + 1 == cfg->only_slow_probe &&
			    now - f->start_ns > cfg->only_slow_ns)
				slow_ok = 1;
		}
		if (!in_ok || !slow_ok)
			return 0;
	}
	/* "Only in calls that hit line L" (--sample-when): a call in flight
	 * carries L's bit (its own hits and those of its returned callees). */
	__u64 when = cfg->when_points, seen = 0;
	if (!when)
		return 1;
	for (__u32 i = 0; i < SONDE_SPAN_DEPTH; i++) {
		if (i >= depth)
			break;
		seen |= st->frames[i].points;
	}
	return (seen & when) != 0;
}

/* A sample interrupted the thread: mark the calls in flight as sampled, so
 * their return sends a record, and give them ids for the sample to name. */
static __always_inline void sample_mark(struct sonde_thread_state *st)
{
	if (!st)
		return;
	__u32 depth = st->depth < SONDE_SPAN_DEPTH ? st->depth : SONDE_SPAN_DEPTH;
	for (__u32 i = 0; i < SONDE_SPAN_DEPTH; i++) {
		if (i >= depth)
			break;
		st->frames[i].flags |= SONDE_FRAME_SAMPLED;
		span_id_of(&st->frames[i]);
	}
}

/* Charges a sample's cost (measured run time of the sampler plus the
 * calibrated interrupt entry/exit) to the thread. */
static __always_inline void sample_charge(struct sonde_thread_state *st, __u64 t0)
{
	if (st)
		st->own_ns += bpf_ktime_get_ns() - t0 + calib.sample_unseen_ns;
}

/* The return addresses uretprobes replaced with their trampoline on this
 * thread's stack, innermost first, from the kernel's own list; bit i of
 * *chained marks an instance that shares its stack slot with the next one.
 * Costs nothing per traced call: it is read only when sampling. */
static __always_inline __u32 hijacked_returns(__u64 *out, __u32 *chained)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct return_instance *ri = BPF_CORE_READ(task, utask, return_instances);
	__u32 n = 0, mask = 0;
	for (__u32 i = 0; i < SONDE_SAMPLE_SPANS; i++) {
		if (!ri)
			break;
		out[i] = BPF_CORE_READ(ri, orig_ret_vaddr);
		if (BPF_CORE_READ(ri, chained))
			mask |= 1u << i;
		n = i + 1;
		ri = BPF_CORE_READ(ri, next);
	}
	*chained = mask;
	return n;
}

/* ---- the table walk (mirrors cfi_unwind_step in src/symbols/cfi.c) ---- */

/* A walk's lookups of mappings by file (find_by_file): scalars only, so
 * that find_by_file can be a global function, verified once on its own
 * rather than again in every state of the walk. */
struct by_file {
	__u64 pc;     /* in: the pc to find */
	__u32 tgid;
	__u8 known;   /* vm holds the last mapping found */
	__u8 tried;   /* bpf_find_vma was called (once per walk) */
	__u8 pad[2];
	struct sonde_unwind_mapping vm;
};

/* The state of one walk, shared with the bpf_loop callback. */
struct walk {
	struct sonde_sample *s;
	const struct sonde_unwind_proc *proc; /* NULL: the process has no tables loaded */
	__u64 regs;   /* the user pt_regs (kernel address): the interrupted frame's registers */
	__u64 tramp;  /* the uretprobe trampoline's address (0: none) */
	__u64 rip, rsp, rbp;
	__u32 n;      /* user frames stored */
	__u32 ret_k;  /* next entry of s->returns for a hijacked return address */
	__u8 rbp_known;
	__u8 exact_pc;  /* rip is where execution stopped, not a return address */
	__u8 first;     /* the interrupted frame: every register is known */
	__u8 end;       /* enum sonde_unwind_end once the walk stopped */
	__u8 done;
	__u8 fp_fallback;   /* --unwind auto: frame pointers where there is no table */
	__u8 unfound;       /* a pc was in no mapping with a table, known or found */
	struct by_file by_file; /* mappings found by file during this walk */
	struct sonde_unwind_mapping cur; /* the mapping of the frame being walked */
};

static __always_inline int read_user(__u64 *v, __u64 addr)
{
	return bpf_probe_read_user(v, sizeof(*v), (const void *)addr) == 0;
}

/* Both searches run over absolute indexes [first, first + n), all read
 * from maps: the verifier knows none of them, so no branch on them is
 * decided for it, nothing is marked precise, and the states of a halving
 * merge instead of doubling. Entries are read through map lookups (not
 * indexed) so no index needs bounds either. */

/* The mapping holding pc, or NULL. */
static __always_inline const struct sonde_unwind_mapping *find_mapping(const struct sonde_unwind_proc *p,
								       __u64 pc)
{
	__u32 lo = p->first, hi = p->first + p->n;
	/* The first mapping with start > pc is at lo after the search. */
	for (int k = 0; k < SONDE_UNWIND_MAP_STEPS; k++) {
		if (lo >= hi)
			break;
		__u32 mid = lo + (hi - lo) / 2;
		const struct sonde_unwind_mapping *m = bpf_map_lookup_elem(&unwind_mappings, &mid);
		if (!m)
			return NULL;
		if (m->start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->first)
		return NULL;
	__u32 idx = lo - 1;
	const struct sonde_unwind_mapping *m = bpf_map_lookup_elem(&unwind_mappings, &idx);
	return m && pc >= m->start && pc < m->end ? m : NULL;
}

/* The rule of the last row at or below key among rows [first, first+count),
 * or CFI_CFA_NONE (0) below the first row. */
static __always_inline __u32 find_rule(const struct sonde_unwind_mapping *m, __u64 key)
{
	if (key > 0xffffffffull)
		return CFI_CFA_NONE;
	__u32 lo = m->first, hi = m->first + m->count;
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
	if (lo == m->first)
		return CFI_CFA_NONE;
	__u32 idx = lo - 1;
	struct sonde_unwind_row *r = bpf_map_lookup_elem(&unwind_rows, &idx);
	return r ? r->rule : CFI_CFA_UNSUPPORTED;
}

/* What bpf_find_vma tells of the mapping holding a pc. */
struct vma_found {
	struct sonde_unwind_found m;
	int ok;
};

/* Kernels before 6.7 keep the modification time as a timespec64. */
struct inode___timespec {
	struct timespec64 i_mtime;
} __attribute__((preserve_access_index));

static long vma_found_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_found *f = data;
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
	struct vma_found f = {};
	if (bpf_find_vma(bpf_get_current_task_btf(), pc, vma_found_cb, &f, 0) || !f.ok ||
	    !use_found(b, &f.m))
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
		set->v[k] = f.m;
		if (set->n < SONDE_UNWIND_FOUND)
			set->n++;
		else
			set->next = (set->next + 1) % SONDE_UNWIND_FOUND;
	}
	return 1;
}

/* DWARF register number (< 16) -> its offset in struct pt_regs. */
#define PT_REG(f) __builtin_offsetof(struct pt_regs, f)
static __always_inline __u32 dwarf_pt_regs(__u32 reg)
{
	switch (reg) {
	case 0: return PT_REG(ax);
	case 1: return PT_REG(dx);
	case 2: return PT_REG(cx);
	case 3: return PT_REG(bx);
	case 4: return PT_REG(si);
	case 5: return PT_REG(di);
	case 6: return PT_REG(bp);
	case 7: return PT_REG(sp);
	case 8: return PT_REG(r8);
	case 9: return PT_REG(r9);
	case 10: return PT_REG(r10);
	case 11: return PT_REG(r11);
	case 12: return PT_REG(r12);
	case 13: return PT_REG(r13);
	case 14: return PT_REG(r14);
	default: return PT_REG(r15);
	}
}

static __always_inline long walk_stop(struct walk *w, __u8 why)
{
	w->end = why;
	w->done = 1;
	return 1;
}

/* Frame pointers: the caller's rip at rbp+8, its rbp at rbp. */
static __always_inline long step_fp(struct walk *w, __u8 why)
{
	if (!w->rbp_known)
		return walk_stop(w, why);
	if (w->rbp == 0)
		return walk_stop(w, SONDE_END_COMPLETE); /* the ABI's outermost frame */
	if (w->rbp < w->rsp)
		return walk_stop(w, why);
	__u64 ra, rbp;
	if (!read_user(&ra, w->rbp + 8) || !read_user(&rbp, w->rbp))
		return walk_stop(w, SONDE_END_READ_FAULT);
	if (ra == 0)
		return walk_stop(w, why);
	w->rip = ra;
	w->rsp = w->rbp + 16;
	w->rbp = rbp;
	w->exact_pc = 0;
	w->first = 0;
	return 0;
}

/* One frame: store its pc, find its caller. Returns 1 to stop. */
static long walk_step(__u64 i, struct walk *w)
{
	/* Frame i goes to ips[nkernel + i]. Indexing by the loop's own index
	 * (not a count kept in w) leaves the verifier one state for every
	 * round instead of one per frame number. */
	__u64 at = (__u64)w->s->nkernel + i;
	if (i >= SONDE_MAX_STACK || at >= 2 * SONDE_MAX_STACK)
		return walk_stop(w, SONDE_END_DEPTH);
	/* A uretprobe's trampoline in place of a return address: the real one
	 * is the next of the kernel's list (chained instances share a slot). */
	if (w->tramp && w->rip == w->tramp && !w->first) {
		__u32 k = w->ret_k;
		for (int j = 0; j < SONDE_SAMPLE_SPANS; j++) {
			if (k >= SONDE_SAMPLE_SPANS || !(w->s->returns_chained >> k & 1))
				break;
			k++;
		}
		if (k < w->s->nreturns && k < SONDE_SAMPLE_SPANS) {
			w->rip = w->s->returns[k & (SONDE_SAMPLE_SPANS - 1)];
			k++;
		}
		w->ret_k = k;
	}
	w->s->ips[at] = w->rip;
	w->n = i + 1;

	__u64 pc = w->exact_pc ? w->rip : w->rip - 1;
	/* The mapping, always a copy on the stack: one pointer type after
	 * either way of finding it keeps the verifier's states few. */
	const struct sonde_unwind_mapping *pm = w->proc ? find_mapping(w->proc, pc) : NULL;
	const struct sonde_unwind_mapping *m = &w->cur;
	if (pm) {
		w->cur = *pm;
	} else {
		w->s->table_miss = 1;
		count(SONDE_CNT_TABLE_MISS);
		w->by_file.pc = pc;
		if (find_by_file(&w->by_file))
			w->cur = w->by_file.vm;
		else
			m = NULL;
	}
	if (!m) {
		w->unfound = 1;
		return w->fp_fallback ? step_fp(w, SONDE_END_TABLE_MISS)
				  : walk_stop(w, SONDE_END_TABLE_MISS);
	}
	if (!m->count)
		return w->fp_fallback ? step_fp(w, SONDE_END_NO_TABLE) : walk_stop(w, SONDE_END_NO_TABLE);
	__u32 rule = pc >= m->adj ? find_rule(m, pc - m->adj) : CFI_CFA_NONE;

	__u64 cfa, tmp;
	switch (cfi_rule_cfa(rule)) {
	case CFI_CFA_NONE: /* code the table does not cover */
		return w->fp_fallback ? step_fp(w, SONDE_END_NO_TABLE) : walk_stop(w, SONDE_END_NO_TABLE);
	case CFI_CFA_END:
		return walk_stop(w, SONDE_END_COMPLETE);
	case CFI_CFA_SIGNAL: { /* the interrupted registers are in the ucontext at rsp */
		__u64 rip, rsp, rbp;
		if (!read_user(&rip, w->rsp + CFI_SIGNAL_RIP) ||
		    !read_user(&rsp, w->rsp + CFI_SIGNAL_RSP) ||
		    !read_user(&rbp, w->rsp + CFI_SIGNAL_RBP))
			return walk_stop(w, SONDE_END_READ_FAULT);
		if (rip == 0)
			return walk_stop(w, SONDE_END_UNSUPPORTED);
		w->rip = rip;
		w->rsp = rsp;
		w->rbp = rbp;
		w->rbp_known = 1;
		w->exact_pc = 1;
		w->first = 0;
		return 0;
	}
	case CFI_CFA_RSP:
		cfa = w->rsp + (__s64)cfi_rule_cfa_off(rule);
		break;
	case CFI_CFA_RBP:
		if (!w->rbp_known)
			return walk_stop(w, SONDE_END_UNSUPPORTED);
		cfa = w->rbp + (__s64)cfi_rule_cfa_off(rule);
		break;
	case CFI_CFA_PLT:
		cfa = w->rsp + (__s64)cfi_rule_a(rule) + ((w->rip & 15) >= cfi_rule_b(rule) ? 8 : 0);
		break;
	case CFI_CFA_DEREF_RSP:
	case CFI_CFA_DEREF_RBP:
		if (cfi_rule_cfa(rule) == CFI_CFA_DEREF_RBP && !w->rbp_known)
			return walk_stop(w, SONDE_END_UNSUPPORTED);
		if (!read_user(&tmp, (cfi_rule_cfa(rule) == CFI_CFA_DEREF_RSP ? w->rsp : w->rbp) +
					     (__s64)cfi_rule_a(rule)))
			return walk_stop(w, SONDE_END_READ_FAULT);
		cfa = tmp + 8 * (__u64)cfi_rule_b(rule);
		break;
	case CFI_CFA_REG: { /* the interrupted frame's registers only */
		__u32 reg = cfi_rule_b(rule);
		if (!w->first || reg >= 16 || !w->regs)
			return walk_stop(w, SONDE_END_UNSUPPORTED);
		if (bpf_probe_read_kernel(&tmp, sizeof(tmp), (void *)(w->regs + dwarf_pt_regs(reg))))
			return walk_stop(w, SONDE_END_UNSUPPORTED);
		cfa = tmp + (__s64)cfi_rule_a(rule);
		break;
	}
	default:
		return walk_stop(w, SONDE_END_UNSUPPORTED);
	}
	if (cfa <= w->rsp || cfa < 8)
		return walk_stop(w, SONDE_END_UNSUPPORTED);
	__u64 ra, rbp = w->rbp;
	if (!read_user(&ra, cfa - 8))
		return walk_stop(w, SONDE_END_READ_FAULT);
	if (ra == 0)
		return walk_stop(w, SONDE_END_UNSUPPORTED);
	switch (cfi_rule_rbp(rule)) {
	case CFI_RBP_SAME:
		break;
	case CFI_RBP_AT_CFA:
		if (!read_user(&rbp, cfa + (__s64)cfi_rule_rbp_off(rule)))
			return walk_stop(w, SONDE_END_READ_FAULT);
		w->rbp_known = 1;
		break;
	default:
		w->rbp_known = 0;
		break;
	}
	w->rip = ra;
	w->rsp = cfa;
	w->rbp = rbp;
	w->exact_pc = 0;
	w->first = 0;
	return 0;
}

/* The uretprobe trampoline's address in this process (0: none yet). */
static __always_inline __u64 uretprobe_trampoline(struct task_struct *task)
{
	return BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
}

/* Walks the user stack with the tables into s->ips after the kernel
 * frames; counts how it ended. */
static __always_inline void walk_user(struct sonde_sample *s, __u32 tgid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *uregs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct walk w = {
		.s = s,
		.proc = bpf_map_lookup_elem(&unwind_procs, &tgid),
		.regs = (__u64)uregs,
		.tramp = uretprobe_trampoline(task),
		.rbp_known = 1,
		.exact_pc = 1,
		.first = 1,
		.fp_fallback = unwind_mode == SONDE_UNWIND_AUTO,
		.by_file = { .tgid = tgid },
	};
	if (!uregs || tgid == 0) {
		s->unwind_end = SONDE_END_COMPLETE;
		return;
	}
	w.rip = BPF_CORE_READ(uregs, ip);
	w.rsp = BPF_CORE_READ(uregs, sp);
	w.rbp = BPF_CORE_READ(uregs, bp);
	/* A kernel thread, or a sample before the task ever ran in user mode. */
	if (!w.rip || (BPF_CORE_READ(uregs, cs) & 3) != 3) {
		s->unwind_end = SONDE_END_COMPLETE;
		return;
	}
	bpf_loop(SONDE_MAX_STACK + 1, walk_step, &w, 0);
	if (!w.done)
		w.end = SONDE_END_DEPTH;
	/* A walk that met code outside its tables and then failed (frame
	 * pointers through code without them) ended for want of the table. */
	if (w.unfound && w.end != SONDE_END_COMPLETE && w.end != SONDE_END_DEPTH)
		w.end = SONDE_END_TABLE_MISS;
	s->nuser = w.n;
	s->unwind_end = w.end;
	count(SONDE_CNT_END_COMPLETE + (w.end <= SONDE_END_UNSUPPORTED ? w.end : SONDE_END_UNSUPPORTED));
}

static __always_inline int emit_sample(void *ctx, __u32 event)
{
	__u64 t0 = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;

	/* System-wide mode keeps the idle task (pid 0), as perf does: idle time
	 * is part of the picture and heatmaps need it to tell idle apart. */
	if (!is_target(tgid))
		return 0;
	struct sonde_thread_state *st = bpf_map_lookup_elem(&threads, &tid);
	/* The calibrating thread's samples take the whole path (stacks, ring
	 * buffer) so that their cost is a real sample's; user space discards
	 * them. */
	if (calib.calib_tid && tid == calib.calib_tid) {
		__u64 i = __sync_fetch_and_add(&calib_samples, 1);
		if (i < SONDE_CALIB_TIMES)
			calib_times[i & (SONDE_CALIB_TIMES - 1)] = t0;
	} else if (!sampler_wants(st, t0)) {
		sample_charge(st, t0);
		return 0;
	}
	sample_mark(st);

	__u32 zero = 0;
	struct sonde_sample *s = bpf_map_lookup_elem(&sample_scratch, &zero);
	if (!s)
		return 0;
	fill_hdr(&s->hdr, SONDE_REC_SAMPLE, pid_tgid, t0);
	s->event = event;
	s->nreturns = hijacked_returns(s->returns, &s->returns_chained);
	s->nspans = 0;
	s->span_depth = st ? st->depth : 0;
	if (st) {
		for (__u32 i = 0; i < SONDE_SAMPLE_SPANS; i++) {
			if (i >= st->depth || i >= SONDE_SPAN_DEPTH)
				break;
			s->span_ids[i] = st->frames[i].span_id;
			s->span_probes[i] = st->frames[i].probe;
			s->nspans = i + 1;
		}
	}
	s->unwind = unwind_mode;
	s->table_miss = 0;
	s->nuser = 0;
	s->ustack_err = 0;
	long kb = bpf_get_stack(ctx, s->ips, SONDE_MAX_STACK * sizeof(__u64), 0);
	__u32 nk = kb > 0 ? (__u32)kb / sizeof(__u64) : 0;
	if (nk > SONDE_MAX_STACK)
		nk = SONDE_MAX_STACK;
	s->kstack_err = kb < 0 ? kb : 0;
	s->nkernel = nk;
	if (unwind_mode == SONDE_UNWIND_FP) {
		long ub = bpf_get_stack(ctx, &s->ips[nk & SONDE_MAX_STACK],
					SONDE_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
		__u32 nu = ub > 0 ? (__u32)ub / sizeof(__u64) : 0;
		s->nuser = nu < SONDE_MAX_STACK ? nu : SONDE_MAX_STACK;
		s->ustack_err = ub < 0 ? ub : 0;
		s->unwind_end = s->nuser == SONDE_MAX_STACK ? SONDE_END_DEPTH : SONDE_END_FP;
	} else {
		walk_user(s, tgid);
	}
	__u64 size = SONDE_SAMPLE_BYTES((__u64)s->nkernel + s->nuser);
	if (size > sizeof(*s))
		size = sizeof(*s);
	__u64 flags = span_submit_flags();
	if (s->table_miss && t0 - miss_wakeup_ns > 1000000) {
		miss_wakeup_ns = t0;
		unwind_request(tgid, SONDE_UNWIND_REQ_MISS);
		flags = BPF_RB_FORCE_WAKEUP;
	}
	if (bpf_ringbuf_output(&events, s, size, flags))
		count(SONDE_CNT_LOST_SAMPLES);
	sample_charge(st, t0);
	return 0;
}

SEC("perf_event")
int sample_perf(struct bpf_perf_event_data *ctx)
{
	return emit_sample(ctx, sample_event_index);
}

SEC("tracepoint")
int sample_tp(void *ctx)
{
	return emit_sample(ctx, tp_event_index);
}
