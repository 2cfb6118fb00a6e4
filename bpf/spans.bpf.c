// SPDX-License-Identifier: GPL-2.0
/* spans.bpf.c — span probes: one program pair (`span_enter` on a uprobe,
 * `span_exit` on its uretprobe), attached once per traced function with the
 * probe id (its slot) and attach generation as the attach cookie (a USDT
 * span pair: `span_enter` at its entry probe's sites, `span_pair_exit` at
 * its return probe's). Entry
 * counts the call as entered and pushes it on the thread's stack of spans
 * in flight (the sampler reads it) unless the probe's predicate fails
 * there, exit pops it, counts its duration into the probe's histogram
 * and sends a record when the probe's policy wants one. */
#include "common.bpf.h"
#include "fetch.bpf.h"
#include "pycall.bpf.h"

/* Per probe, its totals and its histogram of completed calls in
 * log-linear buckets (struct sonde_probe_counts). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SONDE_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct sonde_probe_counts);
} probe_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SONDE_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct sonde_probe_config);
} probe_cfg SEC(".maps");

/* Calls of each span probe while each point probe was attached, and
 * those during which it was hit (struct sonde_point_calls). Counted when
 * the call returns, so exact whatever the policy on span records. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SONDE_MAX_PROBES * SONDE_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sonde_point_calls);
} point_calls SEC(".maps");

/* The point bits attached now (user space sets them). */
__u64 points_active = 0;

/* The config of an attachment still in force: the cookie (sonde_abi.h)
 * names the probe's slot and its generation. Uprobes of a detached probe
 * that the kernel has not removed yet carry an older generation, so the
 * id can be reused at once. */
static __always_inline struct sonde_probe_config *probe_config(__u64 cookie)
{
	__u32 probe = SONDE_COOKIE_SLOT(cookie);
	if (probe >= SONDE_MAX_PROBES)
		return NULL;
	struct sonde_probe_config *cfg = bpf_map_lookup_elem(&probe_cfg, &probe);
	return cfg && cfg->active && cfg->gen == SONDE_COOKIE_GEN(cookie) ? cfg : NULL;
}

/* Takes a slot for thread tid, which has none (states are made only for
 * targets' threads, and given back when they exit): 1, or 0 when both of
 * its slots are taken by other threads (counted). A global function: it
 * returns no pointer, so span_enter finds the state through one lookup
 * whether it was just made or not (see thread_state_of). */
__noinline int thread_state_claim(__u32 tid)
{
	__u32 k = SONDE_THREAD_SLOT_A(tid);
	struct sonde_thread_state *c = bpf_map_lookup_elem(&threads, &k);
	if (c && __sync_val_compare_and_swap(&c->tid, 0, (__u64)tid) == 0)
		return 1;
	k = SONDE_THREAD_SLOT_B(tid);
	c = bpf_map_lookup_elem(&threads, &k);
	if (c && __sync_val_compare_and_swap(&c->tid, 0, (__u64)tid) == 0)
		return 1;
	count(SONDE_CNT_THREADS_FULL);
	return 0;
}

/* ---- py: probes (pycall.bpf.h) ---- */

/* Whether the Python call entering now (at the trampoline evaluator, or at
 * 3.11's function__entry) runs a code object the py: probe in slot
 * `probe` names; decided once per code object and process. The call's
 * frame and its captures' locals go to py_call_scratch for
 * py_capture_send. A global function: verified once, whatever path
 * span_enter took to it. */
