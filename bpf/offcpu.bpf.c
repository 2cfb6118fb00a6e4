// SPDX-License-Identifier: GPL-2.0
/* offcpu.bpf.c — where target threads wait (record --off-cpu).
 *
 * At sched_switch, the thread being switched out is the current one: its
 * kernel and user stacks (taken as the sampler takes them, stacks.bpf.h),
 * its calls in flight, why it left (the state the tracepoint reports) and
 * the system call it is in are kept in `offcpu_stash` under its tid. When
 * it is switched back in, one struct sonde_sample goes to the ring buffer
 * with off_ns = the time it was away, if that is at least offcpu_min_ns
 * (shorter ones are counted, OFFCPU_SHORT). The system call is the one
 * threads.bpf.c's sys_enter/sys_exit programs keep in `thread_now`. Once
 * the recording ended (offcpu_until_ns), nothing is stashed or sent: the
 * intervals still going are user space's to cut at the end
 * (src/engine/offcpucut.h). With --wakers,
 * `offcpu_wakeup` (sched_waking) keeps who woke each waiting thread in
 * `waker_stash`, sent after the woken thread's record as a record of event
 * offcpu_event_index + 1 (off_state SONDE_OFF_WAKER) of the same weight.
 *
 * The same stash is every target thread's last stacks for the thread
 * states (threads.bpf.c): with thread states on and off-CPU intervals off,
 * offcpu_switch is attached to keep it, and sends nothing itself.
 *
 * Only classic tracepoints: no kprobes, no fentry, no BTF raw tracepoints
 * (the tracepoints' formats are all it reads, plus the current task). User
 * space attaches these programs only with --off-cpu (or `sample off-cpu`),
 * or thread states (offcpu_switch). */
#include "stacks.bpf.h"

const volatile __u32 offcpu_event_index = 1; /* the off-CPU event's index */
/* Intervals shorter than this are counted, not sent (user space sets it;
 * it may change while attached). */
__u64 offcpu_min_ns = 5000;

/* A zeroed entry to create a stash entry from (too large for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sonde_offcpu_entry);
} offcpu_blank SEC(".maps");

/* Wakers (--wakers): woken tid -> the record of the thread that woke it
 * (its stacks when it woke it; the woken thread's calls in flight), sent
 * with the woken thread's own record, weighing the same wait. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct sonde_sample);
} waker_stash SEC(".maps");

/* 1: keep who woke each waiting target thread (user space sets it). */
__u32 offcpu_wakers = 0;
/* 1: send off-CPU intervals (--off-cpu). 0: the switch-out only keeps each
 * thread's stacks in offcpu_stash, for the thread-state passes. Intervals
 * that began before offcpu_since_ns (when user space turned them on) are
 * not sent: they would span a time off-CPU recording was off. */
__u32 offcpu_intervals = 0;
__u64 offcpu_since_ns = 0;
/* When the recording ended (user space sets it as it ends; 0 before).
 * From then on nothing is stashed or sent: a thread still away keeps its
 * entry, which user space reads as an interval cut at the end
 * (engine_end_offcpu), so no interval ends after the recording. */
__u64 offcpu_until_ns = 0;

static __always_inline bool recording_over(__u64 now)
{
	return offcpu_until_ns && now >= offcpu_until_ns;
}

