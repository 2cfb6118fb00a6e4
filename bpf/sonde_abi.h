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
#define SONDE_MAX_PROBES 256    /* span probe ids are 0..SONDE_MAX_PROBES-1 */
#define SONDE_SPAN_DEPTH 32     /* spans in flight per thread that are tracked */
#define SONDE_SAMPLE_SPANS 16   /* outermost spans a sample carries */
/* Point probes (source lines) attached at once: each has a bit in the
 * calls in flight (sonde_span_frame.points). */
#define SONDE_MAX_POINTS 64
/* Log-linear histogram of call durations: values below 16 ns have a bucket
 * each; above, every power of two [2^k, 2^(k+1)) is cut into 16 equal
 * buckets, so a bucket is at most 1/16 of its lower bound wide (a percentile
 * read at a bucket's middle is within 3.2%). Bucket of v >= 16:
 * (k - 3) * 16 + ((v >> (k - 4)) & 15), k = floor(log2 v). */
#define SONDE_HIST_SUB_BITS 4
#define SONDE_HIST_SUB (1u << SONDE_HIST_SUB_BITS)
#define SONDE_HIST_BUCKETS ((64 - SONDE_HIST_SUB_BITS + 1) * SONDE_HIST_SUB) /* 976 */

/* The bucket of a duration v, for the BPF programs and user space alike.
 * One branch on v and none on its bits: the verifier follows two paths
 * here, not one per bit tested. floor(log2 v) is the count of the bits
 * below v's highest one (__builtin_clzll crashes Debian 12's clang for
 * BPF). */
static inline __u32 sonde_hist_bucket(__u64 v)
{
	if (v < SONDE_HIST_SUB)
		return (__u32)v;
	__u64 x = v >> 1;
	x |= x >> 1;
	x |= x >> 2;
	x |= x >> 4;
	x |= x >> 8;
	x |= x >> 16;
	x |= x >> 32;
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	__u32 k = (__u32)((x * 0x0101010101010101ull) >> 56); /* >= SUB_BITS */
	return (k - SONDE_HIST_SUB_BITS + 1) * SONDE_HIST_SUB +
	       (__u32)((v >> (k - SONDE_HIST_SUB_BITS)) & (SONDE_HIST_SUB - 1));
}

#define SONDE_CALIB_TIMES 1024 /* calibration sample times kept (power of two) */
/* The in-kernel unwinder's tables (see src/engine/unwind.h and the row
 * format in src/symbols/cfi.h): per process, its executable mappings sorted
 * by address (at most SONDE_UNWIND_MAPPINGS: the rest fall back to frame
 * pointers, counted), in one array of mappings; each names its binary's
 * rows in one array of rows. */
#define SONDE_UNWIND_MAPPINGS 1024
#define SONDE_UNWIND_MAP_STEPS 11 /* halvings that search SONDE_UNWIND_MAPPINGS */
#define SONDE_UNWIND_MAP_SLOTS 65536 /* mappings of all processes at once */
#define SONDE_UNWIND_ROW_STEPS 24 /* halvings of a row search: a table has < 2^24 rows */
#define SONDE_UNWIND_PROCS 8192   /* processes with tables at once */
#define SONDE_UNWIND_FILES 4096   /* loaded tables findable by their file */
#define SONDE_UNWIND_FILE_SEGS 4  /* PT_LOAD segments an entry of unwind_files maps */
#define SONDE_UNWIND_FOUND 8      /* mappings a process's samples found by file, kept */

enum sonde_record_kind {
	SONDE_REC_SAMPLE = 1, /* a stack sample */
	SONDE_REC_EXEC = 2,   /* a target process called exec (maps changed) */
	SONDE_REC_EXIT = 3,   /* a target thread exited */
	SONDE_REC_FORK = 4,   /* a target process created a process or thread */
	SONDE_REC_SPAN = 5,   /* a traced call ended */
	SONDE_REC_VALUES = 6, /* a probe hit's captured values (struct sonde_values) */
	SONDE_REC_THREAD = 7, /* a thread's state at a thread-state pass (struct sonde_thread_sample) */
	SONDE_REC_THREAD_PASS = 8, /* a thread-state pass ended (struct sonde_thread_pass) */
	SONDE_REC_THREAD_STACK = 9, /* a thread's stacks when it last left the CPU, sent
				     * by a pass (struct sonde_sample; hdr.time_ns: when
				     * it left) */
};

/* The kernel's drop counters, one line each; adding one is a line here and
 * its count() in the BPF programs (and ENGINE_COUNTERS in engine.h one more).
 * X(NAME, key, group, drop, phrase):
 *   NAME    SONDE_CNT_NAME, its index in the per-CPU `counters` array map
 *           (and in engine_stats.count)
 *   key     its key in a recording's meta table
 *   group   the sentence of the summary that shows it (engine/drops.h):
 *           LOST (ring buffer full), CHILDREN, UNTIMED (calls not timed),
 *           VALUES (captured values not read)
 *   drop    1: among the live status's drops
 *   phrase  what follows its number in that sentence */
