#include "collector.h"
#include "values.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "procmaps.h"
#include "sonde_abi.h"
#include "symstack.h"
#include "util.h"
#include "view.h"

#define MAX_EVENTS 8
/* Every user address can expand into an inline chain; kernel frames too. */
/* The profile keeps the kernel's values (and recordings keep the profile's). */
_Static_assert((int)TSTATE_RUNNING == SONDE_OFF_NONE && (int)TSTATE_RUNNABLE == SONDE_OFF_RUNNABLE &&
		       (int)TSTATE_SLEEPING == SONDE_OFF_SLEEPING &&
		       (int)TSTATE_UNINTERRUPTIBLE == SONDE_OFF_UNINTERRUPTIBLE &&
		       (int)TSTATE_DISK == SONDE_OFF_DISK && (int)TSTATE_STOPPED == SONDE_OFF_STOPPED,
	       "enum thread_run_state is the kernel's enum sonde_off_state");
_Static_assert(TSTATE_FLAG_SEEDED == SONDE_TSTATE_SEEDED &&
		       TSTATE_FLAG_SYSCALL_SEEDED == SONDE_TSTATE_SYSCALL_SEEDED &&
		       TSTATE_SYSCALL_UNKNOWN == SONDE_SYSCALL_UNKNOWN,
	       "thread states' flags are the kernel's");
_Static_assert(LATENCY_LOGLIN_SUB_BITS == SONDE_HIST_SUB_BITS &&
		       LATENCY_LOGLIN_BUCKETS == SONDE_HIST_BUCKETS,
	       "latency's histogram is the kernel's");

#define MAX_FRAMES (SONDE_MAX_STACK * (SYM_MAX_INLINE + 1))
#define USER_FRAMES_MAX (SYMSTACK_MAX(SONDE_MAX_STACK) + SONDE_PY_FRAMES)
_Static_assert(sizeof(__u64) == sizeof(uint64_t), "record addresses are 64 bits");

/* A thread's last stacks, which its thread-state rows name: those it last
 * left the CPU with (SONDE_REC_THREAD_STACK), and its last on-CPU sample's. */
struct last_stacks {
	uint64_t left_ns;   /* when it left the CPU with left_stack (0: none yet) */
	uint64_t sample_ns; /* its last on-CPU sample's time (0: none yet) */
	uint32_t left_stack, sample_stack;
};

struct collector {
	struct profile *p;
	struct symbolizer *syms;
	struct collector_stats stats;
	bool keep_last; /* thread states are on: keep each thread's last stacks */
	uint64_t end_ns;  /* the recording's end (0: not ended) */
	struct hashmap last_of_tid; /* tid -> index into last */
	struct last_stacks *last;
	size_t nlast, last_cap;
	uint32_t event_map[MAX_EVENTS];
	uint64_t event_weight[MAX_EVENTS];
	uint32_t frames[MAX_FRAMES];
	/* One record's frames as the symbolizer gives them (innermost first). */
	struct sym_frame usf[USER_FRAMES_MAX];
	struct sym_frame ksf[SONDE_MAX_STACK];
};

struct collector *collector_new(struct profile *p, struct symbolizer *syms)
{
	struct collector *c = xcalloc(1, sizeof(*c));
	c->p = p;
	c->syms = syms;
	for (int i = 0; i < MAX_EVENTS; i++)
		c->event_weight[i] = 1;
	return c;
}

void collector_keep_last_stacks(struct collector *c, bool on)
{
	if (c)
		c->keep_last = on;
}

void collector_set_end(struct collector *c, uint64_t end_ns)
{
	c->end_ns = end_ns;
}

/* Whether a record lies after the recording's end (a handler that ran as
 * it ended); an off-CPU interval that only ends after it is cut there
 * (*off_ns). */
static bool after_end(const struct collector *c, const struct sonde_sample *s, uint64_t *off_ns)
{
	*off_ns = s->off_ns;
	if (!c->end_ns)
		return false;
	if (s->hdr.time_ns >= c->end_ns)
		return true;
	if (s->off_ns > c->end_ns - s->hdr.time_ns)
		*off_ns = c->end_ns - s->hdr.time_ns;
	return false;
}