static __always_inline void switch_out(void *ctx, long prev_state, __u64 now)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	if (recording_over(now))
		return; /* an exiting thread's entry too: it holds its last wait */
	if (prev_state & (STATE_X | STATE_Z)) { /* its last switch: it exits */
		/* Before the target check: a process's last thread is no
		 * target any more once sched_process_exit ran, and its entries
		 * would stay. */
		bpf_map_delete_elem(&offcpu_stash, &tid);
		bpf_map_delete_elem(&waker_stash, &tid);
		tstate_forget(tid);
		return;
	}
	if (tgid == 0 || !is_target(tgid))
		return;
	struct sonde_offcpu_entry *e = bpf_map_lookup_elem(&offcpu_stash, &tid);
	if (!e) {
		__u32 zero = 0;
		struct sonde_offcpu_entry *blank = bpf_map_lookup_elem(&offcpu_blank, &zero);
		if (!blank)
			return;
		bpf_map_update_elem(&offcpu_stash, &tid, blank, BPF_NOEXIST);
		e = bpf_map_lookup_elem(&offcpu_stash, &tid);
		if (!e) {
			count(SONDE_CNT_OFFCPU_FULL);
			return;
		}
	}
	struct sonde_sample *s = &e->s;
	struct task_struct *task = bpf_get_current_task_btf();
	struct sonde_thread_state *st = thread_state_of_walker(tid);
	__sync_fetch_and_add(&e->seq, 1); /* odd: being written */
	fill_hdr(&s->hdr, offcpu_intervals ? SONDE_REC_SAMPLE : 0, pid_tgid, now);
	s->event = offcpu_event_index;
	s->off_state = off_state_of(prev_state, task);
	struct sonde_thread_now *tn = bpf_map_lookup_elem(&thread_now, &tid);
	s->syscall = tn ? tn->syscall : -1;
	s->off_ns = 0;
	stacks_fill_spans(s, st);
	stacks_fill(ctx, s, tgid);
	/* Taking the stacks ran on the thread's time, inside its calls (their
	 * durations leave it out): the interval starts once they are taken,
	 * so a call's off-CPU time never counts them too. */
	__u64 walked = bpf_ktime_get_ns();
	s->hdr.time_ns = walked;
	__sync_fetch_and_add(&e->seq, 1); /* even: whole */
	if (st)
		st->own_ns += walked - now;
}

/* The calls in flight the record names get a record of their own when
 * they return, as those a sample landed in do. */
static __always_inline void mark_calls(__u32 tid, const struct sonde_sample *s)
{
	struct sonde_thread_state *st = thread_state_of_walker(tid);
	if (!st)
		return;
	for (__u32 i = 0; i < SONDE_SAMPLE_SPANS; i++) {
		if (i >= s->nspans || i >= st->depth || i >= SONDE_SPAN_DEPTH)
			break;
		if (st->frames[i].span_id == s->span_ids[i])
			st->frames[i].flags |= SONDE_FRAME_SAMPLED;
	}
}

/* The waker of the wait that ends now: woken since the thread last got a
 * CPU, at in_ns (sched_waking may come before the switch-out of the wait it ends: a
 * thread is woken as soon as it has said it will sleep, and the waker may
 * be quicker than its way to sched_switch). A runnable interval (the thread
 * was preempted) has none: a waking before it ended a sleep that never
 * began. Its calls in flight are the woken thread's: the wait belongs to
 * them. */
static __always_inline struct sonde_sample *waker_of(__u32 tid,
						     const struct sonde_offcpu_entry *e, __u64 in_ns)
{
	struct sonde_sample *w = offcpu_wakers ? bpf_map_lookup_elem(&waker_stash, &tid) : NULL;
	if (!w || w->hdr.kind != SONDE_REC_SAMPLE)
		return NULL;
	if (w->hdr.time_ns < in_ns || e->s.off_state == SONDE_OFF_RUNNABLE) {
		w->hdr.kind = 0;
		return NULL;
	}
	const struct sonde_sample *s = &e->s;
	__builtin_memcpy(w->woken_comm, s->hdr.comm, SONDE_COMM_LEN);
	w->nspans = s->nspans;
	w->span_depth = s->span_depth;
	for (__u32 i = 0; i < SONDE_SAMPLE_SPANS; i++) {
		w->span_ids[i] = s->span_ids[i];
		w->span_probes[i] = s->span_probes[i];
	}
	return w;
}