#define SONDE_COUNTERS(X) \
	/* ring buffer full: a sample, a span record, a fork/exec/exit record dropped */ \
	X(LOST_SAMPLES, "lost_samples", LOST, 1, "samples") \
	X(LOST_SPANS, "lost_spans", LOST, 1, "calls") \
	X(LOST_TASK, "lost_task_events", LOST, 1, "process events") \
	/* calls nested deeper than SONDE_SPAN_DEPTH (counted, not timed) */ \
	X(SPAN_OVERFLOW, "span_depth_overflow", UNTIMED, 1, "calls nested too deep") \
	/* spans whose return was never seen (longjmp, exceptions) */ \
	X(SPAN_ORPHAN, "span_orphans", UNTIMED, 0, "without return") \
	/* both thread-state slots of a tid taken: a call was not traced */ \
	X(THREADS_FULL, "threads_full", UNTIMED, 1, "with no thread slot") \
	/* a py: probe's call whose frame or code object could not be read \
	 * (3.11: the GIL holder not the thread, or its state unreadable): \
	 * not counted as the function's */ \
	X(PY_NO_FRAME, "py_calls_without_frame", UNTIMED, 1, \
	  "Python calls whose frame could not be read") \
	/* target map full: a forked child could not be followed */ \
	X(TARGETS_FULL, "children_not_followed", CHILDREN, 1, \
	  "child processes not followed (target map full)") \
	/* user stacks walked with unwind tables (--unwind cfi|auto), by how they \
	 * ended (enum sonde_unwind_end): complete, or early and why */ \
	X(END_COMPLETE, "stacks_complete", UNWIND, 0, "complete") \
	X(END_NO_TABLE, "stacks_end_no_table", UNWIND, 0, "no table") \
	X(END_TABLE_MISS, "stacks_end_table_miss", UNWIND, 0, "table miss") \
	X(END_READ_FAULT, "stacks_end_read_fault", UNWIND, 0, "read fault") \
	X(END_DEPTH, "stacks_end_depth", UNWIND, 0, "depth limit") \
	X(END_UNSUPPORTED, "stacks_end_unsupported", UNWIND, 0, \
	  "unsupported rule or bad frame") \
	/* frames whose pc was in no mapping the tables know (the binary was \
	 * mapped after its process's tables were loaded): user space loads them */ \
	X(TABLE_MISS, "unwind_table_misses", MISSES, 0, "table misses") \
	/* of those, frames whose table the sampler found by the mapped file \
	 * (struct sonde_unwind_file), with no wait for user space */ \
	X(FILE_FOUND, "unwind_found_by_file", MISSES, 0, "found by file in the kernel") \
	/* a probe hit's values not sent: ring buffer full */ \
	X(LOST_VALUES, "lost_values", LOST, 1, "captured values") \
	/* reads of user memory by fetch programs that failed (the value is \
	 * marked, or the hit's predicate failed: nothing sent) */ \
	X(FETCH_FAULT, "fetch_faults", VALUES, 0, "failed reads of captured values") \
	/* thread states (--threads, sonde threads): a pass's record of a \
	 * thread lost in a full ring buffer; threads whose state could not be \
	 * kept (the thread-state map full) */ \
	X(LOST_THREADS, "lost_thread_states", LOST, 1, "thread states") \
	X(TSTATE_FULL, "thread_states_full", CHILDREN, 1, \
	  "threads without a state (thread-state map full)") \
	/* off-CPU intervals (record --off-cpu): lost in a full ring buffer, \
	 * not kept because the switched-out threads' map was full, and those \
	 * shorter than --min-block (left out by design, counted) */ \
	X(LOST_OFFCPU, "lost_offcpu", LOST, 1, "off-CPU intervals") \
	X(OFFCPU_FULL, "offcpu_threads_full", OFFCPU, 1, \
	  "not kept (switched-out thread map full)") \
	X(OFFCPU_SHORT, "offcpu_below_min_block", OFFCPU, 0, \
	  "shorter than --min-block") \
	/* samples of Python processes (struct sonde_py_proc): Python stacks \
	 * walked whole; cut (a frame that could not be read, or \
	 * SONDE_PY_FRAMES frames); of threads the interpreter has no thread \
	 * state for (threads Python did not start or has not met yet) */ \
	X(PY_COMPLETE, "python_stacks_complete", PYTHON, 0, "complete") \
	X(PY_CUT, "python_stacks_cut", PYTHON, 0, "cut (unreadable frame or depth limit)") \
	X(PY_NO_THREAD, "python_no_thread_state", PYTHON, 0, \
	  "of threads without a Python thread state")

/* Indices into the per-CPU `counters` array map. */
enum sonde_counter {
#define SONDE_CNT_ENUM(name, ...) SONDE_CNT_##name,
	SONDE_COUNTERS(SONDE_CNT_ENUM)
#undef SONDE_CNT_ENUM
	SONDE_CNT_NUM, /* how many there are */
	SONDE_CNT_MAX = 32, /* the map's size */
};
_Static_assert(SONDE_CNT_NUM <= SONDE_CNT_MAX, "raise SONDE_CNT_MAX");

/* Target filter modes (rodata `filter_mode`). */
enum sonde_filter {
	SONDE_FILTER_ALL = 0,   /* system-wide */
	SONDE_FILTER_TGIDS = 1, /* processes in the `targets` map, and children */
};

/* A `targets` entry's value: a target, or the command sonde started, a
 * target from its exec on (before it, the child runs sonde's own code,
 * whose samples would be sonde's and cost the reader the reading of
 * sonde's symbols while the command's first records wait behind them). */
enum sonde_target_kind {
	SONDE_TARGET = 1,
	SONDE_TARGET_AT_EXEC = 2,
};

/* Processes whose first sample woke the reader (tgids_heard, at once). */
#define SONDE_TGIDS_HEARD 8192

/* How the sampler walks user stacks (rodata `unwind_mode`). */
enum sonde_unwind_mode {
	SONDE_UNWIND_FP = 0,   /* the kernel's frame-pointer walk (bpf_get_stack) */
	SONDE_UNWIND_CFI = 1,  /* unwind tables only: a binary without one ends the stack */
	SONDE_UNWIND_AUTO = 2, /* unwind tables, frame pointers where a binary has none */
};

/* Why a user stack walked with tables ended (a sample's unwind_end, and
 * the END_* counters, in this order). */
enum sonde_unwind_end {
	SONDE_END_COMPLETE = 0,    /* the outermost frame: an "end" row (_start, a thread's
				    * start), or rbp 0 in frame-pointer code */
	SONDE_END_NO_TABLE = 1,    /* a binary without table, where frame pointers did not go on */
	SONDE_END_TABLE_MISS = 2,  /* a pc in no mapping of the tables, nor frame pointers */
	SONDE_END_READ_FAULT = 3,  /* stack memory could not be read */
	SONDE_END_DEPTH = 4,       /* SONDE_MAX_STACK frames */
	SONDE_END_UNSUPPORTED = 5, /* a rule the kernel cannot follow, a lost rbp, or a
				    * frame that cannot be a caller */
	SONDE_END_FP = 6,          /* --unwind fp: the kernel does not say */
};
_Static_assert(SONDE_CNT_END_UNSUPPORTED - SONDE_CNT_END_COMPLETE == SONDE_END_UNSUPPORTED,
	       "the END_* counters follow enum sonde_unwind_end");

/* Why a thread left the CPU (an off-CPU record's off_state), from the
 * state sched_switch reports for it. */
enum sonde_off_state {
	SONDE_OFF_NONE = 0,            /* an on-CPU sample */
	SONDE_OFF_RUNNABLE = 1,        /* preempted, or yielded: it waited for a CPU */
	SONDE_OFF_SLEEPING = 2,        /* interruptible sleep (S, also I and P) */
	SONDE_OFF_UNINTERRUPTIBLE = 3, /* uninterruptible sleep (D), not in I/O wait */
	SONDE_OFF_DISK = 4,            /* uninterruptible in I/O wait (io_schedule) */
	SONDE_OFF_STOPPED = 5,         /* stopped or traced (T, t) */
	SONDE_OFF_WAKER = 6,           /* not a state: the record is the stacks of the
					* thread that woke a waiting one (--wakers),
					* weighing the woken thread's wait */
};