__noinline int py_call_matches(struct pt_regs *ctx, __u32 probe, __u32 tgid)
{
	__u32 zero = 0;
	struct py_call *call = bpf_map_lookup_elem(&py_call_scratch, &zero);
	if (!ctx || !call || probe >= SONDE_MAX_PROBES)
		return 0;
	struct sonde_probe_config *cfg = bpf_map_lookup_elem(&probe_cfg, &probe);
	if (!cfg)
		return 0;
	const struct sonde_py_match *m = &cfg->py_match;
	__u64 frame = py_call_frame(ctx, m), code = 0, file = 0, qual = 0, names = 0;
	if (!frame || !user_read(&code, sizeof(code), frame + m->frame_code) || !code ||
	    !user_read(&file, sizeof(file), code + m->code_filename) ||
	    !user_read(&qual, sizeof(qual), code + m->code_qualname) ||
	    (m->ncaptures && !user_read(&names, sizeof(names), code + m->code_localsplusnames))) {
		count(SONDE_CNT_PY_NO_FRAME);
		return 0;
	}
	call->frame = frame;
	/* A code object is known by its address and the addresses of its
	 * names (and, with captures, of its locals' names): another one made
	 * in the same memory has its own strings. */
	struct py_verdict_key key = {.code = code, .tgid = tgid, .probe = probe};
	struct py_verdict *v = bpf_map_lookup_elem(&py_verdicts, &key);
	if (v && v->file == file && v->qual == qual && v->names == names && v->gen == cfg->gen) {
		__builtin_memcpy(call->local, v->local, sizeof(call->local));
		return v->matches;
	}
	struct py_verdict nv = {.file = file, .qual = qual, .names = names, .gen = cfg->gen};
	for (int c = 0; c < SONDE_CAPTURES; c++)
		nv.local[c] = -1;
	__u32 fault = 0;
	nv.matches = (__u32)py_names_match(m, file, qual, &fault);
	if (nv.matches && m->ncaptures && py_locals_find(m, names, nv.local))
		fault = 1;
	/* A verdict from a failed read (memory not paged in yet) is not kept:
	 * the next call looks again. */
	if (!fault)
		bpf_map_update_elem(&py_verdicts, &key, &nv, BPF_ANY);
	__builtin_memcpy(call->local, nv.local, sizeof(call->local));
	return nv.matches;
}

/* Sends the values of the call py_call_matches took last on this CPU, as
 * a SONDE_REC_VALUES record of probe id `id` naming span_id. A global
 * function, as py_call_matches. */
__noinline int py_capture_send(__u32 probe, __u32 id, __u64 span_id, __u64 pid_tgid)
{
	/* Returns 1 when it sent values, 0 when the probe captures none. */
	__u32 zero = 0;
	struct py_call *call = bpf_map_lookup_elem(&py_call_scratch, &zero);
	struct fetch_scratch *s = bpf_map_lookup_elem(&fetch_scratch, &zero);
	if (!call || !s || probe >= SONDE_MAX_PROBES)
		return 0;
	struct sonde_probe_config *cfg = bpf_map_lookup_elem(&probe_cfg, &probe);
	if (!cfg)
		return 0;
	const struct sonde_py_match *m = &cfg->py_match;
	if (!m->ncaptures)
		return 0;
	fetch_count_faults(py_values_read(m, call, &s->rec));
	fetch_send(s, id, m->ncaptures < SONDE_CAPTURES ? m->ncaptures : SONDE_CAPTURES, span_id,
		   m->layout, pid_tgid);
	return 1;
}

/* The entry_sp of a pair's call: above every stack slot, its key in the
 * low 47 bits. */
#define PAIR_TAG 0xffff800000000000ull

/* A pair's call's entry_sp: the key of the arguments args names. */
static __always_inline __u64 pair_sp(struct pt_regs *ctx, const struct sonde_pair_arg *args)
{
	__u64 key = 0;
	__u32 zero = 0;
	struct fetch_scratch *s = args[0].kind ? bpf_map_lookup_elem(&fetch_scratch, &zero) : NULL;
	if (!s || !fetch_load_regs(ctx, s))
		return PAIR_TAG;
	for (int i = 0; i < SONDE_PAIR_KEYS; i++) {
		const struct sonde_pair_arg *a = &args[i];
		if (a->kind == SONDE_PAIR_ARG_NONE)
			break;
		__u64 v = s->regs[a->reg < SONDE_FETCH_REGS ? a->reg : 0];
		if (a->kind == SONDE_PAIR_ARG_MEM && bpf_probe_read_user(&v, sizeof(v), (void *)(v + a->off)))
			v = 0;
		key = (key ^ v) * 0x9e3779b97f4a7c15ull;
	}
	return PAIR_TAG | (key >> 17);
}

