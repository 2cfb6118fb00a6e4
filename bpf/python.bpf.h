/* python.bpf.h — a sampled thread's Python frames, for every program that
 * takes stacks (stacks.bpf.h calls python_fill after the native walk).
 *
 * For a process in `py_procs` (user space wrote its interpreter's layout:
 * struct sonde_py_proc), the thread's thread state is the one of the
 * interpreter's list whose thread_id is the thread's fs base (what
 * pthread_self() returns on x86-64), remembered per thread in `py_threads`
 * and checked again at every sample; its current frame, then each frame's
 * caller, gives the frames stored after the native ones (sonde_abi.h says
 * how). Memory is read with bpf_probe_read_user only: nothing of the
 * process changes. Included by program files only (static functions). */
#ifndef SONDE_PYTHON_BPF_H
#define SONDE_PYTHON_BPF_H

#include "common.bpf.h"

/* The walk's state is py_walk_scratch's (common.bpf.h). */

static __always_inline int py_u64(__u64 *v, __u64 addr)
{
	return user_read(v, sizeof(*v), addr);
}

static __always_inline __u8 py_byte(__u64 addr)
{
	__u8 b = 0;
	bpf_probe_read_user(&b, 1, (const void *)addr);
	return b;
}

/* One thread state of the interpreter's list: the thread's, or the next. */
static long py_scan_step(__u64 i, void *unused)
{
	__u32 zero = 0;
	struct py_walk *w = bpf_map_lookup_elem(&py_walk_scratch, &zero);
	__u64 id = 0, ts;
	if (!w || !(ts = w->scan_ts))
		return 1;
	if (py_u64(&id, ts + w->pp.tstate_thread_id) && id == w->fsbase) {
		w->scan_found = ts;
		return 1;
	}
	if (!py_u64(&w->scan_ts, ts + w->pp.tstate_next))
		w->scan_ts = 0;
	return 0;
}

/* The thread state of the thread whose fs base is w->fsbase, or 0 (the
 * search's state in w: off the stack, as the walk's). */
static __always_inline __u64 py_thread_state(struct py_walk *w, __u32 tid)
{
	__u64 id = 0, interp = 0;
	const struct sonde_py_proc *pp = &w->pp;
	__u64 *known = bpf_map_lookup_elem(&py_threads, &tid);
	if (known && *known && py_u64(&id, *known + pp->tstate_thread_id) && id == w->fsbase)
		return *known;
	w->scan_found = 0;
	if (!py_u64(&interp, pp->runtime + pp->runtime_interpreters_head) || !interp ||
	    !py_u64(&w->scan_ts, interp + pp->interp_threads_head))
		return 0;
	bpf_loop(SONDE_PY_THREAD_SCAN, py_scan_step, NULL, 0);
	__u64 found = w->scan_found;
	if (found)
		bpf_map_update_elem(&py_threads, &tid, &found, BPF_ANY);
	return found;
}

static __always_inline long py_stop(struct py_walk *w, __u32 why)
{
	w->end = why;
	return 1;
}

/* One frame: stored (with where it is and whether a run of the loop began
 * with it), or, an entry frame of the loop (3.12 on), the mark of the run
 * the frame stored before it began. Returns 1 to stop. */
static long py_step(__u64 i, void *unused)
{
	__u32 zero = 0;
	struct py_walk *w = bpf_map_lookup_elem(&py_walk_scratch, &zero);
	if (!w)
		return 1;
	const struct sonde_py_proc *pp = &w->pp;
	__u64 f = w->frame, code = 0, instr = 0, prev = 0;
	if (!f)
		return py_stop(w, SONDE_PY_COMPLETE);
	if (!py_u64(&prev, f + pp->frame_previous))
		return py_stop(w, SONDE_PY_CUT);
	w->frame = prev;
	__u32 n = w->n;
	if (pp->frame_owner != SONDE_PY_NO_FIELD &&
	    py_byte(f + pp->frame_owner) == SONDE_PY_OWNED_BY_CSTACK) {
		if (n && n <= SONDE_PY_FRAMES)
			w->words[(2 * n - 1) & (2 * SONDE_PY_FRAMES - 1)] |= SONDE_PY_RUN_START;
		return 0;
	}
	if (n >= SONDE_PY_FRAMES)
		return py_stop(w, SONDE_PY_CUT);
	if (!py_u64(&code, f + pp->frame_code) || !code)
		return py_stop(w, SONDE_PY_CUT);
	if (pp->instr_index) {
		__s32 lasti = -1;
		bpf_probe_read_user(&lasti, sizeof(lasti), (const void *)(f + pp->frame_instr));
		instr = (__u32)lasti;
	} else {
		py_u64(&instr, f + pp->frame_instr);
	}
	instr &= SONDE_PY_INSTR;
	if (pp->frame_is_entry != SONDE_PY_NO_FIELD) {
		if (py_byte(f + pp->frame_is_entry))
			instr |= SONDE_PY_RUN_START;
	} else if (pp->frame_owner == SONDE_PY_NO_FIELD) {
		instr |= SONDE_PY_RUN_START; /* 3.10: a frame a run */
	}
	w->words[(2 * n) & (2 * SONDE_PY_FRAMES - 1)] = code;
	w->words[(2 * n + 1) & (2 * SONDE_PY_FRAMES - 1)] = instr;
	w->n = n + 1;
	return 0;
}

/* The Python frames of the current thread of process tgid into s, after
 * its native frames (s->npython, s->py_end; counted). Nothing for a process
 * not in py_procs. */
static __noinline void python_fill(struct sonde_sample *s, __u32 tgid, __u32 tid)
{
	s->npython = 0;
	s->py_end = SONDE_PY_NONE;
	const struct sonde_py_proc *pp = bpf_map_lookup_elem(&py_procs, &tgid);
	__u32 zero = 0;
	struct py_walk *w = bpf_map_lookup_elem(&py_walk_scratch, &zero);
	if (!pp || !w || !s)
		return;
	struct task_struct *task = bpf_get_current_task_btf();
	w->pp = *pp;
	w->fsbase = BPF_CORE_READ(task, thread.fsbase);
	__u64 ts = py_thread_state(w, tid), frame = 0;
	if (!ts) {
		s->py_end = SONDE_PY_NO_THREAD;
		count(SONDE_CNT_PY_NO_THREAD);
		return;
	}
	if (py_u64(&frame, ts + pp->tstate_frame) && frame &&
	    pp->cframe_current_frame != SONDE_PY_NO_FIELD &&
	    !py_u64(&frame, frame + pp->cframe_current_frame))
		frame = 0;
	w->frame = frame;
	w->n = 0;
	w->end = SONDE_PY_CUT;
	bpf_loop(2 * SONDE_PY_FRAMES, py_step, NULL, 0);
	__u32 n = w->n < SONDE_PY_FRAMES ? w->n : SONDE_PY_FRAMES;
	__u32 base = (__u32)s->nkernel + s->nuser;
	if (base > 2 * SONDE_MAX_STACK)
		return;
	if (n)
		bpf_probe_read_kernel(&s->ips[base], n * 2 * sizeof(__u64), w->words);
	s->npython = (__u16)n;
	s->py_end = (__u8)w->end;
	count(w->end == SONDE_PY_COMPLETE ? SONDE_CNT_PY_COMPLETE : SONDE_CNT_PY_CUT);
}

#endif