/* A thread's state as the thread-state tracepoints keep it (hash map
 * `thread_now`, key = tid; bpf/threads.bpf.c): written at sched_switch,
 * sched_wakeup and raw_syscalls sys_enter/sys_exit, read by each pass of
 * the thread-state sampler. `state` is an enum sonde_off_state, with
 * SONDE_OFF_NONE meaning running on a CPU. User space seeds the threads
 * that exist when it starts from /proc (SONDE_TSTATE_SEEDED: their state
 * and system call began before sonde did, the times since are lower
 * bounds).
 *
 * A pass visits the threads through the array `tstate_tids`: slot -> tid
 * (0: free), slots 0 .. tstate_next - 1 used so far (a global). A new
 * thread takes the next slot (__sync_fetch_and_add on tstate_next), or,
 * once all were taken, a free one (compare-and-swap of 0 to its tid); an
 * exiting one frees its slot. So a pass costs per thread, not per slot of
 * the hash (bpf_for_each_map_elem would walk every bucket). */
/* state_since_ns is later than the state began (when sonde began, or when
 * it was found to have left a CPU unseen): the time in it is a lower bound */
#define SONDE_TSTATE_SEEDED 1u
#define SONDE_TSTATE_SYSCALL_SEEDED 2u /* syscall_since_ns is when sonde began */
/* A seeded thread whose system call /proc did not say (until its next one). */
#define SONDE_SYSCALL_UNKNOWN (-2)
struct sonde_thread_now {
	__u32 pid, tid;
	char comm[SONDE_COMM_LEN];
	__u64 state_since_ns;   /* when it entered `state` */
	__u64 syscall_since_ns; /* when it entered `syscall` */
	__s32 syscall;          /* the system call it is in, -1 none,
				 * SONDE_SYSCALL_UNKNOWN: not known (seeded) */
	__u8 state;             /* enum sonde_off_state (NONE: running) */
	__u8 flags;             /* SONDE_TSTATE_* */
	__u16 _pad;
	__u32 slot;             /* its place in `tstate_tids` (the pass's list) */
	__u32 cpu;              /* the CPU it last ran on */
	__u64 task;             /* its task_struct (0: not known yet), to read its
				 * state when it left a CPU unseen (threads.bpf.c) */
	__u64 stack_sent_ns;    /* when it left the CPU with the last stacks a pass
				 * sent of it (SONDE_REC_THREAD_STACK), 0: none */
};

/* One executable mapping of a process in the unwinder's tables. */
struct sonde_unwind_mapping {
	__u64 start, end; /* [start, end) */
	__u64 adj;        /* a pc's key in the rows: pc - adj (load bias + table base) */
	__u32 first;      /* its binary's rows: unwind_rows[first .. first + count) */
	__u32 count;      /* 0: no table (frame pointers); SONDE_UNWIND_PERIODIC: see there */
};
/* In a mapping's count: the mapping holds copies of one small piece of
 * code at a fixed stride (Python's -X perf trampolines, one a function):
 * adj is the stride, and a pc's key in the rows is (pc - start) % adj. */
#define SONDE_UNWIND_PERIODIC (1u << 31)
#define SONDE_UNWIND_ROWS(count) ((count) & ~SONDE_UNWIND_PERIODIC)

/* A process's mappings (hash map `unwind_procs`, key = tgid):
 * unwind_mappings[first .. first + n), sorted by start, disjoint. */
struct sonde_unwind_proc {
	__u32 first;
	__u32 n;
};

/* A loaded table found by the file a mapping maps (hash map
 * `unwind_files`): when a pc is in no mapping user space has read for its
 * process (a library mapped since: exec, dlopen), the sampler finds the
 * mapping itself (bpf_find_vma) and, when its file's table is in the rows
 * already, walks on at once instead of waiting for user space to read the
 * maps. The key is what the kernel knows of the mapped inode, as
 * /proc/PID/maps shows it: the superblock's device (MAJOR << 20 | MINOR)
 * and the inode number; its size and modification time must match too
 * (an inode number is reused once its file is gone). */
struct sonde_unwind_file_key {
	__u64 dev;
	__u64 ino;
};
struct sonde_unwind_file {
	__u64 size;   /* the file's size and modification time when its table was built */
	__s64 mtime_sec;
	__u64 base;   /* the table's base (ELF vaddr of its first row) */
	__u32 first;  /* its rows: unwind_rows[first .. first + count) */
	__u32 count;
	__u32 nsegs;  /* segs used */
	__u32 mtime_nsec;
	struct {
		__u64 offset, vaddr, filesz;
	} segs[SONDE_UNWIND_FILE_SEGS]; /* PT_LOAD segments: a file offset -> vaddr */
};

/* A mapping the sampler found itself (bpf_find_vma), kept per process in
 * the hash map `unwind_found` (key = tgid) until user space reads the
 * process's maps (then it is in its mappings) or the process execs or
 * exits: one sample may look up one mapping only (the kernel defers the
 * release of the lock of the address space it took to after the
 * interrupt), so the mappings found add up over the samples. Each use
 * looks its file up in unwind_files again, so a table unloaded since is
 * never used. */
struct sonde_unwind_found {
	__u64 start, end, offset; /* the mapping: [start, end), its file offset */
	struct sonde_unwind_file_key key;
	__u64 size;
	__s64 mtime_sec;
	__u32 mtime_nsec;
	__u32 pad;
};
struct sonde_unwind_found_set {
	__u32 n;    /* entries used */
	__u32 next; /* the one replaced next when all are used */
	struct sonde_unwind_found v[SONDE_UNWIND_FOUND];
};

/* A request to user space's unwind tables (ring buffer `unwind_requests`,
 * read before the main one, so a load never waits behind a batch of
 * samples being symbolized). */
enum sonde_unwind_request_kind {
	SONDE_UNWIND_REQ_MISS = 1, /* a sample met a pc outside the process's tables */
	SONDE_UNWIND_REQ_EXEC = 2, /* the process called exec: its tables were dropped */
};
struct sonde_unwind_request {
	__u32 pid;
	__u32 kind;
};

/* A row of unwind_rows (struct cfi_row in src/symbols/cfi.h, which
 * builds them). */
struct sonde_unwind_row {
	__u32 pc;
	__u32 rule;
};

/* ==== The table format: the contract with the in-kernel unwinder =========
 *
 * A table is an array of 8-byte rows, sorted by strictly increasing pc:
 *
 *   offset 0  u32 pc    ELF virtual address - table base. The row holds for
 *                       [pc, next row's pc); the last row is a CFI_CFA_NONE
 *                       row at the end of the last FDE.
 *   offset 4  u32 rule  packed, native byte order:
 *     bits  0..3   CFA kind (enum cfi_cfa_kind)
 *     bits  4..5   rbp kind (enum cfi_rbp_kind)
 *     bits  6..11  rbp offset / 8, signed (-32..31): CFI_RBP_AT_CFA only
 *     bits 12..31  CFA parameter, 20 bits:
 *                  RSP, RBP: offset / 8, signed (+-4 MiB)
 *                  PLT, DEREF_*, REG: bits 12..23 = A / 8 (signed, +-16 KiB)
 *                                     bits 24..31 = B (unsigned)
 *
 * Lookup of a pc (an address in the process): vaddr = pc - load bias of its
 * mapping (runtime address - ELF vaddr); key = vaddr - base; the row is
 * the last one whose pc <= key (none: CFI_CFA_NONE). A return address is
 * looked up at pc - 1 (a call may be a function's last instruction); the
 * interrupted frame and the frame a signal interrupted at their pc.
 * log2(rows) + 1 halvings find it: at most 33 for any table.
 *
 * Canonical rows: every field a kind does not use is 0 (CFI_CFA_NONE, END,
 * SIGNAL and UNSUPPORTED rows carry no rbp rule either), so equal rules are
 * equal words and consecutive equal rows are merged. */
