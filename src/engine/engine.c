#define _GNU_SOURCE
#include "engine.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "errbuf.h"
#include "insn.h"
#include "offcpucut.h"
#include "sonde.skel.h"
#include "uprobes.h"
#include "sonde_abi.h"
#include "tracefs.h"
#include "tstate.h"
#include "ldso.h"
#include "unwind.h"
#include "util.h"

#define MAX_CPUS 1024

struct span_attachment {
	uint32_t probe; /* the caller's id */
	uint32_t slot;  /* the kernel's: attach cookie and map key */
	pid_t pid;      /* the process its uprobes are for, -1: every process */
	int enter, exit; /* link fds (uprobes.h); a uprobe_multi link's fd is
			  * in the attachment of every probe it serves */
};

#define NO_PROBE UINT32_MAX

struct engine {
	struct engine_options opt;
	struct sonde_bpf *skel;
	struct ring_buffer *rb;
	int perf_fds[MAX_CPUS];
	struct bpf_link *perf_links[MAX_CPUS];
	int ncpus;
	struct bpf_link *tp_link;
	/* sample_irq_exit on irq_vectors:local_timer_exit, sample_work_entry
	 * and _exit on irq_work_entry/exit: time the end of a timer sample's
	 * interrupt and of the wake-up it raised (NULL where the tracepoints
	 * are missing: the calibrated median charges them). */
	struct bpf_link *tail_links[3];
	struct bpf_link *task_links[3];
	/* offcpu_switch on sched_switch: while off-CPU intervals (--off-cpu)
	 * or thread states are on (it keeps each thread's last stacks for
	 * both; bss offcpu_intervals says whether it sends intervals). */
	struct bpf_link *offcpu_links[1];
	/* raw_syscalls sys_enter/sys_exit (bpf/threads.bpf.c): while off-CPU
	 * intervals or thread states are on (both read the system call). */
	struct bpf_link *sys_links[2];
	struct bpf_link *tstate_links[2]; /* sched_switch, sched_wakeup: with thread states */
	int tstate_fd;                    /* the pass's perf event, -1 */
	struct bpf_link *tstate_pass;
	struct bpf_link *wakers_link;     /* sched_waking: while --wakers */
	char offcpu_unavailable[512];     /* why off-CPU cannot be recorded ("" when it can) */
	uint64_t offcpu_cut_below;        /* intervals cut at the end, then below the minimum */
	struct span_attachment *spans;
	size_t nspans, spans_cap;
	bool multi; /* uprobes go on in uprobe_multi links (uprobes.h) */
	bool state_programs; /* the off-CPU and thread-state programs are loaded */
	bool thread_programs; /* of those, the thread states' (not in a fixed session without) */
	/* The map `threads`, mapped (struct sonde_thread_state says how a
	 * thread finds its slot). */
	struct sonde_thread_state *thread_slots;
	uint32_t nthread_slots; /* SONDE_THREAD_SLOTS, or 1 with no_spans */
	size_t thread_slots_len;
	/* Per slot (the kernel's probe id): */
	uint32_t slot_probe[SONDE_MAX_PROBES]; /* the caller's id, NO_PROBE when not used */
	uint32_t probe_gen[SONDE_MAX_PROBES];  /* attach generation */
	uint8_t probe_class[SONDE_MAX_PROBES]; /* enum engine_insn_class */
	struct engine_span_policy policy[SONDE_MAX_PROBES];
	uint8_t point_bit[SONDE_MAX_PROBES]; /* a point probe's bit + 1; 0: a span probe */
	bool slot_active[SONDE_MAX_PROBES];  /* as last written to its probe_cfg */
	bool slot_fetch[SONDE_MAX_PROBES];   /* it has a capture program (probe_cfg.fetch) */
	/* A capturing point probe's programs, one per address: fetch_progs
	 * keys SONDE_MAX_PROBES + point_progs_first .. + point_progs_n - 1. */
	uint16_t point_progs_first[SONDE_MAX_PROBES], point_progs_n[SONDE_MAX_PROBES];
	bool point_prog_used[SONDE_POINT_PROGS];
	struct sonde_sampler_config sampler; /* the filters in force (slots) */
	struct engine_trap_costs trap_costs[INSN_CLASSES];
	uint64_t open_span_ids; /* ids given to in-flight calls that had none */
	bool spans_paused;      /* engine_pause_spans: no probe counts any more */
	/* Attaches and removes uprobes where no signal to sonde can interrupt
	 * the kernel half-way (uprobes.h); removals in the background: the
	 * kernel takes ~0.2 s per uprobe, which would stall the event loop. A
	 * slot is reused at once: its old uprobes, until the kernel has removed
	 * them, carry an older generation in their cookie, which the BPF
	 * programs ignore. */
	struct uprobes *up;
	unsigned char *recbuf; /* a record with its slots turned into ids */
	size_t recbuf_cap;
	struct unwind *unwind; /* NULL with --unwind fp */
	struct ring_buffer *unwind_rb; /* its requests */
};

/* libbpf's own log, with -v: its messages come in pieces of lines, without
 * a context to hand them to, so they go where libbpf prints by default. */
