/* engine — the kernel side of a session, seen from user space.
 *
 * Loads the one pre-compiled BPF object (embedded skeleton), opens the
 * sampling event on every online CPU and attaches the sampler to it (or, for
 * a tracepoint event, attaches the tracepoint sampler), attaches the process
 * lifecycle tracepoints, and drains the ring buffer into a callback. Every
 * record the kernel could not deliver is counted (engine_stats).
 *
 * Target filtering happens in the kernel: system-wide, or the set of
 * processes added with engine_add_pid (their later threads and children are
 * followed by the BPF side).
 *
 * The engine's API, one header; its rooms: load.c (open, start, close),
 * sampling.c, offcpu.c (off-CPU intervals, wakers, thread states), slots.c,
 * spans.c and points.c (probes), probecounts.c, threadslots.c (calls in
 * flight), drain.c and recordids.c (records to the caller); enginestate.h
 * is the state they share. */
#ifndef SONDE_ENGINE_H
#define SONDE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "events.h"
#include "insn.h"
#include "pyruntime.h"
#include "records.h"

/* The kernel's ABI (bpf/sonde_abi.h) stays inside the engine and the code
 * that decodes its records: what a caller needs of it has a name of the
 * engine's here, and load.c asserts that each equals the kernel's. */
#define ENGINE_MAX_PROBES 256    /* the kernel's probe slots (SONDE_MAX_PROBES) */
#define ENGINE_MAX_POINTS 64     /* point bits, one per line probe at once (SONDE_MAX_POINTS) */
#define ENGINE_POINT_PROGS 512   /* the point probes' fetch programs at once (SONDE_POINT_PROGS) */
#define ENGINE_HIST_BUCKETS 976  /* a probe's histogram of calls (SONDE_HIST_BUCKETS) */
#define ENGINE_COUNTERS 26       /* the kernel's drop counters (SONDE_CNT_NUM) */

/* How the sampler walks user stacks (the kernel's enum sonde_unwind_mode). */
enum engine_unwind {
	ENGINE_UNWIND_FP = 0,   /* the kernel's frame-pointer walk */
	ENGINE_UNWIND_CFI = 1,  /* unwind tables only: a binary without one ends the stack */
	ENGINE_UNWIND_AUTO = 2, /* unwind tables, frame pointers where a binary has none */
};

struct engine_options {
	struct event_spec event;
	uint64_t freq;         /* samples/s for time-based events; 0 = use period */
	uint64_t period;       /* every Nth event when freq == 0 */
	bool system_wide;      /* false: only processes added with engine_add_pid */
	bool no_sampler;       /* trace only: open no sampling event */
	/* What is gathered never changes: the programs of what is off are not
	 * loaded — the sampler of the other kind of event (both with no_sampler
	 * and no sample calibration), the off-CPU and thread-state programs
	 * without off_cpu, wakers or tstate_freq (the wakers' without wakers,
	 * the thread states' without tstate_freq), the uprobe programs with
	 * no_spans, the point probes' with no_points. The verifier takes up to
	 * 0.6 s over each at every start on a busy machine.
	 * engine_set_sampling is refused; engine_set_offcpu/_threads and
	 * attaching probes are refused when their programs were not loaded. */
	bool fixed;
	bool calibrate_samples; /* with fixed: calibrate.c samples at start */
	bool no_spans; /* with fixed: no function or line is traced (their programs are not loaded) */
	bool no_points; /* with fixed: no line probe nor --sample-when (point_hit is not loaded) */
	bool no_children;      /* do not follow the processes targets create */
	size_t ringbuf_bytes;  /* power of two, >= page size; 0 = 16 MiB */
	enum engine_unwind unwind; /* how user stacks are walked (0: frame pointers) */
	size_t unwind_bytes;   /* the kernel's unwind rows (cfi, auto); 0 = ENGINE_UNWIND_BYTES */
	bool verbose;          /* let libbpf's messages through, and the notes below */
	/* With verbose, libbpf's own messages (its warnings, the verifier's
	 * log of a program it refused) as libbpf writes them: pieces of
	 * lines, newlines included (NULL drops them). libbpf sends them to
	 * one place per process: from engine_open to engine_close, this
	 * engine's log. */
	void (*log)(void *arg, const char *text);
	void *log_arg;
	/* With verbose, what the engine does without (one line each, no
	 * newline; NULL drops them): no attach helper, no uprobe_multi links,
	 * a sample-tail tracepoint missing. The engine itself prints nothing:
	 * its errors go to err, the rest to log and note. */
	void (*note)(void *arg, const char *line);
	void *note_arg;
	bool off_cpu;          /* record off-CPU intervals from the start (engine_set_offcpu) */
	uint64_t offcpu_min_ns; /* with off_cpu: the shortest interval sent */
	uint32_t offcpu_threads; /* switched-out threads kept at once; 0 = 4096 */
	bool wakers;            /* with off_cpu: also who woke each wait (engine_set_wakers) */
	/* Thread states (bpf/threads.bpf.c): > 0, passes per second over every
	 * target thread, running or not, from engine_start on (ENGINE thread
	 * states below); 0: off. */
	uint64_t tstate_freq;
	uint32_t tstate_threads; /* threads whose state is kept at once; 0 = 4096
				  * (a pass walks that many buckets) */
	engine_record_fn on_record;
	void *arg;
};