void collector_free(struct collector *c)
{
	if (!c)
		return; /* (a session replaying a recording has none) */
	hashmap_free(&c->last_of_tid);
	free(c->last);
	free(c);
}

static struct last_stacks *last_stacks_of(struct collector *c, uint32_t tid)
{
	bool added;
	uint64_t *at = hashmap_put(&c->last_of_tid, tid, &added);
	if (added) {
		grow_array((void **)&c->last, &c->last_cap, c->nlast + 1, sizeof(*c->last));
		c->last[c->nlast] = (struct last_stacks){0};
		*at = c->nlast++;
	}
	return &c->last[*at];
}

void collector_set_event(struct collector *c, uint32_t bpf_index, const char *name,
			 uint64_t weight)
{
	if (bpf_index >= MAX_EVENTS)
		return;
	c->event_map[bpf_index] = profile_event_intern(c->p, name);
	c->event_weight[bpf_index] = weight ? weight : 1;
}

void collector_get_stats(const struct collector *c, struct collector_stats *out)
{
	*out = c->stats;
}

static size_t intern_sym_frames(struct collector *c, size_t n, const struct sym_frame *sf,
				int count)
{
	/* Symbolizer order is innermost first; the stack wants outermost first. */
	for (int i = count - 1; i >= 0 && n < MAX_FRAMES; i--) {
		c->frames[n] = frames_intern(c->p->frames, sf[i].name, sf[i].module, sf[i].file,
					     sf[i].line, sf[i].kind);
		frames_set_system_name(c->p->frames, c->frames[n++], sf[i].system_name);
	}
	return n;
}

/* The record's stack in the profile: its user frames, its kernel frames
 * (or one "[sonde]" frame for sonde's own machinery: *overhead), and for
 * an off-CPU interval why the thread was away, on top. */
static uint32_t stack_of(struct collector *c, const struct sonde_sample *s, bool *overhead_out)
{
	int nk = s->nkernel, nu = s->nuser;
	c->stats.stack_errors += (s->kstack_err != 0) + (s->ustack_err != 0);
	/* The ABI's __u64 is the same 64 bits as uint64_t (static-asserted). */
	const uint64_t *kstack = (const uint64_t *)s->ips, *ustack = kstack + nk;
	if (nu == 0 && nk == 0)
		c->stats.empty_stacks++;
	/* The record's addresses go to the symbolizer once; a sample in
	 * sonde's machinery (a kernel frame of the uprobe path, or a user leaf
	 * in the uprobe page, left out: it is not the program's) comes back
	 * said. */
	struct symstack_sample in = {.kernel_ips = kstack, .nkernel = nk,
				     .pid = (pid_t)s->hdr.pid, .user = {.ips = ustack, .n = nu}};
	/* The Python frames after the native ones: a code object and where
	 * it is, two words each (sonde_abi.h). */
	struct pysyms_frame py[SONDE_PY_FRAMES];
	const uint64_t *pw = ustack + nu;
	int npy = s->npython < SONDE_PY_FRAMES ? s->npython : SONDE_PY_FRAMES;
	for (int i = 0; i < npy; i++)
		py[i] = (struct pysyms_frame){.code = pw[2 * i],
					      .instr = pw[2 * i + 1] & SONDE_PY_INSTR,
					      .run_start = (pw[2 * i + 1] & SONDE_PY_RUN_START) != 0};
	in.python = py;
	in.npython = npy;
	in.now_ns = npy ? monotonic_ns() : 0;
	c->stats.python_frames += (uint64_t)npy;
	if (s->unwind == SONDE_UNWIND_FP) { /* the table walk put them back itself */
		in.user.returns = (const uint64_t *)s->returns;
		in.user.nreturns = s->nreturns < SONDE_SAMPLE_SPANS ? s->nreturns : SONDE_SAMPLE_SPANS;
		in.user.chained = s->returns_chained;
	}
	struct symstack_frames out = {.user = c->usf, .user_max = USER_FRAMES_MAX, .kernel = c->ksf};
	symstack_resolve(c->syms, &in, &out);
	int nuf = out.nuser;
	bool overhead = out.overhead;
	c->stats.returns_restored += (uint64_t)out.info.returns_restored;
	if (out.info.broken) {
		c->stats.broken_stacks++;
		c->stats.broken_stack_frames += (uint64_t)out.info.broken_addresses;
	}
	/* Root first: the user frames from the outermost, then the kernel's. */
	size_t n = intern_sym_frames(c, 0, c->usf, nuf);
	if (overhead) {
		/* One frame for all of sonde's machinery, on top of the code it
		 * interrupted; views leave these samples out by default. */
		c->frames[n++] = frames_intern(c->p->frames, "[sonde]", "", "", 0, FRAME_OVERHEAD);
	} else {
		n = intern_sym_frames(c, n, c->ksf, nk);
	}
	/* An off-CPU interval: why the thread was away, on top. */
	if (s->off_ns && n < MAX_FRAMES && s->off_state == SONDE_OFF_WAKER) {
		char woken[SONDE_COMM_LEN + 1];
		memcpy(woken, s->woken_comm, SONDE_COMM_LEN);
		woken[SONDE_COMM_LEN] = 0;
		c->frames[n++] = view_waker_frame(c->p, woken);
	} else if (s->off_ns && n < MAX_FRAMES) {
		c->frames[n++] = view_state_frame(c->p, s->off_state, s->syscall);
	}
	*overhead_out = overhead;
	return profile_stack_intern(c->p, c->frames, n);
}

