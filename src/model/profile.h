/* profile — samples with their stacks and threads, in memory.
 *
 * Stacks are interned in a trie: node 0 is the empty stack, every other node
 * is (parent node, frame id), so a stack is one integer and shared prefixes
 * are stored once (the same layout as the recording's `stacks` table).
 * Threads are interned by (pid, tid, comm). Samples refer to both by index.
 * A profile also carries free-form metadata (key -> value) and the list of
 * sampled event names. Recording files load into and save from this. */
#ifndef SONDE_PROFILE_H
#define SONDE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flame.h"
#include "frames.h"
#include "hashmap.h"
#include "capdesc.h"
#include "latency.h"

struct stack_node {
	uint32_t parent; /* node id; 0 = this frame is a stack's outermost */
	uint32_t frame;  /* frame id */
	uint32_t depth;  /* 1 for outermost frames */
};

struct thread_info {
	uint32_t pid, tid;
	const char *comm; /* interned in the profile's frame table */
};

struct sample {
	uint64_t time_ns; /* CLOCK_MONOTONIC */
	uint64_t weight;  /* what the sample counts for (1, or the event period) */
	uint32_t cpu;
	uint32_t thread; /* index into threads */
	uint32_t event;  /* index into events */
	uint32_t stack;  /* stack node id (0 = empty stack) */
	uint32_t links;  /* first index into span_links */
	uint32_t nlinks; /* traced calls in flight when the sample was taken */
};

/* A traced call in flight when a sample was taken (outermost first). */
struct span_link {
	uint64_t span_id;
	uint32_t probe;
};

/* A traced function. */
struct probe_info {
	char *name;     /* as shown to users: the function name */
	char *binary;   /* path of the binary it lives in */
	uint64_t offset; /* file offset of its entry */
	/* In-kernel log-linear histogram of every completed call (corrected
	 * durations; latency.h). */
	uint64_t hist[LATENCY_LOGLIN_BUCKETS];
	/* The spans hold every call of the probe (record --all-calls, and
	 * recordings made before sonde kept only the calls it needs): figures
	 * come from them. Otherwise spans are the calls samples landed in and
	 * the slowest ones, and figures come from `hist`. */
	bool all_calls;
	/* In-kernel totals (0 in recordings made before they existed): */
	uint64_t entered;  /* calls that began */
	uint64_t raw_ns;   /* summed measured durations of completed calls */
	uint64_t own_ns;   /* of which sonde's own cost (probes, samples) */
	/* How far a sampled call's corrected duration may be from the truth,
	 * per sample in it (owncost.h); 0: not known. */
	uint64_t sample_uncertainty_ns;
	/* -1: a function probe (a span per call). Else a line probe (a point:
	 * hits, no spans; `entered` is its hits), and its index among the
	 * session's line probes: bit `point` of a span's `points`. */
	int point;
	/* Captures (values.h): the predicate as written (NULL: none), the
	 * captures a hit record's slots hold, and the hits received. */
	char *predicate;
	uint32_t capture_slot[CAPTURE_MAX]; /* index into captures */
	uint32_t ncapture_slots;
	uint32_t capture_layout; /* records of another layout are an earlier
				  * program's: dropped */
	uint64_t hits;
	/* A branch probe's outcome (a line probe counting one way of a
	 * conditional jump), else NULL. */
	struct probe_branch *branch;
};

/* What a branch outcome probe counts (spec branch LOCATION: one probe
 * per jump of the line and way it goes). */
struct probe_branch {
	char *at;          /* the spec's location: "server.c:1312", "f+0x1a" */
	unsigned line;     /* its source line (0: not known) */
	unsigned jump;     /* which of the line's jumps, from 1 */
	unsigned jumps;    /* how many the line has (in its instance with the most) */
	bool taken;        /* counts the jump taken; else not taken */
	unsigned to_line;  /* the line it goes to that way (0: not known) */
	char *to_file;     /* that line's file when not the branch's own, else NULL */
	char *insn;        /* the jump, "jle 0x1189" */
	char *source;      /* the line's source text, or NULL */
	unsigned copies;   /* addresses (instances) the jump has */
	bool mixed;        /* its copies test different conditions (the compiler
			    * laid one out inverted, say): taken is each copy's own */
};

