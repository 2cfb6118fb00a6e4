// SPDX-License-Identifier: GPL-2.0
/* threads.bpf.c — every target thread's state, kept by tracepoints and
 * sampled over all threads, running or not (xcapture-style; `sonde
 * threads`, `record --threads`).
 *
 * `thread_now` (common.bpf.h) holds, per target thread: its state
 * (running, runnable, sleeping, uninterruptible, disk, stopped) and since
 * when, the system call it is in and since when. sched_switch writes the
 * state of the thread leaving the CPU (from prev_state) and of the one
 * arriving (running), sched_wakeup makes a waiting thread runnable,
 * raw_syscalls sys_enter/sys_exit the system call (those two are also the
 * off-CPU programs' source of the system call: user space attaches them
 * whenever either is on).
 *
 * `threads_pass` runs on a cpu-clock perf event user space opens on one
 * CPU at -F: each tick is a pass over every thread in `tstate_tids` (this
 * kernel has no BPF iterators, task storage cannot be walked, and
 * bpf_for_each_map_elem on the hash walks every bucket, used or not:
 * 33 us a pass for 4096), sending one struct sonde_thread_sample per
 * thread with its calls in flight (the `threads` map), then one struct
 * sonde_thread_pass with how long the pass ran. The calls a pass names
 * are marked sampled, so their return sends their record (the span a
 * thread sample refers to is in the recording).
 *
 * A thread's last stacks are those it left the CPU with, which offcpu.bpf.c
 * keeps in `offcpu_stash` at every switch-out (user space attaches it with
 * thread states). A pass sends them once, the first time it finds them new
 * (SONDE_REC_THREAD_STACK), and each row names them by when the thread
 * left (stack_ns): a thread blocked for a minute costs one copy of its
 * stacks, not one a pass. A running thread's row names the stacks it last
 * left with; user space prefers its last on-CPU sample when there is one.
 *
 * Only classic tracepoints and a perf event: no kprobes, no fentry. */
#include "stacks.bpf.h"

__u64 tstate_passes = 0; /* passes so far (a pass's number) */
/* tstate_tids's size (user space sets it with the map's). */
const volatile __u32 tstate_slots = 4096;

struct slot_search {
	__u32 tid;
	__u32 found; /* the slot + 1 */
};

static long claim_free(__u32 i, struct slot_search *ss)
{
	__u64 *owner = bpf_map_lookup_elem(&tstate_tids, &i);
	if (owner && *owner == 0 && __sync_val_compare_and_swap(owner, 0, (__u64)ss->tid) == 0) {
		ss->found = i + 1;
		return 1;
	}
	return 0;
}

/* A slot for a new thread (sonde_abi.h: struct sonde_thread_now), or -1
 * when every slot is taken. */
static __always_inline long take_slot(__u32 tid)
{
	__u32 nslots = tstate_slots;
	if (tstate_next < nslots) {
		__u32 slot = (__u32)__sync_fetch_and_add(&tstate_next, 1);
		__u64 *owner = bpf_map_lookup_elem(&tstate_tids, &slot);
		if (owner) {
			*owner = tid;
			return slot;
		}
	}
	struct slot_search ss = {.tid = tid};
	bpf_loop(nslots, claim_free, &ss, 0);
	return ss.found ? (long)ss.found - 1 : -1;
}

/* The entry of the current thread (created when missing, as running since
 * now, with a slot), or NULL (no room: counted). */
static __always_inline struct sonde_thread_now *current_entry(__u64 pid_tgid, __u64 now)
{
	__u32 tid = (__u32)pid_tgid;
	struct sonde_thread_now *t = bpf_map_lookup_elem(&thread_now, &tid);
	if (t)
		return t;
	struct sonde_thread_now fresh = {
		.pid = pid_tgid >> 32,
		.tid = tid,
		.state_since_ns = now,
		.syscall = -1,
		.state = SONDE_OFF_NONE,
		.cpu = bpf_get_smp_processor_id(),
		.task = bpf_get_current_task(),
	};
	bpf_get_current_comm(fresh.comm, sizeof(fresh.comm));
	long slot = take_slot(tid);
	if (slot < 0) {
		count(SONDE_CNT_TSTATE_FULL);
		return NULL;
	}
	fresh.slot = (__u32)slot;
	if (bpf_map_update_elem(&thread_now, &tid, &fresh, BPF_NOEXIST) < 0) {
		/* The map is full, or user space seeded the thread meanwhile
		 * (with a slot of its own): this slot goes back. */
		__u32 s = (__u32)slot;
		__u64 *owner = bpf_map_lookup_elem(&tstate_tids, &s);
		if (owner)
			__sync_val_compare_and_swap(owner, (__u64)tid, 0);
		t = bpf_map_lookup_elem(&thread_now, &tid);
		if (!t)
			count(SONDE_CNT_TSTATE_FULL);
		return t;
	}
	return bpf_map_lookup_elem(&thread_now, &tid);
}

