// SPDX-License-Identifier: GPL-2.0
/* tasks.bpf.c — process lifecycle: `on_fork`/`on_exec`/`on_exit` follow the
 * target processes, so that children are profiled too and user space
 * re-reads maps after exec, and drop the state of threads that exit.
 *
 * Raw tracepoints: the same sched tracepoints, attached to the tracepoint
 * itself rather than through a perf event. Every sonde attaches these three,
 * and a perf event's tracepoint is removed under the kernel's global
 * event_mutex, waiting there for grace periods (~0.1 s each, and every
 * other tracepoint opened or closed on the machine meanwhile waits too);
 * a raw tracepoint is removed without waiting. */
#include "common.bpf.h"

const volatile __u32 follow_children = 1;

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

/* args: struct task_struct *parent, *child */
SEC("raw_tp/sched_process_fork")
int on_fork(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	if (filter_mode == SONDE_FILTER_ALL || !is_target(tgid))
		return 0;
	__u32 child = BPF_CORE_READ((struct task_struct *)ctx->args[1], pid);
	/* The tracepoint does not say whether the child is a thread (same tgid,
	 * already covered) or a process. Adding its tid covers the process case
	 * and is harmless for a thread: no process has that tgid while the thread
	 * lives, and on_exit removes the entry. */
	if (follow_children) {
		__u8 one = SONDE_TARGET;
		if (bpf_map_update_elem(&targets, &child, &one, BPF_NOEXIST) < 0 &&
		    bpf_map_lookup_elem(&targets, &child) == NULL)
			count(SONDE_CNT_TARGETS_FULL);
	}
	emit_task(SONDE_REC_FORK, pid_tgid, child, 0);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int on_exec(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	__u8 *kind = bpf_map_lookup_elem(&targets, &tgid);
	int at_exec = kind && *kind == SONDE_TARGET_AT_EXEC;
	if (at_exec)
		*kind = SONDE_TARGET; /* the command sonde started: from now on */
	if (filter_mode != SONDE_FILTER_ALL && !is_target(tgid))
		return 0;
	/* The old program's mappings are gone: its tables must not unwind the
	 * new one (a miss makes user space load the new program's). */
	bpf_map_delete_elem(&unwind_found, &tgid);
	if (bpf_map_delete_elem(&unwind_procs, &tgid) == 0 || at_exec)
		unwind_request(tgid, SONDE_UNWIND_REQ_EXEC);
	/* Nor its interpreter's layout the new program (user space looks at
	 * it again: session/pyfollow). */
	bpf_map_delete_elem(&py_procs, &tgid);
	bpf_map_delete_elem(&tgids_heard, &tgid); /* its first sample wakes user space */
	emit_task(SONDE_REC_EXEC, pid_tgid, 0, 0);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int on_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	if (filter_mode != SONDE_FILTER_ALL && !is_target(tgid))
		return 0;
	/* The last thread of the process: drop it, or exited children fill
	 * the map and a reused PID would be profiled; its tables too. */
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	int last = BPF_CORE_READ(task, signal, live.counter) == 0;
	if (filter_mode != SONDE_FILTER_ALL) {
		if (tid != tgid)
			bpf_map_delete_elem(&targets, &tid); /* added by on_fork if it was a thread */
		if (last)
			bpf_map_delete_elem(&targets, &tgid);
	}
	if (last) {
		bpf_map_delete_elem(&unwind_procs, &tgid);
		bpf_map_delete_elem(&unwind_found, &tgid);
		bpf_map_delete_elem(&tgids_heard, &tgid);
	}
	thread_state_release(tid);
	emit_task(SONDE_REC_EXIT, pid_tgid, 0, 0);
	return 0;
}