/* The kernel's drop counters, by index (SONDE_COUNTERS in sonde_abi.h
 * says what each counts; drops.h names them and says how they are shown). */
struct engine_stats {
	uint64_t count[ENGINE_COUNTERS];
};
#define ENGINE_LOST_SPANS 1 /* count[]'s span records lost (SONDE_CNT_LOST_SPANS) */

#define ENGINE_UNWIND_BYTES (16u << 20)

struct engine;

/* Loads and verifies the BPF object. Returns NULL with one line in err. */
struct engine *engine_open(const struct engine_options *o, char *err, size_t errlen);

/* Adds a process (tgid) to the target set. Returns 0 or -1 with err. */
int engine_add_pid(struct engine *e, pid_t pid, char *err, size_t errlen);

/* Adds the command sonde started and holds before its exec: a target from
 * its exec on (what it runs before is sonde's). Returns 0 or -1 with err. */
int engine_add_pid_at_exec(struct engine *e, pid_t pid, char *err, size_t errlen);

/* Opens the sampling event on every CPU and attaches all programs.
 * Returns 0 or -1 with err. */
int engine_start(struct engine *e, char *err, size_t errlen);

/* Waits up to timeout_ms for records and delivers them. Returns the number
 * of records consumed, or -1 on error (EINTR is not an error: returns 0). */
int engine_poll(struct engine *e, int timeout_ms);

/* Off-CPU intervals (bpf/offcpu.bpf.c): while on, every time a target
 * thread is switched out and back in after at least min_ns, a record with
 * its stacks, state and system call at switch-out and off_ns = the time
 * away arrives as a sample of event index ENGINE_EVENT_OFFCPU (shorter ones
 * are counted: OFFCPU_SHORT). Costs every context switch on the machine a
 * tracepoint, and target threads a stack walk at each switch-out; system
 * calls of target threads are tracked too. Returns 0, or -1 with one line
 * naming what is missing (a tracepoint, or programs this kernel did not
 * load) while the rest of the engine works on. min_ns may change while on. */
#define ENGINE_EVENT_OFFCPU 1
/* Wakers (while off-CPU intervals are on): each interval that ended with a
 * wake-up is followed by a record of event ENGINE_EVENT_WAKER, off_state
 * SONDE_OFF_WAKER: the waking thread's stacks (user stack only when it is a
 * target), the woken thread's calls in flight and comm, the same off_ns.
 * Returns 0, or -1 with one line (off-CPU not on; no sched:sched_wakeup). */
#define ENGINE_EVENT_WAKER 2
int engine_set_wakers(struct engine *e, bool on, char *err, size_t errlen);
int engine_set_offcpu(struct engine *e, bool on, uint64_t min_ns, char *err, size_t errlen);
bool engine_offcpu_on(const struct engine *e);

/* The end of a recording, for off-CPU intervals (offcpucut.h): from end_ns
 * (CLOCK_MONOTONIC ns) on, the kernel side stashes and sends nothing, so
 * the drain that follows ends and no interval ends after end_ns; then
 * engine_cut_offcpu delivers through on_record each interval still going
 * at end_ns, cut there, and returns how many (those shorter than the
 * minimum once cut count as OFFCPU_SHORT). A session ends only once. */
void engine_end_offcpu(struct engine *e, uint64_t end_ns);
uint64_t engine_cut_offcpu(struct engine *e);

