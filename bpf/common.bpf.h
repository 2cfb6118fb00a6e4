/* common.bpf.h — what sonde's BPF programs share: the headers, the maps and
 * globals more than one program file uses, and the helpers on them.
 *
 * The program files (sampler.bpf.c, offcpu.bpf.c, spans.bpf.c, tasks.bpf.c) are compiled
 * apart and linked into one object, sonde.bpf.o (`bpftool gen object`),
 * from which one skeleton, sonde.skel.h, is generated. Each shared map and
 * global is defined once, in common.bpf.c, and declared extern here: libbpf's
 * static linker resolves an extern to the one definition of that name (two
 * non-weak definitions are an error), and an extern map must repeat its
 * definition exactly, so each shared map's shape is a typedef both use. A
 * map or global that one file alone uses is defined in that file. */
#ifndef SONDE_COMMON_BPF_H
#define SONDE_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "sonde_abi.h"

/* --- maps --------------------------------------------------------------- */

/* Every record to user space (sonde_abi.h). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by user space before load */
} sonde_events_map;
extern sonde_events_map events SEC(".maps");

/* tgid (or, for followed children before they are known as processes, tid)
 * -> enum sonde_target_kind: the processes being profiled when filter_mode
 * == TGIDS. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} sonde_targets_map;
extern sonde_targets_map targets SEC(".maps");

/* What was lost or refused, by SONDE_CNT_*. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SONDE_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} sonde_counters_map;
extern sonde_counters_map counters SEC(".maps");

/* The threads' spans in flight: tracing writes them, sampling reads them
 * (struct sonde_thread_state says how a thread finds its slot). User space
 * maps it to read the calls still in flight. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SONDE_THREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct sonde_thread_state);
} sonde_threads_map;
extern sonde_threads_map threads SEC(".maps");

/* tid -> the thread's state, system call and since when (struct
 * sonde_thread_now): kept by the thread-state tracepoints (threads.bpf.c)
 * for target threads; the off-CPU programs read the system call from it,
 * the thread-state pass visits every entry through tstate_tids. User space
 * sizes both. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct sonde_thread_now);
} sonde_thread_now_map;
extern sonde_thread_now_map thread_now SEC(".maps");

/* slot -> tid of a thread in thread_now, 0: free (sonde_abi.h says how
 * slots are taken); as many slots as thread_now has entries. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64); /* 64 bits: the BPF compiler's compare-and-swap */
} sonde_tstate_tids_map;
extern sonde_tstate_tids_map tstate_tids SEC(".maps");
extern __u64 tstate_next; /* slots taken so far (may pass the map's size) */

/* tid -> a target thread's stacks and calls in flight when it last left
 * the CPU (struct sonde_offcpu_entry, sonde_abi.h). Allocated as threads
 * first leave the CPU, at most max_entries (user space sizes it): a thread
 * beyond is counted (OFFCPU_FULL). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct sonde_offcpu_entry);
} sonde_offcpu_stash_map;
extern sonde_offcpu_stash_map offcpu_stash SEC(".maps");

/* Processes whose samples user space has heard of: the first sample of one
 * it has not (new to the session, or new since its exec) wakes the reader
 * at once, so a new process is looked at (its interpreter, session/
 * pyfollow) before its samples pile up; user space deletes a tgid to hear
 * its next sample at once again. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SONDE_TGIDS_HEARD);
	__type(key, __u32);
	__type(value, __u8);
} sonde_tgids_heard_map;
extern sonde_tgids_heard_map tgids_heard SEC(".maps");

/* Python processes (python.bpf.h): tgid -> where its interpreter is and
 * its layout (user space writes it); tid -> the thread's thread state as
 * last found. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SONDE_PY_PROCS);
	__type(key, __u32);
	__type(value, struct sonde_py_proc);
} sonde_py_procs_map;
extern sonde_py_procs_map py_procs SEC(".maps");
typedef struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SONDE_PY_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} sonde_py_threads_map;
extern sonde_py_threads_map py_threads SEC(".maps");
/* A Python walk's state: off the BPF stack, which the native walk's frames
 * fill (bpf_loop's context must be the stack's, so the callback finds it
 * here). Per CPU: the programs that take stacks never nest on one CPU. */
struct py_walk {
	struct sonde_py_proc pp;
	/* The search of the thread list: the thread's fs base, the next
	 * thread state to look at (0: the end), the one found (0: none). */
	__u64 fsbase, scan_ts, scan_found;
	__u64 frame; /* the next frame to read (0: the end) */
	__u32 n;     /* frames stored */
	__u32 end;   /* enum sonde_py_end once it stopped */
	/* The frames as the record takes them (a pointer to the record cannot
	 * be kept in a map: copied after the walk). */
	__u64 words[2 * SONDE_PY_FRAMES];
};
typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_walk);
} sonde_py_walk_map;
extern sonde_py_walk_map py_walk_scratch SEC(".maps");

