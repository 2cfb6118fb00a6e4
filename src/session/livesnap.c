/* livesnap — the snapshot displays read (live_view_build: status, hottest
 * functions and lines, probes and their latest slow calls) and the
 * samples of one duration band (live_band_build). It reads the windows
 * liveintake.c fills; it changes nothing but its scratch. */
#define _GNU_SOURCE
#include "live.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drops.h"
#include "errbuf.h"
#include "livestate.h"
#include "query.h"
#include "util.h"
#include "valuereport.h"

/* --- views ------------------------------------------------------------------------------ */

static void fill_target(struct live *l, char *buf, size_t size)
{
	const struct session_options *o = l->src->options(l->s);
	const char *path = l->src->replay_path(l->s);
	if (path) {
		struct printable shown = {0};
		snprintf(buf, size, "recording %s", printable_text(&shown, path));
		printable_free(&shown);
	} else if (o->system_wide) {
		snprintf(buf, size, "system-wide");
	} else if (o->cmd) {
		snprintf(buf, size, "command %s (PID %d)", o->cmd[0], (int)l->src->command_pid(l->s));
	} else {
		size_t off = (size_t)snprintf(buf, size, "PID");
		for (int i = 0; i < o->npids && off < size; i++)
			off += (size_t)snprintf(buf + off, size - off, "%s%d", i ? "," : " ",
						(int)o->pids[i]);
	}
}

/* How a recording was sampled, from its metadata. */
static void describe_recorded_sampling(const struct profile *p, char *buf, size_t size)
{
	const char *ev = profile_meta_get(p, "event"), *hz = profile_meta_get(p, "frequency_hz"),
		   *period = profile_meta_get(p, "period");
	if (!ev)
		snprintf(buf, size, "recorded");
	else if (hz && strcmp(hz, "0") != 0)
		snprintf(buf, size, "recorded: %.40s @ %.16s Hz", ev, hz);
	else if (period && strcmp(period, "0") != 0)
		snprintf(buf, size, "recorded: %.40s every %.16s events", ev, period);
	else
		snprintf(buf, size, "recorded: %.40s", ev);
}

static void fill_status(struct live *l, struct live_status *st, uint64_t now)
{
	const struct session_options *o = l->src->options(l->s);
	fill_target(l, st->target, sizeof(st->target));
	if (l->src->replay_path(l->s))
		describe_recorded_sampling(l->p, st->sampling, sizeof(st->sampling));
	else if (l->src->ended(l->s))
		snprintf(st->sampling, sizeof(st->sampling), "stopped: the targets exited");
	else if (o->no_sampling)
		snprintf(st->sampling, sizeof(st->sampling), "off");
	else if (o->period == 1)
		snprintf(st->sampling, sizeof(st->sampling), "%s: every event", o->event);
	else if (o->period)
		snprintf(st->sampling, sizeof(st->sampling), "%s every %llu events", o->event,
			 (unsigned long long)o->period);
	else
		snprintf(st->sampling, sizeof(st->sampling), "%s @ %llu Hz", o->event,
			 (unsigned long long)o->freq);
	live_describe_window(l, st->window, sizeof(st->window));
	live_describe_view(l, st->view, sizeof(st->view));
	live_describe_filter(l, st->filter, sizeof(st->filter));
	st->elapsed_s = now > l->start_ns ? (double)(now - l->start_ns) / 1e9 : 0;
	uint64_t sec = now / 1000000000ull;
	double since = now > l->held_from_ns ? (double)(now - l->held_from_ns) / 1e9 : 0;
	st->samples_per_s = live_rate_get(&l->sample_rate, sec, since);
	st->calls_per_s = live_rate_get(&l->call_rate, sec, since);
	st->samples = l->nsamples;
	st->calls = l->ncalls;
	struct engine_stats es;
	struct collector_stats cs;
	l->src->get_stats(l->s, &es, &cs);
	struct window_stats ws;
	window_stats(l->samples, &ws);
	st->drops = drops_sum(&es, DROPS_ANY, true) + join_dropped(l->join) + ws.dropped;
	st->drops_detail[0] = 0;
	char lost[128];
	if (st->drops)
		snprintf(st->drops_detail, sizeof(st->drops_detail),
			 "(ring buffer full: %s; untimed calls %llu; late samples %llu)",
			 drops_list(&es, DROPS_LOST, lost, sizeof(lost)),
			 (unsigned long long)drops_sum(&es, DROPS_UNTIMED, true),
			 (unsigned long long)ws.dropped);
	st->held_s = live_held_seconds(l);
	st->window_weight = 0;
	st->time = l->view.time;
	if (!l->o.ewma && l->view.time == VIEW_ON_CPU) {
		uint64_t w = (uint64_t)l->o.window_s;
		for (uint64_t s = sec + 1 - (w < sec + 1 ? w : sec + 1); s <= sec; s++)
			if (l->sec_id[s % l->nsec] == s)
				st->window_weight += (double)l->sec_weight[s % l->nsec];
	}
	st->memory_bytes = window_memory_bytes(l->samples) + window_memory_bytes(l->calls) +
			   l->p->samples_cap * sizeof(struct sample) +
			   l->p->span_links_cap * sizeof(struct span_link) +
			   l->p->spans_cap * sizeof(struct span) +
			   hashmap_bytes(&l->p->span_index) +
			   join_bytes(l->join) +
			   l->pending_cap * sizeof(uint32_t);
}

