/* liveexec — a live session's commands (live_exec, live_exec_data): one
 * function a command kind, found in one table; each answers in one line
 * or fails with one line in err. The language itself is command.h. */
#define _GNU_SOURCE
#include "live.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "events.h"
#include "livestate.h"
#include "outfile.h"
#include "query.h"
#include "threadtable.h"
#include "util.h"
#include "valuereport.h"

/* --- commands ------------------------------------------------------------------------ */

/* A command writes its answer to out and returns 0, or returns -1 with
 * one line in err, which live_exec* add to the answer. */

/* The probe a view names, traced now when it is not yet. */
static int view_probe(struct live *l, const char *func, bool *traced_now, char *err,
		      size_t errlen)
{
	*traced_now = false;
	int id = query_probe(l->p, func);
	/* A recording's probes are all there is: none is attached. */
	if (id >= 0 && (l->src->probe_attached(l->s, (uint32_t)id) || l->src->replay_path(l->s)))
		return id;
	int n = 0;
	id = l->src->trace(l->s, func, &n, err, errlen);
	if (id < 0)
		return -1;
	if (n != 1)
		return errbuf_set(err, errlen,
				  "'%s' names %d functions: a view takes one (untrace %s to undo)", func,
				  n, func);
	*traced_now = true;
	return id;
}

void live_describe_view(const struct live *l, char *buf, size_t size)
{
	char th[64], val[32];
	const char *name = l->view.span_class != SPAN_ANY ? l->p->probes[l->view.probe].name : "";
	switch (l->view.span_class) {
	case SPAN_ANY:
		snprintf(buf, size, "all");
		break;
	case SPAN_IN:
		snprintf(buf, size, "in %s", name);
		break;
	case SPAN_SLOW:
	case SPAN_FAST:
		threshold_format(&l->view_threshold, th, sizeof(th));
		if (l->view_threshold.kind == THRESHOLD_AUTO && l->threshold_known &&
		    !l->view_modes.found)
			snprintf(th, sizeof(th), "auto (no second mode; using p95)"); /* LIVE_AUTO_FALLBACK, in a view line */
		if (l->threshold_known)
			duration_format(l->view.threshold_ns, val, sizeof(val));
		else
			snprintf(val, sizeof(val), "not known yet");
		snprintf(buf, size, "%s %s %s %s (%s)",
			 l->view.span_class == SPAN_SLOW ? "slow" : "fast", name,
			 l->view.span_class == SPAN_SLOW ? ">" : "<=", th, val);
		break;
	case SPAN_BAND:
	case SPAN_NOT_BAND: /* live_band_build's views, never the session's */
		duration_format(l->view.band_lo_ns, th, sizeof(th));
		duration_format(l->view.band_hi_ns, val, sizeof(val));
		snprintf(buf, size, "%s %s %s..%s", l->view.span_class == SPAN_BAND ? "in" : "outside",
			 name, th, val);
		break;
	}
}

void live_describe_filter(const struct live *l, char *buf, size_t size)
{
	if (l->view.pid)
		snprintf(buf, size, "pid %lld", (long long)l->view.pid);
	else if (l->view.tid)
		snprintf(buf, size, "tid %lld", (long long)l->view.tid);
	else if (l->filter_comm[0])
		snprintf(buf, size, "comm %s", l->filter_comm);
	else
		snprintf(buf, size, "none");
}

void live_describe_window(const struct live *l, char *buf, size_t size)
{
	if (l->o.ewma)
		snprintf(buf, size, "EWMA half-life %gs", l->o.halflife_s);
	else
		snprintf(buf, size, "last %gs", l->o.window_s);
}