/* Thread states (tstate_freq > 0): tracepoints keep each target thread's
 * state, system call and since when (threads existing at the start are
 * read from /proc, SONDE_TSTATE_SEEDED); a cpu-clock event on one CPU runs
 * a pass over all of them tstate_freq times a second. Each pass sends a
 * SONDE_REC_THREAD record per thread (its calls in flight with probe ids,
 * as samples carry them) and then a SONDE_REC_THREAD_PASS. Lost records:
 * LOST_THREADS; threads beyond the map: TSTATE_FULL. engine_start fails
 * with one line naming a missing tracepoint (the rest of sonde works
 * without thread states).
 *
 * engine_set_threads turns them on at freq passes a second (or changes the
 * rate), or off (freq 0) while everything runs: off forgets every thread's
 * state (not kept meanwhile), on reads the threads that exist again from
 * /proc. Returns 0, or -1 with one line. */
int engine_set_threads(struct engine *e, uint64_t freq, char *err, size_t errlen);

/* Python frames in the samples of process tgid (and in its off-CPU and
 * thread-state records): its interpreter's layout (symbols/pyruntime) and
 * where its _PyRuntime is in the process. Each sample then carries the
 * thread's Python frames after its native ones (engine records: the
 * sample's npython). With --unwind auto or cfi, the -X perf trampolines
 * of 3.12 on (pyruntime's trampoline_*) are walked through. Returns 0; 1
 * with one line in err when the frames are on but the trampolines cannot be
 * walked through (stacks end at them); -1 with one line. engine_forget_python
 * stops it (the process exited). */
int engine_set_python(struct engine *e, pid_t tgid, const struct py_layout *l,
		      uint64_t runtime_addr, char *err, size_t errlen);
void engine_forget_python(struct engine *e, pid_t tgid);

/* Stops sampling (disables the perf events) so a final drain sees the end. */
void engine_stop(struct engine *e);

/* The ring buffer's epoll fd: readable when records wait (for callers that
 * multiplex it with other fds in poll(); then call engine_poll(e, 0)). */
int engine_ring_fd(struct engine *e);

/* Changes the sampler while everything runs: closes the current sampling
 * event(s) and opens `event` at freq (samples/s, time-based events) or every
 * `period` events (freq 0). event NULL turns sampling off. On failure the
 * previous sampler is restored and -1 returned with err. Samples of the old
 * event already in the ring buffer are still delivered (drain first when
 * their event label matters). */
int engine_set_sampling(struct engine *e, const struct event_spec *event, uint64_t freq,
			uint64_t period, char *err, size_t errlen);

/* Every span probe stops counting (its programs ignore hits; the uprobes
 * stay): what the kernel counted and the records in the ring buffer then
 * stop changing, so a final drain and read agree. For the end of a run. */
void engine_pause_spans(struct engine *e);

/* True while a sampling event is open. */
bool engine_sampling(const struct engine *e);

/* Which completed calls of an attached probe send a span record: every one
 * (emit_all), else those a sample landed in and those lasting at least
 * emit_min_ns (UINT64_MAX: no others). A probe takes its first policy with
 * its attachment (engine_probe_batch.policies) and a new one from
 * engine_set_span_policy, at once (the policy it has already: nothing
 * done, so a caller may give it as often as it computes it). That returns
 * 0, or -1 when the probe is not attached. */
struct engine_span_policy {
	uint64_t emit_min_ns;
	bool emit_all;
};

struct sonde_fetch_prog; /* the kernel's form (sonde_abi.h), built by symbols/dwarfvar */
struct sonde_py_match; /* the kernel's form (sonde_abi.h), built by symbols/probepy */
struct engine_fetch {
	const struct sonde_fetch_prog *prog; /* NULL: none */
	uint32_t layout; /* the caller's name for what its values are: each
			  * SONDE_REC_VALUES record of it carries it */
};