/* Calls of a function probe that ended while a line probe was traced, and
 * those during which the line ran (counted in the kernel, every call: see
 * engine_read_point_calls). */
struct point_calls {
	uint32_t point_probe; /* the line probe */
	uint32_t probe;       /* the function probe */
	uint64_t calls, hit;
};

/* One traced call. */
struct span {
	uint64_t id;          /* unique in the profile, never 0 */
	uint64_t parent;      /* enclosing traced call's id, 0 if none */
	uint64_t start_ns;    /* CLOCK_MONOTONIC */
	uint64_t duration_ns; /* corrected: measured minus sonde's own cost inside
			       * the call (for open spans: elapsed until the
			       * profile ended, corrected likewise) */
	uint64_t raw_duration_ns; /* as measured (>= duration_ns) */
	uint32_t probe;       /* index into probes */
	uint32_t thread;      /* index into threads */
	uint32_t depth;       /* 1 = outermost traced call on its thread */
	bool open;            /* still running when the profile ended */
	uint32_t samples;     /* on-CPU samples taken in it (owncost_count) */
	uint64_t points;      /* line probes hit during the call, by their `point` bit */
};

/* The event of off-CPU intervals (record --off-cpu): a sample of it is a
 * time a thread spent off the CPU, its weight the nanoseconds, its leaf a
 * FRAME_STATE frame saying why (view.h). */
#define PROFILE_EVENT_OFFCPU "off-cpu"
/* The event of wakers (record --wakers): a sample of it is the stack of the
 * thread that woke a waiting one, weighing that wait (ns), topped by a
 * "[wakes: COMM]" FRAME_STATE frame (view.h). */
#define PROFILE_EVENT_WAKER "off-cpu-waker"

/* What a thread is doing: a thread state's `state`, and why an off-CPU
 * interval's thread was away. The values are the kernel's (enum
 * sonde_off_state; the collector checks that they agree) and a
 * recording's. */
enum thread_run_state {
	TSTATE_RUNNING = 0,         /* on a CPU */
	TSTATE_RUNNABLE = 1,        /* preempted, or yielded: waiting for a CPU */
	TSTATE_SLEEPING = 2,        /* interruptible sleep (S, also I and P) */
	TSTATE_UNINTERRUPTIBLE = 3, /* uninterruptible sleep (D), not in I/O wait */
	TSTATE_DISK = 4,            /* uninterruptible in I/O wait */
	TSTATE_STOPPED = 5,         /* stopped or traced (T, t) */
};
#define TSTATE_COUNT (TSTATE_STOPPED + 1)
/* thread_sample.flags: the times are lower bounds, as the thread was in its
 * state (or system call) before sonde began. */
#define TSTATE_FLAG_SEEDED 1u
#define TSTATE_FLAG_SYSCALL_SEEDED 2u
/* thread_sample.syscall of a thread whose system call is not known. */
#define TSTATE_SYSCALL_UNKNOWN (-2)

/* A thread's state at one pass of the thread-state sampler (record
 * --threads, sonde threads; struct sonde_thread_sample): every target
 * thread, running or not, once per pass. */
struct thread_sample {
	uint64_t time_ns;          /* the pass's time (CLOCK_MONOTONIC) */
	uint64_t state_since_ns;   /* since when the thread was in `state` */
	uint64_t syscall_since_ns; /* since when it was in `syscall` (syscall >= 0) */
	uint64_t span_id;          /* its outermost traced call in flight, 0: none */
	uint64_t span_start_ns;    /* when that call began */
	/* Its last stack (0: none known): the one it last left the CPU with,
	 * or, running, its last on-CPU sample's when newer (stack_on_cpu);
	 * taken at stack_ns. */
	uint64_t stack_ns;
	uint32_t stack;            /* stack node id */
	uint32_t thread;           /* index into threads */
	uint32_t probe;            /* that call's probe (span_id != 0) */
	int32_t syscall;           /* the system call it was in, -1: none */
	uint8_t state;             /* enum thread_run_state */
	uint8_t flags;             /* TSTATE_FLAG_* */
	bool stack_on_cpu;
};