static int set_view(struct live *l, const struct command *c, FILE *out, char *err,
		    size_t errlen)
{
	enum span_class cls = SPAN_ANY;
	uint32_t probe = 0;
	struct threshold threshold = {0};
	bool traced_now = false;
	if (c->kind != CMD_VIEW_ALL) {
		int id = view_probe(l, c->arg, &traced_now, err, errlen);
		if (id < 0)
			return -1;
		probe = (uint32_t)id;
		cls = c->kind == CMD_VIEW_IN ? SPAN_IN : c->kind == CMD_VIEW_SLOW ? SPAN_SLOW : SPAN_FAST;
		threshold = c->threshold;
	}
	bool same = cls == l->view.span_class &&
		    (cls == SPAN_ANY ||
		     (probe == l->view.probe && threshold_equal(&threshold, &l->view_threshold)));
	if (!same || traced_now) {
		l->view.span_class = cls;
		l->view.probe = probe;
		l->view_threshold = threshold;
		l->threshold_known = false;
		l->view.threshold_ns = UINT64_MAX;
		live_rebuild(l);
	}
	char desc[192];
	live_describe_view(l, desc, sizeof(desc));
	fprintf(out, "view: %s%s (rebuilt from the %.0f s held)\n", desc,
		traced_now ? "; traced it now, so only calls from now on count" : "",
		live_held_seconds(l));
	return 0;
}

static int set_filter(struct live *l, const struct command *c, FILE *out)
{
	l->view.pid = l->view.tid = 0;
	memset(l->filter_comm, 0, sizeof(l->filter_comm));
	if (c->kind == CMD_FILTER_PID)
		l->view.pid = c->pid;
	else if (c->kind == CMD_FILTER_TID)
		l->view.tid = c->tid;
	else if (c->kind == CMD_FILTER_COMM)
		memcpy(l->filter_comm, c->arg, strnlen(c->arg, sizeof(l->filter_comm) - 1));
	live_rebuild(l);
	char desc[64];
	live_describe_filter(l, desc, sizeof(desc));
	fprintf(out, "filter: %s\n", desc);
	return 0;
}

static void print_probe_list(const struct live *l, FILE *out, int first, int count)
{
	for (int i = first; i < first + count && i < (int)l->p->nprobes; i++)
		fprintf(out, "%s%s", i > first ? ", " : "", l->p->probes[i].name);
}

static int do_trace(struct live *l, const char *spec, FILE *out, char *err, size_t errlen)
{
	char note[1024] = "";
	size_t before = l->p->nprobes;
	int n = 0;
	int first = l->src->trace(l->s, spec, &n, note, sizeof(note));
	if (first < 0)
		return errbuf_set(err, errlen, "%s", note);
	if (l->p->probes[first].branch) { /* a branch: its outcome probes, n its jumps' addresses */
		const struct probe_branch *b = l->p->probes[first].branch;
		fprintf(out, "tracing branch %s at %d address%s: ", b->at, n, n == 1 ? "" : "es");
		int shown = 0;
		for (size_t i = (size_t)first; i < l->p->nprobes; i++) {
			const struct probe_branch *o = l->p->probes[i].branch;
			if (o && !strcmp(o->at, b->at) &&
			    !strcmp(l->p->probes[i].binary, l->p->probes[first].binary))
				fprintf(out, "%s%s", shown++ ? ", " : "", l->p->probes[i].name);
		}
		fputc('\n', out);
		return 0;
	}
	if (l->p->probes[first].point >= 0) { /* a line: n is its addresses */
		fprintf(out, "tracing line %s at %d address%s\n", l->p->probes[first].name, n,
			n == 1 ? "" : "es");
		return 0;
	}
	fprintf(out, "tracing %d function%s: ", n, n == 1 ? "" : "s");
	if (l->p->nprobes > before) /* new probes are consecutive */
		print_probe_list(l, out, (int)before, (int)(l->p->nprobes - before));
	else
		fprintf(out, "%s", l->p->probes[first].name);
	if (*note) /* functions the pattern named that a probe would break */
		fprintf(out, "; %s", note);
	fputc('\n', out);
	return 0;
}