static int libbpf_print_all(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

/* Without -v, failures surface as sonde's own one-line errors instead. */
static int libbpf_print_none(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

/* A note for the caller, with verbose only (engine_options.note). */
static void note_verbose(const struct engine *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note_verbose(const struct engine *e, const char *fmt, ...)
{
	if (!e->opt.verbose || !e->opt.note)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *line = xvasprintf(fmt, ap);
	va_end(ap);
	e->opt.note(e->opt.note_arg, line);
	free(line);
}

/* Records name probes by slot; callers know them by their own ids. Returns
 * the record to deliver (itself when every slot is its own id, the usual
 * case) or NULL for a span of a probe no longer attached (its calls were
 * delivered when it was detached; see detach_probe). */
static const void *record_with_ids(struct engine *e, const void *data, size_t size)
{
	const struct sonde_hdr *h = data;
	if (h->kind == SONDE_REC_VALUES && size >= sizeof(struct sonde_values)) {
		uint32_t slot = ((const struct sonde_values *)data)->probe;
		uint32_t id = slot < SONDE_MAX_PROBES ? e->slot_probe[slot] : NO_PROBE;
		if (id == slot)
			return data;
		if (id == NO_PROBE)
			return NULL;
		grow_array((void **)&e->recbuf, &e->recbuf_cap, size, 1);
		memcpy(e->recbuf, data, size);
		((struct sonde_values *)e->recbuf)->probe = id;
		return e->recbuf;
	}
	if (h->kind == SONDE_REC_THREAD && size >= sizeof(struct sonde_thread_sample)) {
		const struct sonde_thread_sample *t = data;
		bool same = true;
		for (uint32_t i = 0; i < t->nspans && i < SONDE_THREAD_SPANS; i++)
			same &= t->span_probes[i] < SONDE_MAX_PROBES &&
				e->slot_probe[t->span_probes[i]] == t->span_probes[i];
		if (same)
			return data;
		grow_array((void **)&e->recbuf, &e->recbuf_cap, size, 1);
		memcpy(e->recbuf, data, size);
		struct sonde_thread_sample *r = (struct sonde_thread_sample *)e->recbuf;
		for (uint32_t i = 0; i < r->nspans && i < SONDE_THREAD_SPANS; i++)
			r->span_probes[i] = r->span_probes[i] < SONDE_MAX_PROBES
						    ? e->slot_probe[r->span_probes[i]]
						    : NO_PROBE;
		return e->recbuf;
	}
	if (h->kind == SONDE_REC_SPAN && size >= sizeof(struct sonde_span)) {
		uint32_t slot = ((const struct sonde_span *)data)->probe;
		uint32_t id = slot < SONDE_MAX_PROBES ? e->slot_probe[slot] : NO_PROBE;
		if (id == slot)
			return data;
		if (id == NO_PROBE)
			return NULL;
	} else if ((h->kind == SONDE_REC_SAMPLE || h->kind == SONDE_REC_THREAD_STACK) &&
		   size >= SONDE_SAMPLE_HEAD) {
		const struct sonde_sample *s = data;
		bool same = true;
		for (uint32_t i = 0; i < s->nspans && i < SONDE_SAMPLE_SPANS; i++)
			same &= s->span_probes[i] < SONDE_MAX_PROBES &&
				e->slot_probe[s->span_probes[i]] == s->span_probes[i];
		if (same)
			return data;
	} else {
		return data;
	}
	grow_array((void **)&e->recbuf, &e->recbuf_cap, size, 1);
	memcpy(e->recbuf, data, size);
	if (h->kind == SONDE_REC_SPAN) {
		struct sonde_span *r = (struct sonde_span *)e->recbuf;
		r->probe = e->slot_probe[r->probe];
	} else {
		struct sonde_sample *r = (struct sonde_sample *)e->recbuf;
		for (uint32_t i = 0; i < r->nspans && i < SONDE_SAMPLE_SPANS; i++)
			r->span_probes[i] = r->span_probes[i] < SONDE_MAX_PROBES
						    ? e->slot_probe[r->span_probes[i]]
						    : NO_PROBE;
	}
	return e->recbuf;
}

/* The unwind tables' requests (a miss, an exec), and the exits that may
 * free tables. Requests are read before every record of the main ring
 * buffer, so a load does not wait behind samples being symbolized. */
static int on_unwind_request(void *ctx, void *data, size_t size)
{
	struct engine *e = ctx;
	const struct sonde_unwind_request *r = data;
	char err[256];
	if (size < sizeof(*r))
		return 0;
	if (r->kind == SONDE_UNWIND_REQ_EXEC)
		unwind_load_pid(e->unwind, (pid_t)r->pid, err, sizeof(err));
	else
		unwind_on_miss(e->unwind, (pid_t)r->pid);
	return 0;
}

static void unwind_follow(struct engine *e, const void *data, size_t size)
{
	const struct sonde_hdr *h = data;
	if (!e->unwind)
		return;
	ring_buffer__consume(e->unwind_rb);
	if (size >= sizeof(*h) && h->kind == SONDE_REC_EXIT)
		unwind_on_exit(e->unwind, (pid_t)h->pid);
}

static int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct engine *e = ctx;
	unwind_follow(e, data, size);
	const void *rec = record_with_ids(e, data, size);
	return rec ? e->opt.on_record(e->opt.arg, rec, size) : 0;
}

static void explain_load_error(int err, char *buf, size_t len)
{
	if (err == -EPERM || err == -EACCES)
		snprintf(buf, len,
			 "not allowed to load BPF programs (%s): run as root, or grant CAP_BPF "
			 "and CAP_PERFMON",
			 strerror(-err));
	else
		snprintf(buf, len,
			 "cannot load sonde's BPF programs: %s (kernel without BPF, BTF or "
			 "ring buffer support? run with -v for the verifier log)",
			 strerror(-err));
}

/* The programs of off-CPU intervals and thread states: the tracepoints
 * (and the pass) a kernel may lack. */
#define STATE_PROGRAMS 8
static struct bpf_program **offcpu_programs(struct sonde_bpf *skel, struct bpf_program **out)
{
	out[0] = skel->progs.offcpu_switch;
	out[1] = skel->progs.tstate_sys_enter;
	out[2] = skel->progs.tstate_sys_exit;
	out[3] = skel->progs.offcpu_wakeup;
	out[4] = skel->progs.tstate_switch;
	out[5] = skel->progs.tstate_wakeup;
	out[6] = skel->progs.threads_pass;
	out[7] = NULL;
	return out;
}

/* Whether the off-CPU and thread-state programs are loaded: not in a
 * fixed session that gathers neither. */
static bool loads_state_programs(const struct engine_options *o)
{
	return !o->fixed || o->off_cpu || o->wakers || o->tstate_freq;
}

/* The skeleton, opened and configured, not loaded yet (NULL, errno). */
static struct sonde_bpf *open_skeleton(const struct engine_options *o, size_t rb,
				       uint32_t unwind_rows, bool multi)
{
	struct sonde_bpf *skel = sonde_bpf__open();
	if (!skel)
		return NULL;
	if (multi) { /* the uprobe programs, for uprobe_multi links only */
		struct bpf_program *up[] = {skel->progs.span_enter, skel->progs.span_exit,
					    skel->progs.point_hit};
		for (size_t i = 0; i < sizeof(up) / sizeof(*up); i++)
			bpf_program__set_expected_attach_type(
				up[i], (enum bpf_attach_type)UPROBES_MULTI_ATTACH_TYPE);
	}
	if (o->fixed) {
		/* The perf-event program also serves the sample calibration
		 * (cpu-clock), whatever the session's event. */
		bool tp = !o->no_sampler && o->event.type == EVENT_TRACEPOINT;
		bool perf = (!o->no_sampler && !tp) || o->calibrate_samples;
		bpf_program__set_autoload(skel->progs.sample_tp, tp);
		bpf_program__set_autoload(skel->progs.sample_perf, perf);
		bpf_program__set_autoload(skel->progs.sample_irq_exit, perf);
		bpf_program__set_autoload(skel->progs.sample_work_entry, perf);
		bpf_program__set_autoload(skel->progs.sample_work_exit, perf);
		if (o->no_spans) {
			bpf_program__set_autoload(skel->progs.span_enter, false);
			bpf_program__set_autoload(skel->progs.span_exit, false);
			bpf_program__set_autoload(skel->progs.point_hit, false);
			/* No thread gets a state: one slot, not 100 MB to zero
			 * (a lookup past the end finds no state). */
			bpf_map__set_max_entries(skel->maps.threads, 1);
		}
		if (!loads_state_programs(o)) {
			struct bpf_program *progs[STATE_PROGRAMS];
			offcpu_programs(skel, progs);
			for (int i = 0; progs[i]; i++)
				bpf_program__set_autoload(progs[i], false);
		}
		/* Of the rest, only what the session gathers: ~0.2 s of the
		 * verifier's time on a busy machine. */
		if (!o->wakers)
			bpf_program__set_autoload(skel->progs.offcpu_wakeup, false);
		if (!o->tstate_freq) {
			bpf_program__set_autoload(skel->progs.tstate_switch, false);
			bpf_program__set_autoload(skel->progs.tstate_wakeup, false);
			bpf_program__set_autoload(skel->progs.threads_pass, false);
		}
		if (o->no_points)
			bpf_program__set_autoload(skel->progs.point_hit, false);
	}
	bpf_map__set_max_entries(skel->maps.events, (uint32_t)rb);
	skel->rodata->filter_mode = o->system_wide ? SONDE_FILTER_ALL : SONDE_FILTER_TGIDS;
	skel->rodata->sample_event_index = 0;
	skel->rodata->tp_event_index = 0;
	skel->rodata->offcpu_event_index = ENGINE_EVENT_OFFCPU;
	skel->rodata->follow_children = o->no_children ? 0 : 1;
	skel->rodata->unwind_mode = o->unwind;
	bpf_map__set_max_entries(skel->maps.unwind_rows, unwind_rows);
	if (o->offcpu_threads)
		bpf_map__set_max_entries(skel->maps.offcpu_stash, o->offcpu_threads);
	if (o->tstate_threads) {
		bpf_map__set_max_entries(skel->maps.thread_now, o->tstate_threads);
		bpf_map__set_max_entries(skel->maps.tstate_tids, o->tstate_threads);
		skel->rodata->tstate_slots = o->tstate_threads;
	}
	/* Records wake the reader once a sixteenth of the buffer waits: rarely
	 * enough to spare the traced threads the wake-ups, soon enough that
	 * the buffer never fills between two of them. */
	skel->rodata->wakeup_bytes = rb / 16;
	return skel;
}

/* The skeleton again, without the off-CPU and thread-state programs
 * (NULL, errno). */
static struct sonde_bpf *reopen_without_offcpu(struct engine *e, const struct engine_options *o,
					       size_t rb, uint32_t unwind_rows)
{
	struct sonde_bpf *skel = open_skeleton(o, rb, unwind_rows, e->multi);
	if (!skel)
		return NULL;
	struct bpf_program *progs[STATE_PROGRAMS];
	offcpu_programs(skel, progs);
	for (int i = 0; progs[i]; i++)
		bpf_program__set_autoload(progs[i], false);
	return skel;
}

/* What engine_set_* say in a session whose gathering is fixed. */
static const char fixed_refusal[] =
	"what this session gathers cannot change (only a live session's can: sonde top, serve)";

/* The programs that time a timer sample's interrupt to its end; without
 * them (a kernel without these tracepoints) the calibrated median charges
 * it, as the rest it cannot time. */
static void attach_sample_tails(struct engine *e)
{
	struct bpf_program *progs[3] = {e->skel->progs.sample_irq_exit,
					e->skel->progs.sample_work_entry,
					e->skel->progs.sample_work_exit};
	const char *names[3] = {"local_timer_exit", "irq_work_entry", "irq_work_exit"};
	if (!bpf_program__autoload(progs[0]))
		return;
	for (int i = 0; i < 3; i++) {
		e->tail_links[i] = bpf_program__attach_raw_tracepoint(progs[i], names[i]);
		if (!e->tail_links[i])
			note_verbose(e,
				     "cannot attach to irq_vectors:%s (%s): a sample's interrupt "
				     "is charged as calibrated after its program",
				     names[i], strerror(errno));
	}
}

struct engine *engine_open(const struct engine_options *o, char *err, size_t errlen)
{
	libbpf_set_print(o->verbose ? libbpf_print_all : libbpf_print_none);

	struct engine *e = xcalloc(1, sizeof(*e));
	e->opt = *o;
	e->state_programs = loads_state_programs(o);
	e->thread_programs = e->state_programs && (!o->fixed || o->tstate_freq);
	for (int i = 0; i < MAX_CPUS; i++)
		e->perf_fds[i] = -1;
	e->tstate_fd = -1;
	for (int i = 0; i < SONDE_MAX_PROBES; i++)
		e->slot_probe[i] = NO_PROBE;
	/* Before anything the helper should not inherit (it closes all it
	 * inherited at once anyway) and while sonde has one thread. Without
	 * it, uprobes are removed on sonde's own thread, as unsafely as ever. */
	char why[256];
	e->up = uprobes_start(why, sizeof(why));
	if (!e->up)
		note_verbose(e, "%s; attaching and removing probes in sonde itself", why);
	e->multi = uprobes_multi_available(why, sizeof(why));
	if (!e->multi)
		note_verbose(e, "%s; one link a uprobe (each takes ~0.15 s to remove)", why);

	size_t rb = o->ringbuf_bytes ? o->ringbuf_bytes : (16u << 20);
	size_t unwind_bytes = o->unwind_bytes ? o->unwind_bytes : ENGINE_UNWIND_BYTES;
	uint32_t unwind_rows = o->unwind == SONDE_UNWIND_FP
				       ? 1
				       : (uint32_t)(unwind_bytes / sizeof(struct sonde_unwind_row));
	e->skel = open_skeleton(o, rb, unwind_rows, e->multi);
	if (!e->skel) {
		explain_load_error(-errno, err, errlen);
		uprobes_finish(e->up);
		free(e);
		return NULL;
	}
	int r = sonde_bpf__load(e->skel);
	if (r && r != -EPERM && r != -EACCES) {
		/* A kernel whose off-CPU tracepoints do not load (a missing
		 * tracepoint format or type) still profiles on the CPU. */
		char why[200];
		explain_load_error(r, why, sizeof(why));
		sonde_bpf__destroy(e->skel);
		e->skel = reopen_without_offcpu(e, o, rb, unwind_rows);
		r = e->skel ? sonde_bpf__load(e->skel) : -errno;
		if (r == 0)
			snprintf(e->offcpu_unavailable, sizeof(e->offcpu_unavailable),
				 "off-CPU recording and thread states are not available on this "
				 "kernel: their programs on sched:sched_switch, sched:sched_wakeup, "
				 "sched:sched_waking and raw_syscalls:sys_enter/sys_exit do not load "
				 "(%s)",
				 why);
	}
	if (r) {
		explain_load_error(r, err, errlen);
		sonde_bpf__destroy(e->skel);
		uprobes_finish(e->up);
		free(e);
		return NULL;
	}
	if (o->unwind != SONDE_UNWIND_FP) {
		struct unwind_maps um = {
			.procs_fd = bpf_map__fd(e->skel->maps.unwind_procs),
			.mappings_fd = bpf_map__fd(e->skel->maps.unwind_mappings),
			.rows_fd = bpf_map__fd(e->skel->maps.unwind_rows),
			.files_fd = bpf_map__fd(e->skel->maps.unwind_files),
			.found_fd = bpf_map__fd(e->skel->maps.unwind_found),
		};
		e->unwind = unwind_new(&um, unwind_rows, err, errlen);
		e->unwind_rb = e->unwind ? ring_buffer__new(bpf_map__fd(e->skel->maps.unwind_requests),
							    on_unwind_request, e, NULL)
					 : NULL;
		if (!e->unwind_rb) {
			if (e->unwind)
				errbuf_set(err, errlen, "cannot set up the unwind requests' ring buffer: %s",
					   strerror(errno));
			engine_close(e);
			return NULL;
		}
	}
	e->rb = ring_buffer__new(bpf_map__fd(e->skel->maps.events), on_ringbuf, e, NULL);
	if (!e->rb) {
		errbuf_set(err, errlen, "cannot set up the BPF ring buffer: %s", strerror(errno));
		engine_close(e);
		return NULL;
	}
	e->nthread_slots = bpf_map__max_entries(e->skel->maps.threads);
	e->thread_slots_len = (size_t)e->nthread_slots * sizeof(struct sonde_thread_state);
	void *slots = mmap(NULL, e->thread_slots_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			   bpf_map__fd(e->skel->maps.threads), 0);
	if (slots == MAP_FAILED) {
		errbuf_set(err, errlen, "cannot map the thread states: %s", strerror(errno));
		engine_close(e);
		return NULL;
	}
	e->thread_slots = slots;
	attach_sample_tails(e);
	return e;
}

int engine_add_pid(struct engine *e, pid_t pid, char *err, size_t errlen)
{
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;
	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.targets), &key, &one, BPF_ANY)) {
		errbuf_set(err, errlen, "cannot add PID %d to the target set: %s", (int)pid,
			   strerror(errno));
		return -1;
	}
	/* A process that cannot be read now is loaded at its first miss. */
	char ignored[256];
	if (e->unwind)
		unwind_load_pid(e->unwind, pid, ignored, sizeof(ignored));
	return 0;
}

