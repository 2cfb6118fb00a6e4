/* run — one session's life (session.h is its API, with the rooms listed
 * in sessionstate.h): options checked, the targets started or found, the
 * engine loaded and the probes placed, records drained into the profile
 * through the one event loop until the run ends, then the final drain and
 * the calls still open. */
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discovery.h"
#include "drops.h"
#include "errbuf.h"
#include "outfile.h"
#include "owncost.h"
#include "procmaps.h"
#include "pyfollow.h"
#include "samplefilter.h"
#include "sessionstate.h"
#include "summary.h"
#include "trace.h"
#include "util.h"

bool session_refuse_replay(const struct session *s, char *err, size_t errlen)
{
	if (!s->replay_path)
		return false;
	errbuf_set(err, errlen,
		   "%s is a recording: nothing can be traced or sampled in it (views, filters, "
		   "windows, save, status and help work; run sonde serve -p PID or -- CMD to "
		   "steer a live session)",
		   s->replay_path);
	return true;
}

double session_now_s(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void session_options_init(struct session_options *o)
{
	memset(o, 0, sizeof(*o));
	o->event = "cpu-clock";
	o->freq = 99;
	o->ringbuf_mb = 16;
	o->unwind = SESSION_UNWIND_AUTO;
	o->min_block_ns = SESSION_MIN_BLOCK_NS;
}

const char *const unwind_names[] = {
	[SESSION_UNWIND_FP] = "fp", [SESSION_UNWIND_CFI] = "cfi", [SESSION_UNWIND_AUTO] = "auto"};

const char *session_unwind_name(enum session_unwind m)
{
	return (unsigned)m < 3 ? unwind_names[m] : "?";
}

int session_unwind_parse(const char *name, enum session_unwind *out)
{
	for (int m = 0; m < 3; m++)
		if (strcmp(name, unwind_names[m]) == 0) {
			*out = (enum session_unwind)m;
			return 0;
		}
	return -1;
}

/* A note on the way (see session_options.note). */
void session_note(const struct session_options *o, const char *fmt, ...)
{
	if (!o->note)
		return;
	char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	o->note(o->note_arg, msg);
	free(msg);
}

int session_check_options(const struct session_options *o, char *err, size_t errlen)
{
	int modes = (o->system_wide ? 1 : 0) + (o->npids > 0 || o->pid_of ? 1 : 0) +
		    (o->cmd ? 1 : 0);
	if (modes != 1) {
		errbuf_set(err, errlen,
			   "say what to profile: exactly one of -a, -p PID, -p NAME, or -- CMD ARGS...");
		return -1;
	}
	if (o->no_children && o->system_wide) {
		errbuf_set(err, errlen,
			   "--no-children goes with -p or a command, not -a (which profiles every "
			   "process)");
		return -1;
	}
	if (o->exact_children && (o->no_children || o->system_wide)) {
		errbuf_set(err, errlen,
			   "--exact-children goes with -p or a command that sonde follows the "
			   "children of: not with %s",
			   o->system_wide ? "-a (whose probes are on every process already)"
					  : "--no-children");
		return -1;
	}
	if (o->period && o->freq_given) {
		errbuf_set(err, errlen, "-F and -c exclude each other: sample by frequency or by period");
		return -1;
	}
	return 0;
}

/* --- the span <-> sample join for session_on_span consumers ------------- */

/* The calls' samples are held until each call's record comes (model/join,
 * bounded by JOIN_MAX_LINKS). */

/* Notes what a record added: its samples in the calls they were taken in,
 * and a call that ended with the samples noted in it. */
static void join_added(struct session *s, const struct collector_added *a)
{
	for (size_t i = 0; i < a->nsamples; i++)
		join_add_sample(s->join, s->prof, a->first_sample + i, NULL);
	for (size_t i = 0; i < a->nspans; i++) {
		const struct span *sp = &s->prof->spans[a->first_span + i];
		size_t n;
		const uint32_t *samples = join_take(s->join, sp->id, &n);
		s->on_span(s, s->on_span_arg, sp, samples, n);
	}
}

static void session_maps_free(struct session *s)
{
	join_free(s->join);
	hashmap_free(&s->point_calls_before);
	hashmap_free(&s->point_hit_before);
}

static int handle_record(void *arg, const void *data, size_t size)
{
	struct session *s = arg;
	discovery_follow_forks(s, data, size);
	pyfollow_record(s, data, size);
	struct collector_added added;
	collector_handle(s->col, data, size, &added);
	if (s->join)
		join_added(s, &added);
	return 0;
}

void session_on_span(struct session *s, session_span_fn fn, void *arg)
{
	s->on_span = fn;
	s->on_span_arg = arg;
	if (fn && !s->join)
		s->join = join_new(JOIN_MAX_LINKS);
}

/* True (with err) when a signal came while probes were being attached: the
 * session then ends without attaching more. */
bool session_interrupted(const struct session *s, char *err, size_t errlen)
{
	if (!loop_signal_pending(s->loop))
		return false;
	errbuf_set(err, errlen, "interrupted by a signal while attaching probes");
	return true;
}

/* --- start, run, finish ---------------------------------------------------- */

/* Whether the session traces calls (now, or later: a live one), whose
 * durations the calibration corrects. */
static bool traces_calls(const struct session_options *o)
{
	return o->ntraces > 0 || o->sample_in || o->sample_slow || o->live;
}

/* Whether the calibration measures what a sample costs too. */
static bool calibrates_samples(const struct session_options *o)
{
	return !o->no_sampling || o->live;
}

/* Measures what sonde's probes and samples cost that BPF cannot time, so
 * call durations are corrected for it (see calibrate.h). Only needed where
 * calls are traced; a failure leaves the correction to what BPF timed. */
static void calibrate_session(struct session *s)
{
	const struct session_options *o = s->o;
	if (!traces_calls(o))
		return;
	char err[256];
	uint64_t t0 = monotonic_ns();
	/* Said once the probes are attached: a command that fails on a bad
	 * probe says only why. */
	if (calibrate_run(s->eng, calibrates_samples(o), &s->calib, err, sizeof(err)))
		snprintf(s->calib_warning, sizeof(s->calib_warning),
			 "warning: cannot calibrate sonde's own cost (%s): call durations are "
			 "corrected only by what its BPF programs timed",
			 err);
	s->calib_ms = (double)(monotonic_ns() - t0) / 1e6;
	if (o->verbose) {
		char line[1024];
		size_t off = (size_t)snprintf(line, sizeof(line),
					      "calibrated in %.0f ms: a sample costs %.0f ns (%.0f ns timed)",
					      s->calib_ms, s->calib.sample_full_ns,
					      s->calib.sample_handler_ns);
		for (int c = 0; c < INSN_CLASSES && off < sizeof(line); c++)
			off += (size_t)snprintf(line + off, sizeof(line) - off,
						"; a call probed at a %s instruction %.0f ns (%.0f timed, %llu inside)",
						engine_insn_class_name((enum engine_insn_class)c),
						s->calib.class_full_ns[c], s->calib.class_handler_ns[c],
						(unsigned long long)s->calib.classes[c].self_unseen_ns);
		session_note(o, "%s", line);
	}
}

/* --- the event loop ---------------------------------------------------------- */

/* Tells on_end (or stops the loop) when there is a new reason to end. */
void session_check_end(struct session *s)
{
	enum session_end_reason why = session_end_reason(s);
	if (why == SESSION_RUNNING || why == s->notified || (s->ended && why != SESSION_SIGNALLED))
		return;
	s->notified = why;
	if (s->on_end)
		s->on_end(s, s->on_end_arg, why);
	else
		loop_stop(s->loop);
}

/* Every wake: take in what waits in the ring buffer, then see whether the
 * run should end. */
static void on_wake(void *arg)
{
	struct session *s = arg;
	if (!s->ended && !s->ring_failed && engine_poll(s->eng, 0) < 0) {
		s->ring_failed = true;
		loop_fail(s->loop, "reading the BPF ring buffer failed: %s", strerror(errno));
		return;
	}
	session_check_end(s);
}

/* The BPF side wakes the reader only for samples and bursts of calls: wake
 * at least 10 times a second to take calls in. */
static void on_wake_timer(void *arg)
{
	struct session *s = arg;
	if (!s->ended)
		loop_timer_in(s->loop, s->wake_timer, 0.1);
}

static void on_end_timer(void *arg)
{
	session_check_end(arg);
}

void session_on_signal(void *arg)
{
	struct session *s = arg;
	s->signalled = true;
	session_check_end(s);
}

static int setup_loop(struct session *s, char *err, size_t errlen)
{
	if (loop_add_fd(s->loop, engine_ring_fd(s->eng), NULL, NULL, err, errlen))
		return -1;
	loop_on_wake(s->loop, on_wake, s);
	s->wake_timer = loop_timer_new(s->loop, on_wake_timer, s);
	loop_timer_in(s->loop, s->wake_timer, 0.1);
	s->end_timer = -1;
	if (s->o->duration > 0) {
		s->end_timer = loop_timer_new(s->loop, on_end_timer, s);
		/* A microsecond late, so that session_end_reason (in seconds, a
		 * double) agrees the time is up. */
		loop_timer_at(s->loop, s->end_timer,
			      (uint64_t)((s->start_mono + s->o->duration) * 1e9) + 1000);
	}
	return 0;
}

struct loop *session_loop(struct session *s)
{
	return s->loop;
}

void session_on_end(struct session *s, session_end_fn fn, void *arg)
{
	s->on_end = fn;
	s->on_end_arg = arg;
}

/* --- start ----------------------------------------------------------------------- */

/* --ready-file: an old file is removed first, before anything can fail (a
 * script must not take one left by an earlier run for this one's), and the
 * place is checked now, so a run does not fail only once it is set up. */
int session_ready_file_prepare(const struct session_options *o, char *err, size_t errlen)
{
	if (!o->ready_file)
		return 0;
	char why[1024];
	if (outfile_check_regular(o->ready_file, "the ready file", why, sizeof(why))) {
		errbuf_set(err, errlen, "--ready-file: %s", why);
		return -1;
	}
	if (unlink(o->ready_file) && errno != ENOENT) {
		errbuf_set(err, errlen, "--ready-file %s: cannot remove the old file: %s",
			   o->ready_file, strerror(errno));
		return -1;
	}
	return 0;
}

int session_ready(struct session *s, char *err, size_t errlen)
{
	if (s->ready)
		return 0;
	s->ready = true;
	if (!s->o->ready_file)
		return 0;
	char pid[32], why[1024];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (outfile_write_regular(s->o->ready_file, "the ready file", pid, (size_t)n, why,
				  sizeof(why))) {
		errbuf_set(err, errlen, "--ready-file: %s", why);
		return -1;
	}
	return 0;
}

/* The options' targets, as they are before anything starts: the event,
 * the processes -p and --pid-of name (alive). */
static int check_targets(struct session_options *o, struct event_spec *event, char *err,
			 size_t errlen)
{
	if (session_ready_file_prepare(o, err, errlen) || events_parse(o->event, event, err, errlen))
		return -1;
	if (!event->time_based && !o->period && !o->freq_given)
		o->period = 1; /* count events, not time: every occurrence by default */
	if (discovery_named_processes(o, err, errlen))
		return -1;
	for (int i = 0; i < o->npids; i++)
		if (!procmaps_alive(o->pids[i]))
			return errbuf_set(err, errlen,
					  "no process with PID %d (it does not exist or has exited)",
					  (int)o->pids[i]);
	return 0;
}

/* A session with its profile, symbolizer and collector, nothing started. */
static struct session *session_new(struct session_options *o, int argc, char **argv,
				   const struct event_spec *event)
{
	struct session *s = xcalloc(1, sizeof(*s));
	s->probes = xcalloc(SESSION_MAX_PROBES, sizeof(*s->probes));
	s->o = o;
	s->sample_in_probe = s->sample_slow_probe = s->sample_when_probe = -1;
	s->argc = argc;
	s->argv = argv;
	s->prof = profile_new();
	s->syms = symbols_new();
	s->col = collector_new(s->prof, s->syms);
	collector_keep_last_stacks(s->col, o->threads);
	collector_set_event(s->col, 0, event->name, 1);
	if (o->off_cpu)
		collector_set_event(s->col, ENGINE_EVENT_OFFCPU, PROFILE_EVENT_OFFCPU, 1);
	if (o->wakers)
		collector_set_event(s->col, ENGINE_EVENT_WAKER, PROFILE_EVENT_WAKER, 1);
	s->executable = discovery_executable(o);
	s->exe_alias = discovery_exe_alias(o);
	return s;
}

/* What the engine loads and gathers, from the options. */
static void engine_options_fill(struct session *s, struct engine_options *eo)
{
	const struct session_options *o = s->o;
	eo->freq = o->period ? 0 : o->freq;
	eo->period = o->period;
	eo->system_wide = o->system_wide;
	eo->no_sampler = o->no_sampling;
	eo->fixed = !o->live;
	eo->calibrate_samples = calibrates_samples(o);
	eo->no_spans = !traces_calls(o) && !o->sample_when; /* a line probe's program too */
	eo->ringbuf_bytes = o->ringbuf_mb << 20;
	eo->verbose = o->verbose;
	eo->note = o->note;
	eo->note_arg = o->note_arg;
	eo->log = o->log;
	eo->log_arg = o->log_arg;
	eo->no_children = o->no_children;
	static const enum engine_unwind unwind_modes[] = {
		[SESSION_UNWIND_FP] = ENGINE_UNWIND_FP,
		[SESSION_UNWIND_CFI] = ENGINE_UNWIND_CFI,
		[SESSION_UNWIND_AUTO] = ENGINE_UNWIND_AUTO,
	};
	eo->unwind = unwind_modes[o->unwind];
	eo->off_cpu = o->off_cpu || o->wakers;
	eo->wakers = o->wakers;
	eo->offcpu_min_ns = o->min_block_ns;
	eo->tstate_freq = o->threads ? (o->threads_hz ? o->threads_hz : o->freq) : 0;
	/* A pass walks every slot of the map: room for the targets' threads,
	 * or for a whole machine's. */
	eo->tstate_threads = o->system_wide ? SESSION_THREADS_ALL : SESSION_THREADS_TARGETS;
	eo->on_record = handle_record;
	eo->arg = s;
}

/* Every --trace planned before the BPF programs are loaded and calibrated:
 * a bad spec is said at once, not after seconds of start. *nplans counts
 * the plans made (to free), also on failure. */
static int plan_traces(struct session *s, struct probe_plan *plans, int *nplans, char *err,
		       size_t errlen)
{
	char why[1024];
	for (int i = 0; i < s->o->ntraces; i++) {
		if (trace_spec_resolve(s, s->o->traces[i], &plans[i], why, sizeof(why)))
			return errbuf_set(err, errlen, "--%s", why); /* "--trace SPEC: why" */
		*nplans = i + 1;
	}
	return 0;
}

/* The loop and the engine, with the target's processes in it. */
static int open_engine(struct session *s, const struct engine_options *eo, char *err,
		       size_t errlen)
{
	const struct session_options *o = s->o;
	/* Signals are caught from before the first probe is attached until the
	 * last is removed (session_free): one whose default action ends the
	 * process, arriving while the kernel attaches or removes a uprobe,
	 * leaves it half-done (engine/uprobes.h). One that comes while probes
	 * are attached stops the attaching. */
	s->loop = loop_new(err, errlen);
	if (!s->loop || loop_catch_signals(s->loop, session_on_signal, s, err, errlen))
		return -1;
	s->eng = engine_open(eo, err, errlen);
	if (!s->eng)
		return -1;
	if (o->cmd && engine_add_pid_at_exec(s->eng, s->cmd.pid, err, errlen))
		return -1;
	if (o->cmd)
		engine_unwind_preload(s->eng, s->executable);
	for (int i = 0; i < o->npids; i++) {
		if (engine_add_pid(s->eng, o->pids[i], err, errlen))
			return -1;
		symbols_note_process(s->syms, o->pids[i]);
	}
	return discovery_add_descendants(s, err, errlen);
}

/* Attaches every planned --trace (taking the plans). */
static int attach_traces(struct session *s, struct probe_plan *plans, char *err, size_t errlen)
{
	const struct session_options *o = s->o;
	char why[1024];
	for (int i = 0; i < o->ntraces; i++) {
		int n = 0;
		s->trace_first_probe[i] =
			trace_spec_attach(s, o->traces[i], &plans[i], &n, why, sizeof(why));
		if (s->trace_first_probe[i] < 0) /* "--trace FUNC: why", as the option was given */
			return errbuf_set(err, errlen, "--%s", why);
		s->trace_probe_count[i] = n;
		if (*why)
			session_note(o, "--trace %s: %s", o->traces[i], why);
	}
	return 0;
}

struct session *session_start(struct session_options *o, int argc, char **argv, char *err,
			      size_t errlen)
{
	struct engine_options eo = {0};
	struct probe_plan plans[SESSION_MAX_TRACES];
	int nplans = 0;
	double setup_mono = session_now_s(CLOCK_MONOTONIC);
	if (check_targets(o, &eo.event, err, errlen))
		return NULL;
	struct session *s = session_new(o, argc, argv, &eo.event);
	s->setup_mono = setup_mono;
	engine_options_fill(s, &eo);
	if (o->cmd && !s->executable) {
		errbuf_set(err, errlen, "%s: command not found (check the name and PATH)", o->cmd[0]);
		goto fail;
	}
	if (o->cmd && target_spawn(o->cmd, o->cmd_output, &s->cmd, err, errlen))
		goto fail;
	if (plan_traces(s, plans, &nplans, err, errlen))
		goto fail;
	/* A line probe's and a branch outcome's programs only where one is traced. */
	eo.no_points = !o->sample_when;
	for (int i = 0; i < nplans; i++)
		eo.no_points = eo.no_points && !plans[i].line && !plans[i].branch;
	if (open_engine(s, &eo, err, errlen))
		goto fail;
	if (!session_interrupted(s, err, errlen))
		calibrate_session(s);
	/* trace_spec_attach takes each plan (left empty); those after a
	 * failure are freed below. */
	if (attach_traces(s, plans, err, errlen))
		goto fail;
	if (session_interrupted(s, err, errlen) || samplefilter_setup(s, err, errlen))
		goto fail;
	if (s->calib_warning[0])
		session_note(o, "%s", s->calib_warning);
	if (engine_start(s->eng, err, errlen))
		goto fail;
	s->start_mono = session_now_s(CLOCK_MONOTONIC);
	s->start_wall = session_now_s(CLOCK_REALTIME);
	if (setup_loop(s, err, errlen))
		goto fail;
	if (!o->hold_cmd && session_release_cmd(s, err, errlen))
		goto fail;
	return s;
fail:
	for (int i = 0; i < nplans; i++)
		probe_plan_free(&plans[i]);
	session_free(s);
	return NULL;
}

int session_release_cmd(struct session *s, char *err, size_t errlen)
{
	if (!s->o->cmd || s->cmd_running)
		return 0;
	char why[512];
	if (target_release(&s->cmd, why, sizeof(why)))
		return errbuf_set(err, errlen, "%s: %s", s->o->cmd[0], why);
	s->cmd_running = true;
	symbols_note_process(s->syms, s->cmd.pid);
	return 0;
}

enum session_end_reason session_end_reason(struct session *s)
{
	if (s->signalled)
		return SESSION_SIGNALLED;
	if (s->o->duration > 0 && session_now_s(CLOCK_MONOTONIC) - s->start_mono >= s->o->duration)
		return SESSION_DURATION;
	if (s->o->cmd && target_cmd_exited(&s->cmd))
		return SESSION_TARGETS_EXITED;
	if (s->o->npids && !discovery_any_alive(s->o->pids, s->o->npids))
		return SESSION_TARGETS_EXITED;
	return SESSION_RUNNING;
}

bool session_ended(const struct session *s)
{
	return s->ended;
}

struct open_span_ctx {
	struct collector *col;
	uint64_t end_ns;
};

static void add_open_span(void *arg, const struct engine_open_span *o)
{
	struct open_span_ctx *c = arg;
	struct collector_open_span cs = {.tid = o->tid,
					 .probe = o->probe,
					 .depth = o->depth,
					 .span_id = o->span_id,
					 .parent_id = o->parent_id,
					 .start_ns = o->start_ns,
					 .own_ns = o->own_ns};
	collector_add_open_span(c->col, &cs, c->end_ns);
}

void session_end(struct session *s)
{
	if (s->ended)
		return;
	s->ended = true;
	s->end_mono = session_now_s(CLOCK_MONOTONIC);
	/* The end, as the metadata says it: off-CPU intervals stop there at
	 * once (threads still away would send theirs as long as they sleep
	 * on), and nothing taken after it counts. */
	uint64_t end_ns = (uint64_t)(s->end_mono * 1e9);
	engine_end_offcpu(s->eng, end_ns);
	collector_set_end(s->col, end_ns);
	/* What still arrives is drained below, not by the loop. */
	if (s->loop) {
		loop_remove_fd(s->loop, engine_ring_fd(s->eng));
		loop_timer_cancel(s->loop, s->wake_timer);
		loop_timer_cancel(s->loop, s->end_timer);
	}
	engine_stop(s->eng);
	engine_pause_spans(s->eng);
	/* Drain until the buffer stays empty: handlers that began before the
	 * pause may still be submitting. Only then are the counts final. */
	for (int quiet = 0; quiet < 2;) {
		if (engine_poll(s->eng, 0) > 0) {
			quiet = 0;
			continue;
		}
		quiet++;
		usleep(2000);
	}
	s->offcpu_cut = engine_cut_offcpu(s->eng);
	struct open_span_ctx ctx = {s->col, end_ns};
	engine_for_each_open_span(s->eng, add_open_span, &ctx);
	for (size_t i = 0; i < s->prof->nprobes; i++)
		trace_refresh_probe(s, (uint32_t)i);
	/* Every call is in: what samples cost the calls beyond what was
	 * measured, read from the calls without one (owncost.h). */
	owncost_correct_all(s->prof);
	summary_add_metadata(s, s->end_mono);
}

double session_start_time(const struct session *s)
{
	return s->start_mono;
}

double session_end_time(const struct session *s)
{
	return s->ended ? s->end_mono : 0;
}

const char *session_replay_path(const struct session *s)
{
	return s->replay_path;
}

const struct session_options *session_options(const struct session *s)
{
	return s->o;
}

pid_t session_command_pid(const struct session *s)
{
	return s->o->cmd ? s->cmd.pid : 0;
}

void session_get_stats(struct session *s, struct engine_stats *es, struct collector_stats *cs)
{
	if (s->replay_path) {
		/* A replay: the drops the recording's metadata counted. */
		memset(es, 0, sizeof(*es));
		memset(cs, 0, sizeof(*cs));
		for (int k = 0; k < ENGINE_COUNTERS; k++) {
			const char *v = profile_meta_get(s->prof, drops_key(k));
			es->count[k] = v ? strtoull(v, NULL, 10) : 0;
		}
		cs->samples = s->prof->nsamples;
		return;
	}
	engine_get_stats(s->eng, es);
	collector_get_stats(s->col, cs);
}

/* A call's samples wait in the join for its record this long at most (a
 * call still running then, or whose record was lost, gives them up,
 * counted): the join's bound is not spent on calls that never end. */
#define SESSION_JOIN_HOLD_NS (600 * 1000000000ull)

/* Once a second (more often until every probe has its p99): the kernel's
 * counts into the profile, and the keep thresholds they give; every 10 s
 * the calls that waited too long leave the join. */
static void session_tick(void *arg)
{
	struct session *s = arg;
	double now = session_now_s(CLOCK_MONOTONIC);
	if (now < s->next_refresh_s)
		return;
	uint64_t now_ns = (uint64_t)(now * 1e9);
	if (s->join && now >= s->next_sweep_s && now_ns > SESSION_JOIN_HOLD_NS) {
		s->join_forgotten += join_sweep(s->join, now_ns - SESSION_JOIN_HOLD_NS);
		s->next_sweep_s = now + 10;
	}
	discovery_forget_exited(s);
	pyfollow_forget_exited(s);
	/* Until every probe has its p99, none of its slow calls crosses
	 * (only those samples landed in): look again soon. */
	bool settled = session_refresh_calls(s);
	s->next_refresh_s = now + (settled ? 1.0 : 0.05);
}

int session_run(struct session *s, char *err, size_t errlen)
{
	loop_on_wake(s->loop, session_tick, s);
	int rc = session_ready(s, err, errlen);
	if (rc == 0)
		rc = loop_run(s->loop, err, errlen);
	session_end(s);
	return rc;
}

struct profile *session_profile(struct session *s)
{
	return s->prof;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	/* sonde started it and the run ended first (-d, Ctrl-C or an error):
	 * stop it rather than leave it running unobserved. */
	if (s->o->cmd && s->cmd.pid > 0 && !s->cmd.exited)
		target_cmd_kill(&s->cmd);
	/* The probes go while signals are still caught (see session_start). */
	engine_close(s->eng);
	loop_free(s->loop);
	collector_free(s->col);
	symbols_free(s->syms);
	profile_free(s->prof);
	session_maps_free(s);
	free(s->executable);
	free(s->exe_alias);
	free(s->event_name);
	free(s->replay_path);
	for (size_t i = 0; s->probes && i < SESSION_MAX_PROBES; i++) {
		free(s->probes[i].sites.offsets);
		free(s->probes[i].sites.ref_ctrs);
		free(s->probes[i].spec);
	}
	free(s->probes);
	free(s->followed);
	pyfollow_free(s);
	free(s);
}