static int do_sampling(struct live *l, const struct command *c, FILE *out, char *err,
		       size_t errlen)
{
	const struct session_options *o = l->src->options(l->s);
	const char *event = o->event;
	/* o->freq is the last rate asked for, kept while a counted event
	 * samples by period, so going back to a time-based event restores it. */
	uint64_t freq = o->freq, period = o->period;
	if (c->kind == CMD_SAMPLE_HZ) {
		freq = c->hz;
		period = 0;
	} else if (c->kind == CMD_SAMPLE_EVENT) {
		struct event_spec ev;
		if (events_parse(c->arg, &ev, err, errlen))
			return -1;
		event = c->arg;
		/* As record does: time-based events keep the rate (99 Hz when
		 * there was none), counted events take every occurrence. */
		period = ev.time_based ? 0 : 1;
		if (ev.time_based && !freq)
			freq = 99;
	}
	int r = l->src->set_sampling(l->s, c->kind == CMD_SAMPLE_OFF ? NULL : event, freq, period,
				     err, errlen);
	if (r)
		return -1;
	if (c->kind == CMD_SAMPLE_OFF) {
		fprintf(out, "sampling off (traced calls are still timed)\n");
		return 0;
	}
	o = l->src->options(l->s);
	if (o->period == 1)
		fprintf(out, "sampling %s: every event\n", o->event);
	else if (o->period)
		fprintf(out, "sampling %s every %llu events\n", o->event,
			(unsigned long long)o->period);
	else
		fprintf(out, "sampling %s at %llu Hz\n", o->event, (unsigned long long)o->freq);
	return 0;
}

static int do_reset(struct live *l, FILE *out)
{
	window_free(l->samples);
	window_free(l->calls);
	l->samples = live_new_window(l);
	l->calls = live_new_window(l);
	uint64_t now = monotonic_ns();
	profile_trim(l->p, l->p->nsamples, UINT64_MAX, 0);
	l->cursor = l->span_cursor = 0;
	l->npending = l->pending_done = 0;
	join_free(l->join); /* its calls' samples are gone */
	l->join = join_new(JOIN_MAX_LINKS);
	for (size_t i = 0; i < l->p->nprobes; i++) {
		uint64_t h[LATENCY_LOGLIN_BUCKETS], total = 0;
		if (l->src->probe_hist(l->s, (uint32_t)i, h) == 0)
			for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++)
				total += h[b];
		l->probes[i].calls_base = total;
		l->probes[i].entered_base = l->src->probe_entered(l->s, (uint32_t)i);
		l->probes[i].nslow = l->probes[i].slow_head = 0;
	}
	memset(&l->sample_rate, 0, sizeof(l->sample_rate));
	memset(l->sec_id, 0, l->nsec * sizeof(*l->sec_id));
	memset(l->sec_weight, 0, l->nsec * sizeof(*l->sec_weight));
	memset(&l->call_rate, 0, sizeof(l->call_rate));
	l->nsamples = l->ncalls = l->undecided = 0;
	l->held_from_ns = now;
	l->threshold_known = false;
	fprintf(out, "reset: windows, calls and held samples cleared\n");
	return 0;
}

static void forget_unsaved(struct live *l)
{
	recording_image_free(l->unsaved.img);
	free(l->unsaved.path);
	memset(&l->unsaved, 0, sizeof(l->unsaved));
}

/* The recording kept from a failed save, written to `path` at last. */
static int save_unsaved(struct live *l, const char *path, FILE *out, char *err, size_t errlen)
{
	char why[512], size[32];
	struct unsaved *u = &l->unsaved;
	if (recording_image_write(u->img, path, why, sizeof(why)))
		return errbuf_set(err, errlen,
				  "%s; the recording (%s) is still kept in memory: save it to another "
				  "file",
				  why, outfile_size_text(recording_image_size(u->img), size, sizeof(size)));
	fprintf(out,
		"saved %zu samples and %zu calls (the last %.0f s held at %.0f s, kept since the "
		"save to %s failed) to %s; save again for the data since\n",
		u->samples, u->calls, u->held_s, u->at_s, u->path, path);
	forget_unsaved(l);
	return 0;
}