/* A probe's captured values over the hits held, as report --json's
 * "values" (one line); NULL when it captures nothing. */
static char *captured_values(const struct profile *p, uint32_t probe)
{
	bool any = false;
	for (size_t c = 0; c < p->ncaptures && !any; c++)
		any = p->captures[c].probe == probe;
	if (!any)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	valuereport_json_values(f, p, probe);
	fclose(f);
	return text;
}

/* A function probe's slow threshold as its row in the view says (0: none
 * known yet). */
static uint64_t row_slow_ns(void *arg, uint32_t probe)
{
	const struct live_view *v = arg;
	return probe < v->nprobes ? v->probes[probe].slow_threshold_ns : 0;
}

static void fill_probes(struct live *l, struct live_view *v, uint64_t now)
{
	struct stack_weights cw = {0};
	live_read_calls(l, now, &cw);
	v->nprobes = l->p->nprobes;
	v->probes = xcalloc(v->nprobes + 1, sizeof(*v->probes));
	uint64_t(*hists)[LATENCY_LOGLIN_BUCKETS] = xcalloc(v->nprobes + 1, sizeof(*hists));
	bool have_hists = l->src->probe_hists(l->s, hists) == 0;
	double rate_base = l->o.ewma ? 1.0 - pow(2.0, -1.0 / l->o.halflife_s) : 0;
	double since = now > l->held_from_ns ? (double)(now - l->held_from_ns) / 1e9 : 0;
	double span_s = since < l->o.window_s ? since : l->o.window_s;
	for (size_t i = 0; i < v->nprobes; i++) {
		struct live_probe_view *pv = &v->probes[i];
		struct probe_state *ps = &l->probes[i];
		pv->name = xstrdup(l->p->probes[i].name);
		pv->attached = l->src->probe_attached(l->s, (uint32_t)i) || l->src->replay_path(l->s);
		size_t a, b;
		live_probe_slice(&cw, (uint32_t)i, &a, &b);
		double total = 0;
		pv->buckets = b > a ? xcalloc(b - a, sizeof(*pv->buckets)) : NULL;
		for (size_t k = a; k < b; k++) {
			total += cw.weight[k];
			uint64_t lo, hi;
			live_fine_bounds(cw.stack[k] & ((1u << FINE_BITS) - 1), &lo, &hi);
			latency_hist_add(&pv->hist, lo, (uint64_t)llround(cw.weight[k]));
			if (cw.weight[k] > 0)
				pv->buckets[pv->nbuckets++] =
					(struct live_bucket){lo, hi, cw.weight[k]};
		}
		pv->calls = total;
		pv->calls_per_s = l->o.ewma ? total * rate_base : span_s >= 1 ? total / span_s : total;
		/* As a recording's and the thresholds': on the same durations. */
		uint64_t *counts = live_window_counts(&cw, a, b);
		pv->p50_ns = latency_hist_percentile(counts, 50);
		pv->p90_ns = latency_hist_percentile(counts, 90);
		pv->p95_ns = latency_hist_percentile(counts, 95);
		pv->p99_ns = latency_hist_percentile(counts, 99);
		pv->max_ns = latency_hist_percentile(counts, 100);
		free(counts);
		uint64_t all = 0;
		for (unsigned k = 0; have_hists && k < LATENCY_LOGLIN_BUCKETS; k++)
			all += hists[i][k];
		pv->total_calls = all > ps->calls_base ? all - ps->calls_base : 0;
		uint64_t entered = l->src->probe_entered(l->s, (uint32_t)i);
		pv->entered = entered > ps->entered_base ? entered - ps->entered_base : 0;
		pv->predicated = l->p->probes[i].predicate != NULL;
		if (l->p->probes[i].point >= 0) { /* a line: its hits (no durations) */
			/* Brings its hits up to date (a line has no histogram). */
			uint64_t none[LATENCY_LOGLIN_BUCKETS];
			l->src->probe_hist(l->s, (uint32_t)i, none);
			pv->line = true;
			pv->total_calls = l->p->probes[i].entered;
		}
		pv->slow_threshold_ns = ps->slow_threshold_ns == UINT64_MAX ? 0 : ps->slow_threshold_ns;
		if ((l->view.span_class == SPAN_SLOW || l->view.span_class == SPAN_FAST) &&
		    i == l->view.probe && l->threshold_known &&
		    l->view_threshold.kind == THRESHOLD_AUTO)
			latency_auto_note(&l->view_modes, pv->slow_threshold_note,
					  sizeof(pv->slow_threshold_note));
		for (size_t k = 0; k < ps->nslow; k++)
			pv->slow[k] = ps->slow[(ps->slow_head + LIVE_SLOW_KEEP - 1 - k) % LIVE_SLOW_KEEP];
		pv->nslow = ps->nslow;
	}
	free(hists);
	stack_weights_free(&cw);
}

