/* stacks.bpf.h — a record's stacks and calls in flight, for every program
 * that sends a struct sonde_sample: the sampler (sampler.bpf.c: the thread
 * a tick or a tracepoint interrupted) and the off-CPU programs
 * (offcpu.bpf.c: the thread being switched out). Both run in the context
 * of the thread whose stacks they take.
 *
 * User stacks are walked with the unwind tables user space loaded into
 * `unwind_procs`, `unwind_mappings` and `unwind_rows` (src/engine/unwind.h;
 * the row format and the reference unwinder are src/symbols/cfi.h), frame
 * pointers where a binary has no table (--unwind auto), or by the kernel's
 * frame-pointer walk alone (--unwind fp). The kernel stack is the kernel's
 * walk. A Python process's Python frames follow (python.bpf.h). Included by program files only (static functions: each program is
 * verified with its own copy). */
#ifndef SONDE_STACKS_BPF_H
#define SONDE_STACKS_BPF_H

#include "common.bpf.h"
#include "python.bpf.h"

/* Zero, but the verifier cannot know it (a .bss value): flags of the walk
 * set through it stay unknown to the verifier, so rounds of the walk that
 * differ only in them are one state, not one per combination. */
extern __u64 walk_opaque_zero; /* common.bpf.c */
#define HIDE(v) ((__typeof__(v))((v) + walk_opaque_zero))


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
			mask = HIDE(mask | 1u << i);
		n = HIDE(i + 1);
		ri = BPF_CORE_READ(ri, next);
	}
	*chained = mask;
	return n;
}

/* ---- the table walk (mirrors cfi_unwind_step in src/symbols/cfi.c) ---- */

/* The state of one walk, shared with the bpf_loop callback. */
struct walk {
	struct sonde_sample *s;
	const struct sonde_unwind_proc *proc; /* NULL: the process has no tables loaded */
	__u64 regs;   /* the user pt_regs (kernel address): the interrupted frame's registers */
	__u64 tramp;  /* the uretprobe trampoline's address (0: none) */
	__u64 rip, rsp, rbp;
	__u32 n;      /* user frames stored */
	__u32 ret_k;  /* next entry of rets for a hijacked return address */
	__u32 nrets;
	/* The real return addresses of the trampolines on the stack, innermost
	 * first, one per stack slot: of chained instances (sharing a slot)
	 * only the outermost, whose return address is the caller's. */
	__u64 rets[SONDE_SAMPLE_SPANS];
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
	w->end = HIDE(why);
	w->done = HIDE((__u8)1);
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
	w->exact_pc = HIDE((__u8)0);
	w->first = HIDE((__u8)0);
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
	 * is the next of the slots' return addresses (walk_user). */
	if (w->tramp && w->rip == w->tramp && !w->first) {
		__u32 k = w->ret_k;
		if (k < w->nrets)
			w->rip = w->rets[k & (SONDE_SAMPLE_SPANS - 1)];
		w->ret_k = HIDE(k + 1);
	}
	w->s->ips[at] = w->rip;
	w->n = i + 1;