static int do_save(struct live *l, const char *path, FILE *out, char *err, size_t errlen)
{
	char why[512];
	if (l->unsaved.img)
		return save_unsaved(l, path, out, err, errlen);
	struct recording_image *img = l->src->recording(l->s, err, errlen);
	if (!img)
		return -1;
	if (recording_image_write(img, path, why, sizeof(why))) {
		/* Nothing is lost: the recording waits in memory for a path
		 * that has room. */
		char size[32];
		l->unsaved = (struct unsaved){
			.img = img,
			.path = xstrdup(path),
			.at_s = (double)(live_view_time(l) - l->start_ns) / 1e9,
			.samples = l->p->nsamples,
			.calls = l->p->nspans,
			.held_s = live_held_seconds(l),
		};
		return errbuf_set(err, errlen,
				  "%s; the recording (%s) is kept in memory: `save OTHER_FILE` writes "
				  "it (else it is saved in $TMPDIR or /tmp when the session ends)",
				  why, outfile_size_text(recording_image_size(img), size, sizeof(size)));
	}
	recording_image_free(img);
	fprintf(out, "saved %zu samples and %zu calls (the last %.0f s held) to %s\n",
		l->p->nsamples, l->p->nspans, live_held_seconds(l), path);
	/* Calls the kernel counted without a record in the file: most never
	 * needed one (no sample landed in them, not slow); the others were
	 * held and let go (older than --keep, beyond --keep-calls). */
	uint64_t missing = profile_meta_u64(l->p, "calls_not_kept");
	uint64_t trimmed = l->calls_trimmed < missing ? l->calls_trimmed : missing;
	if (missing)
		fprintf(out,
			"%llu calls the kernel counted are not in it: %llu needed no record (no "
			"sample in them, not slow), %llu were older than the %.0f s held or beyond "
			"--keep-calls; their counts are in its histograms\n",
			(unsigned long long)missing, (unsigned long long)(missing - trimmed),
			(unsigned long long)trimmed, live_held_seconds(l));
	return 0;
}

int live_rescue_unsaved(struct live *l, char *msg, size_t msglen)
{
	struct unsaved *u = &l->unsaved;
	if (!u->img)
		return 0;
	char saved[4096];
	int rc = recording_image_rescue(u->img, u->path, saved, sizeof(saved));
	if (rc == 0)
		snprintf(msg, msglen,
			 "the recording that could not be saved to %s (%zu samples, %zu calls) was "
			 "saved to %s",
			 u->path, u->samples, u->calls, saved);
	else
		snprintf(msg, msglen,
			 "the recording that could not be saved to %s is lost: no place had room for "
			 "it ($TMPDIR or /tmp, /var/tmp, $HOME)",
			 u->path);
	forget_unsaved(l);
	return rc == 0 ? 1 : -1;
}

/* The status as text, and as JSON to data (when not NULL): one view, so
 * both say the same. */
static void print_status(struct live *l, FILE *out, FILE *data)
{
	struct live_view *v = live_view_build(l, 0);
	if (data) {
		live_view_add_probe_details(l, v);
		live_view_write_json(data, v);
	}
	const struct live_status *st = &v->status;
	fprintf(out, "target:   %s\n", st->target);
	fprintf(out, "sampling: %s\n", st->sampling);
	fprintf(out, "window:   %s\n", st->window);
	fprintf(out, "view:     %s\n", st->view);
	fprintf(out, "filter:   %s\n", st->filter);
	fprintf(out, "elapsed:  %.1f s; %llu samples (%.1f/s), %llu calls (%.1f/s)\n", st->elapsed_s,
		(unsigned long long)st->samples, st->samples_per_s, (unsigned long long)st->calls,
		st->calls_per_s);
	fprintf(out, "drops:    %llu%s%s\n", (unsigned long long)st->drops,
		st->drops_detail[0] ? " " : "", st->drops_detail);
	fprintf(out, "held:     %.1f s of raw data, %.1f MB\n", st->held_s,
		(double)st->memory_bytes / 1048576.0);
	for (size_t i = 0; i < v->nprobes; i++) {
		const struct live_probe_view *pv = &v->probes[i];
		char p50[16], p99[16];
		fprintf(out, "probe:    %s%s: %.0f calls in window, %.1f/s, p50 %s, p99 %s, %llu total",
			pv->name, pv->attached ? "" : " (untraced)", pv->calls, pv->calls_per_s,
			duration_format(pv->p50_ns, p50, sizeof(p50)),
			duration_format(pv->p99_ns, p99, sizeof(p99)),
			(unsigned long long)pv->total_calls);
		if (pv->predicated)
			fprintf(out, " where its predicate held, of %llu entered",
				(unsigned long long)pv->entered);
		fputc('\n', out);
	}
	live_view_free(v);
}