enum cfi_cfa_kind {
	CFI_CFA_NONE = 0,      /* no CFI covers the address: unknown (frame pointers may) */
	CFI_CFA_RSP = 1,       /* CFA = rsp + off (off >= 8) */
	CFI_CFA_RBP = 2,       /* CFA = rbp + off */
	CFI_CFA_PLT = 3,       /* CFA = rsp + A + ((rip & 15) >= B ? 8 : 0): PLT stubs */
	CFI_CFA_DEREF_RSP = 4, /* CFA = *(rsp + A) + 8 * B: a stack pointer saved in the frame */
	CFI_CFA_DEREF_RBP = 5, /* CFA = *(rbp + A) + 8 * B */
	CFI_CFA_REG = 6,       /* CFA = register B (DWARF number) + A: interrupted frame only */
	CFI_CFA_SIGNAL = 7,    /* signal trampoline: the caller's rip, rsp, rbp are in the
			        * ucontext at rsp, at CFI_SIGNAL_RIP/RSP/RBP */
	CFI_CFA_END = 8,       /* the outermost frame (return address undefined: _start,
				* a thread's start): the stack is complete */
	CFI_CFA_UNSUPPORTED = 15, /* a rule the kernel cannot follow: stop here */
};

enum cfi_rbp_kind {
	CFI_RBP_SAME = 0,        /* the caller's rbp is this frame's (not saved yet, or not used) */
	CFI_RBP_AT_CFA = 1,      /* the caller's rbp is saved at CFA + off */
	CFI_RBP_UNDEFINED = 2,   /* the caller's rbp is lost */
	CFI_RBP_UNSUPPORTED = 3, /* saved in a way the kernel cannot follow: lost too */
};

/* Offsets of rip, rsp and rbp from rsp in a signal frame: the kernel's
 * struct rt_sigframe as __restore_rt sees it (ucontext_t at rsp,
 * uc_mcontext at 40, gregs REG_RBP 10, REG_RSP 15, REG_RIP 16). */
#define CFI_SIGNAL_RBP 120
#define CFI_SIGNAL_RSP 160
#define CFI_SIGNAL_RIP 168

static __inline__ __s32 cfi_sign_extend(__u32 v, unsigned bits)
{
	__u32 m = 1u << (bits - 1);
	return (__s32)((v ^ m) - m);
}
static __inline__ unsigned cfi_rule_cfa(__u32 rule) { return rule & 0xf; }
static __inline__ unsigned cfi_rule_rbp(__u32 rule) { return (rule >> 4) & 0x3; }
static __inline__ __s32 cfi_rule_rbp_off(__u32 rule)
{
	return cfi_sign_extend((rule >> 6) & 0x3f, 6) * 8;
}
static __inline__ __s32 cfi_rule_cfa_off(__u32 rule) { return cfi_sign_extend(rule >> 12, 20) * 8; }
static __inline__ __s32 cfi_rule_a(__u32 rule)
{
	return cfi_sign_extend((rule >> 12) & 0xfff, 12) * 8;
}
static __inline__ unsigned cfi_rule_b(__u32 rule) { return rule >> 24; }
/* ==== end of the contract =============================================== */

struct sonde_hdr {
	__u32 kind;
	__u32 cpu;
	__u64 time_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 pid;     /* tgid */
	__u32 tid;
	char comm[SONDE_COMM_LEN];
};

/* One traced call in flight on a thread. */
struct sonde_span_frame {
	__u64 span_id;  /* unique per session; 0 until a sample or a record
			 * needs it (most calls never get one) */
	__u64 start_ns; /* when the entry handler finished its own work */
	__u64 own_at_entry; /* the thread's own_ns when the call began */
	__u32 probe;    /* its slot (probe_cfg's key) */
	__u32 gen;      /* the probe's attach generation when the call began */
	__u32 flags;    /* SONDE_FRAME_* */
	__u32 id;       /* the session's id of the probe (sonde_probe_config.id) */
	/* Point probes hit during this call (bit = the point's bit, see
	 * sonde_probe_config.point_bit), its traced callees' hits included:
	 * a call passes its bits to its caller when it returns. */
	__u64 points;
	__u64 entry_sp; /* the stack pointer at entry (the return address's
			 * slot): a frame whose slot is no longer on the stack
			 * was left without a return (longjmp, exceptions,
			 * returns past the kernel's uretprobe nesting limit) */
};

#define SONDE_FRAME_SAMPLED 1u /* a sample was taken during this call */

/* Per-thread state shared by tracing (writes) and sampling (reads), in
 * the array `threads` of SONDE_THREAD_SLOTS slots: a thread's state is in
 * one of the two slots its tid picks (SONDE_THREAD_SLOT_A/B), the one whose
 * tid field is the thread's. A slot is taken by a compare-and-swap of tid
 * from 0, and given back with depth and own_ns zeroed first, then tid. An
 * array, not a hash map: finding a state is an index and a compare, where a
 * hash lookup (a helper call, hashing, a bucket walk) cost about 15 ns of
 * what tracing adds to every call, twice a call (bench/README.md). */
#define SONDE_THREAD_SLOTS 65536 /* power of two */
#define SONDE_THREAD_SLOT_A(tid) ((__u32)(tid) & (SONDE_THREAD_SLOTS - 1))
#define SONDE_THREAD_SLOT_B(tid) \
	((((__u32)(tid) * 0x9e3779b1u) >> 16) & (SONDE_THREAD_SLOTS - 1))
struct sonde_thread_state {
	__u64 tid;   /* the thread whose state this is; 0: a free slot (64 bits:
		      * the BPF compiler's compare-and-swap) */
	__u32 depth; /* calls in flight; levels >= SONDE_SPAN_DEPTH are counted, not stored */
	__u32 _pad;
	/* sonde's own time on this thread so far: every handler's and sample's
	 * measured run time plus the calibrated part BPF cannot see (trap and
	 * interrupt entry/exit). A call's own cost is the growth of this
	 * between its entry and its return. */
	__u64 own_ns;
	struct sonde_span_frame frames[SONDE_SPAN_DEPTH]; /* outermost first */
};

/* The costs BPF cannot measure itself, calibrated by user space at start-up
 * (global `calib` in .bss). Per-probe trap costs are in sonde_probe_config:
 * they depend on the probed instruction. */