/* A value a probe captures (values.h). */
struct probe_capture {
	uint32_t probe;
	char *name;  /* as written: "req->hdr.size" */
	char *type;  /* its C type */
	enum capture_kind kind;
	struct capture_enumerator *enums; /* CAPTURE_ENUM: names of values */
	uint32_t nenums;
};

/* One hit of a capturing probe: its values are hit_values[first .. first + n). */
struct probe_hit {
	uint64_t time_ns;
	uint64_t span_id; /* the call it was captured at the entry of (0: none) */
	uint32_t probe;
	uint32_t thread;
	uint32_t first, n;
};

struct hit_value {
	uint32_t capture;  /* index into captures */
	uint8_t status;    /* enum capture_status */
	uint64_t num;      /* a number (signed ones sign-extended), or an address */
	const char *text;  /* strings, enumerator names, true/false (interned); NULL for numbers */
};

/* The most the weights of a profile's samples may add up to. pprof and
 * recordings store weights as signed 64-bit integers; and with the sum of
 * every weight ever added bounded, no sum over some of them (a flame node's
 * total, a thread's, a view's, a window's) can overflow. */
#define PROFILE_MAX_WEIGHT ((uint64_t)INT64_MAX)

struct meta_entry {
	char *key, *value;
};

struct profile {
	struct frame_table *frames;
	struct stack_node *nodes; /* nodes[0] is the empty stack */
	size_t nnodes, nodes_cap;
	struct hashmap node_index; /* parent << 32 | frame -> node */
	struct thread_info *threads;
	size_t nthreads, threads_cap;
	struct hashmap thread_index; /* hash of (pid, tid, comm) -> thread (hashed keys) */
	struct sample *samples;
	size_t nsamples, samples_cap;
	char **events;
	size_t nevents, events_cap;
	struct meta_entry *meta;
	size_t nmeta, meta_cap;
	struct span_link *span_links;
	size_t nspan_links, span_links_cap;
	struct probe_info *probes;
	size_t nprobes, probes_cap;
	struct span *spans;
	size_t nspans, spans_cap;
	struct point_calls *point_calls;
	size_t npoint_calls, point_calls_cap;
	struct hashmap span_index; /* span id -> index in spans */
	struct probe_capture *captures;
	size_t ncaptures, captures_cap;
	struct probe_hit *hits;
	size_t nhits, hits_cap;
	struct hit_value *hit_values;
	size_t nhit_values, hit_values_cap;
	struct thread_sample *thread_samples; /* in pass order */
	size_t nthread_samples, thread_samples_cap;
	uint32_t *function_of; /* frame id -> its function frame (cache) */
	size_t nfunction_of;
	uint32_t *line_of; /* frame id -> its function:line frame (cache) */
	size_t nline_of;
	uint32_t offcpu_event; /* index of PROFILE_EVENT_OFFCPU in events, or UINT32_MAX */
	uint32_t waker_event;  /* index of PROFILE_EVENT_WAKER in events, or UINT32_MAX */
	uint32_t main_event;   /* the first other event (on-CPU samples), or UINT32_MAX */
	uint64_t weight_added; /* every sample weight ever added (trimmed ones too),
				* at most PROFILE_MAX_WEIGHT */
};

struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Interns a stack given root first; returns its node id (0 for depth 0). */
uint32_t profile_stack_intern(struct profile *p, const uint32_t *frames_root_first, size_t n);

/* Interns the child (parent, frame) of an existing node; returns its id. */
uint32_t profile_stack_child(struct profile *p, uint32_t parent, uint32_t frame);

/* Frames a view reads a stack into (a stack of the kernel's 127 user and
 * 127 kernel frames with their inlined frames fits; a deeper one is cut). */
#define PROFILE_STACK_READ 512

/* Writes a stack's frame ids root first into out (at most max) and returns
 * the stack's depth (which may exceed max). */
size_t profile_stack_frames(const struct profile *p, uint32_t node, uint32_t *out, size_t max);

uint32_t profile_thread_intern(struct profile *p, uint32_t pid, uint32_t tid, const char *comm);

/* Index of an event name, added when new. */
uint32_t profile_event_intern(struct profile *p, const char *name);