static void handle_sample(struct collector *c, const struct sonde_sample *s)
{
	char comm[SONDE_COMM_LEN + 1];
	memcpy(comm, s->hdr.comm, SONDE_COMM_LEN);
	comm[SONDE_COMM_LEN] = 0;
	uint64_t off_ns;
	if (after_end(c, s, &off_ns)) {
		c->stats.after_end++;
		return;
	}
	bool overhead;
	uint32_t stack = stack_of(c, s, &overhead);
	/* Of the on-CPU samples: an interval's weight is time, not a count. */
	c->stats.overhead_samples += overhead && !s->off_ns;

	struct span_link links[SONDE_SAMPLE_SPANS];
	uint32_t nlinks = s->nspans < SONDE_SAMPLE_SPANS ? s->nspans : SONDE_SAMPLE_SPANS;
	for (uint32_t i = 0; i < nlinks; i++)
		links[i] = (struct span_link){s->span_ids[i], s->span_probes[i]};
	if (s->span_depth > SONDE_SAMPLE_SPANS)
		c->stats.sample_spans_truncated++;

	uint32_t ev = s->event < MAX_EVENTS ? s->event : 0;
	struct sample out = {
		.time_ns = s->hdr.time_ns,
		.weight = s->off_ns ? off_ns : c->event_weight[ev],
		.cpu = s->hdr.cpu,
		.thread = profile_thread_intern(c->p, s->hdr.pid, s->hdr.tid, comm),
		.event = c->event_map[ev],
		.stack = stack,
	};
	/* Live weights are 1 a sample (or an event period): the profile's
	 * bound (2^63 - 1 in all) cannot be reached, but a refused sample is
	 * not counted as added. */
	if (profile_add_sample(c->p, &out, links, nlinks) == 0) {
		c->stats.samples++;
		c->stats.offcpu_intervals += s->off_ns != 0 && s->off_state != SONDE_OFF_WAKER;
		c->stats.wakers += s->off_state == SONDE_OFF_WAKER;
	}
	if (c->keep_last && !s->off_ns && !overhead && s->hdr.pid) { /* on the CPU: its last stack */
		struct last_stacks *l = last_stacks_of(c, s->hdr.tid);
		l->sample_ns = s->hdr.time_ns;
		l->sample_stack = stack;
	}
}

/* A thread's stacks when it last left the CPU, sent by a thread-state
 * pass: the rows that follow name them by that time. */
static void handle_thread_stack(struct collector *c, const struct sonde_sample *s)
{
	bool overhead;
	uint32_t stack = stack_of(c, s, &overhead);
	struct last_stacks *l = last_stacks_of(c, s->hdr.tid);
	l->left_ns = s->hdr.time_ns;
	l->left_stack = stack;
	c->stats.thread_stacks++;
}

