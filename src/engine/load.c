#define _GNU_SOURCE
#include "load.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "drain.h"
#include "engine.h"
#include "enginestate.h"
#include "errbuf.h"
#include "ldso.h"
#include "offcpu.h"
#include "sampling.h"
#include "slots.h"
#include "sonde.skel.h"
#include "tracefs.h"
#include "unwind.h"
#include "uprobes.h"
#include "util.h"

/* engine.h's names for what its callers need of the kernel's ABI. */
_Static_assert(ENGINE_MAX_PROBES == SONDE_MAX_PROBES, "engine.h: ENGINE_MAX_PROBES");
_Static_assert(ENGINE_MAX_POINTS == SONDE_MAX_POINTS, "engine.h: ENGINE_MAX_POINTS");
_Static_assert(ENGINE_POINT_PROGS == SONDE_POINT_PROGS, "engine.h: ENGINE_POINT_PROGS");
_Static_assert(ENGINE_HIST_BUCKETS == SONDE_HIST_BUCKETS, "engine.h: ENGINE_HIST_BUCKETS");
_Static_assert(ENGINE_COUNTERS == SONDE_CNT_NUM, "engine.h: ENGINE_COUNTERS");
_Static_assert(ENGINE_PAIR_KEYS == SONDE_PAIR_KEYS, "engine.h: ENGINE_PAIR_KEYS");
_Static_assert((int)ENGINE_PAIR_ARG_REG == (int)SONDE_PAIR_ARG_REG &&
		       (int)ENGINE_PAIR_ARG_MEM == (int)SONDE_PAIR_ARG_MEM,
	       "engine.h: enum engine_pair_arg_kind");
_Static_assert(ENGINE_LOST_SPANS == SONDE_CNT_LOST_SPANS, "engine.h: ENGINE_LOST_SPANS");
_Static_assert(ENGINE_UNWIND_FP == (int)SONDE_UNWIND_FP && ENGINE_UNWIND_CFI == (int)SONDE_UNWIND_CFI &&
		       ENGINE_UNWIND_AUTO == (int)SONDE_UNWIND_AUTO,
	       "engine.h: enum engine_unwind");

/* libbpf's own messages. Its print hook is one per process and is handed
 * no context, so where they go is the one mutable global of the engine:
 * the log of the engine open now (engine_options.log, with verbose), set
 * by engine_open and cleared by engine_close, read by the hook (libbpf
 * calls it on the thread that called libbpf: the engine's caller's).
 * Without a log (no -v), failures surface as sonde's own one-line errors
 * instead. The hook itself is installed once. */
struct libbpf_log {
	const struct engine *owner;
	void (*fn)(void *arg, const char *text);
	void *arg;
};
static struct libbpf_log libbpf_log;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (!libbpf_log.fn)
		return 0;
	char *text = xvasprintf(fmt, ap);
	libbpf_log.fn(libbpf_log.arg, text);
	free(text);
	return 0;
}

static void install_libbpf_print(void)
{
	libbpf_set_print(libbpf_print);
}

static void libbpf_log_to(const struct engine *e)
{
	static pthread_once_t installed = PTHREAD_ONCE_INIT;
	pthread_once(&installed, install_libbpf_print);
	bool on = e->opt.verbose && e->opt.log;
	libbpf_log = (struct libbpf_log){e, on ? e->opt.log : NULL, on ? e->opt.log_arg : NULL};
}