static int preload_one(const char *path, void *arg)
{
	unwind_preload(arg, path); /* a binary without a table waits for its miss */
	return 0;
}

void engine_unwind_preload(struct engine *e, const char *executable)
{
	if (!e->unwind)
		return;
	struct ldso_env env = { getenv("LD_LIBRARY_PATH"), getenv("LD_PRELOAD") };
	ldso_each_object(executable, &env, preload_one, e->unwind);
}

void engine_unwind_stats(const struct engine *e, struct unwind_stats *out)
{
	if (e->unwind)
		unwind_get_stats(e->unwind, out);
	else
		memset(out, 0, sizeof(*out));
}

static int attach_sampler_software(struct engine *e, char *err, size_t errlen)
{
	int cpus[MAX_CPUS];
	int n = events_online_cpus(cpus, MAX_CPUS);
	if (n <= 0) {
		errbuf_set(err, errlen, "cannot read the online CPUs from /sys/devices/system/cpu/online");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int fd = events_open_cpu(&e->opt.event, cpus[i], e->opt.freq, e->opt.period, err,
					 errlen);
		if (fd < 0)
			return -1;
		e->perf_fds[e->ncpus] = fd;
		e->perf_links[e->ncpus] = bpf_program__attach_perf_event(e->skel->progs.sample_perf, fd);
		e->ncpus++;
		if (!e->perf_links[e->ncpus - 1]) {
			errbuf_set(err, errlen, "cannot attach the sampler to %s on CPU %d: %s",
				   e->opt.event.name, cpus[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int attach_sampler_tracepoint(struct engine *e, char *err, size_t errlen)
{
	/* Resolving the id first gives a clear "unknown tracepoint" message. */
	if (tracefs_tracepoint_id(e->opt.event.category, e->opt.event.tp_name, err, errlen) < 0)
		return -1;
	e->tp_link = bpf_program__attach_tracepoint(e->skel->progs.sample_tp,
						    e->opt.event.category, e->opt.event.tp_name);
	if (!e->tp_link) {
		errbuf_set(err, errlen, "cannot attach to tracepoint %s: %s", e->opt.event.name,
			   strerror(errno));
		return -1;
	}
	return 0;
}

/* A tracepoint a program needs: attached, or -1 with one line naming it
 * (`what` says what needs it). */
static struct bpf_link *attach_tracepoint(struct bpf_program *prog, const char *category,
					  const char *name, const char *what, char *err,
					  size_t errlen)
{
	char why[256];
	if (tracefs_tracepoint_id(category, name, why, sizeof(why)) < 0) {
		errbuf_set(err, errlen, "%s needs tracepoint %s:%s: %s", what, category, name, why);
		return NULL;
	}
	struct bpf_link *l = bpf_program__attach(prog);
	if (!l)
		errbuf_set(err, errlen, "cannot attach to tracepoint %s:%s for %s: %s", category, name,
			   what, strerror(errno));
	return l;
}

/* The system-call tracepoints, attached while off-CPU intervals or thread
 * states need them (want), detached when neither does. */
static int syscalls_follow(struct engine *e, bool want, const char *what, char *err,
			   size_t errlen)
{
	if (!want) {
		for (int i = 0; i < 2; i++) {
			bpf_link__destroy(e->sys_links[i]);
			e->sys_links[i] = NULL;
		}
		return 0;
	}
	struct bpf_program *progs[2] = {e->skel->progs.tstate_sys_enter,
					e->skel->progs.tstate_sys_exit};
	static const char *const names[2] = {"sys_enter", "sys_exit"};
	for (int i = 0; i < 2; i++) {
		if (e->sys_links[i])
			continue;
		e->sys_links[i] = attach_tracepoint(progs[i], "raw_syscalls", names[i], what, err,
						    errlen);
		if (!e->sys_links[i])
			return -1;
	}
	return 0;
}

/* Empties a hash map keyed by thread id. */
static void clear_tid_map(int fd)
{
	uint32_t key, next;
	while (bpf_map_get_next_key(fd, NULL, &next) == 0) {
		key = next;
		if (bpf_map_delete_elem(fd, &key))
			break;
	}
}

/* The switch-out's stacks (offcpu_switch), kept while off-CPU intervals
 * or thread states want them, dropped when neither does. */
static int stash_follow(struct engine *e, bool want, const char *what, char *err, size_t errlen)
{
	if (want) {
		if (!e->offcpu_links[0])
			e->offcpu_links[0] = attach_tracepoint(e->skel->progs.offcpu_switch, "sched",
							       "sched_switch", what, err, errlen);
		return e->offcpu_links[0] ? 0 : -1;
	}
	if (!e->offcpu_links[0])
		return 0;
	bpf_link__destroy(e->offcpu_links[0]);
	e->offcpu_links[0] = NULL;
	/* Nothing keeps the entries any more: free them. */
	clear_tid_map(bpf_map__fd(e->skel->maps.offcpu_stash));
	return 0;
}

static void offcpu_detach(struct engine *e)
{
	/* Threads switched out meanwhile are not switched in under watch:
	 * offcpu_since_ns keeps an interval that began now from being sent
	 * once intervals are on again. */
	e->skel->bss->offcpu_intervals = 0;
	char ignored[8];
	bool tstates = e->tstate_links[0] != NULL;
	stash_follow(e, tstates, NULL, ignored, sizeof(ignored));
	syscalls_follow(e, tstates, NULL, ignored, sizeof(ignored));
	bpf_link__destroy(e->wakers_link);
	e->wakers_link = NULL;
	e->skel->bss->offcpu_wakers = 0;
}

int engine_set_wakers(struct engine *e, bool on, char *err, size_t errlen)
{
	if (!on) {
		bpf_link__destroy(e->wakers_link);
		e->wakers_link = NULL;
		e->skel->bss->offcpu_wakers = 0;
		return 0;
	}
	if (!engine_offcpu_on(e)) {
		errbuf_set(err, errlen, "wakers are kept only with off-CPU recording (--off-cpu)");
		return -1;
	}
	if (e->opt.fixed && !e->opt.wakers) { /* its program was not loaded */
		errbuf_set(err, errlen, "%s", fixed_refusal);
		return -1;
	}
	if (e->wakers_link)
		return 0;
	char why[256];
	if (tracefs_tracepoint_id("sched", "sched_waking", why, sizeof(why)) < 0) {
		errbuf_set(err, errlen, "--wakers needs tracepoint sched:sched_waking: %s", why);
		return -1;
	}
	e->wakers_link = bpf_program__attach(e->skel->progs.offcpu_wakeup);
	if (!e->wakers_link) {
		errbuf_set(err, errlen, "cannot attach to tracepoint sched:sched_waking for --wakers: %s",
			   strerror(errno));
		return -1;
	}
	e->skel->bss->offcpu_wakers = 1;
	return 0;
}

void engine_end_offcpu(struct engine *e, uint64_t end_ns)
{
	__atomic_store_n(&e->skel->bss->offcpu_until_ns, end_ns, __ATOMIC_RELEASE);
}

static int deliver_cut(void *ctx, const void *data, size_t size)
{
	struct engine *e = ctx;
	const void *rec = record_with_ids(e, data, size);
	return rec ? e->opt.on_record(e->opt.arg, rec, size) : 0;
}

uint64_t engine_cut_offcpu(struct engine *e)
{
	uint64_t until = e->skel->bss->offcpu_until_ns;
	if (!until || !engine_offcpu_on(e) || !e->offcpu_links[0])
		return 0;
	struct offcpu_cut c = {.stash_fd = bpf_map__fd(e->skel->maps.offcpu_stash),
			       .since_ns = e->skel->bss->offcpu_since_ns,
			       .until_ns = until,
			       .min_ns = e->skel->data->offcpu_min_ns};
	struct offcpu_cut_counts n;
	offcpu_cut_open(&c, deliver_cut, e, &n);
	e->offcpu_cut_below += n.below;
	return n.cut;
}

bool engine_offcpu_on(const struct engine *e)
{
	return e->skel->bss->offcpu_intervals != 0;
}

int engine_set_offcpu(struct engine *e, bool on, uint64_t min_ns, char *err, size_t errlen)
{
	e->skel->data->offcpu_min_ns = min_ns;
	if (!on) {
		offcpu_detach(e);
		return 0;
	}
	if (engine_offcpu_on(e))
		return 0;
	if (!e->state_programs) {
		errbuf_set(err, errlen, "%s", fixed_refusal);
		return -1;
	}
	if (e->offcpu_unavailable[0]) {
		errbuf_set(err, errlen, "%s", e->offcpu_unavailable);
		return -1;
	}
	const char *what = "off-CPU recording";
	if (stash_follow(e, true, what, err, errlen) || syscalls_follow(e, true, what, err, errlen)) {
		offcpu_detach(e);
		return -1;
	}
	e->skel->bss->offcpu_since_ns = monotonic_ns();
	e->skel->bss->offcpu_intervals = 1;
	return 0;
}

static void threads_detach(struct engine *e)
{
	bpf_link__destroy(e->tstate_pass);
	e->tstate_pass = NULL;
	if (e->tstate_fd >= 0)
		close(e->tstate_fd);
	e->tstate_fd = -1;
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(e->tstate_links[i]);
		e->tstate_links[i] = NULL;
	}
	char ignored[8];
	stash_follow(e, engine_offcpu_on(e), NULL, ignored, sizeof(ignored));
	syscalls_follow(e, engine_offcpu_on(e), NULL, ignored, sizeof(ignored));
}

/* The threads that exist already: seeded from /proc (tstate.h), the
 * targets' or, system-wide, every process's. */
static void threads_seed(struct engine *e)
{
	struct tstate_maps m = {
		.now_fd = bpf_map__fd(e->skel->maps.thread_now),
		.tids_fd = bpf_map__fd(e->skel->maps.tstate_tids),
		.next = (uint64_t *)&e->skel->bss->tstate_next,
		.nslots = e->skel->rodata->tstate_slots,
	};
	if (e->opt.system_wide) {
		tstate_seed_all(&m);
		return;
	}
	int targets = bpf_map__fd(e->skel->maps.targets);
	uint32_t key, next;
	bool first = true;
	while (bpf_map_get_next_key(targets, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		tstate_seed_process(&m, (pid_t)key);
	}
}

/* The pass: a cpu-clock event on one CPU at 1/tstate_freq (it ticks
 * whether that CPU is idle or busy), running threads_pass. */
static int pass_attach(struct engine *e, char *err, size_t errlen)
{
	int cpus[1];
	struct event_spec clock;
	if (events_online_cpus(cpus, 1) < 1 || events_parse("cpu-clock", &clock, err, errlen)) {
		if (!err[0])
			errbuf_set(err, errlen, "cannot read the online CPUs from /sys/devices/system/cpu/online");
		return -1;
	}
	e->tstate_fd = events_open_cpu(&clock, cpus[0], 0, 1000000000ull / e->opt.tstate_freq, err,
				       errlen);
	if (e->tstate_fd < 0)
		return -1;
	e->tstate_pass = bpf_program__attach_perf_event(e->skel->progs.threads_pass, e->tstate_fd);
	if (!e->tstate_pass) {
		errbuf_set(err, errlen, "cannot attach the thread-state pass to cpu-clock on CPU %d: %s",
			   cpus[0], strerror(errno));
		close(e->tstate_fd);
		e->tstate_fd = -1;
		return -1;
	}
	return 0;
}

static int threads_attach(struct engine *e, char *err, size_t errlen)
{
	if (e->offcpu_unavailable[0]) {
		errbuf_set(err, errlen, "%s", e->offcpu_unavailable);
		return -1;
	}
	const char *what = "thread-state sampling";
	e->tstate_links[0] = attach_tracepoint(e->skel->progs.tstate_switch, "sched", "sched_switch",
					       what, err, errlen);
	if (e->tstate_links[0])
		e->tstate_links[1] = attach_tracepoint(e->skel->progs.tstate_wakeup, "sched",
						       "sched_wakeup", what, err, errlen);
	if (!e->tstate_links[1] || syscalls_follow(e, true, what, err, errlen) ||
	    stash_follow(e, true, what, err, errlen)) {
		threads_detach(e);
		return -1;
	}
	threads_seed(e);
	if (pass_attach(e, err, errlen)) {
		threads_detach(e);
		return -1;
	}
	return 0;
}

/* Every thread's state forgotten (thread states off: nothing keeps them
 * now, and a thread that exits meanwhile would stay). */
static void threads_forget(struct engine *e)
{
	int tids_fd = bpf_map__fd(e->skel->maps.tstate_tids);
	clear_tid_map(bpf_map__fd(e->skel->maps.thread_now));
	uint64_t used = e->skel->bss->tstate_next, zero = 0;
	uint32_t nslots = e->skel->rodata->tstate_slots;
	for (uint32_t i = 0; i < used && i < nslots; i++)
		bpf_map_update_elem(tids_fd, &i, &zero, BPF_ANY);
	e->skel->bss->tstate_next = 0;
}

int engine_set_threads(struct engine *e, uint64_t freq, char *err, size_t errlen)
{
	if (!freq) {
		if (e->tstate_links[0]) {
			threads_detach(e);
			threads_forget(e);
		}
		e->opt.tstate_freq = 0;
		return 0;
	}
	uint64_t old = e->opt.tstate_freq;
	if (!e->thread_programs) {
		errbuf_set(err, errlen, "%s", fixed_refusal);
		return -1;
	}
	e->opt.tstate_freq = freq;
	if (!e->tstate_links[0]) {
		if (threads_attach(e, err, errlen)) {
			e->opt.tstate_freq = 0;
			return -1;
		}
		return 0;
	}
	/* On already: a new rate for the pass. */
	bpf_link__destroy(e->tstate_pass);
	e->tstate_pass = NULL;
	if (e->tstate_fd >= 0)
		close(e->tstate_fd);
	e->tstate_fd = -1;
	if (pass_attach(e, err, errlen)) {
		char ignored[256];
		e->opt.tstate_freq = old;
		if (pass_attach(e, ignored, sizeof(ignored)))
			engine_set_threads(e, 0, ignored, sizeof(ignored));
		return -1;
	}
	return 0;
}

int engine_start(struct engine *e, char *err, size_t errlen)
{
	if (!tracefs_path(err, errlen))
		return -1;
	struct bpf_program *task_progs[3] = {e->skel->progs.on_fork, e->skel->progs.on_exec,
					     e->skel->progs.on_exit};
	for (int i = 0; i < 3; i++) {
		e->task_links[i] = bpf_program__attach(task_progs[i]);
		if (!e->task_links[i]) {
			errbuf_set(err, errlen, "cannot attach the process-lifecycle tracepoint %s: %s",
				   bpf_program__section_name(task_progs[i]), strerror(errno));
			return -1;
		}
	}
	if (e->opt.off_cpu && engine_set_offcpu(e, true, e->opt.offcpu_min_ns, err, errlen))
		return -1;
	if (e->opt.wakers && engine_set_wakers(e, true, err, errlen))
		return -1;
	if (e->opt.tstate_freq && threads_attach(e, err, errlen))
		return -1;
	if (e->opt.no_sampler)
		return 0;
	if (e->opt.event.type == EVENT_TRACEPOINT)
		return attach_sampler_tracepoint(e, err, errlen);
	return attach_sampler_software(e, err, errlen);
}

int engine_poll(struct engine *e, int timeout_ms)
{
	/* The BPF side wakes us only when a lot is waiting (see wakeup_bytes),
	 * so a poll that times out still drains what arrived meanwhile. */
	if (e->unwind_rb)
		ring_buffer__consume(e->unwind_rb);
	int n = ring_buffer__poll(e->rb, timeout_ms);
	if (n == -EINTR)
		n = 0;
	if (n < 0)
		return -1;
	int m = ring_buffer__consume(e->rb);
	return m < 0 ? (m == -EINTR ? n : -1) : n + m;
}

int engine_ring_fd(struct engine *e)
{
	return ring_buffer__epoll_fd(e->rb);
}

void engine_stop(struct engine *e)
{
	for (int i = 0; i < e->ncpus; i++) {
		bpf_link__destroy(e->perf_links[i]);
		e->perf_links[i] = NULL;
		if (e->perf_fds[i] >= 0)
			close(e->perf_fds[i]);
		e->perf_fds[i] = -1;
	}
	e->ncpus = 0;
	bpf_link__destroy(e->tp_link);
	e->tp_link = NULL;
	/* No more passes; the states stay kept (a final drain sees the last). */
	bpf_link__destroy(e->tstate_pass);
	e->tstate_pass = NULL;
	if (e->tstate_fd >= 0)
		close(e->tstate_fd);
	e->tstate_fd = -1;
}

bool engine_sampling(const struct engine *e)
{
	return e->ncpus > 0 || e->tp_link;
}

int engine_set_sampling(struct engine *e, const struct event_spec *event, uint64_t freq,
			uint64_t period, char *err, size_t errlen)
{
	if (e->opt.fixed) {
		errbuf_set(err, errlen, "%s", fixed_refusal);
		return -1;
	}
	struct engine_options old = e->opt;
	bool was_on = engine_sampling(e);
	engine_stop(e);
	if (!event) {
		e->opt.no_sampler = true;
		return 0;
	}
	e->opt.event = *event;
	e->opt.freq = freq;
	e->opt.period = period;
	e->opt.no_sampler = false;
	int r = event->type == EVENT_TRACEPOINT ? attach_sampler_tracepoint(e, err, errlen)
						 : attach_sampler_software(e, err, errlen);
	if (r == 0)
		return 0;
	/* Put the previous sampler back, so a bad request changes nothing. */
	engine_stop(e);
	e->opt = old;
	if (was_on) {
		char ignored[256];
		if (old.event.type == EVENT_TRACEPOINT)
			attach_sampler_tracepoint(e, ignored, sizeof(ignored));
		else
			attach_sampler_software(e, ignored, sizeof(ignored));
	}
	return -1;
}

void engine_get_stats(struct engine *e, struct engine_stats *out)
{
	memset(out, 0, sizeof(*out));
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return;
	uint64_t *vals = xcalloc((size_t)ncpu, sizeof(uint64_t));
	int fd = bpf_map__fd(e->skel->maps.counters);
	uint64_t totals[SONDE_CNT_MAX] = {0};
	for (uint32_t k = 0; k < SONDE_CNT_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			totals[k] += vals[c];
	}
	free(vals);
	totals[SONDE_CNT_OFFCPU_SHORT] += e->offcpu_cut_below; /* cut at the end, then short */
	memcpy(out->count, totals, sizeof(out->count));
}

/* The slot a probe id is attached in, or -1. */
static int slot_of(const struct engine *e, uint32_t probe)
{
	for (int s = 0; s < SONDE_MAX_PROBES; s++)
		if (e->slot_probe[s] == probe)
			return s;
	return -1;
}

static bool probe_attached(const struct engine *e, uint32_t probe)
{
	return probe != NO_PROBE && slot_of(e, probe) >= 0;
}

static int set_probe_config(struct engine *e, uint32_t slot, bool active)
{
	e->slot_active[slot] = active;
	const struct engine_trap_costs *tc = &e->trap_costs[e->probe_class[slot]];
	const struct engine_span_policy *pol = &e->policy[slot];
	struct sonde_probe_config cfg = {
		.emit_min_ns = pol->emit_min_ns,
		.emit_all = pol->emit_all,
		.call_unseen_ns = tc->call_unseen_ns,
		.self_unseen_ns = tc->self_unseen_ns,
		.active = active && !e->spans_paused,
		.gen = e->probe_gen[slot],
		.point_bit = e->point_bit[slot],
		.fetch = e->slot_fetch[slot],
	};
	return bpf_map_update_elem(bpf_map__fd(e->skel->maps.probe_cfg), &slot, &cfg, BPF_ANY);
}

/* Puts prog (NULL: none) in slot's place in fetch_progs, for its current
 * generation, and says so in its config. */
static int set_fetch(struct engine *e, uint32_t slot, const struct sonde_fetch_prog *prog)
{
	struct sonde_fetch_prog p = {0};
	if (prog)
		p = *prog;
	p.gen = e->probe_gen[slot];
	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.fetch_progs), &slot, &p, BPF_ANY))
		return -1;
	/* The entry looks the program up only when its config says there is
	 * one: set after the program is in place, cleared after it is gone. */
	e->slot_fetch[slot] = p.nops > 0;
	return set_probe_config(e, slot, e->slot_active[slot]);
}

void engine_pause_spans(struct engine *e)
{
	e->spans_paused = true;
	for (uint32_t s = 0; s < SONDE_MAX_PROBES; s++)
		if (e->slot_probe[s] != NO_PROBE)
			set_probe_config(e, s, false);
}

int engine_set_span_policy(struct engine *e, uint32_t probe, const struct engine_span_policy *p)
{
	int slot = slot_of(e, probe);
	if (slot < 0)
		return -1;
	e->policy[slot] = *p;
	return set_probe_config(e, (uint32_t)slot, true);
}

void engine_set_trap_costs(struct engine *e, enum engine_insn_class cls,
			   const struct engine_trap_costs *c)
{
	if ((unsigned)cls >= INSN_CLASSES)
		return;
	e->trap_costs[cls] = *c;
	/* Probes already attached take the new figures at once. */
	for (uint32_t s = 0; s < SONDE_MAX_PROBES; s++)
		if (e->probe_class[s] == cls && e->slot_probe[s] != NO_PROBE)
			set_probe_config(e, s, true);
}

enum engine_insn_class engine_insn_class_at(const char *binary, uint64_t file_offset)
{
	switch (insn_trap_at(binary, file_offset)) {
	case INSN_TRAP_EMULATED:
		return INSN_PUSH;
	case INSN_TRAP_ENDBR:
		return INSN_ENDBR;
	case INSN_TRAP_NOP:
		return INSN_NOP;
	case INSN_TRAP_STEPPED:
		break;
	}
	return INSN_SSTEP;
}

const char *engine_insn_class_name(enum engine_insn_class cls)
{
	static const char *const names[INSN_CLASSES] = {"push/branch", "endbr64", "nop",
							"single-stepped"};
	return (unsigned)cls < INSN_CLASSES ? names[cls] : "?";
}


/* --- slots and the removal of uprobes ----------------------------------- */

static bool is_calibration(uint32_t probe)
{
	return probe >= ENGINE_CALIBRATION_BASE;
}

static int user_probes_attached(const struct engine *e)
{
	int n = 0;
	for (int s = 0; s < SONDE_MAX_PROBES; s++)
		n += e->slot_probe[s] != NO_PROBE && !is_calibration(e->slot_probe[s]);
	return n;
}

int engine_probes_available(const struct engine *e)
{
	return ENGINE_USER_PROBES - user_probes_attached(e);
}

static bool attachment_holds(const struct engine *e, int fd)
{
	for (size_t i = 0; i < e->nspans; i++)
		if (e->spans[i].enter == fd || e->spans[i].exit == fd)
			return true;
	return false;
}

/* Removes the uprobes of these link fds (-1: none; an fd may be named more
 * than once) in the background, but not those of a link that an
 * attachment still in e->spans holds (a uprobe_multi link serving probes
 * that stay). */
static void remove_uprobes(struct engine *e, const int *fds, size_t n)
{
	int *given = xcalloc(n + 1, sizeof(*given));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool again = false;
		for (size_t j = 0; j < k && !again; j++)
			again = given[j] == fds[i];
		if (fds[i] >= 0 && !again && !attachment_holds(e, fds[i]))
			given[k++] = fds[i];
	}
	uprobes_remove(e->up, given, k);
	free(given);
}

/* The lowest free slot, or -1. */
static int take_slot(const struct engine *e)
{
	for (int s = 0; s < SONDE_MAX_PROBES; s++)
		if (e->slot_probe[s] == NO_PROBE)
			return s;
	return -1;
}

/* Clears what the kernel counted in a slot, for the next probe in it. */
static void clear_slot_counts(struct engine *e, uint32_t slot)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return;
	struct sonde_probe_counts *zeros = xcalloc((size_t)ncpu, sizeof(*zeros));
	bpf_map_update_elem(bpf_map__fd(e->skel->maps.probe_counts), &slot, zeros, BPF_ANY);
	free(zeros);
	/* The calls of the slot's span probe that hit each point. */
	int pfd = bpf_map__fd(e->skel->maps.point_calls);
	struct sonde_point_calls *zpc = xcalloc((size_t)ncpu, sizeof(*zpc));
	for (uint32_t b = 0; b < SONDE_MAX_POINTS; b++) {
		uint32_t key = slot * SONDE_MAX_POINTS + b;
		bpf_map_update_elem(pfd, &key, zpc, BPF_ANY);
	}
	free(zpc);
}

