/* sonde_abi.h — the records the BPF side sends to user space and the
 * configuration user space writes for it. Included by both sides: only
 * fixed-size __uN types, no pointers, explicit padding.
 *
 * Every ring-buffer record starts with a `struct sonde_hdr` whose `kind`
 * selects the concrete layout. */
#ifndef SONDE_ABI_H
#define SONDE_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SONDE_MAX_STACK 127 /* kernel.perf_event_max_stack default */
#define SONDE_COMM_LEN 16

enum sonde_record_kind {
	SONDE_REC_SAMPLE = 1, /* a stack sample */
	SONDE_REC_EXEC = 2,   /* a target process called exec (maps changed) */
	SONDE_REC_EXIT = 3,   /* a target thread exited */
	SONDE_REC_FORK = 4,   /* a target process created a process or thread */
};

/* Indices into the per-CPU `counters` array map. */
enum sonde_counter {
	SONDE_CNT_LOST_SAMPLES = 0, /* ring buffer full: sample dropped */
	SONDE_CNT_LOST_TASK = 1,    /* ring buffer full: lifecycle record dropped */
	SONDE_CNT_TARGETS_FULL = 2, /* a forked child could not be followed */
	SONDE_CNT_MAX = 8,
};

/* Target filter modes (rodata `filter_mode`). */
enum sonde_filter {
	SONDE_FILTER_ALL = 0,   /* system-wide */
	SONDE_FILTER_TGIDS = 1, /* processes in the `targets` map, and children */
};

struct sonde_hdr {
	__u32 kind;
	__u32 cpu;
	__u64 time_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 pid;     /* tgid */
	__u32 tid;
	char comm[SONDE_COMM_LEN];
};

struct sonde_sample {
	struct sonde_hdr hdr;
	__u32 event;   /* index of the sampled event in the session's event list */
	__s32 ustack_bytes; /* bytes filled in ustack, or negative errno */
	__s32 kstack_bytes; /* bytes filled in kstack, or negative errno */
	__u32 _pad;
	__u64 kstack[SONDE_MAX_STACK]; /* leaf first */
	__u64 ustack[SONDE_MAX_STACK]; /* leaf first */
};

struct sonde_task_event {
	struct sonde_hdr hdr;
	__u32 child_pid; /* FORK: the new task's tid */
	__u32 child_tgid;
};

#endif