/* threads: the last pass of the thread-state sampler, as sonde threads
 * prints it, and its rows as JSON to data (when not NULL). */
static void print_threads(struct live *l, FILE *out, FILE *data)
{
	struct threadstate_row *rows;
	uint64_t when;
	size_t n = threadstates_last_pass(l->p, &rows, &when);
	if (data)
		threadtable_write_json(data, l->p, rows, n, when, live_view_time(l));
	if (n)
		threadtable_print(out, l->p, rows, n, when, 0);
	else
		fprintf(out, "threads: no pass yet (sample threads takes every thread's state)\n");
	free(rows);
}

/* by VAR: the view's function's calls held, split by a captured value. */
static int do_by(struct live *l, const char *var, FILE *out, char *err, size_t errlen)
{
	if (valuereport_by_check(l->p, &l->view, var, err, errlen))
		return -1;
	if ((l->view.span_class == SPAN_SLOW || l->view.span_class == SPAN_FAST) &&
	    !l->threshold_known)
		return errbuf_set(err, errlen,
				  "the view's threshold is not known yet (too few calls): ask again "
				  "in a moment");
	struct printable keep = {0};
	fprintf(out, "over the %.0f s held:", live_held_seconds(l));
	struct valuereport_by by = {.p = l->p, .v = &l->view, .var = var};
	valuereport_by_text(out, &by, &keep, err, errlen);
	printable_free(&keep);
	return 0;
}

/* Every command is one function: what it changes, its one-line answer on
 * out, or -1 with one line in err. `data` is the JSON channel of the
 * control socket (NULL elsewhere). */
typedef int exec_fn(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		    size_t errlen);

static int exec_none(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		     size_t errlen)
{
	(void)l, (void)c, (void)out, (void)data, (void)err, (void)errlen;
	return 0;
}

static int exec_trace(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		      size_t errlen)
{
	(void)data;
	return do_trace(l, c->arg, out, err, errlen);
}

static int exec_untrace(struct live *l, const struct command *c, FILE *out, FILE *data,
			char *err, size_t errlen)
{
	(void)data;
	int n = l->src->untrace(l->s, c->arg, err, errlen);
	if (n < 0)
		return -1;
	fprintf(out, "untraced %d function%s (what they gathered stays)\n", n, n == 1 ? "" : "s");
	return 0;
}

static int exec_sampling(struct live *l, const struct command *c, FILE *out, FILE *data,
			 char *err, size_t errlen)
{
	(void)data;
	return do_sampling(l, c, out, err, errlen);
}

static int exec_offcpu(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		       size_t errlen)
{
	(void)data;
	if (l->src->set_offcpu(l->s, c->kind == CMD_SAMPLE_OFFCPU, err, errlen))
		return -1;
	fprintf(out, c->kind == CMD_SAMPLE_OFFCPU
			     ? "recording off-CPU intervals too (where threads wait)\n"
			     : "off-CPU intervals off\n");
	return 0;
}

static int exec_threads_sampling(struct live *l, const struct command *c, FILE *out, FILE *data,
				 char *err, size_t errlen)
{
	(void)data;
	if (l->src->set_threads(l->s, c->kind == CMD_SAMPLE_THREADS, c->hz, err, errlen))
		return -1;
	if (c->kind == CMD_SAMPLE_THREADS)
		fprintf(out, "sampling every thread's state %" PRIu64 " times a second\n",
			c->hz ? c->hz : (uint64_t)SESSION_THREADS_HZ);
	else
		fprintf(out, "thread states off\n");
	return 0;
}