static __always_inline void switch_in(__u32 tid, __u64 now)
{
	if (tid == 0 || recording_over(now))
		return; /* after the end: the entry stays for user space to cut */
	struct sonde_offcpu_entry *e = bpf_map_lookup_elem(&offcpu_stash, &tid);
	if (!e)
		return;
	__u64 in_ns = e->in_ns;
	e->in_ns = now;
	if (e->s.hdr.kind != SONDE_REC_SAMPLE)
		return;
	struct sonde_sample *s = &e->s;
	if (!offcpu_intervals || s->hdr.time_ns < offcpu_since_ns) {
		s->hdr.kind = 0; /* left while off-CPU recording was off */
		return;
	}
	__u64 away = now > s->hdr.time_ns ? now - s->hdr.time_ns : 0;
	struct sonde_sample *w = waker_of(tid, e, in_ns);
	if (away < offcpu_min_ns) {
		count(SONDE_CNT_OFFCPU_SHORT);
	} else {
		s->off_ns = away;
		mark_calls(tid, s);
		if (bpf_ringbuf_output(&events, s, stacks_record_bytes(s), stacks_submit_flags(s, now)))
			count(SONDE_CNT_LOST_OFFCPU);
		if (w) {
			w->off_ns = away;
			if (bpf_ringbuf_output(&events, w, stacks_record_bytes(w), span_submit_flags()))
				count(SONDE_CNT_LOST_OFFCPU);
		}
	}
	if (w)
		w->hdr.kind = 0;
	s->hdr.kind = 0;
}

SEC("tracepoint/sched/sched_switch")
int offcpu_switch(struct trace_event_raw_sched_switch *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	switch_in((__u32)ctx->next_pid, now);
	switch_out(ctx, ctx->prev_state, now);
	return 0;
}

/* A thread wakes a target thread that waits: its kernel stack, and its
 * user stack when it is a target itself (the unwind tables are the
 * targets'). sched_waking, not sched_wakeup: it runs in the waker's context
 * (in an interrupt, the interrupted thread's: a timer ending a nanosleep),
 * while sched_wakeup runs wherever the woken thread is put on its run
 * queue, which, when the waker queues it on the woken thread's CPU (the
 * kernel's wake list, when that CPU is idle or the thread is still leaving
 * it), is an interrupt there, in the idle task or whatever ran: 7% of the
 * waits in tests/integration/offcpu.sh under load had such a waker. Kept
 * for any target thread that has left the CPU before (an offcpu_stash
 * entry), matched to its wait when it runs again (waker_of). */
SEC("tracepoint/sched/sched_waking")
int offcpu_wakeup(struct trace_event_raw_sched_wakeup_template *ctx)
{
	if (!offcpu_wakers)
		return 0;
	__u32 woken = (__u32)ctx->pid;
	if (!bpf_map_lookup_elem(&offcpu_stash, &woken))
		return 0;
	struct sonde_sample *w = bpf_map_lookup_elem(&waker_stash, &woken);
	if (!w) {
		__u32 zero = 0;
		struct sonde_offcpu_entry *blank = bpf_map_lookup_elem(&offcpu_blank, &zero);
		if (!blank)
			return 0;
		bpf_map_update_elem(&waker_stash, &woken, &blank->s, BPF_NOEXIST);
		w = bpf_map_lookup_elem(&waker_stash, &woken);
		if (!w) {
			count(SONDE_CNT_OFFCPU_FULL);
			return 0;
		}
	}
	__u64 now = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	fill_hdr(&w->hdr, SONDE_REC_SAMPLE, pid_tgid, now);
	w->event = offcpu_event_index + 1;
	w->off_state = SONDE_OFF_WAKER;
	w->syscall = -1;
	w->off_ns = 0;
	if (tgid && is_target(tgid)) {
		stacks_fill(ctx, w, tgid);
	} else {
		/* Another process: its kernel stack alone. */
		w->nreturns = 0;
		w->unwind = unwind_mode;
		w->table_miss = 0;
		w->nuser = 0;
		w->ustack_err = 0;
		w->unwind_end = SONDE_END_COMPLETE;
		long kb = bpf_get_stack(ctx, w->ips, SONDE_MAX_STACK * sizeof(__u64), 0);
		__u32 nk = kb > 0 ? (__u32)kb / sizeof(__u64) : 0;
		w->nkernel = nk < SONDE_MAX_STACK ? nk : SONDE_MAX_STACK;
		w->kstack_err = kb < 0 ? kb : 0;
	}
	return 0;
}
