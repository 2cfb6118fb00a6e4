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

static __always_inline void fill_hdr(struct sonde_hdr *h, __u32 kind, __u64 pid_tgid)
{
	h->kind = kind;
	h->cpu = bpf_get_smp_processor_id();
	h->time_ns = bpf_ktime_get_ns();
	h->pid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
}

static __always_inline int emit_sample(void *ctx, __u32 event)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;

	/* System-wide mode keeps the idle task (pid 0), as perf does: idle time
	 * is part of the picture and heatmaps need it to tell idle apart. */
	if (!is_target(tgid))
		return 0;

	struct sonde_sample *s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
	if (!s) {
		count(SONDE_CNT_LOST_SAMPLES);
		return 0;
	}
	fill_hdr(&s->hdr, SONDE_REC_SAMPLE, pid_tgid);
	s->event = event;
	s->_pad = 0;
	s->kstack_bytes = bpf_get_stack(ctx, s->kstack, sizeof(s->kstack), 0);
	s->ustack_bytes = bpf_get_stack(ctx, s->ustack, sizeof(s->ustack), BPF_F_USER_STACK);
	bpf_ringbuf_submit(s, 0);
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
	fill_hdr(&e->hdr, kind, pid_tgid);
	e->child_pid = child_pid;
	e->child_tgid = child_tgid;
	bpf_ringbuf_submit(e, 0);
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
	if (filter_mode != SONDE_FILTER_ALL && tid != tgid)
		bpf_map_delete_elem(&targets, &tid); /* added by on_fork if it was a thread */
	emit_task(SONDE_REC_EXIT, pid_tgid, 0, 0);
	return 0;
}