static int exec_sample_in(struct live *l, const struct command *c, FILE *out, FILE *data,
			  char *err, size_t errlen)
{
	(void)data;
	if (l->src->set_sample_in(l->s, c->kind == CMD_SAMPLE_IN ? c->arg : NULL, err, errlen))
		return -1;
	if (c->kind == CMD_SAMPLE_IN)
		fprintf(out, "sampling only inside calls of %s (decided in the kernel)\n", c->arg);
	else
		fprintf(out, "sample-in off\n");
	return 0;
}

static int exec_sample_when(struct live *l, const struct command *c, FILE *out, FILE *data,
			    char *err, size_t errlen)
{
	(void)data;
	if (l->src->set_sample_when(l->s, c->kind == CMD_SAMPLE_WHEN ? c->arg : NULL, err, errlen))
		return -1;
	if (c->kind == CMD_SAMPLE_WHEN)
		fprintf(out, "sampling only in calls during which %s %s (decided in the kernel)\n",
			c->arg, strncmp(c->arg, "branch ", 7) ? "ran" : "happened");
	else
		fprintf(out, "sample-when off\n");
	return 0;
}

static int exec_sample_slow(struct live *l, const struct command *c, FILE *out, FILE *data,
			    char *err, size_t errlen)
{
	(void)data;
	if (l->src->set_sample_slow(l->s, c->kind == CMD_SAMPLE_SLOW ? c->arg : NULL, c->ns, err,
				    errlen))
		return -1;
	char d[32];
	if (c->kind == CMD_SAMPLE_SLOW)
		fprintf(out, "sampling only inside calls of %s running longer than %s\n", c->arg,
			duration_format(c->ns, d, sizeof(d)));
	else
		fprintf(out, "sample-slow off\n");
	return 0;
}

static int exec_view(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		     size_t errlen)
{
	(void)data;
	return set_view(l, c, out, err, errlen);
}

static int exec_window(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		       size_t errlen)
{
	(void)data;
	double s = ceil((double)c->ns / 1e9);
	if (s > l->o.keep_s)
		return errbuf_set(err, errlen,
				  "window %gs is longer than the %gs held: start sonde top with "
				  "--keep %gs",
				  s, l->o.keep_s, s);
	l->o.window_s = s;
	l->o.ewma = false;
	fprintf(out, "window: last %gs\n", s);
	return 0;
}

static int exec_ewma(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		     size_t errlen)
{
	(void)data;
	double h = (double)c->ns / 1e9;
	if (window_set_halflife(l->samples, h) || window_set_halflife(l->calls, h))
		return errbuf_set(err, errlen, "bad half-life");
	l->o.halflife_s = h;
	l->o.ewma = true;
	fprintf(out, "window: EWMA half-life %gs\n", h);
	return 0;
}

static int exec_filter(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		       size_t errlen)
{
	(void)data, (void)err, (void)errlen;
	return set_filter(l, c, out);
}

static int exec_reset(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		      size_t errlen)
{
	(void)c, (void)data, (void)err, (void)errlen;
	return do_reset(l, out);
}

static int exec_save(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		     size_t errlen)
{
	(void)data;
	return do_save(l, c->arg, out, err, errlen);
}

static int exec_status(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		       size_t errlen)
{
	(void)c, (void)err, (void)errlen;
	print_status(l, out, data);
	return 0;
}

static int exec_threads(struct live *l, const struct command *c, FILE *out, FILE *data,
			char *err, size_t errlen)
{
	(void)c, (void)err, (void)errlen;
	print_threads(l, out, data);
	return 0;
}

static int exec_by(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		   size_t errlen)
{
	(void)data;
	return do_by(l, c->arg, out, err, errlen);
}

static int exec_help(struct live *l, const struct command *c, FILE *out, FILE *data, char *err,
		     size_t errlen)
{
	(void)l, (void)data, (void)err, (void)errlen;
	command_help(out, c->arg);
	return 0;
}