/* Takes a run of n free entries of the point probes' programs for slot.
 * Returns 0, or -1 when there is no such run. */
static int take_point_progs(struct engine *e, uint32_t slot, size_t n)
{
	for (size_t first = 0; n && first + n <= SONDE_POINT_PROGS; first++) {
		size_t k = 0;
		while (k < n && !e->point_prog_used[first + k])
			k++;
		if (k < n) {
			first += k;
			continue;
		}
		for (k = 0; k < n; k++)
			e->point_prog_used[first + k] = true;
		e->point_progs_first[slot] = (uint16_t)first;
		e->point_progs_n[slot] = (uint16_t)n;
		return 0;
	}
	return -1;
}

/* Clears slot's point programs in the kernel and gives their entries back. */
static void free_point_progs(struct engine *e, uint32_t slot)
{
	struct sonde_fetch_prog zero = {0};
	for (uint32_t i = 0; i < e->point_progs_n[slot]; i++) {
		uint32_t k = e->point_progs_first[slot] + i;
		uint32_t key = SONDE_MAX_PROBES + k;
		bpf_map_update_elem(bpf_map__fd(e->skel->maps.fetch_progs), &key, &zero, BPF_ANY);
		e->point_prog_used[k] = false;
	}
	e->point_progs_n[slot] = 0;
}