/* Span probes. A probe id is the caller's name for one traced function
 * (any number below ENGINE_CALIBRATION_BASE: a session numbers its probes
 * as it likes); its entry and return programs are attached at a file
 * offset of a binary. In the kernel a probe occupies one of
 * ENGINE_MAX_PROBES slots (the attach cookie and map key) while attached;
 * records, histograms and open spans are handed back under the caller's
 * ids. At most ENGINE_USER_PROBES are attached at once.
 * engine_attach_probes attaches n probes, probes[i] at file_offsets[i] of
 * one binary, each with the fetch program fetch[i] (captures and a
 * predicate: struct engine_fetch; fetch NULL or fetch[i].prog NULL:
 * none), all or none. A probe's program is in place before its first hit
 * counts, so with a predicate no call is ever counted undecided; a probe
 * attached already (one more PID) keeps the program it has. A hit's values
 * arrive as SONDE_REC_VALUES records under the caller's probe id. On a kernel
 * with uprobe_multi links (6.11+) all n
 * entries are one link and all n returns another, so the kernel removes
 * them with one grace period each instead of ~0.15 s a uprobe; a probe
 * detached while others of its link stay attached keeps its uprobes (its
 * hits are ignored, at the cost of the trap) until the last of them goes.
 * pid -1 = any process (the kernel-side target filter still applies); a PID
 * limits the uprobes to that process, which spares every other process the
 * trap (use it for shared libraries). Every completed call is counted in the
 * probe's histogram and totals; which ones also send a span record is the
 * probe's policy (struct engine_span_policy, above). Returns 0 or -1 with err. Attaching the same probe
 * id again for another PID adds attachments; for a PID it is attached for
 * already, changes nothing.
 *
 * A point probe (a source line) comes in a batch of its own: point_bit
 * set, probes[0] its id, a uprobe at each of the n offsets (see "Point
 * probes" below). */
/* Where the engine keeps an attached probe: its kernel slot and that
 * slot's generation, which engine_attach_probes hands back for the
 * caller's probe table. The per-probe calls below take it, and treat one
 * whose slot has since gone to another attachment as not attached. A slot's
 * first generation is 1: a zeroed ref ({0}) is never attached. */
struct engine_probe_ref {
	uint32_t slot;
	uint32_t gen; /* 0: none */
};
static inline bool engine_ref_attached(struct engine_probe_ref r)
{
	return r.gen != 0;
}

/* A USDT span pair's key (engine_probe_batch.pair_key): a return closes
 * the thread's innermost call of the probe whose entry's arguments
 * entry[] had the values the return's arguments ret[] have (kind NONE
 * ends each list): a register's value (DWARF number reg), or the 8 bytes
 * at a register's value + off. */
#define ENGINE_PAIR_KEYS 3 /* SONDE_PAIR_KEYS */
enum engine_pair_arg_kind { ENGINE_PAIR_ARG_NONE, ENGINE_PAIR_ARG_REG, ENGINE_PAIR_ARG_MEM };
struct engine_pair_arg {
	uint8_t kind, reg;
	int32_t off;
};
struct engine_pair_key {
	struct engine_pair_arg entry[ENGINE_PAIR_KEYS], ret[ENGINE_PAIR_KEYS];
};

#define ENGINE_BRANCH_TAKEN 0x80 /* engine_probe_batch.branch */