struct sonde_calibration {
	__u64 sample_unseen_ns; /* per sample, what the sampler cannot time: the
				 * interrupt's exit after the program */
	/* A timer sample (cpu-clock, task-clock) also measures how late its
	 * program ran after the timer expired (the interrupt's entry), and
	 * charges that, up to late_cap_ns: more than that is the CPU held from
	 * the interrupt (a hypervisor's stall, interrupts off), which the
	 * thread would have lost without the sample too. */
	__u64 late_cap_ns;
	/* ... and the rest of its interrupt after the program, timed where
	 * the interrupt ends (local_timer_exit), up to exit_cap_ns (0: not
	 * timed there, sample_unseen_ns holds it): a sample's interrupt takes
	 * 8-30 us on a virtual machine, its tail being the sample's own VM
	 * exits (timer reprogramming), which no median can charge. */
	__u64 exit_cap_ns;
	__u32 calib_tid;        /* the calibrating thread (0: none): its samples
				 * and span records are accounted but not sent */
	__u32 _pad;
};

/* Per (span probe, point bit) (per-CPU array `point_calls`, key = probe *
 * SONDE_MAX_POINTS + bit): the probe's calls that ended while the point
 * was attached (bit set in the global points_active), and those of them
 * during which the point was hit. */
struct sonde_point_calls {
	__u64 calls;
	__u64 hit;
};

/* Per-probe totals (in struct sonde_probe_counts). */
struct sonde_probe_stats {
	__u64 entered;    /* calls that began (counted at entry), every one */
	__u64 completed;  /* calls whose return was seen: with a predicate,
			   * only calls where it held at entry are timed */
	__u64 raw_ns;     /* sum of measured durations of completed calls */
	__u64 own_ns;     /* sum of sonde's own cost inside them (raw - corrected) */
	__u64 handler_ns; /* sum of the run times of sending span records (the
			   * rest of the handlers is in the calibrated trap cost) */
	__u64 emitted;    /* span records sent */
};

/* One probe's counts on one CPU, the value of the per-CPU map
 * `probe_counts` (key: the probe's slot): its totals, then its histogram.
 * One value, so that a call touches one map entry for both (each distinct
 * piece of memory a handler touches costs it: see bench/README.md); one
 * value per probe, not one per bucket: a per-CPU array allocates each value
 * apart, and 250,000 of them took the kernel 0.3-1.4 s to create and as
 * long to free at every start and exit of sonde. */
struct sonde_probe_counts {
	struct sonde_probe_stats stats;
	__u64 buckets[SONDE_HIST_BUCKETS];
};

/* Sampling decisions pushed by user space (array map `sampler_cfg`, key 0).
 * Probe fields hold probe id + 1 (0 = off). */
struct sonde_sampler_config {
	__u32 only_in_probe;   /* sample only while this probe is in flight */
	__u32 only_slow_probe; /* sample only when its current call already ran... */
	__u64 only_slow_ns;    /* ...longer than this */
	/* Sample only when a call in flight has one of these point bits: a
	 * point probe was hit during it (0 = off). */
	__u64 when_points;
};

/* A uprobe's attach cookie: bits 0..15 the probe's slot (its key in
 * probe_cfg, probe_counts, fetch_progs...), bits 16..31 for a point probe
 * the key in fetch_progs of the program of this one address (0: none; a
 * line's addresses each have their own: locations differ per address),
 * bits 32..63 the probe's attach generation. */
#define SONDE_COOKIE_SLOT(c) ((__u32)(c) & 0xffff)
#define SONDE_COOKIE_FETCH(c) (((__u32)(c) >> 16) & 0xffff)
#define SONDE_COOKIE_GEN(c) ((__u32)((c) >> 32))
#define SONDE_COOKIE(gen, slot, fetch) \
	((__u64)(gen) << 32 | (__u64)((fetch) & 0xffff) << 16 | ((slot) & 0xffff))

/* A branch probe's outcome (a point probe at each of its jumps: one probe
 * counts the jumps taken, another those not taken): bits 16..31 of its
 * cookie hold the jump's condition (enum sonde_branch_cond) and whether
 * this probe counts the jump taken (SONDE_BRANCH_TAKEN), instead of a fetch
 * key (an outcome captures nothing). */
enum sonde_branch_cond {
	/* 0..15: x86's condition codes (jcc's low opcode nibble): O, NO, B,
	 * AE, E, NE, BE, A, S, NS, P, NP, L, GE, LE, G */
	SONDE_BRANCH_RCXZ = 16,   /* jrcxz: rcx == 0 */
	SONDE_BRANCH_ECXZ = 17,   /* jecxz: ecx == 0 */
	SONDE_BRANCH_LOOP = 18,   /* loop: rcx - 1 != 0 (it decrements first) */
	SONDE_BRANCH_LOOPE = 19,  /* loope: rcx - 1 != 0 and ZF */
	SONDE_BRANCH_LOOPNE = 20, /* loopne: rcx - 1 != 0 and not ZF */
};
#define SONDE_BRANCH_COND_MASK 0x3f
#define SONDE_BRANCH_TAKEN 0x80

/* An argument of a span pair's key (sonde_probe_config.pair_entry): a
 * register's value (DWARF number reg), or the 8 bytes at a register's
 * value + off. */
#define SONDE_PAIR_KEYS 3
enum { SONDE_PAIR_ARG_NONE = 0, SONDE_PAIR_ARG_REG = 1, SONDE_PAIR_ARG_MEM = 2 };
struct sonde_pair_arg {
	__u8 kind;
	__u8 reg;
	__u16 pad;
	__s32 off;
};

/* Per-probe policy (array map `probe_cfg`, key = probe id). */
/* Which code objects a py: probe's calls run: the call's frame holds its
 * code object at frame_code; the code object's file name and qualified
 * name (compact ASCII strings, their characters ascii_data bytes in, their
 * length at SONDE_PY_STR_LENGTH, the ascii bit in the state word at
 * SONDE_PY_STR_STATE) must be one of the ways: a file name that is file,
 * or ends in '/' then file, and a qualified name that is qual. A verdict
 * is kept per code object (with the two strings' addresses, so a code
 * object's memory reused is noticed).
 *
 * The frame: frame_from_runtime 0, the evaluator's second argument (3.12
 * on, py_trampoline_evaluator); 1, the current frame of the thread
 * holding the GIL (3.11's function__entry site): _PyRuntime, at the site's
 * run-time address + runtime_from_site, holds the thread state at
 * runtime_tstate_current, whose thread_id must be the thread's fs base,
 * whose cframe (tstate_frame) holds the frame at cframe_current_frame.
 *
 * Captures (ncaptures, the names of the function's arguments or locals):
 * each is looked up in the code object's co_localsplusnames (a tuple of
 * str at code_localsplusnames, its items tuple_items bytes in, its length
 * at var_size) once per code object, and read at each call from the
 * frame's localsplus (frame_localsplus + 8 * index): the object's type
 * (ob_type at 8; tp_flags at type_flags, tp_name at type_name) says how
 * (struct sonde_values' pytype); ints' digits at long_digits, their size
 * and sign in ob_size (long_tag 0, 3.11) or lv_tag (1, 3.12 on); str's
 * characters after a compact non-ASCII header at compact_data, its UTF-8
 * copy's address at compact_utf8. Their records carry `layout`. */