/* py: probes (pycall.bpf.h). A code object's verdict for one py: probe in
 * one process, with the addresses of the two strings it was decided on
 * (the same code address with other strings is another code object in
 * reused memory), and where its captures are among its locals (-1: it
 * has none of that name). */
struct py_verdict_key {
	__u64 code;
	__u32 tgid, probe;
};

struct py_verdict {
	__u64 file, qual;
	__u64 names; /* co_localsplusnames the locals were found in (captures) */
	__u32 matches;
	__u32 gen;
	__s16 local[SONDE_CAPTURES];
};

typedef struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct py_verdict_key);
	__type(value, struct py_verdict);
} sonde_py_verdicts_map;
extern sonde_py_verdicts_map py_verdicts SEC(".maps");

struct py_text {
	char s[SONDE_PY_MATCH_TEXT];
};

typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_text);
} sonde_py_text_map;
extern sonde_py_text_map py_text_scratch SEC(".maps");

/* The call a py: probe took: its frame and its captures' locals, from the
 * look at its entry to the reading of its values (one program run). */
struct py_call {
	__u64 frame;
	__s16 local[SONDE_CAPTURES];
};

typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_call);
} sonde_py_call_map;
extern sonde_py_call_map py_call_scratch SEC(".maps");

/* n bytes of the target's memory at addr into dst: 1, or 0 when the read
 * failed (a page not in, an address not mapped). */
static __always_inline int user_read(void *dst, __u32 n, __u64 addr)
{
	return bpf_probe_read_user(dst, n, (const void *)addr) == 0;
}

/* Forgets a thread's state (it exits): its slot first, then its entry. */
static __always_inline void tstate_forget(__u32 tid)
{
	struct sonde_thread_now *t = bpf_map_lookup_elem(&thread_now, &tid);
	if (!t)
		return;
	__u32 slot = t->slot;
	__u64 *owner = bpf_map_lookup_elem(&tstate_tids, &slot);
	if (owner)
		__sync_val_compare_and_swap(owner, (__u64)tid, 0);
	bpf_map_delete_elem(&thread_now, &tid);
}

/* tgid -> its executable mappings and their unwind tables (sampler.bpf.c
 * walks stacks with them; user space loads them; exec drops them). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SONDE_UNWIND_PROCS);
	__type(key, __u32);
	__type(value, struct sonde_unwind_proc);
} sonde_unwind_procs_map;
extern sonde_unwind_procs_map unwind_procs SEC(".maps");

/* Every loaded binary's unwind rows, back to back (user space places each
 * table and sizes the array before load: its memory budget). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* written by user space in place */
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sonde_unwind_row);
} sonde_unwind_rows_map;
extern sonde_unwind_rows_map unwind_rows SEC(".maps");

/* Every process's mappings (struct sonde_unwind_proc says which are whose). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SONDE_UNWIND_MAP_SLOTS);
	__type(key, __u32);
	__type(value, struct sonde_unwind_mapping);
} sonde_unwind_mappings_map;
extern sonde_unwind_mappings_map unwind_mappings SEC(".maps");
/* tgid -> the mappings its samples found by file (struct
 * sonde_unwind_found_set): user space clears it when it loads the
 * process's maps, exec and exit drop it. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SONDE_UNWIND_PROCS);
	__type(key, __u32);
	__type(value, struct sonde_unwind_found_set);
} sonde_unwind_found_map;
extern sonde_unwind_found_map unwind_found SEC(".maps");

/* Requests to user space's unwind tables (struct sonde_unwind_request). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10);
} sonde_unwind_requests_map;
extern sonde_unwind_requests_map unwind_requests SEC(".maps");

static __always_inline void unwind_request(__u32 pid, __u32 kind)
{
	struct sonde_unwind_request r = { pid, kind };
	bpf_ringbuf_output(&unwind_requests, &r, sizeof(r), BPF_RB_NO_WAKEUP);
}

/* --- globals (set by user space before load, or read by it) ------------- */

extern const volatile __u32 filter_mode; /* SONDE_FILTER_* */
extern const volatile __u32 unwind_mode; /* enum sonde_unwind_mode: how user stacks are walked */
/* Samples and span records wake the reader only once this much is waiting
 * (common.bpf.c says why). */
extern const volatile __u64 wakeup_bytes;
extern __u64 next_span_id;
extern struct sonde_calibration calib;
/* When a stack with a table miss last asked user space to load tables,
 * and woke it: at most once a millisecond (user space backs off per
 * process when reloads do not help). */
extern __u64 miss_wakeup_ns;

/* --- the walk's lookups by file (defined once, in common.bpf.c) --------- */

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