struct engine_probe_batch {
	const uint32_t *probes;
	const uint64_t *file_offsets;
	const struct engine_fetch *fetch;
	size_t n;
	const char *binary;
	pid_t pid;            /* when npids is 0 */
	/* Or every process of pids[npids]: one call places the batch in each.
	 * One that exited meanwhile is passed over; the call fails when one
	 * still alive refuses, or when none took it ("every process of the
	 * target has exited"). */
	const pid_t *pids;
	size_t npids;
	/* Each probe's first instruction as the spec's plan decoded it
	 * (symbols/probesafety: an enum insn_trap), -1 where not known; NULL:
	 * none known. Code the plan could not read is taken as single-stepped;
	 * the engine reads no file for it. */
	const int8_t *traps;
	/* Each function probe's span policy (engine_set_span_policy), in force
	 * from its first call; NULL: every call sends a record. A probe
	 * attached already (one more PID) keeps the policy it has. */
	const struct engine_span_policy *policies;
	/* 0: the probes are functions. Else one point probe whose hits mark
	 * the calls in flight with bit point_bit - 1; with fetch, fetch[i] is
	 * the program of its address i (each address has one of its own: a
	 * variable lives in another place at each), in place before its first
	 * hit. */
	uint32_t point_bit;
	/* A branch probe's outcome (a point probe, point_bit set, no fetch):
	 * branch[i] the condition of the jump at address i
	 * (an enum insn_cond), with ENGINE_BRANCH_TAKEN when the probe counts
	 * the jump taken, else not taken. NULL: a line probe. */
	const uint16_t *branch;
	/* A point probe's USDT semaphores (file offsets, one per address, 0:
	 * none; NULL: none at all): raised while attached (uprobes.h); a span
	 * pair's entry sites'. */
	const uint64_t *ref_ctr_offsets;
	/* nreturns > 0: a USDT span pair, one span probe (probes[0],
	 * point_bit 0) whose calls enter at its n entry sites (file_offsets)
	 * and end at its return sites (return_offsets, their semaphores in
	 * return_ref_ctrs), a return closing the thread's innermost call of
	 * the probe in flight; with fetch, fetch[0] is its entry's program
	 * (the session gives one only for an entry at one site). */
	const uint64_t *return_offsets;
	const uint64_t *return_ref_ctrs;
	size_t nreturns;
	/* And sites held only for their semaphores (hold_ref_ctrs), raised
	 * while the pair is attached: uprobes whose hits do nothing (Python
	 * 3.11's line probe, whose semaphore makes its entries fire). */
	const uint64_t *hold_offsets;
	const uint64_t *hold_ref_ctrs;
	size_t nholds;
	/* Its key (NULL: none, every return closes the innermost call). */
	const struct engine_pair_key *pair_key;
	/* Function probes: py[i] non-NULL makes probes[i] a Python function's
	 * (a py: spec on the trampoline evaluator): only the calls running a
	 * code object it names are the probe's (sonde_abi.h); NULL: none. */
	const struct sonde_py_match *const *py;
	/* Asked between two uprobe links and two processes (NULL: never):
	 * true, with why, ends the attach there, which fails whole with why
	 * (a signal to sonde: a batch of many functions without uprobe_multi
	 * links is one link a function, ~0.1 s each). */
	bool (*stop)(void *arg, char *why, size_t whylen);
	void *stop_arg;
	/* Out (NULL: not wanted): refs[i] is where probes[i] is kept after the
	 * call (a point probe's in refs[0]), {0} where it has no slot. Written
	 * when the call fails too: what the caller must take back. */
	struct engine_probe_ref *refs;
};
int engine_attach_probes(struct engine *e, const struct engine_probe_batch *b, char *err,
			 size_t errlen);

/* How many probes a batch holds (its refs): a point's n are its
 * addresses and a pair's its entry sites, one probe each. */
static inline size_t engine_batch_probes(const struct engine_probe_batch *b)
{
	return b->point_bit || b->nreturns ? (b->n > 0) : b->n;
}

/* A new policy for an attached probe (struct engine_span_policy). */
int engine_set_span_policy(struct engine *e, struct engine_probe_ref probe,
			   const struct engine_span_policy *p);

/* How many more probes can be attached now. */
int engine_probes_available(const struct engine *e);

/* Detaches every attachment of a probe; its histogram and totals are
 * cleared (read them first). Returns at once: the records of its calls
 * already in the ring buffer are delivered first, and the kernel's removal
 * of the uprobes (~0.15 s a link) happens in the background, in a helper
 * process no signal to sonde can interrupt (uprobes.h); engine_close
 * waits for it. engine_discard_span does the same but drops the
 * records not yet delivered (a probe being taken back before its caller
 * knew it). */
void engine_detach_span(struct engine *e, struct engine_probe_ref probe);
void engine_discard_span(struct engine *e, struct engine_probe_ref probe);

/* Removes the attachments made for process pid (it exited): every probe
 * keeps its others, its histogram and totals. */
void engine_forget_process(struct engine *e, pid_t pid);

/* sonde's own probes, for calibration (one per instruction class),
 * attached to sonde's own functions for sonde's own process; their ids
 * are ENGINE_CALIBRATION_BASE and up, which engine_attach_probes refuses. engine_attach_calibration attaches the
 * classes c->cls[0..n-1] at c->file_offsets in c->binary at once (with uprobe_multi
 * links: one link for the entries and one for the returns, so removing
 * them waits for the kernel twice, not twice per class);
 * engine_detach_calibration removes them as engine_discard_span does. */
#define ENGINE_USER_PROBES (ENGINE_MAX_PROBES - 4)
#define ENGINE_CALIBRATION_BASE 0xffffff00u
struct engine_calibration_batch {
	const int *cls;
	size_t n;
	const char *binary;
	const uint64_t *file_offsets;
	struct engine_probe_ref *refs; /* out: refs[i] of class cls[i] (NULL: not wanted) */
};
int engine_attach_calibration(struct engine *e, const struct engine_calibration_batch *c,
			      char *err, size_t errlen);
void engine_detach_calibration(struct engine *e);