/* Where the stack pointer is when a return probe runs, relative to the
 * call's stack pointer at entry: x86's ret pops the return address. */
#if defined(__TARGET_ARCH_x86)
#define RET_SP_OFFSET 8
#else
#define RET_SP_OFFSET 0
#endif

static __always_inline void count_orphans(__u32 n)
{
	__u32 k = SONDE_CNT_SPAN_ORPHAN;
	__u64 *c = bpf_map_lookup_elem(&counters, &k);
	if (c)
		*c += n;
}

/* True when the return address at sp is the uretprobe trampoline: the call
 * entering now was jumped to from a traced call (a tail call), whose frame
 * shares its stack slot and is still alive. */
static __always_inline int returns_to_trampoline(__u64 sp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	__u64 ret = 0;
	if (!tramp || bpf_probe_read_user(&ret, sizeof(ret), (void *)sp))
		return 0;
	return ret == tramp;
}

/* Drops the calls in flight whose stack slot the thread has left without
 * their return (longjmp, exceptions, or returns the kernel did not report
 * past its uretprobe nesting limit): a call entering with its return
 * address at sp lies below every live call's slot. Frames are outermost
 * first, so their slots descend. Without this, such frames would fill the
 * stack and every later call on the thread would go untimed. */
static __always_inline void drop_abandoned(struct sonde_thread_state *st, __u64 sp)
{
	__u32 d = st->depth;
	__u32 stored = d < SONDE_SPAN_DEPTH ? d : SONDE_SPAN_DEPTH;
	if (!stored)
		return;
	__u64 top_sp = st->frames[(stored - 1) & (SONDE_SPAN_DEPTH - 1)].entry_sp;
	if (top_sp > sp)
		return; /* the usual case: a call nested in the innermost one */
	int tail = top_sp == sp && returns_to_trampoline(sp);
	__u32 alive = 0;
	for (__u32 i = 0; i < SONDE_SPAN_DEPTH; i++) {
		if (i >= stored)
			break;
		__u64 fsp = st->frames[i].entry_sp;
		if (fsp > sp || (fsp == sp && tail))
			alive = i + 1;
		else
			break;
	}
	if (alive == d)
		return;
	count_orphans(d - alive);
	st->depth = alive;
}

/* The call in frame f begins now, after what its entry read since t0 (its
 * values): that time is charged to the calls around it. */
static __always_inline void span_begins_now(struct sonde_thread_state *st,
					    struct sonde_span_frame *f, __u64 t0)
{
	__u64 t1 = bpf_ktime_get_ns();
	st->own_ns += t1 - t0;
	f->own_at_entry = st->own_ns;
	f->start_ns = t1;
}

/* Runs the probe's capture program at a call's entry, before the call is
 * pushed: its values name the call's span id, and a call failing the
 * predicate is not pushed at all. Its run is charged to the calls around
 * this one, and so are the traps of a call left out (what span_exit
 * charges for a call it pops). Returns whether the call is kept. */
static __always_inline int span_filter(struct pt_regs *ctx, struct sonde_fetch_prog *prog,
				       struct sonde_thread_state *st, struct sonde_span_frame *f,
				       __u64 t0, __u64 pid_tgid, struct sonde_probe_config *cfg)
{
	if (!fetch_run(ctx, prog, f->id, span_id_of(f), pid_tgid)) {
		st->own_ns += bpf_ktime_get_ns() - t0 + cfg->call_unseen_ns;
		return 0;
	}
	span_begins_now(st, f, t0);
	return 1;
}