void live_view_add_probe_details(struct live *l, struct live_view *v)
{
	for (size_t i = 0; i < v->nprobes && i < l->p->nprobes; i++) {
		struct live_probe_view *pv = &v->probes[i];
		if (pv->spec || pv->predicate || pv->values || pv->in_calls)
			continue; /* added already */
		const char *spec = l->src->probe_spec(l->s, (uint32_t)i);
		if (spec)
			pv->spec = xstrdup(spec);
		if (l->p->probes[i].predicate)
			pv->predicate = xstrdup(l->p->probes[i].predicate);
		pv->values = captured_values(l->p, (uint32_t)i);
		/* A line: in which calls of the function probes it ran, slow
		 * as each function's own row says. */
		if (!pv->line)
			continue;
		pv->in_calls = xcalloc(v->nprobes + 1, sizeof(*pv->in_calls));
		pv->nin_calls = line_calls_of(l->p, (uint32_t)i, row_slow_ns, v, pv->in_calls);
	}
}

static void ensure_fn_scratch(struct live *l, size_t n)
{
	if (n <= l->fn_cap)
		return;
	size_t cap = n + n / 2 + 64;
	l->fn_self = xrealloc(l->fn_self, cap * sizeof(double));
	l->fn_total = xrealloc(l->fn_total, cap * sizeof(double));
	l->fn_seen = xrealloc(l->fn_seen, cap * sizeof(uint32_t));
	l->fn_mark = xrealloc(l->fn_mark, cap * sizeof(uint32_t));
	memset(l->fn_seen + l->fn_cap, 0, (cap - l->fn_cap) * sizeof(uint32_t));
	memset(l->fn_mark + l->fn_cap, 0, (cap - l->fn_cap) * sizeof(uint32_t));
	l->fn_cap = cap;
}

/* Generation counters mark "seen in this view" and "counted for this
 * stack" without clearing arrays; on wrap-around they are cleared once. */
static uint32_t next_gen(uint32_t *gen, uint32_t *marks, size_t n)
{
	if (++*gen == 0) {
		memset(marks, 0, n * sizeof(*marks));
		*gen = 1;
	}
	return *gen;
}