/* An engine going away takes its log with it. */
static void libbpf_log_stop(const struct engine *e)
{
	if (libbpf_log.owner == e)
		libbpf_log = (struct libbpf_log){0};
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

/* Whether a load error is a missing privilege: EPERM, or EACCES for one
 * who is not root. As root, EACCES is the verifier refusing a program
 * (a kernel whose limits a program exceeds), which is no privilege's
 * fault and has the off-CPU fallback. */
static bool not_allowed(int err)
{
	return err == -EPERM || (err == -EACCES && geteuid() != 0);
}

static int explain_load_error(int err, char *buf, size_t len)
{
	if (not_allowed(err))
		return errbuf_set(buf, len,
				  "not allowed to load BPF programs (%s): run as root, or grant "
				  "CAP_BPF and CAP_PERFMON",
				  strerror(-err));
	if (err == -EACCES)
		return errbuf_set(buf, len,
				  "the kernel's verifier refused one of sonde's BPF programs (%s): "
				  "run with -v for its log",
				  strerror(-err));
	return errbuf_set(buf, len,
			  "cannot load sonde's BPF programs: %s (kernel without BPF, BTF or ring "
			  "buffer support? run with -v for the verifier log)",
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
					    skel->progs.span_pair_exit, skel->progs.point_hit,
					    skel->progs.branch_hit};
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
			bpf_program__set_autoload(skel->progs.span_pair_exit, false);
			bpf_program__set_autoload(skel->progs.point_hit, false);
			bpf_program__set_autoload(skel->progs.branch_hit, false);
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
		if (o->no_points) {
			bpf_program__set_autoload(skel->progs.point_hit, false);
			bpf_program__set_autoload(skel->progs.branch_hit, false);
		}
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
const char fixed_refusal[] =
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
	struct engine *e = xcalloc(1, sizeof(*e));
	e->opt = *o;
	libbpf_log_to(e);
	e->state_programs = loads_state_programs(o);
	e->thread_programs = e->state_programs && (!o->fixed || o->tstate_freq);
	for (int i = 0; i < MAX_CPUS; i++)
		e->perf_fds[i] = -1;
	e->tstate_fd = -1;
	for (int i = 0; i < SONDE_MAX_PROBES; i++)
		e->slots[i].probe = NO_PROBE;
	e->discarding = NO_PROBE;
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
	uint32_t unwind_rows = o->unwind == ENGINE_UNWIND_FP
				       ? 1
				       : (uint32_t)(unwind_bytes / sizeof(struct sonde_unwind_row));
	e->skel = open_skeleton(o, rb, unwind_rows, e->multi);
	if (!e->skel) {
		explain_load_error(-errno, err, errlen);
		uprobes_finish(e->up);
		libbpf_log_stop(e);
		free(e);
		return NULL;
	}
	int r = sonde_bpf__load(e->skel);
	if (r && !not_allowed(r)) {
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
		libbpf_log_stop(e);
		free(e);
		return NULL;
	}
	if (o->unwind != ENGINE_UNWIND_FP) {
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

static int add_target(struct engine *e, pid_t pid, uint8_t kind, char *err, size_t errlen)
{
	uint32_t key = (uint32_t)pid;
	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.targets), &key, &kind, BPF_ANY)) {
		errbuf_set(err, errlen, "cannot add PID %d to the target set: %s", (int)pid,
			   strerror(errno));
		return -1;
	}
	return 0;
}

int engine_add_pid(struct engine *e, pid_t pid, char *err, size_t errlen)
{
	if (add_target(e, pid, SONDE_TARGET, err, errlen))
		return -1;
	/* A process that cannot be read now is loaded at its first miss. */
	char ignored[256];
	if (e->unwind)
		unwind_load_pid(e->unwind, pid, ignored, sizeof(ignored));
	return 0;
}

int engine_add_pid_at_exec(struct engine *e, pid_t pid, char *err, size_t errlen)
{
	return add_target(e, pid, SONDE_TARGET_AT_EXEC, err, errlen); /* its exec loads its tables */
}

void engine_remove_pid(struct engine *e, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	bpf_map_delete_elem(bpf_map__fd(e->skel->maps.targets), &key);
}

void engine_wake_at_next_sample(struct engine *e, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	bpf_map_delete_elem(bpf_map__fd(e->skel->maps.tgids_heard), &key);
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
	libbpf_log_stop(e);
	free(e);
}