SEC("uprobe")
int span_enter(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 probe = SONDE_COOKIE_SLOT(cookie);
	struct sonde_probe_config *cfg = probe_config(cookie);
	if (!cfg)
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	/* A thread with a state is a target's (states are made only for
	 * targets, and given back when the thread exits): the target check,
	 * a hash lookup, stays off the path every call takes. */
	struct sonde_thread_state *st = thread_state_of(tid);
	if (!st) {
		if (!is_target(pid_tgid >> 32))
			return 0;
		if (tid)
			thread_state_claim(tid);
		st = thread_state_of(tid);
	}
	__u64 t0 = bpf_ktime_get_ns();
	if (cfg->py) {
		/* Only the Python function's calls are the probe's: the others
		 * are left out as a failed predicate's, their traps and this
		 * look charged to the calls around them. */
		int ok = py_call_matches(ctx, probe, pid_tgid >> 32);
		__u64 t1 = bpf_ktime_get_ns();
		if (st)
			st->own_ns += t1 - t0 + (ok ? 0 : cfg->call_unseen_ns);
		if (!ok)
			return 0;
		t0 = t1;
	}
	struct sonde_probe_counts *pc = bpf_map_lookup_elem(&probe_counts, &probe);
	if (pc)
		pc->stats.entered++;
	/* Values captured at entry belong to the call: their record names its
	 * span id. With a predicate, only the calls where it holds are
	 * calls of the probe: pushed, timed, seen by the sampler. */
	struct sonde_fetch_prog *prog = cfg->fetch ? fetch_prog_of(probe, cfg->gen) : NULL;
	if (!st) {
		if (prog)
			fetch_run(ctx, prog, cfg->id, 0, pid_tgid);
		if (cfg->py)
			py_capture_send(probe, cfg->id, 0, pid_tgid);
		return 0;
	}
	__u64 sp = PT_REGS_SP(ctx);
	drop_abandoned(st, sp);
	__u32 d = st->depth;
	if (d >= SONDE_SPAN_DEPTH) {
		/* An untimed level, kept whatever the predicate says: its return
		 * takes one level off. */
		st->depth = d + 1;
		count(SONDE_CNT_SPAN_OVERFLOW);
		if (prog)
			fetch_run(ctx, prog, cfg->id, 0, pid_tgid);
		if (cfg->py)
			py_capture_send(probe, cfg->id, 0, pid_tgid);
		return 0;
	}
	struct sonde_span_frame *f = &st->frames[d & (SONDE_SPAN_DEPTH - 1)];
	f->span_id = 0;
	f->probe = probe;
	f->id = cfg->id;
	f->gen = cfg->gen;
	f->flags = 0;
	f->points = 0;
	/* A pair's call is not in a stack slot of its own: it lives until its
	 * return probe closes it, never dropped for the stack pointer. */
	f->entry_sp = cfg->pair ? pair_sp(ctx, cfg->pair_entry) : sp;
	/* One clock read per handler: the rest of this handler's run time is
	 * inside the calibrated trap cost (self_unseen_ns for this call,
	 * call_unseen_ns for the calls around it). */
	f->own_at_entry = st->own_ns;
	f->start_ns = t0;
	/* A call left out is never pushed: its return finds no frame of its
	 * own (frames pair with returns by stack slot) and counts nothing. */
	if (prog && !span_filter(ctx, prog, st, f, t0, pid_tgid, cfg))
		return 0;
	/* A py: probe's captures, read from the call's frame before the call
	 * begins, as a fetch program's values. (No flag of it is kept in a
	 * variable: the verifier would walk the rest twice.) */
	if (cfg->py && py_capture_send(probe, f->id, span_id_of(f), pid_tgid))
		span_begins_now(st, f, t0);
	/* The frame is whole before the depth shows it to a sampler that
	 * interrupts this program: none reads the last call's start, marks
	 * or id in this one. */
	state_barrier();
	st->depth = d + 1;
	return 0;
}