	__u64 pc = w->exact_pc ? w->rip : w->rip - 1;
	/* The mapping, always a copy on the stack: one pointer type after
	 * either way of finding it keeps the verifier's states few. */
	__u32 found = w->proc ? unwind_find_mapping(w->proc->first, w->proc->n, pc) : 0;
	__u32 idx = found - 1;
	const struct sonde_unwind_mapping *pm =
		found ? bpf_map_lookup_elem(&unwind_mappings, &idx) : NULL;
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
		w->unfound = HIDE((__u8)1);
		return w->fp_fallback ? step_fp(w, SONDE_END_TABLE_MISS)
				  : walk_stop(w, SONDE_END_TABLE_MISS);
	}
	__u32 nrows = SONDE_UNWIND_ROWS(m->count);
	if (!nrows)
		return w->fp_fallback ? step_fp(w, SONDE_END_NO_TABLE) : walk_stop(w, SONDE_END_NO_TABLE);
	__u32 rule;
	if (m->count & SONDE_UNWIND_PERIODIC) /* a copy of the code the rows describe */
		rule = m->adj && pc >= m->start ? unwind_find_rule(m->first, nrows, (pc - m->start) % m->adj)
						: CFI_CFA_NONE;
	else
		rule = pc >= m->adj ? unwind_find_rule(m->first, nrows, pc - m->adj) : CFI_CFA_NONE;

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
		w->rbp_known = HIDE((__u8)1);
		w->exact_pc = HIDE((__u8)1);
		w->first = HIDE((__u8)0);
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
		w->rbp_known = HIDE((__u8)1);
		break;
	default:
		w->rbp_known = HIDE((__u8)0);
		break;
	}
	w->rip = ra;
	w->rsp = cfa;
	w->rbp = rbp;
	w->exact_pc = HIDE((__u8)0);
	w->first = HIDE((__u8)0);
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
	for (__u32 k = 0; k < SONDE_SAMPLE_SPANS; k++) {
		if (k >= s->nreturns)
			break;
		if (!(s->returns_chained >> k & 1)) {
			w.rets[w.nrets & (SONDE_SAMPLE_SPANS - 1)] = s->returns[k];
			w.nrets = HIDE(w.nrets + 1);
		}
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

/* The calls in flight on the thread (outermost first, at most
 * SONDE_SAMPLE_SPANS) into the record; each gets its id. */
static __always_inline void stacks_fill_spans(struct sonde_sample *s, struct sonde_thread_state *st)
{
	s->nspans = 0;
	s->span_depth = st ? st->depth : 0;
	if (!st)
		return;
	for (__u32 i = 0; i < SONDE_SAMPLE_SPANS; i++) {
		if (i >= st->depth || i >= SONDE_SPAN_DEPTH)
			break;
		s->span_ids[i] = span_id_of(&st->frames[i]);
		s->span_probes[i] = st->frames[i].id;
		s->nspans = i + 1;
	}
}

/* The current thread's kernel stack, then its user stack, into s->ips
 * (nkernel, nuser and how the walk ended with them). ctx is the program's
 * context, for bpf_get_stack. */
static __always_inline void stacks_fill(void *ctx, struct sonde_sample *s, __u32 tgid)
{
	s->nreturns = hijacked_returns(s->returns, &s->returns_chained);
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
	python_fill(s, tgid, (__u32)bpf_get_current_pid_tgid());
}

/* The record's size: only the frames walked are sent. */
static __always_inline __u64 stacks_record_bytes(const struct sonde_sample *s)
{
	__u64 size = SONDE_SAMPLE_BYTES((__u64)s->nkernel + s->nuser + 2 * (__u64)s->npython);
	return size > sizeof(*s) ? sizeof(*s) : size;
}

/* The ring buffer's wake-up flag for a record taken at now: a record whose
 * walk met a pc outside its process's tables asks user space to load them
 * and wakes it (at most once a millisecond); the first record of a process
 * user space has not heard of wakes it too (tgids_heard). */
static __always_inline __u64 stacks_submit_flags(const struct sonde_sample *s, __u64 now)
{
	__u64 flags = span_submit_flags();
	__u32 tgid = s->hdr.pid;
	__u8 one = 1;
	if (tgid && !bpf_map_lookup_elem(&tgids_heard, &tgid) &&
	    bpf_map_update_elem(&tgids_heard, &tgid, &one, BPF_NOEXIST) == 0)
		flags = BPF_RB_FORCE_WAKEUP;
	if (s->table_miss && now - miss_wakeup_ns > 1000000) {
		miss_wakeup_ns = now;
		unwind_request(tgid, SONDE_UNWIND_REQ_MISS);
		flags = BPF_RB_FORCE_WAKEUP;
	}
	return flags;
}

#endif