int engine_set_point_fetch(struct engine *e, uint32_t probe, uint32_t index,
			   const struct sonde_fetch_prog *prog)
{
	int slot = slot_of(e, probe);
	if (slot < 0 || index >= e->point_progs_n[slot])
		return -1;
	struct sonde_fetch_prog p = {0};
	if (prog)
		p = *prog;
	p.gen = e->probe_gen[slot];
	uint32_t key = SONDE_MAX_PROBES + e->point_progs_first[slot] + index;
	return bpf_map_update_elem(bpf_map__fd(e->skel->maps.fetch_progs), &key, &p, BPF_ANY);
}

/* Whether probe has an attachment for process pid. */
static bool attached_for(const struct engine *e, uint32_t probe, pid_t pid)
{
	for (size_t i = 0; i < e->nspans; i++)
		if (e->spans[i].probe == probe && e->spans[i].pid == pid)
			return true;
	return false;
}

void engine_forget_process(struct engine *e, pid_t pid)
{
	int *links = xcalloc(2 * e->nspans + 1, sizeof(*links));
	size_t n = 0, kept = 0;
	for (size_t i = 0; i < e->nspans; i++) {
		if (e->spans[i].pid == pid && pid >= 0) {
			links[n++] = e->spans[i].enter;
			links[n++] = e->spans[i].exit;
		} else {
			e->spans[kept++] = e->spans[i];
		}
	}
	e->nspans = kept;
	remove_uprobes(e, links, n);
	free(links);
}