#define SONDE_PY_MATCH_WAYS 4
#define SONDE_PY_MATCH_TEXT 64
#define SONDE_PY_STR_LENGTH 16
#define SONDE_PY_STR_STATE 32
#define SONDE_PY_STR_ASCII (1u << 6)
#define SONDE_PY_STR_COMPACT (1u << 5)
#define SONDE_PY_TP_LONG (1ull << 24)    /* Py_TPFLAGS_LONG_SUBCLASS */
#define SONDE_PY_TP_UNICODE (1ull << 28) /* Py_TPFLAGS_UNICODE_SUBCLASS */
#define SONDE_CAPTURES 8 /* values a probe captures (C or Python) */
#define SONDE_PY_LOCALS 256 /* co_localsplusnames items looked through */
struct sonde_py_way {
	__u8 file_len, qual_len;
	__u8 _pad[6];
	char file[SONDE_PY_MATCH_TEXT];
	char qual[SONDE_PY_MATCH_TEXT];
};

struct sonde_py_match {
	__u32 frame_code, code_filename, code_qualname, ascii_data;
	__u32 n; /* ways in use */
	__u32 frame_from_runtime;
	__s64 runtime_from_site;
	__u32 runtime_tstate_current, tstate_thread_id, tstate_frame, cframe_current_frame;
	__u32 ncaptures, layout;
	__u32 frame_localsplus, code_localsplusnames, tuple_items, var_size;
	__u32 type_flags, type_name, long_digits, long_tag;
	__u32 compact_data, compact_utf8;
	__u8 capture_len[SONDE_CAPTURES];
	char capture[SONDE_CAPTURES][SONDE_PY_MATCH_TEXT];
	struct sonde_py_way way[SONDE_PY_MATCH_WAYS];
};

struct sonde_probe_config {
	/* Which completed calls cross to user space as span records: every one
	 * (emit_all), else those a sample landed in and those lasting at least
	 * emit_min_ns (UINT64_MAX: none). All calls are counted in the
	 * histogram and the probe's totals either way (with a predicate, the
	 * calls where it held at entry: the others are counted entered only). */
	__u64 emit_min_ns;
	/* Calibrated trap costs no handler can time, for this probe's kind of
	 * first instruction (emulated by the kernel, or single-stepped): */
	__u64 call_unseen_ns; /* per call, as seen by an enclosing call */
	__u64 self_unseen_ns; /* per call, inside its own measured interval */
	__u32 active;      /* 0: the probe's programs ignore hits (being detached) */
	__u32 gen;         /* bumped at every attach, and in the attach cookie's
			    * high 32 bits: uprobes of an earlier attachment are
			    * ignored, and a return matches only a call entered
			    * under the same attachment, so a call still in flight
			    * when its probe was removed and re-added is never
			    * paired with a later return */
	__u32 emit_all;
	/* 0: a span probe (entry and return). Else a point probe (a source
	 * line: one uprobe per address, no return), whose hits are counted in
	 * probe_counts' stats.entered and set bit point_bit - 1 in the innermost call
	 * in flight. */
	__u32 point_bit;
	/* 1: a span probe with a capture program (fetch_progs, key = the
	 * slot), run at entry before the call is pushed: a call failing its
	 * predicate is not pushed (no sample is in it, its return counts
	 * nothing); 0: its entry never looks one up. */
	__u32 fetch;
	/* The session's id of the probe in this slot: what the records of its
	 * calls, values and samples name (the slot is the kernel's own key). */
	__u32 id;
	/* 1: a span pair (two USDT probes, entry and return): its calls
	 * enter at span_enter and end at span_pair_exit, which closes the
	 * thread's innermost call of the probe in flight with the same key
	 * (their stack pointers say nothing: both sites are inside the
	 * program's code): the values of the arguments pair_entry names at
	 * the entry, of those pair_return names at the return (kind 0: the
	 * rest; none: every return closes the innermost call). */
	__u32 pair;
	struct sonde_pair_arg pair_entry[SONDE_PAIR_KEYS], pair_return[SONDE_PAIR_KEYS];
	/* 1: a Python function's span probe (spec py:...), on the
	 * interpreter's trampoline evaluator, which every Python call of a
	 * process run with -X perf goes through: only the calls whose code
	 * object py_match names are the probe's (entered, pushed, timed); the
	 * others are left out at entry as a failed predicate's are. */
	__u32 py;
	struct sonde_py_match py_match;
};

/* ---- Python frames (bpf/python.bpf.h) ----
 * For a process running CPython, user space writes where its _PyRuntime is
 * and the layout of the way from there to each thread's frames (the
 * fields of src/symbols/pyruntime.h's struct py_layout) into `py_procs`.
 * A sample of one of its threads then carries that thread's Python
 * frames, innermost first, two words each: the frame's code object, and
 * where it is in it (SONDE_PY_INSTR: an instruction index in 3.10, a
 * pointer into the code's bytecode from 3.11) with SONDE_PY_RUN_START set
 * on the frame a run of the C evaluation loop began with (every frame in
 * 3.10; 3.11's is_entry; the frame above an entry frame from 3.12), so user
 * space can put each run in place of its _PyEval_EvalFrameDefault frame. */
#define SONDE_PY_FRAMES 64
#define SONDE_PY_PROCS 1024
#define SONDE_PY_THREADS 16384 /* threads whose thread state is remembered */
#define SONDE_PY_THREAD_SCAN 4096 /* thread states looked through to find one */
#define SONDE_PY_NO_FIELD 0xffffffffu
#define SONDE_PY_OWNED_BY_CSTACK 3
#define SONDE_PY_RUN_START (1ull << 63)
#define SONDE_PY_INSTR ((1ull << 56) - 1)

struct sonde_py_proc {
	__u64 runtime; /* _PyRuntime's address in the process */
	__u32 runtime_interpreters_head;
	__u32 interp_threads_head;
	__u32 tstate_next;
	__u32 tstate_thread_id; /* pthread_self(): the thread's fs base */
	__u32 tstate_frame;
	__u32 cframe_current_frame; /* SONDE_PY_NO_FIELD: tstate_frame holds the frame */
	__u32 frame_previous;
	__u32 frame_code;
	__u32 frame_instr;
	__u32 frame_is_entry; /* 3.11: a byte */
	__u32 frame_owner;    /* 3.12 on: a byte */
	__u8 instr_index;     /* frame_instr is an int index (3.10), else a pointer */
	__u8 _pad[3];
};