static __always_inline void set_state(struct sonde_thread_now *t, __u8 state, __u64 now)
{
	if (t->state == state && !(t->flags & SONDE_TSTATE_SEEDED))
		return;
	t->state = state;
	t->state_since_ns = now;
	t->flags &= ~SONDE_TSTATE_SEEDED;
}

/* Per CPU: the thread the last sched_switch there put on it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tstate_oncpu SEC(".maps");

/* The thread put on this CPU last is not the one leaving it: it left
 * without a sched_switch of its own (seen on this kernel: a thread
 * switched in, then the next switch on that CPU switches out another one).
 * Its state is read from its task now, since now: a lower bound. */
static __always_inline void left_unseen(__u32 ghost, __u32 cpu, __u64 now)
{
	struct sonde_thread_now *t = bpf_map_lookup_elem(&thread_now, &ghost);
	if (!t || t->state != SONDE_OFF_NONE || t->cpu != cpu)
		return;
	struct task_struct *task = (struct task_struct *)t->task;
	unsigned int st = 0;
	if (task)
		st = BPF_CORE_READ(task, __state);
	/* __state's low bits are the reported ones: S 1, D 2, T 4, t 8. */
	t->state = task ? off_state_of(st, task) : SONDE_OFF_SLEEPING;
	t->state_since_ns = now;
	t->flags |= SONDE_TSTATE_SEEDED;
}

SEC("tracepoint/sched/sched_switch")
int tstate_switch(struct trace_event_raw_sched_switch *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 next = (__u32)ctx->next_pid, cpu = bpf_get_smp_processor_id(), zero = 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u32 *oncpu = bpf_map_lookup_elem(&tstate_oncpu, &zero);
	if (oncpu) {
		if (*oncpu && *oncpu != tid)
			left_unseen(*oncpu, cpu, now);
		*oncpu = next;
	}
	struct sonde_thread_now *t;
	if (next && (t = bpf_map_lookup_elem(&thread_now, &next))) {
		set_state(t, SONDE_OFF_NONE, now);
		t->cpu = cpu;
	}
	long prev_state = ctx->prev_state;
	if (prev_state & (STATE_X | STATE_Z)) { /* its last switch: it exits */
		/* Before the target check: a process's last thread is no
		 * target any more once sched_process_exit ran. */
		tstate_forget(tid);
		return 0;
	}
	if (tgid == 0 || !is_target(tgid))
		return 0;
	t = current_entry(pid_tgid, now);
	if (t) {
		set_state(t, off_state_of(prev_state, bpf_get_current_task_btf()), now);
		t->task = bpf_get_current_task();
		bpf_get_current_comm(t->comm, sizeof(t->comm)); /* it may have changed (prctl) */
	}
	return 0;
}

/* A waiting thread was woken: it waits for a CPU now. */
SEC("tracepoint/sched/sched_wakeup")
int tstate_wakeup(struct trace_event_raw_sched_wakeup_template *ctx)
{
	__u32 woken = (__u32)ctx->pid;
	struct sonde_thread_now *t = bpf_map_lookup_elem(&thread_now, &woken);
	if (t && t->state != SONDE_OFF_NONE && t->state != SONDE_OFF_RUNNABLE)
		set_state(t, SONDE_OFF_RUNNABLE, bpf_ktime_get_ns());
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_enter")
int tstate_sys_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if ((pid_tgid >> 32) == 0 || !is_target(pid_tgid >> 32))
		return 0;
	__u64 now = bpf_ktime_get_ns();
	struct sonde_thread_now *t = current_entry(pid_tgid, now);
	if (!t)
		return 0;
	t->syscall = (__s32)ctx->id;
	t->syscall_since_ns = now;
	t->task = bpf_get_current_task();
	t->flags &= ~SONDE_TSTATE_SYSCALL_SEEDED;
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_exit")
int tstate_sys_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct sonde_thread_now *t = bpf_map_lookup_elem(&thread_now, &tid);
	if (t) {
		t->syscall = -1;
		t->flags &= ~SONDE_TSTATE_SYSCALL_SEEDED;
	}
	return 0;
}

/* Per CPU: a thread's stacks copied out of offcpu_stash, checked whole,
 * then sent (too large for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sonde_sample);
} tstate_stack_copy SEC(".maps");

/* The thread's stacks from when it last left the CPU (offcpu_stash), sent
 * as a SONDE_REC_THREAD_STACK record once: when they are newer than those
 * sent before (t->stack_sent_ns) and were not being rewritten meanwhile
 * (the entry's seq: the thread may be leaving a CPU right now). */