/* Detaches every attachment of a probe without waiting for the kernel.
 * deliver: first hand the caller the records of its calls already in the
 * ring buffer (after this, records of the slot no longer name the probe and
 * are dropped). */
static void detach_probe(struct engine *e, uint32_t probe, bool deliver)
{
	int found = slot_of(e, probe);
	if (found < 0)
		return;
	uint32_t slot = (uint32_t)found;
	set_probe_config(e, slot, false); /* its programs ignore hits from now on */
	if (deliver) /* while its records still name the probe */
		ring_buffer__consume(e->rb);
	int *links = xcalloc(2 * e->nspans + 1, sizeof(*links));
	size_t n = 0, kept = 0;
	for (size_t i = 0; i < e->nspans; i++) {
		if (e->spans[i].slot == slot) {
			links[n++] = e->spans[i].enter;
			links[n++] = e->spans[i].exit;
		} else {
			e->spans[kept++] = e->spans[i];
		}
	}
	e->nspans = kept;
	if (e->point_bit[slot])
		__atomic_and_fetch(&e->skel->bss->points_active, ~(1ull << (e->point_bit[slot] - 1)),
				   __ATOMIC_RELAXED);
	clear_slot_counts(e, slot);
	set_fetch(e, slot, NULL);
	free_point_progs(e, slot);
	e->slot_probe[slot] = NO_PROBE;
	e->point_bit[slot] = 0;
	remove_uprobes(e, links, n);
	free(links);
}

void engine_detach_span(struct engine *e, uint32_t probe)
{
	detach_probe(e, probe, true);
}

void engine_discard_span(struct engine *e, uint32_t probe)
{
	detach_probe(e, probe, false);
}

uint32_t engine_calibration_probe(int cls)
{
	return ENGINE_CALIBRATION_BASE + (uint32_t)cls;
}

static int attach_spans(struct engine *e, const struct engine_span_batch *b, char *err,
			size_t errlen);

/* -1 with fixed_refusal when the session loaded no uprobe program. */
static int refuse_without_spans(const struct engine *e, char *err, size_t errlen)
{
	if (!(e->opt.fixed && e->opt.no_spans))
		return 0;
	errbuf_set(err, errlen, "%s", fixed_refusal);
	return -1;
}

int engine_attach_spans(struct engine *e, const struct engine_span_batch *b, char *err,
			size_t errlen)
{
	if (refuse_without_spans(e, err, errlen))
		return -1;
	int need = 0;
	for (size_t i = 0; i < b->n; i++) {
		if (is_calibration(b->probes[i])) {
			errbuf_set(err, errlen, "probe id %u is sonde's own", b->probes[i]);
			return -1;
		}
		need += !probe_attached(e, b->probes[i]);
	}
	if (need > engine_probes_available(e)) {
		errbuf_set(err, errlen, "too many traced functions at once (at most %d): untrace some",
			   ENGINE_USER_PROBES);
		return -1;
	}
	/* A probe already attached for this process keeps its attachment: a
	 * second would count each call twice. */
	uint32_t *todo = xcalloc(b->n + 1, sizeof(*todo));
	uint64_t *offs = xcalloc(b->n + 1, sizeof(*offs));
	const struct sonde_fetch_prog **fetch = xcalloc(b->n + 1, sizeof(*fetch));
	size_t k = 0;
	for (size_t i = 0; i < b->n; i++)
		if (!attached_for(e, b->probes[i], b->pid)) {
			todo[k] = b->probes[i];
			fetch[k] = b->fetch ? b->fetch[i] : NULL;
			offs[k++] = b->file_offsets[i];
		}
	struct engine_span_batch left = {todo, offs, fetch, k, b->binary, b->pid};
	int r = k ? attach_spans(e, &left, err, errlen) : 0;
	free(todo);
	free(offs);
	free(fetch);
	return r;
}

bool engine_uprobe_multi(const struct engine *e)
{
	return e->multi;
}

int engine_attach_calibration(struct engine *e, const struct engine_calibration_batch *c,
			      char *err, size_t errlen)
{
	const int *cls = c->cls;
	size_t n = c->n;
	uint32_t probes[INSN_CLASSES];
	if (n == 0 || n > INSN_CLASSES) {
		errbuf_set(err, errlen, "%zu calibration classes, expected 1 to %d", n, INSN_CLASSES);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (cls[i] < 0 || cls[i] >= INSN_CLASSES) {
			errbuf_set(err, errlen, "no calibration probe for class %d", cls[i]);
			return -1;
		}
		probes[i] = engine_calibration_probe(cls[i]);
	}
	if (refuse_without_spans(e, err, errlen))
		return -1;
	struct engine_span_batch b = {probes, c->file_offsets, NULL, n, c->binary, getpid()};
	return attach_spans(e, &b, err, errlen);
}

void engine_detach_calibration(struct engine *e)
{
	/* Nothing calls sonde's calibration functions again: no records to
	 * deliver, and the slots come back once the kernel let them go. */
	for (int cls = 0; cls < INSN_CLASSES; cls++)
		detach_probe(e, engine_calibration_probe(cls), false);
}

/* What link_uprobes links: prog at the n offsets of binary (with their
 * cookies), for pid (-1: every process); retprobe: as return probes. */
struct uprobe_links {
	struct bpf_program *prog;
	const char *binary;
	const uint64_t *offsets;
	const uint64_t *cookies;
	size_t n;
	pid_t pid;
	bool retprobe;
};

/* Links l's uprobes: one uprobe_multi link for each UPROBES_MAX_BATCH of
 * them, or one perf-event link each. fds[i] gets the link of offset i.
 * Returns 0, or -1 with err and nothing of this call attached. */
static int link_uprobes(struct engine *e, const struct uprobe_links *l, int *fds, char *err,
			size_t errlen)
{
	char why[256];
	size_t n = l->n;
	size_t step = e->multi ? UPROBES_MAX_BATCH : 1;
	for (size_t i = 0; i < n; i++)
		fds[i] = -1;
	for (size_t done = 0; done < n; done += step) {
		size_t k = n - done < step ? n - done : step;
		struct uprobes_attach_opts o = {.prog_fd = bpf_program__fd(l->prog),
						.binary = l->binary,
						.file_offsets = l->offsets + done,
						.cookies = l->cookies + done,
						.n = k,
						.pid = l->pid,
						.retprobe = l->retprobe,
						.multi = e->multi};
		int fd = uprobes_attach(e->up, &o, why, sizeof(why));
		if (fd < 0) {
			if (k == 1)
				errbuf_set(err, errlen, "cannot attach a %s to %s at offset 0x%llx: %s",
					   l->retprobe ? "return probe" : "uprobe", l->binary,
					   (unsigned long long)l->offsets[done], why);
			else
				errbuf_set(err, errlen,
					   "cannot attach %s at %zu offsets of %s (0x%llx...): %s",
					   l->retprobe ? "return probes" : "uprobes", k, l->binary,
					   (unsigned long long)l->offsets[done], why);
			remove_uprobes(e, fds, done);
			for (size_t i = 0; i < n; i++)
				fds[i] = -1;
			return -1;
		}
		for (size_t i = done; i < done + k; i++)
			fds[i] = fd;
	}
	return 0;
}