static int cmp_hot(const void *a, const void *b, void *arg)
{
	const struct live_hot *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	const struct frame_table *ft = arg;
	return strcmp(frames_get(ft, x->frame)->name, frames_get(ft, y->frame)->name);
}

/* Self and total weight per function from the view's stack weights. */
static void fill_hot(struct live *l, struct live_view *v, double scale, size_t hot_max)
{
	const struct stack_weights *sw = &l->sw;
	uint32_t *used = NULL;
	size_t nused = 0, used_cap = 0;
	ensure_fn_scratch(l, frames_count(l->p->frames) + 1);
	uint32_t view = next_gen(&l->view_gen, l->fn_seen, l->fn_cap);
	for (size_t i = 0; i < sw->n; i++) {
		uint32_t node = sw->stack[i];
		if (node == 0 || node >= l->p->nnodes)
			continue;
		double w = sw->weight[i] * scale;
		uint32_t stack = next_gen(&l->stack_gen, l->fn_mark, l->fn_cap);
		bool leaf = true;
		for (uint32_t n = node; n; n = l->p->nodes[n].parent) {
			uint32_t f = profile_function_frame(l->p, l->p->nodes[n].frame);
			if (frames_get(l->p->frames, f)->kind == FRAME_PROCESS)
				continue; /* a process name is not a function */
			if (f >= l->fn_cap) /* interned just now */
				ensure_fn_scratch(l, (size_t)f + 1);
			if (l->fn_seen[f] != view) {
				l->fn_seen[f] = view;
				l->fn_self[f] = l->fn_total[f] = 0;
				grow_array((void **)&used, &used_cap, nused + 1, sizeof(*used));
				used[nused++] = f;
			}
			if (leaf)
				l->fn_self[f] += w;
			leaf = false;
			/* Total: once per stack, however often the function recurses. */
			if (l->fn_mark[f] != stack) {
				l->fn_mark[f] = stack;
				l->fn_total[f] += w;
			}
		}
	}
	v->hot = xcalloc(nused + 1, sizeof(*v->hot));
	for (size_t i = 0; i < nused; i++) {
		uint32_t f = used[i];
		v->hot[i] = (struct live_hot){.frame = f, .self = l->fn_self[f], .total = l->fn_total[f]};
	}
	qsort_r(v->hot, nused, sizeof(*v->hot), cmp_hot, l->p->frames);
	v->nhot = nused < hot_max ? nused : hot_max;
	free(used);
}

/* Each function's hottest source line over the view's stacks: on every
 * stack, the function's innermost frame gives its line (where it ran, or
 * the call it was in), and the line with the most weight wins. Runs after
 * fill_hot, which interned every function frame these stacks need. */
static void fill_hot_lines(struct live *l, struct live_view *v, double scale)
{
	const struct stack_weights *sw = &l->sw;
	size_t nframes = frames_count(l->p->frames) + 1;
	double *at_line = xcalloc(nframes, sizeof(*at_line)); /* by frame */
	uint32_t *seen = xcalloc(nframes, sizeof(*seen)); /* function -> stack + 1 */
	v->lines = xcalloc(nframes, sizeof(*v->lines));
	v->nlines = nframes;
	for (size_t i = 0; i < sw->n; i++) {
		uint32_t node = sw->stack[i];
		if (node == 0 || node >= l->p->nnodes)
			continue;
		double w = sw->weight[i] * scale;
		for (uint32_t n = node; n; n = l->p->nodes[n].parent) {
			uint32_t r = l->p->nodes[n].frame;
			uint32_t f = profile_function_frame(l->p, r);
			if (r >= nframes || f >= nframes || seen[f] == i + 1)
				continue;
			seen[f] = (uint32_t)i + 1;
			v->lines[f].total += w;
			if (frames_get(l->p->frames, r)->line)
				at_line[r] += w;
		}
	}
	for (uint32_t r = 1; r < nframes; r++) {
		if (at_line[r] <= 0)
			continue;
		struct live_line *ln = &v->lines[profile_function_frame(l->p, r)];
		if (at_line[r] > ln->weight) {
			ln->frame = r;
			ln->weight = at_line[r];
		}
	}
	free(at_line);
	free(seen);
}

bool live_shows_overhead(const struct live *l)
{
	return l->view.show_overhead;
}