/* Counts the call in point_calls under each point probe attached, and
 * whether it was hit during the call. A bpf_loop callback: the verifier
 * checks one round, not 64 rounds for each way the caller got here. */
struct point_count {
	__u64 active, hit; /* never narrowed in the loop: one state per bit */
	__u32 probe;
};

static long count_point(__u64 bit, void *arg)
{
	struct point_count *pc = arg;
	if (!(pc->active >> bit))
		return 1;
	if (!((pc->active >> bit) & 1))
		return 0;
	__u32 key = (pc->probe & (SONDE_MAX_PROBES - 1)) * SONDE_MAX_POINTS + (__u32)bit;
	struct sonde_point_calls *c = bpf_map_lookup_elem(&point_calls, &key);
	if (c) {
		c->calls++;
		c->hit += (pc->hit >> bit) & 1;
	}
	return 0;
}

static __always_inline void count_points(const struct sonde_span_frame *f)
{
	if (!points_active)
		return;
	struct point_count pc = { .active = points_active, .hit = f->points, .probe = f->probe };
	bpf_loop(SONDE_MAX_POINTS, count_point, &pc, 0);
}

/* Counts a completed call: corrects its duration by sonde's own cost inside
 * it, counts it in the histogram and the probe's totals, and sends a record
 * when the probe's policy wants one (sonde_probe_config). Most calls end
 * here without a record: nothing crosses to user space for them. */
static __always_inline void emit_span(__u64 pid_tgid, struct sonde_thread_state *st, __u32 level,
				      __u64 now, struct sonde_probe_config *cfg,
				      struct sonde_probe_counts *pc)
{
	struct sonde_span_frame *f = &st->frames[level & (SONDE_SPAN_DEPTH - 1)];
	__u64 raw = now - f->start_ns;
	__u64 own = st->own_ns - f->own_at_entry + cfg->self_unseen_ns;
	__u64 duration = raw > own ? raw - own : 0;
	if (pc) {
		pc->stats.completed++;
		pc->stats.raw_ns += raw;
		pc->stats.own_ns += raw - duration;
		__u32 bucket = sonde_hist_bucket(duration);
		if (bucket < SONDE_HIST_BUCKETS)
			pc->buckets[bucket]++;
	}
	count_points(f);
	if (!cfg->emit_all && !(f->flags & SONDE_FRAME_SAMPLED) && duration < cfg->emit_min_ns)
		return;
	if (calib.calib_tid && (__u32)pid_tgid == calib.calib_tid)
		return;
	/* Sending is the costly part and happens for few calls: it is timed and
	 * charged to the calls around this one. */
	__u64 t0 = bpf_ktime_get_ns();
	struct sonde_span *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(SONDE_CNT_LOST_SPANS);
		return;
	}
	fill_hdr(&r->hdr, SONDE_REC_SPAN, pid_tgid, now);
	r->probe = f->id;
	r->depth = level + 1;
	r->span_id = span_id_of(f);
	r->parent_span_id =
		level > 0 ? span_id_of(&st->frames[(level - 1) & (SONDE_SPAN_DEPTH - 1)]) : 0;
	r->start_ns = f->start_ns;
	r->duration_ns = duration;
	r->raw_duration_ns = raw;
	r->points = f->points;
	bpf_ringbuf_submit(r, span_submit_flags());
	__u64 sent = bpf_ktime_get_ns() - t0;
	st->own_ns += sent;
	if (pc) {
		pc->stats.emitted++;
		pc->stats.handler_ns += sent;
	}
}

/* A call of the probe ends: the innermost of the thread's calls of it in
 * flight whose stack slot the stack pointer has just left, or for a pair
 * (pair: 1) the innermost of them with the return's key (a return of a
 * call whose entry was not seen, or left out, closes nothing). */