static int attach_spans(struct engine *e, const struct engine_span_batch *b, char *err,
			size_t errlen)
{
	const uint32_t *probes = b->probes;
	const uint64_t *offsets = b->file_offsets;
	const char *binary = b->binary;
	size_t n = b->n;
	pid_t pid = b->pid;
	uint32_t *slots = xcalloc(n + 1, sizeof(*slots));
	uint64_t *cookies = xcalloc(n + 1, sizeof(*cookies));
	bool *fresh = xcalloc(n + 1, sizeof(*fresh));
	int *enter = xcalloc(n + 1, sizeof(*enter));
	int *exit_ = xcalloc(n + 1, sizeof(*exit_));
	int r = -1;
	size_t nslots = 0;
	for (; nslots < n; nslots++) {
		uint32_t probe = probes[nslots];
		int found = slot_of(e, probe);
		fresh[nslots] = found < 0;
		if (fresh[nslots] && (found = take_slot(e)) < 0) {
			errbuf_set(err, errlen, "too many probes (at most %d)", SONDE_MAX_PROBES);
			goto out;
		}
		uint32_t slot = (uint32_t)found;
		slots[nslots] = slot;
		/* A fresh attachment (not one more PID of an attached probe)
		 * starts a new generation: calls entered under an earlier one
		 * never match its returns. Its slot is taken from here on. */
		if (fresh[nslots]) {
			e->probe_gen[slot]++;
			e->probe_class[slot] =
				(uint8_t)engine_insn_class_at(binary, offsets[nslots]);
			e->policy[slot] = (struct engine_span_policy){0}; /* the caller's comes next */
			e->point_bit[slot] = 0;
			e->slot_fetch[slot] = false;
			e->slot_probe[slot] = probe;
		}
		cookies[nslots] = SONDE_COOKIE(e->probe_gen[slot], slot, 0);
	}
	/* The return probes first: a call that enters between the two attaches
	 * then has no return to miss (a return without an entry is ignored),
	 * instead of staying "in flight" forever. */
	struct uprobe_links returns = {.prog = e->skel->progs.span_exit,
				       .binary = binary,
				       .offsets = offsets,
				       .cookies = cookies,
				       .n = n,
				       .pid = pid,
				       .retprobe = true};
	if (link_uprobes(e, &returns, exit_, err, errlen))
		goto out;
	struct uprobe_links entries = returns;
	entries.prog = e->skel->progs.span_enter;
	entries.retprobe = false;
	if (link_uprobes(e, &entries, enter, err, errlen)) {
		remove_uprobes(e, exit_, n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		/* A fresh probe's program first: its hits count once it is active. */
		const struct sonde_fetch_prog *prog = b->fetch && fresh[i] ? b->fetch[i] : NULL;
		if ((prog && set_fetch(e, slots[i], prog)) || set_probe_config(e, slots[i], true)) {
			errbuf_set(err, errlen, "cannot configure probe %u: %s", probes[i],
				   strerror(errno));
			for (size_t j = 0; j < i; j++)
				if (fresh[j])
					set_probe_config(e, slots[j], false);
			remove_uprobes(e, enter, n);
			remove_uprobes(e, exit_, n);
			goto out;
		}
	}
	grow_array((void **)&e->spans, &e->spans_cap, e->nspans + n, sizeof(*e->spans));
	for (size_t i = 0; i < n; i++)
		e->spans[e->nspans++] = (struct span_attachment){.probe = probes[i],
								  .slot = slots[i],
								  .pid = pid,
								  .enter = enter[i],
								  .exit = exit_[i]};
	r = 0;
out:
	if (r) /* the slots this call took are free again */
		for (size_t i = 0; i < nslots; i++)
			if (fresh[i])
				e->slot_probe[slots[i]] = NO_PROBE;
	free(slots);
	free(cookies);
	free(fresh);
	free(enter);
	free(exit_);
	return r;
}

/* Sums over CPUs the histogram of a slot into out[SONDE_HIST_BUCKETS]. */
static int read_slot_hist(struct engine *e, uint32_t slot, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return -1;
	struct sonde_probe_counts *vals = xcalloc((size_t)ncpu, sizeof(*vals));
	int r = bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.probe_counts), &slot, vals);
	memset(out, 0, SONDE_HIST_BUCKETS * sizeof(*out));
	for (int c = 0; r == 0 && c < ncpu; c++)
		for (uint32_t b = 0; b < SONDE_HIST_BUCKETS; b++)
			out[b] += vals[c].buckets[b];
	free(vals);
	return r;
}

int engine_read_hist(struct engine *e, uint32_t probe, uint64_t *buckets)
{
	int slot = slot_of(e, probe);
	if (slot < 0) {
		memset(buckets, 0, SONDE_HIST_BUCKETS * sizeof(*buckets));
		return 0;
	}
	return read_slot_hist(e, (uint32_t)slot, buckets);
}

int engine_read_hists(struct engine *e, uint32_t nprobes, uint64_t (*out)[SONDE_HIST_BUCKETS])
{
	memset(out, 0, (size_t)nprobes * sizeof(*out));
	for (uint32_t s = 0; s < SONDE_MAX_PROBES; s++)
		if (e->slot_probe[s] < nprobes && read_slot_hist(e, s, out[e->slot_probe[s]]))
			return -1;
	return 0;
}

static int write_sampler_config(struct engine *e)
{
	uint32_t zero = 0;
	return bpf_map_update_elem(bpf_map__fd(e->skel->maps.sampler_cfg), &zero, &e->sampler,
				   BPF_ANY);
}

int engine_set_sampler_filter(struct engine *e, int32_t only_in_probe, int32_t only_slow_probe,
			      uint64_t only_slow_ns)
{
	int in_slot = only_in_probe >= 0 ? slot_of(e, (uint32_t)only_in_probe) : -1;
	int slow_slot = only_slow_probe >= 0 ? slot_of(e, (uint32_t)only_slow_probe) : -1;
	e->sampler.only_in_probe = in_slot >= 0 ? (uint32_t)in_slot + 1 : 0;
	e->sampler.only_slow_probe = slow_slot >= 0 ? (uint32_t)slow_slot + 1 : 0;
	e->sampler.only_slow_ns = only_slow_ns;
	return write_sampler_config(e);
}

int engine_set_sample_when(struct engine *e, int32_t point_probe)
{
	int slot = point_probe >= 0 ? slot_of(e, (uint32_t)point_probe) : -1;
	if (point_probe >= 0 && (slot < 0 || !e->point_bit[slot])) {
		errno = EINVAL;
		return -1;
	}
	e->sampler.when_points = slot >= 0 ? 1ull << (e->point_bit[slot] - 1) : 0;
	return write_sampler_config(e);
}

int engine_attach_point(struct engine *e, const struct engine_point_opts *o, char *err,
			size_t errlen)
{
	uint32_t probe = o->probe, bit = o->bit;
	size_t n = o->n;
	bool fetch = o->fetch;
	pid_t pid = o->pid;
	if (is_calibration(probe) || bit >= SONDE_MAX_POINTS) {
		errbuf_set(err, errlen, "bad point probe %u (bit %u)", probe, bit);
		return -1;
	}
	if (refuse_without_spans(e, err, errlen))
		return -1;
	if (e->opt.fixed && e->opt.no_points) { /* point_hit was not loaded */
		errbuf_set(err, errlen, "%s", fixed_refusal);
		return -1;
	}
	if (attached_for(e, probe, pid)) /* a second would count each hit twice */
		return 0;
	int found = slot_of(e, probe);
	bool fresh = found < 0;
	if (fresh && (engine_probes_available(e) <= 0 || (found = take_slot(e)) < 0)) {
		errbuf_set(err, errlen, "too many probes at once (at most %d): untrace some",
			   ENGINE_USER_PROBES);
		return -1;
	}
	uint32_t slot = (uint32_t)found;
	if (!fresh && fetch && e->point_progs_n[slot] != n) {
		errbuf_set(err, errlen, "point probe %u has %u programs, not %zu", probe,
			   e->point_progs_n[slot], n);
		return -1;
	}
	if (fresh && fetch && take_point_progs(e, slot, n)) {
		size_t used = 0;
		for (size_t k = 0; k < SONDE_POINT_PROGS; k++)
			used += e->point_prog_used[k];
		errbuf_set(err, errlen,
			   "captures at %zu addresses: the lines traced at once capture at %d addresses "
			   "at most (%zu in use): untrace some",
			   n, SONDE_POINT_PROGS, used);
		return -1;
	}
	if (fresh) {
		e->probe_gen[slot]++;
		e->point_bit[slot] = (uint8_t)(bit + 1);
		/* The bit's column of calls that hit it starts at zero. */
		int ncpu = libbpf_num_possible_cpus();
		struct sonde_point_calls *zeros = xcalloc(ncpu > 0 ? (size_t)ncpu : 1, sizeof(*zeros));
		for (uint32_t s = 0; s < SONDE_MAX_PROBES; s++) {
			uint32_t key = s * SONDE_MAX_POINTS + bit;
			bpf_map_update_elem(bpf_map__fd(e->skel->maps.point_calls), &key, zeros,
					    BPF_ANY);
		}
		free(zeros);
	}
	uint64_t *cookies = xcalloc(n + 1, sizeof(*cookies));
	int *fds = xcalloc(n + 1, sizeof(*fds));
	for (size_t i = 0; i < n; i++) {
		uint32_t key = fetch ? SONDE_MAX_PROBES + e->point_progs_first[slot] + (uint32_t)i : 0;
		cookies[i] = SONDE_COOKIE(e->probe_gen[slot], slot, key);
	}
	struct uprobe_links hits = {.prog = e->skel->progs.point_hit,
				    .binary = o->binary,
				    .offsets = o->offsets,
				    .cookies = cookies,
				    .n = n,
				    .pid = pid};
	bool ok = link_uprobes(e, &hits, fds, err, errlen) == 0;
	if (ok && set_probe_config(e, slot, true)) {
		errbuf_set(err, errlen, "cannot configure probe %u: %s", probe, strerror(errno));
		remove_uprobes(e, fds, n);
		ok = false;
	}
	if (ok) {
		grow_array((void **)&e->spans, &e->spans_cap, e->nspans + n, sizeof(*e->spans));
		for (size_t i = 0; i < n; i++)
			e->spans[e->nspans++] = (struct span_attachment){
				.probe = probe, .slot = slot, .pid = pid, .enter = fds[i], .exit = -1};
		__atomic_or_fetch(&e->skel->bss->points_active, 1ull << bit, __ATOMIC_RELAXED);
	}
	free(cookies);
	free(fds);
	if (!ok) {
		if (fresh) {
			e->point_bit[slot] = 0;
			free_point_progs(e, slot);
		}
		return -1;
	}
	e->slot_probe[slot] = probe;
	return 0;
}

int engine_read_point_calls(struct engine *e, uint32_t span_probe, uint32_t point_probe,
			    struct sonde_point_calls *out)
{
	memset(out, 0, sizeof(*out));
	int ss = slot_of(e, span_probe), ps = slot_of(e, point_probe);
	int ncpu = libbpf_num_possible_cpus();
	if (ss < 0 || ps < 0 || !e->point_bit[ps] || e->point_bit[ss] || ncpu <= 0)
		return -1;
	uint32_t key = (uint32_t)ss * SONDE_MAX_POINTS + (e->point_bit[ps] - 1u);
	struct sonde_point_calls *vals = xcalloc((size_t)ncpu, sizeof(*vals));
	int r = bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.point_calls), &key, vals);
	for (int c = 0; r == 0 && c < ncpu; c++) {
		out->calls += vals[c].calls;
		out->hit += vals[c].hit;
	}
	free(vals);
	return r ? -1 : 0;
}