static uint32_t thread_of(struct collector *c, const struct sonde_hdr *h)
{
	char comm[SONDE_COMM_LEN + 1];
	memcpy(comm, h->comm, SONDE_COMM_LEN);
	comm[SONDE_COMM_LEN] = 0;
	return profile_thread_intern(c->p, h->pid, h->tid, comm);
}

static void handle_span(struct collector *c, const struct sonde_span *r)
{
	if (r->probe >= c->p->nprobes) {
		c->stats.bad_records++;
		return;
	}
	struct span sp = {
		.id = r->span_id,
		.parent = r->parent_span_id,
		.start_ns = r->start_ns,
		.duration_ns = r->duration_ns,
		.raw_duration_ns = r->raw_duration_ns,
		.points = r->points,
		.probe = r->probe,
		.thread = thread_of(c, &r->hdr),
		.depth = r->depth,
	};
	if (profile_span_add(c->p, &sp) < 0)
		c->stats.bad_records++;
	else
		c->stats.spans++;
}

void collector_add_open_span(struct collector *c, const struct collector_open_span *o,
			     uint64_t end_ns)
{
	if (o->probe >= c->p->nprobes || profile_span_find(c->p, o->span_id) >= 0)
		return;
	/* The thread is known from its samples or spans, unless it never had any. */
	uint32_t thread = UINT32_MAX;
	for (size_t i = c->p->nthreads; i-- > 0;)
		if (c->p->threads[i].tid == o->tid) {
			thread = (uint32_t)i;
			break;
		}
	if (thread == UINT32_MAX)
		thread = profile_thread_intern(c->p, o->tid, o->tid, "?");
	struct span sp = {
		.id = o->span_id,
		.parent = o->parent_id,
		.start_ns = o->start_ns,
		.raw_duration_ns = end_ns > o->start_ns ? end_ns - o->start_ns : 0,
		.probe = o->probe,
		.thread = thread,
		.depth = o->depth,
		.open = true,
	};
	sp.duration_ns = sp.raw_duration_ns > o->own_ns ? sp.raw_duration_ns - o->own_ns : 0;
	if (profile_span_add(c->p, &sp) >= 0)
		c->stats.open_spans++;
}

static void handle_thread(struct collector *c, const struct sonde_thread_sample *r)
{
	struct thread_sample ts = {
		.time_ns = r->hdr.time_ns,
		.state_since_ns = r->state_since_ns,
		.syscall_since_ns = r->syscall_since_ns,
		.thread = thread_of(c, &r->hdr),
		.syscall = r->syscall,
		.state = r->state,
		.flags = r->flags,
	};
	if (r->nspans && r->span_probes[0] < c->p->nprobes) {
		ts.span_id = r->span_ids[0];
		ts.span_start_ns = r->span_start_ns[0];
		ts.probe = r->span_probes[0];
	}
	/* Its last stacks: a running thread's last on-CPU sample when that is
	 * newer, else those it last left the CPU with (the pass sent them
	 * before this row, or an earlier pass did). */
	const struct last_stacks *l = last_stacks_of(c, r->hdr.tid);
	if (r->state == SONDE_OFF_NONE && l->sample_ns > r->stack_ns && l->sample_stack) {
		ts.stack = l->sample_stack;
		ts.stack_ns = l->sample_ns;
		ts.stack_on_cpu = true;
	} else if (r->stack_ns && l->left_ns == r->stack_ns) {
		ts.stack = l->left_stack;
		ts.stack_ns = l->left_ns;
	} else if (r->stack_ns) {
		c->stats.thread_stacks_missing++; /* its record was lost */
	}
	profile_add_thread_sample(c->p, &ts);
	c->stats.thread_samples++;
}

/* True when tid is a process's main thread (fork records do not say
 * whether the child is a thread or a process). */
static bool is_process(uint32_t tid)
{
	return procmaps_tgid((pid_t)tid) == (pid_t)tid;
}

/* Handles the record; the caller says what it added by the profile's
 * counts before and after. */
