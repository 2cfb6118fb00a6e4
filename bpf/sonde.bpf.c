// SPDX-License-Identifier: GPL-2.0
/* sonde.bpf.c — the kernel half of sonde.
 *
 * One object, generic programs:
 *  - `sample_perf` runs on perf software events (cpu-clock, page-faults, ...)
 *    opened per CPU by user space;
 *  - `sample_tp` runs on any tracepoint user space attaches it to;
 *  both emit a `struct sonde_sample` with user and kernel stacks straight into
 *  the ring buffer (no stack-id map, so no collisions);
 *  - `on_fork`/`on_exec`/`on_exit` follow the target processes so that
 *    children are profiled too and user space re-reads maps after exec. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "sonde_abi.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 filter_mode = SONDE_FILTER_ALL;
const volatile __u32 sample_event_index = 0; /* event index for sample_perf */
const volatile __u32 tp_event_index = 0;     /* event index for sample_tp */
const volatile __u32 follow_children = 1;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by user space before load */
} events SEC(".maps");

/* tgid (or, for followed children before they are known as processes, tid)
 * -> 1: the processes being profiled when filter_mode == TGIDS. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SONDE_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* tid -> the thread's spans in flight: tracing writes it, sampling reads it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct sonde_thread_state);
} threads SEC(".maps");

/* A zeroed thread state to create entries from (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sonde_thread_state);
} zero_state SEC(".maps");

/* Completed calls per probe in log-linear buckets (sonde_abi.h):
 * key = probe * SONDE_HIST_BUCKETS + bucket. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SONDE_MAX_PROBES * SONDE_HIST_BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SONDE_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct sonde_probe_config);
} probe_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sonde_sampler_config);
} sampler_cfg SEC(".maps");

/* Per-probe totals: calls entered and completed, raw and own time. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SONDE_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct sonde_probe_stats);
} probe_stats SEC(".maps");

__u64 next_span_id = 0;
struct sonde_calibration calib = {};
__u64 calib_samples = 0; /* samples of calib.calib_tid, for calibration */
/* When each of the first SONDE_CALIB_TIMES calibration samples was taken:
 * user space finds the gap in its own timeline that each one made. */
__u64 calib_times[SONDE_CALIB_TIMES] = {};

/* Waking the reader for every record costs the thread that made it: for a
 * span record microseconds per call, for a sample about 20 us more of the
 * call it landed in (measured: sampled calls grew by 43 us with a wake-up
 * per sample, 20 us without). So samples and span records wake the reader
 * only once this much is waiting (it also drains on its poll timeout, at
 * least every 100 ms, so records are never stuck). Process events force a
 * wake-up: user space must read a new process's maps while it still lives.
 * (The default flag would not do: it wakes the reader only when it has
 * consumed everything before, which unread records prevent.) */
const volatile __u64 wakeup_bytes = 1u << 20;

static __always_inline __u64 span_submit_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									     : BPF_RB_NO_WAKEUP;
}

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);
	if (c)
		*c += 1;
}