/* Reads a probe's in-kernel log-linear histogram of completed calls
 * (sonde_abi.h; summed over CPUs) into buckets[ENGINE_HIST_BUCKETS] (zeros
 * when it is not attached). Returns 0 or -1. */
int engine_read_hist(struct engine *e, struct engine_probe_ref probe, uint64_t *buckets);

/* In-kernel sampling decisions: only inside calls of only_in_probe, only
 * inside calls of only_slow_probe once over only_slow_ns (NULL: no such
 * filter; a ref no longer attached filters nothing). Takes effect at once
 * (the sampler reads it on every sample). Returns 0 or -1. */
int engine_set_sampler_filter(struct engine *e, const struct engine_probe_ref *only_in_probe,
			      const struct engine_probe_ref *only_slow_probe, uint64_t only_slow_ns);

/* Point probes (source lines): one probe id, uprobes at n file offsets of
 * binary (no return probes), all with the probe's slot (attached with
 * engine_attach_probes, point_bit set). Every hit is counted
 * (engine_read_probe_stats: entered); a hit marks the innermost traced
 * call in flight with its point bit (0..ENGINE_MAX_POINTS-1, chosen by the
 * caller, one per point probe attached at once; a caller that never
 * reuses a bit never sees an earlier point's marks), which the call passes
 * to its caller when it returns. With fetch (engine_probe_batch), each
 * address runs a program of its own, at most ENGINE_POINT_PROGS over the
 * point probes attached at once; a hit whose predicate fails marks
 * nothing. A probe attached again for another pid gives the same offsets
 * and keeps its programs. Detach with engine_detach_span. */

/* Completed calls of a span probe that ended while a point probe was
 * attached, and those of them during which it was hit, as the kernel
 * counted them while both were attached. Returns 0 or -1. */
struct engine_point_calls {
	uint64_t calls, hit;
};
int engine_read_point_calls(struct engine *e, struct engine_probe_ref span_probe,
			    struct engine_probe_ref point_probe, struct engine_point_calls *out);

/* Samples only while a call in flight has been marked by this point probe
 * (NULL: off). Returns 0, or -1 when it is not an attached point probe. */
int engine_set_sample_when(struct engine *e, const struct engine_probe_ref *point_probe);

/* Calls `fn` for every traced call still in flight on any thread (from the
 * kernel's per-thread span stacks), outermost first per thread. `own_ns` is
 * sonde's own cost inside the call so far (to subtract from its elapsed
 * time, as for completed calls). */
struct engine_open_span {
	uint32_t tid, probe; /* probe: the session's probe id */
	uint32_t depth;      /* 1: the thread's outermost traced call */
	uint64_t span_id, parent_id, start_ns, own_ns;
};
typedef void (*engine_open_span_fn)(void *arg, const struct engine_open_span *o);
void engine_for_each_open_span(struct engine *e, engine_open_span_fn fn, void *arg);

/* A probe's totals summed over CPUs. Returns 0 or -1. */
struct engine_probe_stats {
	uint64_t entered;    /* calls that began (counted at entry), every one */
	uint64_t completed;  /* calls whose return was seen: with a predicate,
			      * only calls where it held at entry are timed */
	uint64_t raw_ns;     /* sum of measured durations of completed calls */
	uint64_t own_ns;     /* sum of sonde's own cost inside them (raw - corrected) */
	uint64_t handler_ns; /* sum of the run times of sending span records */
	uint64_t emitted;    /* span records sent */
};
int engine_read_probe_stats(struct engine *e, struct engine_probe_ref probe,
			    struct engine_probe_stats *out);

/* The costs BPF cannot time itself (calibrate.h measures them; the
 * kernel's struct sonde_calibration says more of each); set takes effect
 * at once. */
struct engine_calibration {
	uint64_t sample_unseen_ns; /* per sample: the interrupt's exit after the program */
	uint64_t late_cap_ns;      /* a timer sample's lateness is charged up to this */
	uint64_t exit_cap_ns;      /* its interrupt's end, timed, up to this (0: not timed) */
	uint32_t calib_tid;        /* the calibrating thread (0: none) */
};
void engine_set_calibration(struct engine *e, const struct engine_calibration *c);

/* How the kernel handles a uprobe's breakpoint depends on the instruction it
 * replaces: some it emulates, the others it single-steps out of line (a
 * second trap, inside the call's measured time). Each class has its own
 * calibrated trap costs; probes get their class's costs when attached. */