/* Appends a sample. Its `links`/`nlinks` fields are set here: pass the spans
 * in flight (outermost first, n may be 0) and they are stored for it.
 * Returns 0, or -1 (nothing added) when its weight would take the sum of
 * the weights added so far past PROFILE_MAX_WEIGHT: readers refuse such
 * input with one line naming where. */
int profile_add_sample(struct profile *p, const struct sample *s, const struct span_link *links,
		       size_t n);

/* Appends a thread's state at a pass (passes in time order). */
void profile_add_thread_sample(struct profile *p, const struct thread_sample *ts);

/* Forgets the thread samples of passes before `before_ns` (live views
 * keep the last ones). */
void profile_trim_thread_samples(struct profile *p, uint64_t before_ns);

/* Adds `weight` to sample `index` (readers that merge repeated stacks).
 * Returns 0, or -1 (nothing added) past PROFILE_MAX_WEIGHT, as above. */
int profile_sample_add_weight(struct profile *p, size_t index, uint64_t weight);

/* Whether the weights, each multiplied by `ns_per_weight` (a sampling
 * interval), still add up to at most PROFILE_MAX_WEIGHT nanoseconds. Writers
 * that turn weights into time (pprof's cpu value, speedscope's weights)
 * check this and refuse otherwise (-1, errno EOVERFLOW) rather than write a
 * saturated or wrapped number. */
bool profile_weight_ns_fits(const struct profile *p, double ns_per_weight);

/* Adds a probe; returns its index. */
uint32_t profile_probe_add(struct profile *p, const char *name, const char *binary,
			   uint64_t offset);

/* Sets the calls of `probe` while line probe `point_probe` was traced, and
 * those that ran the line. */
void profile_point_calls_set(struct profile *p, uint32_t point_probe, uint32_t probe,
			     uint64_t calls, uint64_t hit);

/* Index of the probe named `name`, or -1. */
int profile_probe_find(const struct profile *p, const char *name);

/* Makes probe a branch outcome (b copied). */
void profile_probe_set_branch(struct profile *p, uint32_t probe, const struct probe_branch *b);

/* The probe counting the other way of branch outcome `probe`'s jump, or
 * -1. */
int profile_branch_other(const struct profile *p, uint32_t probe);

/* Adds a span (its id must be new; a duplicate id is ignored and -1
 * returned). Returns its index. */
int64_t profile_span_add(struct profile *p, const struct span *sp);

/* Index of the span with this id, or -1. */
int64_t profile_span_find(const struct profile *p, uint64_t id);

/* The span id of the outermost call of `probe` sample s was taken in (the
 * one that decides it for a view on the probe: recursion), 0 when it was
 * taken in none. */
uint64_t profile_sample_call(const struct profile *p, const struct sample *s, uint32_t probe);

void profile_meta_set(struct profile *p, const char *key, const char *value);
const char *profile_meta_get(const struct profile *p, const char *key);
/* A numeric metadata value; 0 when absent or empty. */
uint64_t profile_meta_u64(const struct profile *p, const char *key);
double profile_meta_double(const struct profile *p, const char *key);

/* What a reader of text left out of its input: lines it skipped (neither a
 * record nor part of one) and a last record no end marked (a capture cut
 * short), as one line for the user in buf; returns false (buf "") when it
 * left nothing out. profile_input_note reads them from a profile's meta
 * input_skipped_lines and input_unterminated_records. */
bool input_note_format(uint64_t skipped_lines, uint64_t unterminated_records, char *buf,
		       size_t n);
bool profile_input_note(const struct profile *p, char *buf, size_t n);

/* The profile's time origin: meta start_ns, or the earliest sample (when
 * has_times) or span start when that is earlier or start_ns is unknown;
 * 0 when nothing has a time. Exporters make their times relative to it. */
uint64_t profile_time_base(const struct profile *p, bool has_times);

/* qsort_r comparators over uint32_t indexes (arg = the profile): samples in
 * time order; spans outer first (by start, then longer, then shallower).
 * Ties keep index order, so sorts are stable. */
int profile_cmp_sample_index(const void *a, const void *b, void *profile);
int profile_cmp_span_index(const void *a, const void *b, void *profile);