/* Thread tid's slot in the mapped `threads`, or NULL when it has none. */
static struct sonde_thread_state *thread_slot(struct engine *e, uint32_t tid)
{
	if (!tid || !e->thread_slots)
		return NULL;
	uint32_t ka = SONDE_THREAD_SLOT_A(tid), kb = SONDE_THREAD_SLOT_B(tid);
	struct sonde_thread_state *a = ka < e->nthread_slots ? &e->thread_slots[ka] : NULL;
	if (a && __atomic_load_n(&a->tid, __ATOMIC_ACQUIRE) == tid)
		return a;
	struct sonde_thread_state *b = kb < e->nthread_slots ? &e->thread_slots[kb] : NULL;
	return b && __atomic_load_n(&b->tid, __ATOMIC_ACQUIRE) == tid ? b : NULL;
}

void engine_for_each_open_span(struct engine *e, engine_open_span_fn fn, void *arg)
{
	for (uint32_t k = 0; e->thread_slots && k < e->nthread_slots; k++) {
		if (!__atomic_load_n(&e->thread_slots[k].tid, __ATOMIC_ACQUIRE))
			continue; /* a free slot: one line read, not the state */
		struct sonde_thread_state st = e->thread_slots[k];
		uint32_t key = (uint32_t)st.tid;
		if (!key)
			continue; /* given back while it was copied */
		uint32_t n = st.depth < SONDE_SPAN_DEPTH ? st.depth : SONDE_SPAN_DEPTH;
		/* Calls no sample or record named have no id yet: give them ids
		 * from a range the kernel's counter never reaches. */
		for (uint32_t i = 0; i < n; i++)
			if (!st.frames[i].span_id)
				st.frames[i].span_id = (1ull << 62) + ++e->open_span_ids;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t slot = st.frames[i].probe;
			uint32_t probe = slot < SONDE_MAX_PROBES ? e->slot_probe[slot] : NO_PROBE;
			if (probe == NO_PROBE || st.frames[i].gen != e->probe_gen[slot])
				continue; /* a call of a probe since detached */
			uint64_t own = st.own_ns >= st.frames[i].own_at_entry
					       ? st.own_ns - st.frames[i].own_at_entry
					       : 0;
			fn(arg, key, probe, st.frames[i].span_id,
			   i ? st.frames[i - 1].span_id : 0, st.frames[i].start_ns, i + 1, own);
		}
	}
}

int engine_read_probe_stats(struct engine *e, uint32_t probe, struct sonde_probe_stats *out)
{
	memset(out, 0, sizeof(*out));
	int ncpu = libbpf_num_possible_cpus();
	int slot = slot_of(e, probe);
	if (ncpu <= 0 || slot < 0)
		return -1;
	uint32_t key = (uint32_t)slot;
	struct sonde_probe_counts *vals = xcalloc((size_t)ncpu, sizeof(*vals));
	int r = bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.probe_counts), &key, vals);
	for (int c = 0; r == 0 && c < ncpu; c++) {
		const struct sonde_probe_stats *v = &vals[c].stats;
		out->entered += v->entered;
		out->completed += v->completed;
		out->raw_ns += v->raw_ns;
		out->own_ns += v->own_ns;
		out->handler_ns += v->handler_ns;
		out->emitted += v->emitted;
	}
	free(vals);
	return r ? -1 : 0;
}


void engine_set_calibration(struct engine *e, const struct sonde_calibration *c)
{
	/* .bss is memory-mapped: the programs see the new values at once. */
	e->skel->bss->calib = *c;
}

uint64_t engine_calib_samples(const struct engine *e)
{
	return __atomic_load_n(&e->skel->bss->calib_samples, __ATOMIC_RELAXED);
}

size_t engine_calib_times(const struct engine *e, uint64_t *out, size_t max)
{
	uint64_t n = engine_calib_samples(e);
	if (n > SONDE_CALIB_TIMES)
		n = SONDE_CALIB_TIMES;
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		out[i] = __atomic_load_n(&e->skel->bss->calib_times[i], __ATOMIC_RELAXED);
	return (size_t)n;
}

size_t engine_calib_lateness(const struct engine *e, uint64_t *late, uint64_t *run,
			     uint64_t *exit, size_t max)
{
	uint64_t n = engine_calib_samples(e);
	if (n > SONDE_CALIB_TIMES)
		n = SONDE_CALIB_TIMES;
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++) {
		late[i] = __atomic_load_n(&e->skel->bss->calib_late[i], __ATOMIC_RELAXED);
		run[i] = __atomic_load_n(&e->skel->bss->calib_run[i], __ATOMIC_RELAXED);
		exit[i] = __atomic_load_n(&e->skel->bss->calib_exit[i], __ATOMIC_RELAXED);
	}
	return (size_t)n;
}

void engine_sample_charges(const struct engine *e, struct engine_sample_charges *out)
{
	out->samples = __atomic_load_n(&e->skel->bss->charged_samples, __ATOMIC_RELAXED);
	out->late_ns = __atomic_load_n(&e->skel->bss->charged_late_ns, __ATOMIC_RELAXED);
	out->run_ns = __atomic_load_n(&e->skel->bss->charged_run_ns, __ATOMIC_RELAXED);
	out->exits = __atomic_load_n(&e->skel->bss->charged_exits, __ATOMIC_RELAXED);
	out->exit_ns = __atomic_load_n(&e->skel->bss->charged_exit_ns, __ATOMIC_RELAXED);
}

bool engine_times_sample_exits(const struct engine *e)
{
	return e->tail_links[0] != NULL;
}

uint64_t engine_thread_own_ns(struct engine *e, uint32_t tid)
{
	struct sonde_thread_state *st = thread_slot(e, tid);
	return st ? __atomic_load_n(&st->own_ns, __ATOMIC_RELAXED) : 0;
}

void engine_forget_thread(struct engine *e, uint32_t tid)
{
	/* As the BPF side gives a slot back: emptied, then free. */
	struct sonde_thread_state *st = thread_slot(e, tid);
	if (!st)
		return;
	__atomic_store_n(&st->depth, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&st->own_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&st->tid, 0, __ATOMIC_RELEASE);
}

static int drop_record(void *arg, const void *data, size_t size)
{
	(void)data;
	(void)size;
	(*(int *)arg)++;
	return 0;
}

int engine_discard_pending(struct engine *e)
{
	engine_record_fn fn = e->opt.on_record;
	void *arg = e->opt.arg;
	int n = 0;
	e->opt.on_record = drop_record;
	e->opt.arg = &n;
	ring_buffer__consume(e->rb);
	e->opt.on_record = fn;
	e->opt.arg = arg;
	return n;
}

void engine_remove_pid(struct engine *e, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	bpf_map_delete_elem(bpf_map__fd(e->skel->maps.targets), &key);
}

struct bpf_link *engine_attach_perf_fd(struct engine *e, int fd, char *err, size_t errlen)
{
	struct bpf_link *l = bpf_program__attach_perf_event(e->skel->progs.sample_perf, fd);
	if (!l)
		errbuf_set(err, errlen, "cannot attach the sampler to a perf event: %s",
			   strerror(errno));
	return l;
}

void engine_detach_fd(struct bpf_link *link)
{
	bpf_link__destroy(link);
}

static void *destroy_link(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

/* Destroys n links (NULLs skipped) at once, a thread each: taking a
 * tracepoint's last program off waits for the kernel's grace periods (70 to
 * 90 ms a link measured under load, after every recording), and waits that
 * run together end together. One by one where a thread cannot start. */
static void destroy_links_together(struct bpf_link **links, size_t n)
{
	pthread_t *threads = xcalloc(n ? n : 1, sizeof(*threads));
	bool *started = xcalloc(n ? n : 1, sizeof(*started));
	for (size_t i = 0; i < n; i++)
		if (links[i])
			started[i] = pthread_create(&threads[i], NULL, destroy_link, links[i]) == 0;
	for (size_t i = 0; i < n; i++) {
		if (started[i])
			pthread_join(threads[i], NULL);
		else if (links[i])
			bpf_link__destroy(links[i]);
		links[i] = NULL;
	}
	free(started);
	free(threads);
}

void engine_close(struct engine *e)
{
	if (!e)
		return;
	free(e->recbuf);
	engine_stop(e);
	/* The probes still attached go the way of every detach, and sonde
	 * waits until the kernel has removed them all (the programs they run
	 * must outlive them). */
	int *links = xcalloc(2 * e->nspans + 1, sizeof(*links));
	size_t nlinks = 2 * e->nspans;
	for (size_t i = 0; i < e->nspans; i++) {
		links[2 * i] = e->spans[i].enter;
		links[2 * i + 1] = e->spans[i].exit;
	}
	e->nspans = 0; /* none held any more */
	remove_uprobes(e, links, nlinks);
	free(links);
	uprobes_finish(e->up);
	free(e->spans);
	struct bpf_link *links_left[] = {e->task_links[0], e->task_links[1], e->task_links[2],
					 e->offcpu_links[0], e->sys_links[0],  e->sys_links[1],
					 e->tstate_links[0], e->tstate_links[1], e->wakers_link,
					 e->tail_links[0], e->tail_links[1], e->tail_links[2]};
	destroy_links_together(links_left, sizeof(links_left) / sizeof(links_left[0]));
	ring_buffer__free(e->rb);
	ring_buffer__free(e->unwind_rb);
	unwind_free(e->unwind); /* unmaps the rows before the map goes */
	if (e->thread_slots)
		munmap(e->thread_slots, e->thread_slots_len);
	sonde_bpf__destroy(e->skel);
	free(e);
}