/* A pc (b->pc) in no mapping user space has read for the process: the
 * mapping the kernel has there, with its file's table when that table is in
 * the rows already (common.bpf.c says how). A global function: verified
 * once on its own, for every program whose walk (stacks.bpf.h) calls it. */
extern int find_by_file(struct by_file *b);

/* The walk's two binary searches (common.bpf.c), global functions of
 * scalars: 1 + the index in unwind_mappings of the mapping among
 * [first, first + n) holding pc (0: none); the rule of the row covering key
 * among rows [first, first + count) (CFI_CFA_NONE below the first). */
extern __u32 unwind_find_mapping(__u32 first, __u32 n, __u64 pc);
extern __u32 unwind_find_rule(__u32 first, __u32 count, __u64 key);

/* --- helpers ------------------------------------------------------------ */

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
	__u8 *kind = bpf_map_lookup_elem(&targets, &tgid);
	return kind && *kind != SONDE_TARGET_AT_EXEC;
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

/* sched_switch's prev_state bits (the kernel's TASK_REPORT letters). */
#define STATE_S 0x01
#define STATE_D 0x02
#define STATE_T 0x04
#define STATE_t 0x08
#define STATE_X 0x10
#define STATE_Z 0x20

/* Why a task left the CPU (enum sonde_off_state), from the state
 * sched_switch reports for it. */
static __always_inline __u8 off_state_of(long prev_state, struct task_struct *task)
{
	long st = prev_state & 0xff; /* above: TASK_REPORT_MAX, "preempted" */
	if (st & (STATE_T | STATE_t))
		return SONDE_OFF_STOPPED;
	if (st & STATE_D)
		return BPF_CORE_READ_BITFIELD_PROBED(task, in_iowait) ? SONDE_OFF_DISK
								       : SONDE_OFF_UNINTERRUPTIBLE;
	if (st)
		return SONDE_OFF_SLEEPING; /* S, I (idle), P (parked) */
	return SONDE_OFF_RUNNABLE;
}

/* A span id for a call in flight that needs one (a sample or a record
 * refers to it): most calls never do, so ids are given lazily. The sampler
 * can interrupt a probe program on its CPU (a uprobe program does not hold
 * off perf-event programs), and both may give the call an id: the first
 * one stored is the call's, so a sample and the call's record name the
 * same id. */
static __always_inline __u64 span_id_of(struct sonde_span_frame *f)
{
	__u64 id = f->span_id;
	if (id)
		return id;
	id = __sync_fetch_and_add(&next_span_id, 1) + 1;
	__u64 was = __sync_val_compare_and_swap(&f->span_id, 0, id);
	return was ? was : id;
}

/* Keeps the compiler from moving memory accesses across it: what a probe
 * program writes to the thread's state is seen, in program order, by a
 * sampler that interrupts it on the same CPU. */
#define state_barrier() asm volatile("" ::: "memory")

/* The state of thread tid, or NULL when it has none: slot A's if it is
 * tid's, else slot B's. The tracing programs' way, run twice a traced call. */
static __always_inline struct sonde_thread_state *thread_state_of(__u32 tid)
{
	if (!tid)
		return NULL;
	__u32 k = SONDE_THREAD_SLOT_A(tid);
	struct sonde_thread_state *st = bpf_map_lookup_elem(&threads, &k);
	if (st && st->tid == tid)
		return st;
	k = SONDE_THREAD_SLOT_B(tid);
	st = bpf_map_lookup_elem(&threads, &k);
	return st && st->tid == tid ? st : NULL;
}

/* The same, with the slot chosen first and the pointer from one lookup:
 * for the sampler, whose rest is long. Each way to the pointer has the
 * verifier follow the rest once more (thread_state_of's two doubled the
 * sampler's walk to 163,000 instructions; 96,000 so, 84,000 with a hash
 * map); the lookup more costs a traced call ~7 ns where thread_state_of is
 * used. */
static __always_inline struct sonde_thread_state *thread_state_of_walker(__u32 tid)
{
	if (!tid)
		return NULL;
	__u32 k = SONDE_THREAD_SLOT_A(tid);
	struct sonde_thread_state *a = bpf_map_lookup_elem(&threads, &k);
	if (!a || a->tid != tid)
		k = SONDE_THREAD_SLOT_B(tid);
	struct sonde_thread_state *st = bpf_map_lookup_elem(&threads, &k);
	return st && st->tid == tid ? st : NULL;
}

/* Gives thread tid's slot back (the thread exited), emptied before it is
 * free, so that the next thread to take it finds no calls in flight. */
static __always_inline void thread_state_release(__u32 tid)
{
	struct sonde_thread_state *st = thread_state_of(tid);
	if (!st)
		return;
	st->depth = 0;
	st->own_ns = 0;
	state_barrier();
	st->tid = 0;
}

#endif