static __always_inline void send_stack(struct sonde_thread_now *t, __u32 tid, __u64 now)
{
	struct sonde_offcpu_entry *e = bpf_map_lookup_elem(&offcpu_stash, &tid);
	if (!e)
		return;
	__u32 seq = *(volatile __u32 *)&e->seq;
	__u64 left = e->s.hdr.time_ns;
	if ((seq & 1) || !left || left == t->stack_sent_ns)
		return;
	__u32 zero = 0;
	struct sonde_sample *c = bpf_map_lookup_elem(&tstate_stack_copy, &zero);
	if (!c)
		return;
	__u64 bytes = stacks_record_bytes(&e->s);
	if (bytes < SONDE_SAMPLE_HEAD || bytes > sizeof(*c))
		return;
	bpf_probe_read_kernel(c, bytes, &e->s);
	if (*(volatile __u32 *)&e->seq != seq || c->hdr.time_ns != left ||
	    stacks_record_bytes(c) != bytes)
		return; /* rewritten while copied: the next pass sends it */
	c->hdr.kind = SONDE_REC_THREAD_STACK;
	c->off_ns = 0; /* (an interval sent since may have set it) */
	if (bpf_ringbuf_output(&events, c, bytes, stacks_submit_flags(c, now))) {
		count(SONDE_CNT_LOST_THREADS);
		return;
	}
	t->stack_sent_ns = left;
}

struct pass_ctx {
	__u64 now;
	__u64 pass;
	__u64 n;
	__u32 cpu;
};

/* One slot of a pass: the thread there, its record with its outermost
 * calls in flight. */
static long pass_one(__u32 slot, struct pass_ctx *pc)
{
	__u64 *owner = bpf_map_lookup_elem(&tstate_tids, &slot);
	if (!owner || !*owner)
		return 0;
	__u32 tid = (__u32)*owner;
	struct sonde_thread_now *t = bpf_map_lookup_elem(&thread_now, &tid);
	if (!t)
		return 0;
	send_stack(t, tid, pc->now);
	struct sonde_thread_sample r = {};
	r.stack_ns = t->stack_sent_ns;
	r.hdr.kind = SONDE_REC_THREAD;
	r.hdr.cpu = pc->cpu;
	r.hdr.time_ns = pc->now;
	r.hdr.pid = t->pid;
	r.hdr.tid = t->tid;
	__builtin_memcpy(r.hdr.comm, t->comm, SONDE_COMM_LEN);
	r.pass = pc->pass;
	r.state_since_ns = t->state_since_ns;
	r.syscall_since_ns = t->syscall_since_ns;
	r.syscall = t->syscall;
	r.state = t->state;
	r.flags = t->flags;
	struct sonde_thread_state *st = thread_state_of(tid);
	if (st) {
		__u32 depth = st->depth;
		r.span_depth = depth;
		for (__u32 i = 0; i < SONDE_THREAD_SPANS; i++) {
			if (i >= depth || i >= SONDE_SPAN_DEPTH)
				break;
			struct sonde_span_frame *f = &st->frames[i];
			f->flags |= SONDE_FRAME_SAMPLED;
			r.span_ids[i] = span_id_of(f);
			r.span_start_ns[i] = f->start_ns;
			r.span_probes[i] = f->id;
			r.nspans = i + 1;
		}
	}
	if (bpf_ringbuf_output(&events, &r, sizeof(r), BPF_RB_NO_WAKEUP))
		count(SONDE_CNT_LOST_THREADS);
	pc->n++;
	return 0;
}

SEC("perf_event")
int threads_pass(struct bpf_perf_event_data *ctx)
{
	struct pass_ctx pc = {
		.now = bpf_ktime_get_ns(),
		.pass = __sync_fetch_and_add(&tstate_passes, 1) + 1,
		.cpu = bpf_get_smp_processor_id(),
	};
	__u64 used = tstate_next;
	__u32 nslots = tstate_slots;
	bpf_loop(used < nslots ? (__u32)used : nslots, pass_one, &pc, 0);
	struct sonde_thread_pass p = {};
	p.hdr.kind = SONDE_REC_THREAD_PASS;
	p.hdr.cpu = pc.cpu;
	p.hdr.time_ns = pc.now;
	p.pass = pc.pass;
	p.nthreads = pc.n;
	p.run_ns = bpf_ktime_get_ns() - pc.now;
	if (bpf_ringbuf_output(&events, &p, sizeof(p), span_submit_flags()))
		count(SONDE_CNT_LOST_THREADS);
	return 0;
}