static __always_inline int span_close(struct pt_regs *ctx, int pair)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 probe = SONDE_COOKIE_SLOT(cookie);
	struct sonde_probe_config *cfg = probe_config(cookie);
	if (!cfg)
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct sonde_thread_state *st = thread_state_of(tid);
	if (!st || st->depth == 0)
		return 0; /* entered before tracing started */
	__u32 d = st->depth;
	__u32 stored = d < SONDE_SPAN_DEPTH ? d : SONDE_SPAN_DEPTH;
	/* The returning call's frame is the innermost one of this probe whose
	 * stack slot the stack pointer has just left (a tail call's frame and
	 * its caller's share it: the innermost returns first). Frames above it never saw their return (longjmp, exceptions, the
	 * kernel's nesting limit): they are dropped as orphans. */
	__u64 sp = PT_REGS_SP(ctx);
	/* A pair's return closes the innermost call of its probe with its key. */
	__u64 want_sp = pair ? pair_sp(ctx, cfg->pair_return) : sp - RET_SP_OFFSET;
	int found = -1;
	for (__u32 i = 0; i < SONDE_SPAN_DEPTH; i++) {
		if (i >= stored)
			break;
		struct sonde_span_frame *f = &st->frames[(stored - 1 - i) & (SONDE_SPAN_DEPTH - 1)];
		if (f->probe == probe && f->gen == cfg->gen && f->entry_sp == want_sp) {
			found = (int)(stored - 1 - i);
			break;
		}
	}
	if (found < 0) {
		/* Not a timed call: an untimed level past the stored ones returns,
		 * or a call its predicate left out, or one that began before
		 * tracing did (ignored). */
		if (d > SONDE_SPAN_DEPTH)
			st->depth = d - 1;
		return 0;
	}
	__u32 orphans = d - 1 - (__u32)found;
	if (orphans)
		count_orphans(orphans);
	struct sonde_probe_counts *pc = bpf_map_lookup_elem(&probe_counts, &probe);
	/* What was hit during this call was hit during its caller's too. */
	if (found > 0)
		st->frames[(found - 1) & (SONDE_SPAN_DEPTH - 1)].points |=
			st->frames[found & (SONDE_SPAN_DEPTH - 1)].points;
	/* Popped before its record is decided: a sampler that interrupts this
	 * program on its CPU and still sees the call in flight marks it
	 * sampled and names it, and then the record must be sent; once the
	 * call is popped, no sample names it. (Decided first and popped after,
	 * a sample in between named a call whose record was never sent: a
	 * sample "in no call" for the span join and --sample-when.) The frame
	 * stays in its slot for emit_span to read. */
	st->depth = (__u32)found;
	state_barrier();
	emit_span(pid_tgid, st, (__u32)found, now, cfg, pc);
	/* What this call cost sonde, seen from the calls around it, beyond a
	 * record it sent (charged above): the traps and the handlers' own run
	 * time, calibrated. */
	st->own_ns += cfg->call_unseen_ns;
	return 0;
}

SEC("uretprobe")
int span_exit(struct pt_regs *ctx)
{
	return span_close(ctx, 0);
}

/* A span pair's return probe was hit (a uprobe at its site). */
SEC("uprobe")
int span_pair_exit(struct pt_regs *ctx)
{
	return span_close(ctx, 1);
}

/* Counts a point probe's hit (probe_counts' stats.entered) and, with a
 * traced call in flight, marks it with the probe's point bit. */
static __always_inline void point_count(__u32 probe)
{
	struct sonde_probe_counts *pc = bpf_map_lookup_elem(&probe_counts, &probe);
	if (pc)
		pc->stats.entered++;
}

static __always_inline void point_mark(struct sonde_thread_state *st,
				       const struct sonde_probe_config *cfg)
{
	if (!st || !st->depth)
		return; /* no traced call in flight to mark */
	__u32 d = st->depth < SONDE_SPAN_DEPTH ? st->depth : SONDE_SPAN_DEPTH;
	st->frames[(d - 1) & (SONDE_SPAN_DEPTH - 1)].points |=
		1ull << ((cfg->point_bit - 1) & (SONDE_MAX_POINTS - 1));
}