static __always_inline int is_target(__u32 tgid)
{
	if (filter_mode == SONDE_FILTER_ALL)
		return 1;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline void fill_hdr(struct sonde_hdr *h, __u32 kind, __u64 pid_tgid, __u64 time_ns)
{
	h->kind = kind;
	h->cpu = bpf_get_smp_processor_id();
	h->time_ns = time_ns;
	h->pid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
}

/* Applies the in-kernel sampling decisions to the thread's span stack:
 * "only inside probe P" and "only when P's current call already ran longer
 * than T". Returns 1 to take the sample. */
static __always_inline int sampler_wants(const struct sonde_thread_state *st, __u64 now)
{
	__u32 zero = 0;
	struct sonde_sampler_config *cfg = bpf_map_lookup_elem(&sampler_cfg, &zero);
	if (!cfg || (!cfg->only_in_probe && !cfg->only_slow_probe))
		return 1;
	if (!st)
		return 0;
	int in_ok = !cfg->only_in_probe, slow_ok = !cfg->only_slow_probe;
	__u32 depth = st->depth < SONDE_SPAN_DEPTH ? st->depth : SONDE_SPAN_DEPTH;
	for (__u32 i = 0; i < SONDE_SPAN_DEPTH; i++) {
		if (i >= depth)
			break;
		const struct sonde_span_frame *f = &st->frames[i];
		if (f->probe + 1 == cfg->only_in_probe)
			in_ok = 1;
		if (f->probe + 1 == cfg->only_slow_probe && now - f->start_ns > cfg->only_slow_ns)
			slow_ok = 1;
	}
	return in_ok && slow_ok;
}

/* A span id for a call in flight that needs one (a sample or a record
 * refers to it): most calls never do, so ids are given lazily. */
static __always_inline __u64 span_id_of(struct sonde_span_frame *f)
{
	if (!f->span_id)
		f->span_id = __sync_fetch_and_add(&next_span_id, 1) + 1;
	return f->span_id;
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

	struct sonde_sample *s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
	if (!s) {
		count(SONDE_CNT_LOST_SAMPLES);
		sample_charge(st, t0);
		return 0;
	}
	fill_hdr(&s->hdr, SONDE_REC_SAMPLE, pid_tgid, t0);
	s->event = event;
	s->_pad2 = 0;
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
	/* The frame-pointer walk skips the caller of a leaf that has not set up
	 * its frame (stackless leaves, prologues); user space finds that caller's
	 * return address among these words with the leaf's CFI. */
	struct pt_regs *uregs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	s->user_sp = uregs ? BPF_CORE_READ(uregs, sp) : 0;
	if (!s->user_sp || bpf_probe_read_user(s->user_stack_top, sizeof(s->user_stack_top),
					       (void *)s->user_sp))
		__builtin_memset(s->user_stack_top, 0, sizeof(s->user_stack_top));
	s->kstack_bytes = bpf_get_stack(ctx, s->kstack, sizeof(s->kstack), 0);
	s->ustack_bytes = bpf_get_stack(ctx, s->ustack, sizeof(s->ustack), BPF_F_USER_STACK);
	bpf_ringbuf_submit(s, span_submit_flags());
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

static __always_inline void emit_task(__u32 kind, __u64 pid_tgid, __u32 child_pid, __u32 child_tgid)
{
	struct sonde_task_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(SONDE_CNT_LOST_TASK);
		return;
	}
	fill_hdr(&e->hdr, kind, pid_tgid, bpf_ktime_get_ns());
	e->child_pid = child_pid;
	e->child_tgid = child_tgid;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

SEC("tracepoint/sched/sched_process_fork")
int on_fork(struct trace_event_raw_sched_process_fork *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	if (filter_mode == SONDE_FILTER_ALL || !is_target(tgid))
		return 0;
	__u32 child = ctx->child_pid;
	/* The tracepoint does not say whether the child is a thread (same tgid,
	 * already covered) or a process. Adding its tid covers the process case
	 * and is harmless for a thread: no process has that tgid while the thread
	 * lives, and on_exit removes the entry. */
	if (follow_children) {
		__u8 one = 1;
		if (bpf_map_update_elem(&targets, &child, &one, BPF_NOEXIST) < 0 &&
		    bpf_map_lookup_elem(&targets, &child) == NULL)
			count(SONDE_CNT_TARGETS_FULL);
	}
	emit_task(SONDE_REC_FORK, pid_tgid, child, 0);
	return 0;
}

SEC("tracepoint/sched/sched_process_exec")
int on_exec(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (filter_mode != SONDE_FILTER_ALL && !is_target(pid_tgid >> 32))
		return 0;
	emit_task(SONDE_REC_EXEC, pid_tgid, 0, 0);
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int on_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	if (filter_mode != SONDE_FILTER_ALL && !is_target(tgid))
		return 0;
	if (filter_mode != SONDE_FILTER_ALL) {
		if (tid != tgid)
			bpf_map_delete_elem(&targets, &tid); /* added by on_fork if it was a thread */
		/* The last thread of the process: drop it, or exited children fill
		 * the map and a reused PID would be profiled. */
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		if (BPF_CORE_READ(task, signal, live.counter) == 0)
			bpf_map_delete_elem(&targets, &tgid);
	}
	bpf_map_delete_elem(&threads, &tid);
	emit_task(SONDE_REC_EXIT, pid_tgid, 0, 0);
	return 0;
}

/* --- span probes: one program pair, attached once per traced function with
 * the probe id (its slot) and attach generation as the attach cookie ----- */

static __always_inline __u32 log2_floor(__u64 v)
{
	__u32 r = 0;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

static __always_inline __u32 hist_bucket(__u64 v)
{
	if (v < SONDE_HIST_SUB)
		return (__u32)v;
	__u32 k = log2_floor(v);
	return (k - SONDE_HIST_SUB_BITS + 1) * SONDE_HIST_SUB +
	       (__u32)((v >> (k - SONDE_HIST_SUB_BITS)) & (SONDE_HIST_SUB - 1));
}

/* The config of an attachment still in force: low 32 bits of the cookie
 * are the probe id, high 32 its generation. Uprobes of a detached probe
 * that the kernel has not removed yet carry an older generation, so the
 * id can be reused at once. */
static __always_inline struct sonde_probe_config *probe_config(__u64 cookie)
{
	__u32 probe = (__u32)cookie;
	if (probe >= SONDE_MAX_PROBES)
		return NULL;
	struct sonde_probe_config *cfg = bpf_map_lookup_elem(&probe_cfg, &probe);
	return cfg && cfg->active && cfg->gen == (__u32)(cookie >> 32) ? cfg : NULL;
}

static __always_inline struct sonde_thread_state *thread_state(__u32 tid)
{
	struct sonde_thread_state *st = bpf_map_lookup_elem(&threads, &tid);
	if (st)
		return st;
	__u32 zero = 0;
	struct sonde_thread_state *z = bpf_map_lookup_elem(&zero_state, &zero);
	if (!z)
		return NULL;
	if (bpf_map_update_elem(&threads, &tid, z, BPF_NOEXIST) && bpf_map_lookup_elem(&threads, &tid) == NULL) {
		count(SONDE_CNT_THREADS_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&threads, &tid);
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

SEC("uprobe")
int span_enter(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 probe = (__u32)cookie;
	struct sonde_probe_config *cfg = probe_config(cookie);
	if (!cfg)
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	/* A thread with a state is a target's (states are made only for
	 * targets, and dropped when the thread exits): one hash lookup instead
	 * of two on the path every call takes. */
	struct sonde_thread_state *st = bpf_map_lookup_elem(&threads, &tid);
	if (!st) {
		if (!is_target(pid_tgid >> 32))
			return 0;
		st = thread_state(tid);
	}
	__u64 t0 = bpf_ktime_get_ns();
	struct sonde_probe_stats *ps = bpf_map_lookup_elem(&probe_stats, &probe);
	if (ps)
		ps->entered++;
	if (!st)
		return 0;
	__u64 sp = PT_REGS_SP(ctx);
	drop_abandoned(st, sp);
	__u32 d = st->depth;
	if (d >= SONDE_SPAN_DEPTH) {
		st->depth = d + 1;
		count(SONDE_CNT_SPAN_OVERFLOW);
		return 0;
	}
	struct sonde_span_frame *f = &st->frames[d & (SONDE_SPAN_DEPTH - 1)];
	f->span_id = 0;
	f->probe = probe;
	f->gen = cfg->gen;
	f->flags = 0;
	f->entry_sp = sp;
	st->depth = d + 1;
	/* One clock read per handler: the rest of this handler's run time is
	 * inside the calibrated trap cost (self_unseen_ns for this call,
	 * call_unseen_ns for the calls around it). */
	f->own_at_entry = st->own_ns;
	f->start_ns = t0;
	return 0;
}

/* Counts a completed call: corrects its duration by sonde's own cost inside
 * it, counts it in the histogram and the probe's totals, and sends a record
 * when the probe's policy wants one (sonde_probe_config). Most calls end
 * here without a record: nothing crosses to user space for them. */
static __always_inline void emit_span(__u64 pid_tgid, struct sonde_thread_state *st, __u32 level,
				      __u64 now, struct sonde_probe_config *cfg,
				      struct sonde_probe_stats *ps)
{
	struct sonde_span_frame *f = &st->frames[level & (SONDE_SPAN_DEPTH - 1)];
	__u64 raw = now - f->start_ns;
	__u64 own = st->own_ns - f->own_at_entry + cfg->self_unseen_ns;
	__u64 duration = raw > own ? raw - own : 0;
	__u32 key = f->probe * SONDE_HIST_BUCKETS + hist_bucket(duration);
	__u64 *slot = bpf_map_lookup_elem(&hists, &key);
	if (slot)
		*slot += 1;
	if (ps) {
		ps->completed++;
		ps->raw_ns += raw;
		ps->own_ns += raw - duration;
	}
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
	r->probe = f->probe;
	r->depth = level + 1;
	r->span_id = span_id_of(f);
	r->parent_span_id =
		level > 0 ? span_id_of(&st->frames[(level - 1) & (SONDE_SPAN_DEPTH - 1)]) : 0;
	r->start_ns = f->start_ns;
	r->duration_ns = duration;
	r->raw_duration_ns = raw;
	bpf_ringbuf_submit(r, span_submit_flags());
	__u64 sent = bpf_ktime_get_ns() - t0;
	st->own_ns += sent;
	if (ps) {
		ps->emitted++;
		ps->handler_ns += sent;
	}
}

SEC("uretprobe")
int span_exit(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 probe = (__u32)cookie;
	struct sonde_probe_config *cfg = probe_config(cookie);
	if (!cfg)
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct sonde_thread_state *st = bpf_map_lookup_elem(&threads, &tid);
	if (!st || st->depth == 0)
		return 0; /* entered before tracing started */
	__u32 d = st->depth;
	__u32 stored = d < SONDE_SPAN_DEPTH ? d : SONDE_SPAN_DEPTH;
	/* The returning call's frame is the innermost one of this probe whose
	 * stack slot the stack pointer has just left (a tail call's frame and
	 * its caller's share it: the innermost returns first). Frames above it never saw their return (longjmp, exceptions, the
	 * kernel's nesting limit): they are dropped as orphans. */
	__u64 sp = PT_REGS_SP(ctx);
	int found = -1;
	for (__u32 i = 0; i < SONDE_SPAN_DEPTH; i++) {
		if (i >= stored)
			break;
		struct sonde_span_frame *f = &st->frames[(stored - 1 - i) & (SONDE_SPAN_DEPTH - 1)];
		if (f->probe == probe && f->gen == cfg->gen && f->entry_sp + RET_SP_OFFSET == sp) {
			found = (int)(stored - 1 - i);
			break;
		}
	}
	if (found < 0) {
		/* Not a timed call: an untimed level past the stored ones returns,
		 * or a call that began before tracing did (ignored). */
		if (d > SONDE_SPAN_DEPTH)
			st->depth = d - 1;
		return 0;
	}
	__u32 orphans = d - 1 - (__u32)found;
	if (orphans)
		count_orphans(orphans);
	struct sonde_probe_stats *ps = bpf_map_lookup_elem(&probe_stats, &probe);
	emit_span(pid_tgid, st, (__u32)found, now, cfg, ps);
	st->depth = (__u32)found;
	/* What this call cost sonde, seen from the calls around it, beyond a
	 * record it sent (charged above): the traps and the handlers' own run
	 * time, calibrated. */
	st->own_ns += cfg->call_unseen_ns;
	return 0;
}