enum engine_insn_class {
	INSN_PUSH,    /* push reg, branches, calls: emulated */
	INSN_ENDBR,   /* endbr64 */
	INSN_NOP,     /* multi-byte nop (0f 1f) */
	INSN_SSTEP,   /* anything else: single-stepped */
	INSN_CLASSES,
};
struct engine_trap_costs {
	uint64_t call_unseen_ns; /* per call, as seen by an enclosing call */
	uint64_t self_unseen_ns; /* per call, inside its own measured interval */
};
void engine_set_trap_costs(struct engine *e, enum engine_insn_class cls,
			   const struct engine_trap_costs *c);

/* The class of the instruction at a file offset of a binary (read from
 * the file and decoded by symbols/insn: insn_trap_at; INSN_SSTEP when
 * unreadable or unknown): the calibration's check that its own functions
 * begin as it chose them; attaching never reads a file for it. */
enum engine_insn_class engine_insn_class_at(const char *binary, uint64_t file_offset);
const char *engine_insn_class_name(enum engine_insn_class cls);

/* Samples the calibrating thread took (calib.calib_tid), so far, and when
 * the first SONDE_CALIB_TIMES of them were taken (CLOCK_MONOTONIC ns):
 * copies min(n, max, SONDE_CALIB_TIMES) times and returns how many. */
uint64_t engine_calib_samples(const struct engine *e);
size_t engine_calib_times(const struct engine *e, uint64_t *out, size_t max);
/* For the same samples: how late each ran after its timer expired (0: not a
 * timer event), how long the sampler program ran, and how long the rest of
 * its interrupt took (0: not timed, engine_times_sample_exits). */
size_t engine_calib_lateness(const struct engine *e, uint64_t *late, uint64_t *run,
			     uint64_t *exit, size_t max);
/* Whether the end of each timer sample's interrupt is timed (a program on
 * irq_vectors:local_timer_exit), so that calib.exit_cap_ns can charge it. */
bool engine_times_sample_exits(const struct engine *e);

/* What the session's samples were charged so far, as measured in the run:
 * their number, and the sum of their charged lateness and program run
 * times (struct engine_calibration says what each is). */
struct engine_sample_charges {
	uint64_t samples, late_ns, run_ns;
	uint64_t exits, exit_ns; /* interrupts' ends timed and charged (exit_cap_ns) */
};
void engine_sample_charges(const struct engine *e, struct engine_sample_charges *out);

/* sonde's own time charged to a thread so far (0 when it has no state),
 * and forgetting the thread's state (its calls in flight are dropped). */
uint64_t engine_thread_own_ns(struct engine *e, uint32_t tid);
void engine_forget_thread(struct engine *e, uint32_t tid);

/* Consumes and drops every record waiting in the ring buffer (records of
 * calibration, before the session's own). Returns how many. */
int engine_discard_pending(struct engine *e);

/* Removes a process from the target set (engine_add_pid's inverse). */
void engine_remove_pid(struct engine *e, pid_t pid);

/* Asks to be woken at process pid's next sample, as at its first (a
 * process's first sample, and its first after an exec, wake the reader at
 * once; the others wait for a batch or the poll timeout). */
void engine_wake_at_next_sample(struct engine *e, pid_t pid);

/* Attaches the sampler program to a perf event fd the caller opened (for
 * calibration on one thread). Returns an opaque link (engine_detach_fd
 * frees it) or NULL with err. */
struct bpf_link;
struct bpf_link *engine_attach_perf_fd(struct engine *e, int fd, char *err, size_t errlen);
void engine_detach_fd(struct bpf_link *link);

/* The unwind tables' state (unwind.h); zeros with --unwind fp. */
struct unwind_stats;
/* A command is about to run `executable` as a target: its tables (the
 * program's, its libraries', its loader's: symbols/ldso finds them as the
 * loader will) are built now and stay loaded, so its first samples unwind
 * completely before user space reads its maps. */
void engine_unwind_preload(struct engine *e, const char *executable);

void engine_unwind_stats(const struct engine *e, struct unwind_stats *out);

/* Sums the kernel-side drop counters. */
void engine_get_stats(struct engine *e, struct engine_stats *out);

/* Stops everything and removes every probe, waiting until the kernel has
 * (uprobes.h: a signal to sonde meanwhile, even SIGKILL, cannot leave a
 * uprobe half-removed). */
void engine_close(struct engine *e);

#endif