/* A point probe (a source line) was hit: counted exactly (probe_counts'
 * stats.entered), and marked in the innermost traced call in flight, for the
 * sampler (sample only in calls that hit it) and for the count of calls
 * that hit it (point_calls, when the call returns). With captures, the
 * program of this address (its key is in the cookie) reads them and sends
 * them, belonging to no call; a hit that fails its predicate sends nothing
 * and marks nothing (it is still counted). */
SEC("uprobe")
int point_hit(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 probe = SONDE_COOKIE_SLOT(cookie);
	struct sonde_probe_config *cfg = probe_config(cookie);
	if (!cfg || !cfg->point_bit)
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct sonde_thread_state *st = thread_state_of(tid);
	if (!st && !is_target(pid_tgid >> 32))
		return 0;
	point_count(probe);
	__u32 key = SONDE_COOKIE_FETCH(cookie);
	struct sonde_fetch_prog *prog = key ? fetch_prog_of(key, cfg->gen) : NULL;
	if (prog) {
		/* Timed and charged to the calls in flight, as at a span's entry. */
		__u64 t0 = bpf_ktime_get_ns();
		int kept = fetch_run(ctx, prog, cfg->id, 0, pid_tgid);
		if (st)
			st->own_ns += bpf_ktime_get_ns() - t0;
		if (!kept)
			return 0;
	}
	point_mark(st, cfg);
	return 0;
}

/* Whether the conditional jump at the probe's address goes to its target,
 * decided as the CPU will decide it: on the flags (and %rcx) it finds,
 * since the probe runs before the jump (the kernel emulates jcc after). */
static __always_inline bool branch_taken(const struct pt_regs *ctx, __u32 cond)
{
	__u64 fl = ctx->flags;
	bool cf = fl & 0x1, pf = fl & 0x4, zf = fl & 0x40, sf = fl & 0x80, of = fl & 0x800;
	__u64 rcx = ctx->cx;
	bool r;
	switch (cond >> 1) {
	case 0: r = of; break;
	case 1: r = cf; break;
	case 2: r = zf; break;
	case 3: r = cf || zf; break;
	case 4: r = sf; break;
	case 5: r = pf; break;
	case 6: r = sf != of; break;
	case 7: r = zf || sf != of; break;
	case SONDE_BRANCH_RCXZ >> 1: /* 16 and 17 */
		return cond == SONDE_BRANCH_RCXZ ? rcx == 0 : (__u32)rcx == 0;
	case SONDE_BRANCH_LOOP >> 1: /* 18 and 19 */
		return rcx != 1 && (cond == SONDE_BRANCH_LOOP || zf);
	default: /* SONDE_BRANCH_LOOPNE */
		return rcx != 1 && !zf;
	}
	return r ^ (cond & 1);
}

/* A branch probe's outcome at one of its jumps (cookie: the jump's
 * condition, and which outcome this probe is): when the jump goes this
 * probe's way, counted and marked in the innermost traced call in flight,
 * as a point probe's hit. */
SEC("uprobe")
int branch_hit(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 probe = SONDE_COOKIE_SLOT(cookie);
	__u32 code = SONDE_COOKIE_FETCH(cookie);
	struct sonde_probe_config *cfg = probe_config(cookie);
	if (!cfg || !cfg->point_bit)
		return 0;
	if (branch_taken(ctx, code & SONDE_BRANCH_COND_MASK) != !!(code & SONDE_BRANCH_TAKEN))
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct sonde_thread_state *st = thread_state_of((__u32)pid_tgid);
	if (!st && !is_target(pid_tgid >> 32))
		return 0;
	point_count(probe);
	point_mark(st, cfg);
	return 0;
}