/* How a sample's Python walk ended (its py_end; the PY_* counters). */
enum sonde_py_end {
	SONDE_PY_NONE = 0,      /* not a Python process (or Python frames are off) */
	SONDE_PY_COMPLETE = 1,  /* the thread's oldest frame */
	SONDE_PY_CUT = 2,       /* a frame that could not be read, or SONDE_PY_FRAMES */
	SONDE_PY_NO_THREAD = 3, /* no thread state of the interpreter is the thread's */
};

/* A sample, or an off-CPU interval (off_ns > 0: a thread's time between
 * being switched out and back in, with the stacks and calls in flight it
 * left with; its event is the off-CPU event). Only the frames walked are sent: the record ends after
 * ips[nkernel + nuser - 1] (SONDE_SAMPLE_BYTES). */
struct sonde_sample {
	struct sonde_hdr hdr;
	__u32 event;   /* index of the sampled event in the session's event list */
	__s32 kstack_err;   /* 0, or the negative errno of the kernel stack */
	__s32 ustack_err;   /* 0, or the negative errno of the frame-pointer walk */
	__u16 nkernel;      /* kernel frames: ips[0 .. nkernel), leaf first */
	__u16 nuser;        /* user frames: ips[nkernel .. nkernel + nuser), leaf first */
	__u32 nspans;       /* spans in span_ids/span_probes (outermost first) */
	__u32 span_depth;   /* calls in flight on the thread (may exceed nspans) */
	__u32 nreturns;     /* entries in returns */
	__u32 returns_chained; /* bit i: returns[i] is a chained instance, which
				* shares its stack slot with the next one */
	__u8 unwind;        /* enum sonde_unwind_mode the user stack was walked with */
	__u8 unwind_end;    /* enum sonde_unwind_end */
	__u8 table_miss;    /* a pc was in no mapping of the process's tables:
			     * user space (re)loads them */
	__u8 off_state;     /* enum sonde_off_state: 0 for an on-CPU sample */
	__u8 py_end;        /* enum sonde_py_end: 0, not a Python process's */
	__u8 _pad;
	__u16 npython;      /* Python frames after the native ones: two words each
			     * at ips[nkernel + nuser + 2 i], innermost first */
	__s32 syscall;      /* off-CPU: the system call the thread was in, -1 none */
	__u32 _pad2;
	__u64 off_ns;       /* off-CPU: how long the thread was off the CPU (the
			     * record's weight); hdr.time_ns is when it left; 0
			     * for an on-CPU sample */
	char woken_comm[SONDE_COMM_LEN]; /* a waker record: the thread it woke */
	__u64 span_ids[SONDE_SAMPLE_SPANS];
	__u32 span_probes[SONDE_SAMPLE_SPANS];
	/* The real return addresses of the calls whose return a uretprobe has
	 * hijacked (innermost first): on the stack those slots hold the
	 * trampoline's address. The table walk puts them back itself; after a
	 * frame-pointer walk user space does, in order. */
	__u64 returns[SONDE_SAMPLE_SPANS];
	__u64 ips[2 * SONDE_MAX_STACK + 2 * SONDE_PY_FRAMES];
};

#define SONDE_SAMPLE_HEAD __builtin_offsetof(struct sonde_sample, ips)
#define SONDE_SAMPLE_BYTES(nframes) (SONDE_SAMPLE_HEAD + (nframes) * sizeof(__u64))

/* A target thread's stacks and calls in flight when it last left the CPU,
 * by tid in the map `offcpu_stash` (bpf/offcpu.bpf.c writes it at
 * sched_switch, attached while off-CPU intervals or thread states are on):
 * the record an off-CPU interval sends when the thread runs again, the
 * stacks a thread-state pass sends once (SONDE_REC_THREAD_STACK) and its
 * rows then name, and, once the recording ended (offcpu_until_ns), the
 * interval user space cuts at the end. `seq` is odd while the switch-out
 * writes the entry, so a reader on another CPU never takes stacks half
 * written. */
struct sonde_offcpu_entry {
	__u32 seq;
	__u32 _pad;
	__u64 in_ns; /* when it last got a CPU (0: not seen yet) */
	struct sonde_sample s; /* hdr.kind: SONDE_REC_SAMPLE while an off-CPU
				* interval waits to be sent, else 0; hdr.time_ns:
				* when it left (its stacks taken) */
};

struct sonde_span {
	struct sonde_hdr hdr;  /* time_ns = end of the call */
	__u32 probe;
	__u32 depth;           /* 1 = outermost traced call on the thread */
	__u64 span_id;
	__u64 parent_span_id;  /* the enclosing traced call, 0 if none */
	__u64 start_ns;
	__u64 duration_ns;     /* corrected: raw minus sonde's own cost inside */
	__u64 raw_duration_ns; /* as measured between the handlers */
	__u64 points;          /* point bits hit during the call (sonde_span_frame) */
};

struct sonde_task_event {
	struct sonde_hdr hdr;
	__u32 child_pid; /* FORK: the new task's tid */
	__u32 child_tgid;
};

/* One thread at one pass of the thread-state sampler (SONDE_REC_THREAD):
 * hdr.time_ns is the pass's time, hdr.pid/tid/comm the thread's; then its
 * state (struct sonde_thread_now), its outermost traced calls in flight
 * (span_probes: the session's probe ids) and its
 * last stacks by reference: stack_ns is the hdr.time_ns of the
 * SONDE_REC_THREAD_STACK record of this thread holding them (sent once, by
 * the first pass that found the thread had left the CPU again; 0: none
 * yet). */
#define SONDE_THREAD_SPANS 4
struct sonde_thread_sample {
	struct sonde_hdr hdr;
	__u64 pass;             /* the pass's number (from 1) */
	__u64 state_since_ns;
	__u64 syscall_since_ns;
	__s32 syscall;
	__u8 state;
	__u8 flags;
	__u16 _pad;
	__u32 nspans;           /* calls in span_* (outermost first) */
	__u32 span_depth;       /* calls in flight (may exceed nspans) */
	__u64 stack_ns;         /* its last stacks: when it left the CPU with them */
	__u64 span_ids[SONDE_THREAD_SPANS];
	__u64 span_start_ns[SONDE_THREAD_SPANS];
	__u32 span_probes[SONDE_THREAD_SPANS];
};

/* The end of a pass (SONDE_REC_THREAD_PASS): hdr.time_ns is its time (the
 * time of its thread records), hdr.cpu the CPU it ran on; how many threads
 * it visited and how long it ran (ns, measured by the pass itself). */
struct sonde_thread_pass {
	struct sonde_hdr hdr;
	__u64 pass;
	__u64 nthreads;
	__u64 run_ns;
};