struct live_view *live_view_build(struct live *l, size_t hot_max)
{
	uint64_t now = live_view_time(l);
	struct live_view *v = xcalloc(1, sizeof(*v));
	v->now_ns = now;
	double total = l->o.ewma ? window_ewma(l->samples, now, &l->sw)
				 : window_sum_last(l->samples, now, l->o.window_s, &l->sw);
	/* EWMA weights are fractional: scale them so the tree's integer counts
	 * keep three decimals. */
	double scale = l->o.ewma ? 1000.0 : 1.0;
	v->fractional = l->o.ewma;
	v->flame = window_flame(l->p, &l->sw, scale);
	v->total = v->flame ? (double)v->flame->root->total : total * scale;
	fill_hot(l, v, scale, hot_max);
	fill_hot_lines(l, v, scale);
	fill_probes(l, v, now);
	fill_status(l, &v->status, now);
	return v;
}

/* --- bands: the samples inside calls of one duration band ----------------------------- */

void live_band_free(struct live_band *b)
{
	if (!b)
		return;
	flame_free(b->in);
	flame_free(b->out);
	free(b);
}

struct live_band *live_band_build(struct live *l, const char *probe, uint64_t lo_ns,
				  uint64_t hi_ns, char *err, size_t errlen)
{
	if (lo_ns > hi_ns) {
		errbuf_set(err, errlen, "empty band: its lower end is above its upper end");
		return NULL;
	}
	int id = query_probe(l->p, probe);
	if (id < 0) {
		errbuf_set(err, errlen, "'%s' is not traced: trace it first", probe);
		return NULL;
	}
	struct live_band *b = xcalloc(1, sizeof(*b));
	b->in = flame_new(l->p->frames);
	b->out = flame_new(l->p->frames);
	uint64_t now = live_view_time(l);
	/* The view's filters, with the band as its span condition. */
	struct view in = l->view;
	in.span_class = SPAN_BAND;
	in.probe = (uint32_t)id;
	in.band_lo_ns = lo_ns;
	in.band_hi_ns = hi_ns;
	struct view out = in;
	out.span_class = SPAN_NOT_BAND;
	uint64_t from = 0;
	if (!l->o.ewma) {
		/* The sliding window's seconds: whole seconds up to now. */
		uint64_t span = (uint64_t)(l->o.window_s * 1e9);
		from = now > span ? now - span : 0;
	}
	struct view_live known = {.now_ns = now};
	const struct view_live *live = l->frozen_ns ? NULL : &known;
	uint32_t frames[PROFILE_STACK_READ + 1];
	for (size_t i = 0; i < l->cursor; i++) {
		const struct sample *s = &l->p->samples[i];
		if (s->time_ns < from)
			continue;
		enum view_decision din = view_decide(&in, l->p, s, live);
		enum view_decision dout = view_decide(&out, l->p, s, live);
		if (din == VIEW_WAIT || dout == VIEW_WAIT) {
			b->samples_waiting += s->weight;
			continue;
		}
		if (din != VIEW_TAKE && dout != VIEW_TAKE)
			continue;
		uint32_t stack = l->by_process ? live_rooted_stack(l, s) : s->stack;
		size_t n = profile_stack_frames(l->p, stack, frames, sizeof(frames) / sizeof(*frames));
		if (n > sizeof(frames) / sizeof(*frames))
			n = sizeof(frames) / sizeof(*frames);
		flame_add(din == VIEW_TAKE ? b->in : b->out, frames, n, view_weight(&in, l->p, s));
	}
	/* Calls in and outside the band, at the histogram's resolution: a
	 * bucket counts as in when its middle is. */
	struct stack_weights cw = {0};
	live_read_calls(l, now, &cw);
	size_t a, z;
	live_probe_slice(&cw, (uint32_t)id, &a, &z);
	for (size_t k = a; k < z; k++) {
		uint64_t mid = live_fine_mid(cw.stack[k] & ((1u << FINE_BITS) - 1));
		if (mid >= lo_ns && mid <= hi_ns)
			b->calls_in += cw.weight[k];
		else
			b->calls_out += cw.weight[k];
	}
	stack_weights_free(&cw);
	return b;
}