static void handle_record(struct collector *c, const void *data, size_t size)
{
	const struct sonde_hdr *h = data;
	if (size < sizeof(*h)) {
		c->stats.bad_records++;
		return;
	}
	switch (h->kind) {
	case SONDE_REC_SAMPLE:
	case SONDE_REC_THREAD_STACK: {
		const struct sonde_sample *smp = data;
		if (size < SONDE_SAMPLE_HEAD || smp->nkernel > SONDE_MAX_STACK ||
		    smp->nuser > SONDE_MAX_STACK || smp->npython > SONDE_PY_FRAMES ||
		    size < SONDE_SAMPLE_BYTES((size_t)smp->nkernel + smp->nuser +
					      2 * (size_t)smp->npython)) {
			c->stats.bad_records++;
			return;
		}
		c->stats.sample_bytes += (size + 8 + 7) / 8 * 8; /* as the ring buffer holds it */
		if (h->kind == SONDE_REC_SAMPLE)
			handle_sample(c, smp);
		else
			handle_thread_stack(c, smp);
		break;
	}
	case SONDE_REC_SPAN:
		if (size < sizeof(struct sonde_span)) {
			c->stats.bad_records++;
			return;
		}
		handle_span(c, data);
		break;
	case SONDE_REC_VALUES:
		/* A record of a program the probe no longer runs is dropped
		 * silently: the new program's records follow. */
		if (size < sizeof(struct sonde_values) ||
		    values_add_record(c->p, data, thread_of(c, h)) == -1) {
			c->stats.bad_records++;
			return;
		}
		break;
	case SONDE_REC_THREAD:
		if (size < sizeof(struct sonde_thread_sample)) {
			c->stats.bad_records++;
			return;
		}
		handle_thread(c, data);
		break;
	case SONDE_REC_THREAD_PASS: {
		const struct sonde_thread_pass *tp = data;
		if (size < sizeof(*tp)) {
			c->stats.bad_records++;
			return;
		}
		c->stats.thread_passes++;
		c->stats.thread_pass_ns += tp->run_ns;
		break;
	}
	case SONDE_REC_EXEC:
		/* The address space was replaced: re-read maps now, while the
		 * new image surely runs. */
		symbols_note_exec(c->syms, (pid_t)h->pid, h->time_ns);
		symbols_note_process(c->syms, (pid_t)h->pid);
		c->stats.execs++;
		break;
	case SONDE_REC_EXIT:
		c->stats.exits++;
		break;
	case SONDE_REC_FORK: {
		/* A new process: read its maps now, while it surely lives (its
		 * samples reach us in batches, maybe after it exited). */
		const struct sonde_task_event *t = data;
		if (size >= sizeof(*t) && is_process(t->child_pid))
			symbols_note_process(c->syms, (pid_t)t->child_pid);
		c->stats.forks++;
		break;
	}
	default:
		c->stats.bad_records++;
		break;
	}
}

bool collector_fork_of(const void *data, size_t size, uint32_t *child, uint64_t *time_ns)
{
	const struct sonde_task_event *t = data;
	if (size < sizeof(*t) || t->hdr.kind != SONDE_REC_FORK)
		return false;
	*child = t->child_pid;
	*time_ns = t->hdr.time_ns;
	return true;
}

bool collector_stack_of(const void *data, size_t size, uint32_t *pid)
{
	const struct sonde_hdr *h = data;
	if (size < sizeof(*h) || (h->kind != SONDE_REC_SAMPLE && h->kind != SONDE_REC_THREAD_STACK))
		return false;
	*pid = h->pid;
	return true;
}

bool collector_exec_of(const void *data, size_t size, uint32_t *pid, uint64_t *time_ns)
{
	const struct sonde_hdr *h = data;
	if (size < sizeof(struct sonde_task_event) || h->kind != SONDE_REC_EXEC)
		return false;
	*pid = h->pid;
	*time_ns = h->time_ns;
	return true;
}

void collector_handle(struct collector *c, const void *data, size_t size,
		      struct collector_added *added)
{
	size_t nsamples = c->p->nsamples, nspans = c->p->nspans;
	handle_record(c, data, size);
	if (added)
		*added = (struct collector_added){.first_sample = nsamples,
						  .nsamples = c->p->nsamples - nsamples,
						  .first_span = nspans,
						  .nspans = c->p->nspans - nspans};
}