/* ==== Fetch programs: captures and predicates ============================
 *
 * A probe that captures values has a fetch program (array map
 * `fetch_progs`: key = probe slot for a function probe, run at its entry;
 * for a point probe, one per address, at keys SONDE_MAX_PROBES and up
 * named by each uprobe's cookie), translated in user space from DWARF
 * location expressions and the user's capture and predicate expressions
 * (src/symbols/dwarfvar.h, src/symbols/capexpr.h), and run by one generic
 * interpreter (bpf/fetch.bpf.h) at the probe's address: a stack machine of
 * 64-bit words, at most SONDE_FETCH_OPS operations run once each in order
 * (no jumps: every program ends). The predicate's code comes first: a
 * FETCH_PRED that pops 0, or follows a failed read, ends the hit with
 * nothing sent (at a function's entry, the call is left out:
 * sonde_probe_config.fetch). Then each capture's code ends in FETCH_EMIT (or
 * FETCH_STATUS for a value with no location there), which fills its slot
 * of a struct sonde_values record; the record is sent at the end.
 *
 * A failed read of user memory marks the value being computed: the ops up
 * to its FETCH_EMIT/FETCH_PRED are skipped and the value's status is
 * SONDE_VAL_FAULT (counted in FETCH_FAULT). */
#define SONDE_FETCH_OPS 128  /* power of two */
#define SONDE_FETCH_STACK 16 /* power of two */
/* SONDE_CAPTURES (values a probe captures): above, with the py: probes. */
#define SONDE_CAPTURE_STR 64 /* bytes of a string value, with its NUL */
#define SONDE_FETCH_REGS 17  /* DWARF x86-64 registers 0..16 (16: rip) */
/* Programs of point probes' addresses held at once (fetch_progs keys
 * SONDE_MAX_PROBES .. SONDE_MAX_PROBES + SONDE_POINT_PROGS - 1). */
#define SONDE_POINT_PROGS 512

enum sonde_fetch_code {
	FETCH_END = 0,    /* stop (the rest of the program is unused) */
	FETCH_CONST = 1,  /* push imm */
	FETCH_REG = 2,    /* push DWARF register a (+ imm) */
	FETCH_ADDR = 3,   /* push imm + load bias (probe's runtime address - prog vaddr) */
	FETCH_DEREF = 4,  /* pop address; push the a bytes (1,2,4,8) there, b=1: sign-extended */
	FETCH_EXT = 5,    /* truncate top to a bytes, b=1: sign-extend */
	FETCH_PIECE = 6,  /* pop v, pop acc; push acc | (v & bytes(a)) << b (bits) */
	FETCH_DUP = 7,
	FETCH_DROP = 8,
	FETCH_SWAP = 9,
	FETCH_OVER = 10,
	/* binary: pop r, pop l, push l OP r; b=1: signed (DIV, MOD, SHR, LT..GE) */
	FETCH_ADD = 16, FETCH_SUB, FETCH_MUL, FETCH_DIV, FETCH_MOD, FETCH_AND, FETCH_OR,
	FETCH_XOR, FETCH_SHL, FETCH_SHR, FETCH_EQ, FETCH_NE, FETCH_LT, FETCH_LE, FETCH_GT,
	FETCH_GE, FETCH_LAND, FETCH_LOR,
	/* unary: replace top */
	FETCH_NEG = 40, FETCH_NOT, FETCH_BNOT,
	FETCH_PRED = 48,   /* pop; 0 (or a failed read): the hit sends nothing */
	FETCH_EMIT = 49,   /* pop into value a (status OK, or FAULT after a failed read) */
	FETCH_EMIT_STR = 50, /* pop an address; its NUL-terminated string, at most imm
			      * bytes (<= SONDE_CAPTURE_STR, with the NUL), into value a */
	FETCH_STATUS = 51, /* value a has status b (no code reads it here) */
};

/* What a py: probe's captured value is (struct sonde_values' pytype; 0
 * for a C value): value and str say the rest. */
enum sonde_py_value {
	SONDE_PYV_C = 0,
	SONDE_PYV_INT = 1,     /* value: a signed 64-bit int */
	SONDE_PYV_UINT = 2,    /* value: an int of 64 bits, unsigned */
	SONDE_PYV_BIGINT = 3,  /* an int of more than 64 bits; value: its
				* 30-bit digits, negative when it is */
	SONDE_PYV_BOOL = 4,    /* value: 0 or 1 */
	SONDE_PYV_FLOAT = 5,   /* value: the double's bits */
	SONDE_PYV_NONE = 6,
	SONDE_PYV_STR = 7,     /* str: its UTF-8 (the first bytes); value: its
				* length in characters */
	SONDE_PYV_STR1 = 8,    /* str: its characters, 1, 2 or 4 bytes each */
	SONDE_PYV_STR2 = 9,    /* (Latin-1, UCS-2, UCS-4), as many as fit; */
	SONDE_PYV_STR4 = 10,   /* value: its length in characters */
	SONDE_PYV_OTHER = 11,  /* str: its type's name */
	SONDE_PYV_UNBOUND = 12, /* a local with no value yet */
	SONDE_PYV_NO_LOCAL = 13, /* the code object has no argument or local
				  * of that name */
};

/* Status of a captured value in a record. */
enum sonde_value_status {
	SONDE_VAL_OK = 0,
	SONDE_VAL_FAULT = 1,         /* reading user memory failed */
	SONDE_VAL_OPTIMIZED_OUT = 2, /* the compiler kept no location for it here */
	SONDE_VAL_UNAVAILABLE = 3,   /* a location sonde cannot read here (entry_value) */
};

struct sonde_fetch_op {
	__u8 code; /* enum sonde_fetch_code */
	__u8 a;
	__u16 b;
	__u32 _pad;
	__s64 imm;
};

struct sonde_fetch_prog {
	__u32 gen;      /* the probe's attach generation it was written for */
	__u32 nops;     /* 0: the probe captures nothing */
	__u32 nvalues;  /* values in the record */
	__u32 layout;   /* user space's name for what the values are, copied into
			 * each record: a record of an earlier program of the
			 * same probe is told apart */
	__u64 vaddr;    /* the probe's address in its ELF file (for FETCH_ADDR's bias) */
	struct sonde_fetch_op ops[SONDE_FETCH_OPS];
};

/* A hit's values (SONDE_REC_VALUES). Sent whole. */
struct sonde_values {
	struct sonde_hdr hdr;
	__u32 probe;
	__u32 nvalues;
	__u64 span_id;  /* the call it was captured at the entry of (0: none,
			 * and always for a point probe's hit) */
	__u32 layout;   /* the program's layout (struct sonde_fetch_prog) */
	__u32 _pad;
	__u8 status[SONDE_CAPTURES]; /* enum sonde_value_status */
	__u8 pytype[SONDE_CAPTURES]; /* a py: probe's values: enum sonde_py_value */
	__u64 value[SONDE_CAPTURES]; /* numbers (as 64-bit words) and addresses */
	char str[SONDE_CAPTURES][SONDE_CAPTURE_STR]; /* FETCH_EMIT_STR values */
};

#endif