/* Forgets old raw data, so a live session stays bounded: the first
 * `nsamples_drop` samples (in arrival order) with their span links, every
 * span that ended before `span_cutoff_ns`, and then the oldest spans beyond
 * `max_spans`; likewise the hits of capturing probes (and their values)
 * before `span_cutoff_ns`, and the oldest beyond `max_spans`. Stacks, threads, frames, probes, events and metadata stay, so
 * stack and thread ids keep their meaning; sample indexes shift down by
 * nsamples_drop. Returns the number of spans removed. */
size_t profile_trim(struct profile *p, size_t nsamples_drop, uint64_t span_cutoff_ns,
		    size_t max_spans);

/* When a span ends (start + duration, saturating). */
uint64_t span_end_ns(const struct span *sp);

/* Durations that stand for every call of a probe, ascending (caller frees):
 * the spans' (and calls still running at the end, with their elapsed time)
 * when the profile holds every call, else the histogram's
 * (latency_hist_durations: at most LATENCY_DURATIONS_MAX values at evenly spaced
 * ranks, plus the calls still running). *n receives the values returned;
 * profile_probe_calls says how many calls they stand for. */
uint64_t *profile_probe_durations(const struct profile *p, uint32_t probe, size_t *n);

/* Calls of a probe: completed (the kernel's count, or the spans' when the
 * profile has no histogram) plus those still running at the end. */
uint64_t profile_probe_calls(const struct profile *p, uint32_t probe);

/* Of those, the calls slower than ns (duration > ns, latency.h), counted as
 * the views take calls: one with a record by its duration, one the
 * kernel's histogram counts without a record as if the calls of its bucket
 * with none were spread evenly over the bucket. So when every call over ns
 * has a record (ns is over the keep threshold, or every call was kept),
 * the count is exact: the recording's `spans` with duration_ns > ns. */
uint64_t profile_probe_calls_over(const struct profile *p, uint32_t probe, uint64_t ns);

/* True when the sample is an off-CPU interval (event PROFILE_EVENT_OFFCPU). */
bool profile_sample_is_offcpu(const struct profile *p, const struct sample *s);

/* True when the sample is a waker (event PROFILE_EVENT_WAKER). */
bool profile_sample_is_waker(const struct profile *p, const struct sample *s);

/* Events. The on-CPU samples of a profile may be of several events (perf
 * script of `perf record -e cycles -e instructions`): their weights are of
 * different things and never add up, so a view takes one event's
 * (view_set_event; by default the profile's main_event, the first). The
 * index of the event named `name`, or -1. */
int64_t profile_event_find(const struct profile *p, const char *name);
/* The on-CPU samples of each event but `event`, removed (for exports that
 * write one event's); the off-CPU and waker ones stay. Returns how many
 * were removed; main_event is `event` afterwards. */
size_t profile_keep_event(struct profile *p, uint32_t event);

/* True when the sample's leaf is the "[sonde]" frame (sonde's own cost). */
bool profile_sample_is_overhead(const struct profile *p, const struct sample *s);

/* Removes those samples from the profile (for exports to formats that
 * cannot mark them). Returns how many were removed. */
size_t profile_drop_overhead(struct profile *p);

/* How flame trees group their root. */
enum flame_root {
	FLAME_ROOT_COMM,     /* process name (FlameGraph's default) */
	FLAME_ROOT_PID,      /* comm-PID */
	FLAME_ROOT_TID,      /* comm-PID/TID */
	FLAME_ROOT_NONE,     /* no process level */
};

/* The frame that stands for a frame's function in flame graphs and folded
 * stacks: same name and kind, no module, file or line — so samples at
 * different lines of one function merge, as FlameGraph merges by name. */
uint32_t profile_function_frame(struct profile *p, uint32_t frame);

/* Like profile_function_frame, but one frame per source line of a
 * function, as perf report's srcline: named "name:line" (a leaf's line is
 * where it ran, a caller's the line of its call), or the name alone where
 * the line is unknown. The result has line 0, so it maps to itself through
 * both functions. */
uint32_t profile_line_frame(struct profile *p, uint32_t frame);

#endif