/* The one dispatch: a command kind's function (the kinds are command.h's). */
static exec_fn *const commands[] = {
	[CMD_NONE] = exec_none,
	[CMD_TRACE] = exec_trace,
	[CMD_UNTRACE] = exec_untrace,
	[CMD_SAMPLE_HZ] = exec_sampling,
	[CMD_SAMPLE_OFF] = exec_sampling,
	[CMD_SAMPLE_EVENT] = exec_sampling,
	[CMD_SAMPLE_OFFCPU] = exec_offcpu,
	[CMD_SAMPLE_OFFCPU_OFF] = exec_offcpu,
	[CMD_SAMPLE_THREADS] = exec_threads_sampling,
	[CMD_SAMPLE_THREADS_OFF] = exec_threads_sampling,
	[CMD_SAMPLE_IN] = exec_sample_in,
	[CMD_SAMPLE_IN_OFF] = exec_sample_in,
	[CMD_SAMPLE_WHEN] = exec_sample_when,
	[CMD_SAMPLE_WHEN_OFF] = exec_sample_when,
	[CMD_SAMPLE_SLOW] = exec_sample_slow,
	[CMD_SAMPLE_SLOW_OFF] = exec_sample_slow,
	[CMD_VIEW_IN] = exec_view,
	[CMD_VIEW_SLOW] = exec_view,
	[CMD_VIEW_FAST] = exec_view,
	[CMD_VIEW_ALL] = exec_view,
	[CMD_WINDOW] = exec_window,
	[CMD_EWMA] = exec_ewma,
	[CMD_FILTER_PID] = exec_filter,
	[CMD_FILTER_TID] = exec_filter,
	[CMD_FILTER_COMM] = exec_filter,
	[CMD_FILTER_CLEAR] = exec_filter,
	[CMD_RESET] = exec_reset,
	[CMD_SAVE] = exec_save,
	[CMD_STATUS] = exec_status,
	[CMD_THREADS] = exec_threads,
	[CMD_BY] = exec_by,
	[CMD_HELP] = exec_help,
};
_Static_assert(sizeof(commands) / sizeof(commands[0]) == CMD_HELP + 1,
	       "every command kind has its function");

static int exec_command(struct live *l, const struct command *c, FILE *out, FILE *data,
			char *err, size_t errlen)
{
	char why[512];
	if ((command_changes_gathering(c->kind) || c->kind == CMD_RESET) &&
	    l->src->refuse_replay(l->s, why, sizeof(why)))
		return errbuf_set(err, errlen, "%s: %s", command_name(c->kind), why);
	if (l->frozen_ns && command_changes_gathering(c->kind))
		return errbuf_set(err, errlen,
				  "the session has ended (the targets exited): views, filters, save, "
				  "status and help still work");
	if ((size_t)c->kind >= sizeof(commands) / sizeof(commands[0]) || !commands[c->kind])
		return errbuf_set(err, errlen, "command not handled");
	return commands[c->kind](l, c, out, data, err, errlen);
}

int live_exec_command(struct live *l, const struct command *c, FILE *out)
{
	char err[1024];
	if (exec_command(l, c, out, NULL, err, sizeof(err)) == 0)
		return 0;
	fprintf(out, "%s\n", err);
	return -1;
}

int live_exec(struct live *l, const char *line, FILE *out)
{
	return live_exec_data(l, line, out, NULL);
}

int live_exec_data(struct live *l, const char *line, FILE *out, FILE *data)
{
	struct command c;
	char err[1024];
	/* Answers quote the command (names, paths, globs) and what they found
	 * (function and process names): every frontend shows them as text. */
	char *text = NULL;
	size_t len = 0;
	FILE *answer = open_memstream(&text, &len);
	if (!answer) {
		fprintf(out, "out of memory\n");
		return -1;
	}
	int rc = command_parse(line, &c, err, sizeof(err));
	if (rc == 0)
		rc = exec_command(l, &c, answer, data, err, sizeof(err));
	if (rc)
		fprintf(answer, "%s\n", err);
	fclose(answer);
	struct printable keep = {0};
	fputs(printable_text(&keep, text), out);
	printable_free(&keep);
	free(text);
	return rc;
}
