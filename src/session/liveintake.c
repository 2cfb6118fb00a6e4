/* liveintake — a live session taking in what arrived: every new sample
 * decided by the view and put in its window (or held until its call ends),
 * every new call counted and joined with its samples (model/join) for the
 * latest slow calls, thresholds resolved, old data trimmed; live_new and
 * live_free. The API is live.h; the rooms share livestate.h. */
#define _GNU_SOURCE
#include "live.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "livestate.h"
#include "order.h"
#include "util.h"

void live_options_init(struct live_options *o)
{
	o->window_s = LIVE_DEFAULT_WINDOW_S;
	o->halflife_s = WINDOW_DEFAULT_HALFLIFE;
	o->ewma = false;
	o->keep_s = LIVE_DEFAULT_KEEP_S;
	o->max_spans = LIVE_DEFAULT_MAX_SPANS;
	o->show_overhead = false;
	o->time = VIEW_ON_CPU;
}

/* Views are read at this time: now, or the end of a session that ended. */
uint64_t live_view_time(const struct live *l)
{
	return l->frozen_ns ? l->frozen_ns : monotonic_ns();
}

/* --- duration buckets -------------------------------------------------------- */

/* Calls are counted by probe and log-linear bucket (latency.h), the
 * kernel's histogram layout. */
void live_fine_bounds(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	latency_loglin_bounds(b, lo, hi);
}

uint64_t live_fine_mid(uint32_t b)
{
	return latency_loglin_mid(b);
}

/* --- rates ----------------------------------------------------------------------- */

static void rate_add(struct rate_ring *r, uint64_t second, uint64_t n)
{
	size_t i = second % RATE_SECONDS;
	if (r->second[i] != second) {
		r->second[i] = second;
		r->count[i] = 0;
	}
	r->count[i] += n;
}

/* Per second over the RATE_SPAN whole seconds before now's (or fewer at the
 * start of the run). */
double live_rate_get(const struct rate_ring *r, uint64_t now_second, double elapsed_s)
{
	uint64_t sum = 0;
	for (uint64_t s = now_second - RATE_SPAN; s < now_second; s++) {
		size_t i = s % RATE_SECONDS;
		if (r->second[i] == s)
			sum += r->count[i];
	}
	double span = elapsed_s < RATE_SPAN ? floor(elapsed_s) : RATE_SPAN;
	return span >= 1 ? (double)sum / span : 0;
}

/* --- span <-> sample join ---------------------------------------------------- */

/* --- the view ---------------------------------------------------------------------- */

/* A sample is decided by the view (view.h) as soon as it can be: while the
 * session runs, a call's record may still be on its way; once it has ended
 * every record is in (its calls still running have their elapsed time). */
static enum view_decision decide(struct live *l, const struct sample *s, uint64_t now)
{
	struct view_live known = {.now_ns = now, .threshold_unknown = !l->threshold_known};
	bool complete = l->frozen_ns && !known.threshold_unknown;
	return view_decide(&l->view, l->p, s, complete ? NULL : &known);
}

/* The sample's stack under its process name (interned once per pair). */
uint32_t live_rooted_stack(struct live *l, const struct sample *s)
{
	if (s->thread >= l->nthread_root) {
		size_t n = s->thread + 64;
		l->thread_root = xrealloc(l->thread_root, n * sizeof(*l->thread_root));
		memset(l->thread_root + l->nthread_root, 0, (n - l->nthread_root) * sizeof(uint32_t));
		l->nthread_root = n;
	}
	uint32_t *root = &l->thread_root[s->thread];
	if (!*root)
		*root = frames_intern(l->p->frames, l->p->threads[s->thread].comm, "", "", 0,
				      FRAME_PROCESS);
	uint64_t key = (uint64_t)*root << 32 | s->stack;
	uint64_t node;
	if (hashmap_get(&l->rooted, key, &node))
		return (uint32_t)node;
	uint32_t frames[PROFILE_STACK_READ];
	size_t n = profile_stack_frames(l->p, s->stack, frames, sizeof(frames) / sizeof(*frames));
	if (n > sizeof(frames) / sizeof(*frames))
		n = sizeof(frames) / sizeof(*frames);
	node = profile_stack_child(l->p, 0, *root);
	for (size_t i = 0; i < n; i++)
		node = profile_stack_child(l->p, (uint32_t)node, frames[i]);
	hashmap_set(&l->rooted, key, node);
	return (uint32_t)node;
}

static void take_sample(struct live *l, const struct sample *s)
{
	uint32_t stack = l->by_process ? live_rooted_stack(l, s) : s->stack;
	uint32_t leaf = view_leaf_frame(&l->view, l->p, s); /* "[running]" (--wall) */
	if (leaf)
		stack = profile_stack_child(l->p, stack, leaf);
	window_add(l->samples, s->time_ns, stack, view_weight(&l->view, l->p, s));
}

/* --- samples waiting for their call ------------------------------------------- */

/* l->pending holds the samples the view could not decide yet (VIEW_WAIT:
 * the record of the call that decides them is on its way, or the
 * threshold is not known), by index, ascending. A waiting sample is
 * decided again only when what it waits for comes: its call's record
 * (take_calls, woken through the join), its wait running out (the oldest
 * first, expire_pending), the threshold becoming known or the session
 * ending (decide_pending: all of them). A decided entry is marked and
 * swept out (pending_compact). */
#define PENDING_DONE 0x80000000u

static void pending_push(struct live *l, uint32_t idx)
{
	grow_array((void **)&l->pending, &l->pending_cap, l->npending + 1, sizeof(*l->pending));
	l->pending[l->npending++] = idx;
}

/* Decides pending entry i again: true when it no longer waits. */
static bool decide_entry(struct live *l, size_t i, uint64_t now)
{
	uint32_t idx = l->pending[i];
	if (idx & PENDING_DONE)
		return true;
	const struct sample *s = &l->p->samples[idx];
	enum view_decision d = decide(l, s, now);
	if (d == VIEW_WAIT)
		return false;
	if (d == VIEW_TAKE)
		take_sample(l, s);
	l->pending[i] |= PENDING_DONE;
	l->pending_done++;
	return true;
}

static void pending_compact(struct live *l)
{
	size_t kept = 0;
	for (size_t i = 0; i < l->npending; i++)
		if (!(l->pending[i] & PENDING_DONE))
			l->pending[kept++] = l->pending[i];
	l->npending = kept;
	l->pending_done = 0;
}

/* Every waiting sample, decided again. */
static void decide_pending(struct live *l, uint64_t now)
{
	for (size_t i = 0; i < l->npending; i++)
		decide_entry(l, i, now);
	pending_compact(l);
}

/* Sample idx, if it waits, decided again: its call's record came. */
static void wake_pending(struct live *l, uint32_t idx, uint64_t now)
{
	size_t i = ORDER_PARTITION(l->npending, k, (l->pending[k] & ~PENDING_DONE) < idx);
	if (i < l->npending && l->pending[i] == idx)
		decide_entry(l, i, now);
}

/* The oldest waiting samples whose wait ran out (their call lasted longer
 * than the view's threshold, or its record is lost), decided; samples came
 * in about the order they were taken, so the first that still waits ends
 * the search. */
static void expire_pending(struct live *l, uint64_t now)
{
	size_t i = 0;
	while (i < l->npending && decide_entry(l, i, now))
		i++;
	if (l->pending_done > l->npending / 2)
		pending_compact(l);
}

/* The probe-p slice of a calls-window read (keys sorted ascending). */
void live_probe_slice(const struct stack_weights *cw, uint32_t probe, size_t *from, size_t *to)
{
	uint32_t lo = probe << FINE_BITS, hi = (probe + 1) << FINE_BITS;
	*from = ORDER_PARTITION(cw->n, i, cw->stack[i] < lo);
	*to = ORDER_PARTITION(cw->n, i, cw->stack[i] < hi);
}

double live_read_calls(struct live *l, uint64_t now, struct stack_weights *out)
{
	return l->o.ewma ? window_ewma(l->calls, now, out)
			 : window_sum_last(l->calls, now, l->o.window_s, out);
}

/* A probe's log-linear counts in the window (a slice of a calls-window
 * read), in whole calls; malloc'd. Every figure of the window's durations
 * is read on them, as a recording's on its histogram. */
uint64_t *live_window_counts(const struct stack_weights *cw, size_t from, size_t to)
{
	uint64_t *counts = xcalloc(LATENCY_LOGLIN_BUCKETS, sizeof(*counts));
	for (size_t i = from; i < to; i++)
		counts[cw->stack[i] & ((1u << FINE_BITS) - 1)] += (uint64_t)llround(cw->weight[i]);
	return counts;
}

/* Puts the calls the kernel counted since the last time in the calls
 * window (at most 4 times a second: one batched read of its histograms). */
static void feed_calls(struct live *l, uint64_t now)
{
	size_t np = l->p->nprobes;
	if (!np || (now - l->calls_fed_ns < 250000000ull && !l->frozen_ns))
		return;
	l->calls_fed_ns = now;
	uint64_t(*h)[LATENCY_LOGLIN_BUCKETS] = xcalloc(np, sizeof(*h));
	if (l->src->probe_hists(l->s, h) == 0) {
		uint64_t added = 0;
		for (size_t p = 0; p < np; p++)
			for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++) {
				uint64_t d = h[p][b] > l->calls_fed[p][b] ? h[p][b] - l->calls_fed[p][b] : 0;
				l->calls_fed[p][b] = h[p][b];
				if (!d)
					continue;
				window_add(l->calls, now, (uint32_t)p << FINE_BITS | b, d);
				added += d;
			}
		l->ncalls += added;
		rate_add(&l->call_rate, now / 1000000000ull, added);
	}
	free(h);
}

/* Re-resolves every probe's slow threshold and the view's (once a second). */
static void resolve_thresholds(struct live *l, uint64_t now)
{
	struct stack_weights cw = {0};
	live_read_calls(l, now, &cw);
	for (size_t p = 0; p < l->p->nprobes; p++) {
		size_t a, b;
		live_probe_slice(&cw, (uint32_t)p, &a, &b);
		uint64_t *counts = live_window_counts(&cw, a, b);
		bool any = false;
		for (unsigned k = 0; k < LATENCY_LOGLIN_BUCKETS && !any; k++)
			any = counts[k] > 0;
		l->probes[p].slow_threshold_ns = any ? latency_hist_percentile(counts, 95) : UINT64_MAX;
		if ((l->view.span_class != SPAN_SLOW && l->view.span_class != SPAN_FAST) ||
		    p != l->view.probe) {
			free(counts);
			continue;
		}
		/* As a recording's: over the durations that stand for the
		 * window's calls (latency_hist_durations), so the same calls give the
		 * same threshold as `report --slow`. */
		const struct threshold *t = &l->view_threshold;
		if (t->kind == THRESHOLD_ABSOLUTE) {
			l->view.threshold_ns = t->ns;
			l->threshold_known = true;
		} else {
			size_t n;
			uint64_t *d = latency_hist_durations(counts, &n);
			if (n > 0) {
				struct latency_modes modes;
				l->view.threshold_ns = threshold_resolve(t, d, n, &modes);
				l->view_modes = modes;
				l->threshold_known = true;
			}
			free(d);
		}
		free(counts);
		if (l->threshold_known)
			l->probes[p].slow_threshold_ns = l->view.threshold_ns;
	}
	/* Calls over the threshold cross to user space, for the list of the
	 * latest slow calls (and those samples landed in, for the views). */
	for (size_t p = 0; p < l->p->nprobes; p++)
		l->src->keep_calls_over(l->s, (uint32_t)p, l->probes[p].slow_threshold_ns);
	stack_weights_free(&cw);
}

/* --- taking in what arrived ---------------------------------------------------- */

static uint32_t leaf_function(struct live *l, uint32_t stack)
{
	if (!stack)
		return 0;
	return profile_function_frame(l->p, l->p->nodes[stack].frame);
}

/* Every sample's weight by second, whatever the view: the base of the
 * view's share of the window. */
static void second_add(struct live *l, uint64_t sec, uint64_t weight)
{
	size_t k = sec % l->nsec;
	if (l->sec_id[k] > sec)
		return; /* older than the ring holds */
	if (l->sec_id[k] != sec) {
		l->sec_id[k] = sec;
		l->sec_weight[k] = 0;
	}
	l->sec_weight[k] += weight;
}

/* Sums up a call's samples (indexes into l->p->samples) for its entry in
 * the latest-slow list: leaf functions of the on-CPU ones, and all of them
 * by state. */
static void call_samples_sum(struct live *l, const struct span *sp, const uint32_t *idx, size_t n,
			     struct call_samples *out)
{
	*out = (struct call_samples){0};
	const char *probe = sp->probe < l->p->nprobes ? l->p->probes[sp->probe].name : "";
	for (size_t i = 0; i < n; i++) {
		const struct sample *s = &l->p->samples[idx[i]];
		call_split_add(&out->split, l->p, s, probe);
		if (profile_sample_is_offcpu(l->p, s) || profile_sample_is_waker(l->p, s))
			continue;
		uint32_t leaf = leaf_function(l, s->stack);
		if (!leaf)
			continue;
		out->nsamples++;
		for (int k = 0; k < JOIN_MAX_FRAMES; k++) {
			if (out->frame[k] == leaf || out->frame[k] == 0) {
				out->frame[k] = leaf;
				out->count[k]++;
				break;
			}
		}
	}
}

static void take_samples(struct live *l, uint64_t now)
{
	for (; l->cursor < l->p->nsamples; l->cursor++) {
		const struct sample *s = &l->p->samples[l->cursor];
		/* Off-CPU intervals (sample off-cpu) weigh nanoseconds: the live
		 * views, rates and totals are of on-CPU samples. */
		if (!profile_sample_is_offcpu(l->p, s)) {
			l->nsamples++;
			uint64_t sec = s->time_ns / 1000000000ull;
			rate_add(&l->sample_rate, sec, 1);
			second_add(l, sec, s->weight);
		}
		join_add_sample(l->join, l->p, l->cursor, NULL);
		enum view_decision d = decide(l, s, now);
		if (d == VIEW_TAKE)
			take_sample(l, s);
		else if (d == VIEW_WAIT)
			pending_push(l, (uint32_t)l->cursor);
	}
}

static void note_slow_call(struct live *l, const struct span *sp, const struct call_samples *j)
{
	struct probe_state *ps = &l->probes[sp->probe];
	struct live_slow_call *c = &ps->slow[ps->slow_head];
	const struct thread_info *t = &l->p->threads[sp->thread];
	*c = (struct live_slow_call){.end_ns = span_end_ns(sp), .duration_ns = sp->duration_ns,
				     .pid = t->pid, .tid = t->tid, .span_id = sp->id};
	if (j) {
		c->samples = j->nsamples;
		c->split = j->split;
		const struct session_options *o = l->src->options(l->s);
		call_split_bound(&c->split, o->freq && !o->period ? 1000000000ull / o->freq : 0,
				 sp->duration_ns);
		uint32_t best = 0;
		for (int k = 0; k < JOIN_MAX_FRAMES; k++)
			if (j->frame[k] && j->count[k] > best) {
				best = j->count[k];
				c->top_frame = j->frame[k];
			}
	}
	ps->slow_head = (ps->slow_head + 1) % LIVE_SLOW_KEEP;
	if (ps->nslow < LIVE_SLOW_KEEP)
		ps->nslow++;
}

/* Whether a call goes in its probe's latest-slow list: its probe's slow
 * view takes it (above the probe's threshold, of the threads the live
 * view's filter takes). */
static bool slow_call(const struct live *l, const struct span *sp)
{
	if (sp->open || sp->probe >= SESSION_MAX_PROBES)
		return false;
	struct view slow = l->view;
	slow.span_class = SPAN_SLOW;
	slow.probe = sp->probe;
	slow.threshold_ns = l->probes[sp->probe].slow_threshold_ns;
	return view_takes_call(&slow, l->p, sp);
}

static void take_calls(struct live *l, uint64_t now)
{
	for (; l->span_cursor < l->p->nspans; l->span_cursor++) {
		const struct span *sp = &l->p->spans[l->span_cursor];
		size_t n;
		const uint32_t *idx = join_take(l->join, sp->id, &n);
		for (size_t k = 0; k < n && l->npending; k++)
			wake_pending(l, idx[k], now);
		if (!slow_call(l, sp))
			continue;
		struct call_samples cs;
		call_samples_sum(l, sp, idx, n, &cs);
		note_slow_call(l, sp, n ? &cs : NULL);
	}
}

/* Fills the latest-slow lists again from the calls and samples held, as
 * take_calls would have with the view and filter now in force. */
static void refill_slow_calls(struct live *l)
{
	uint8_t count[SESSION_MAX_PROBES] = {0};
	size_t unfilled = l->p->nprobes < SESSION_MAX_PROBES ? l->p->nprobes : SESSION_MAX_PROBES;
	for (size_t i = 0; i < unfilled; i++)
		l->probes[i].nslow = l->probes[i].slow_head = 0;
	/* Each list's calls, newest first. */
	uint32_t *pick = NULL;
	size_t npick = 0, cap = 0;
	struct hashmap picked = {0};
	for (size_t i = l->span_cursor; i-- > 0 && unfilled;) {
		const struct span *sp = &l->p->spans[i];
		if (!slow_call(l, sp) || count[sp->probe] == LIVE_SLOW_KEEP)
			continue;
		grow_array((void **)&pick, &cap, npick + 1, sizeof(*pick));
		pick[npick++] = (uint32_t)i;
		hashmap_set(&picked, sp->id, 1);
		if (++count[sp->probe] == LIVE_SLOW_KEEP)
			unfilled--;
	}
	/* Their samples, joined as take_samples joined them when they came. */
	struct join *again = join_new(JOIN_MAX_LINKS);
	for (size_t i = 0; npick && i < l->cursor; i++)
		join_add_sample(again, l->p, i, &picked);
	for (size_t k = npick; k-- > 0;) {
		const struct span *sp = &l->p->spans[pick[k]];
		size_t n;
		const uint32_t *idx = join_take(again, sp->id, &n);
		struct call_samples cs;
		call_samples_sum(l, sp, idx, n, &cs);
		note_slow_call(l, sp, n ? &cs : NULL);
	}
	join_free(again);
	hashmap_free(&picked);
	free(pick);
}

/* Drops raw data older than `keep` (never what is still to be taken in or
 * decided). */
static void trim(struct live *l, uint64_t now)
{
	uint64_t keep_ns = (uint64_t)(l->o.keep_s * 1e9);
	if (now <= keep_ns)
		return;
	uint64_t cutoff = now - keep_ns;
	size_t limit = l->cursor;
	pending_compact(l);
	/* Samples still waiting are decided now if they are this old: their
	 * call never ended while held. */
	size_t kept = 0;
	for (size_t i = 0; i < l->npending; i++) {
		if (l->p->samples[l->pending[i]].time_ns < cutoff)
			l->undecided++;
		else
			l->pending[kept++] = l->pending[i];
	}
	l->npending = kept;
	if (l->npending && l->pending[0] < limit)
		limit = l->pending[0];
	size_t drop = 0;
	while (drop < limit && l->p->samples[drop].time_ns < cutoff)
		drop++;
	size_t spans_before = l->p->nspans;
	profile_trim(l->p, drop, cutoff, l->o.max_spans);
	join_shift(l->join, drop);
	size_t spans_removed = spans_before - l->p->nspans;
	l->calls_trimmed += spans_removed;
	l->cursor -= drop;
	for (size_t i = 0; i < l->npending; i++)
		l->pending[i] -= (uint32_t)drop;
	l->span_cursor = l->span_cursor >= spans_removed ? l->span_cursor - spans_removed : 0;
	if (drop || spans_removed)
		l->held_from_ns = cutoff;
	join_sweep(l->join, cutoff);
}

/* A recording's calls (a replayed session): each call with a record at
 * the time it ended; the rest of the recording's counts (calls that did not
 * need a record: no sample in them, not slow) at its end, so a window over
 * the whole recording holds every call it counted. */
static void feed_recorded_calls(struct live *l, uint64_t now)
{
	size_t np = l->p->nprobes;
	if (!np)
		return;
	uint64_t(*h)[LATENCY_LOGLIN_BUCKETS] = xcalloc(np, sizeof(*h));
	if (l->src->probe_hists(l->s, h) == 0) {
		memcpy(l->calls_fed, h, np * sizeof(*h)); /* feed_calls adds nothing more */
		for (size_t i = 0; i < l->p->nspans; i++) {
			const struct span *sp = &l->p->spans[i];
			if (sp->open || sp->probe >= np)
				continue;
			unsigned b = latency_loglin_bucket(sp->duration_ns);
			uint64_t end = span_end_ns(sp);
			window_add(l->calls, end, sp->probe << FINE_BITS | b, 1);
			rate_add(&l->call_rate, end / 1000000000ull, 1);
			l->ncalls++;
			if (h[sp->probe][b])
				h[sp->probe][b]--;
		}
		for (size_t p = 0; p < np; p++)
			for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++)
				if (h[p][b]) {
					window_add(l->calls, now, (uint32_t)p << FINE_BITS | b, h[p][b]);
					l->ncalls += h[p][b];
				}
	}
	free(h);
}

/* A replayed session takes its recording in once, as of its end. */
static void take_recording(struct live *l)
{
	uint64_t now = (uint64_t)(l->src->end_time(l->s) * 1e9);
	l->frozen_ns = now;
	window_advance(l->samples, now);
	window_advance(l->calls, now);
	feed_recorded_calls(l, now);
	resolve_thresholds(l, now);
	take_samples(l, now);
	take_calls(l, now);
	decide_pending(l, now); /* every record is in */
}

void live_update(struct live *l)
{
	if (l->frozen_ns)
		return;
	if (l->src->replay_path(l->s)) {
		take_recording(l);
		return;
	}
	uint64_t now = monotonic_ns();
	if (l->src->ended(l->s))
		l->frozen_ns = now; /* take in the final drain, then keep still */
	window_advance(l->samples, now);
	window_advance(l->calls, now);
	take_samples(l, now);
	take_calls(l, now);
	feed_calls(l, now);
	if (l->frozen_ns)
		decide_pending(l, now); /* every record is in */
	else
		expire_pending(l, now);
	uint64_t second = now / 1000000000ull;
	if (second != l->last_second) {
		l->last_second = second;
		bool known = l->threshold_known;
		resolve_thresholds(l, now);
		if (!known && l->threshold_known)
			decide_pending(l, now); /* they waited for it */
		trim(l, now);
	}
}

/* --- setting up --------------------------------------------------------------------- */

struct window *live_new_window(const struct live *l)
{
	struct window *w = window_new((size_t)ceil(l->o.keep_s));
	window_set_halflife(w, l->o.halflife_s);
	return w;
}

struct live *live_new(struct session *s, const struct livesource_ops *src,
		      const struct live_options *o, char *err, size_t errlen)
{
	if (o->keep_s < 1 || o->keep_s > 86400 || o->window_s < 1 || o->window_s > o->keep_s ||
	    !(o->halflife_s > 0) || o->max_spans < 1) {
		errbuf_set(err, errlen,
			   "the window (%gs) must be from 1s up to the time held (--keep %gs, at "
			   "most 1 day)",
			   o->window_s, o->keep_s);
		return NULL;
	}
	struct live *l = xcalloc(1, sizeof(*l));
	l->s = s;
	l->src = src;
	l->p = src->profile(s);
	l->o = *o;
	l->o.window_s = ceil(o->window_s);
	l->samples = live_new_window(l);
	l->calls = live_new_window(l);
	l->join = join_new(JOIN_MAX_LINKS);
	l->view.threshold_ns = UINT64_MAX;
	l->view.comm = l->filter_comm;
	l->view.show_overhead = o->show_overhead;
	const struct session_options *sopt = src->options(s);
	l->view.time = o->time;
	if (o->time == VIEW_WALL) {
		if (!sopt->freq || sopt->period) {
			errbuf_set(err, errlen, "--wall needs samples taken at a frequency (-F), "
					        "not every Nth event: their time is unknown");
			free(l);
			return NULL;
		}
		l->view.sample_ns = 1000000000ull / sopt->freq;
	}
	l->calls_fed = xcalloc(SESSION_MAX_PROBES, sizeof(*l->calls_fed));
	const struct session_options *so = src->options(s);
	l->by_process = so->system_wide || so->npids > 1;
	for (size_t i = 1; src->replay_path(s) && i < l->p->nthreads && !l->by_process; i++)
		l->by_process = l->p->threads[i].pid != l->p->threads[0].pid;
	l->nsec = (size_t)ceil(l->o.keep_s);
	l->sec_id = xcalloc(l->nsec, sizeof(*l->sec_id));
	l->sec_weight = xcalloc(l->nsec, sizeof(*l->sec_weight));
	l->start_ns = (uint64_t)(src->start_time(s) * 1e9);
	l->held_from_ns = l->start_ns;
	for (size_t i = 0; i < SESSION_MAX_PROBES; i++)
		l->probes[i].slow_threshold_ns = UINT64_MAX;
	return l;
}

void live_free(struct live *l)
{
	if (!l)
		return;
	window_free(l->samples);
	window_free(l->calls);
	free(l->pending);
	join_free(l->join);
	free(l->calls_fed);
	free(l->sec_id);
	free(l->sec_weight);
	free(l->thread_root);
	hashmap_free(&l->rooted);
	stack_weights_free(&l->sw);
	free(l->fn_self);
	free(l->fn_total);
	free(l->fn_seen);
	free(l->fn_mark);
	recording_image_free(l->unsaved.img);
	free(l->unsaved.path);
	free(l);
}

/* Refills the samples window from the raw samples held, after the view
 * changed. */
void live_rebuild(struct live *l)
{
	window_free(l->samples);
	l->samples = live_new_window(l);
	l->npending = l->pending_done = 0;
	uint64_t now = live_view_time(l);
	resolve_thresholds(l, now);
	for (size_t i = 0; i < l->cursor; i++) {
		enum view_decision d = decide(l, &l->p->samples[i], now);
		if (d == VIEW_TAKE)
			take_sample(l, &l->p->samples[i]);
		else if (d == VIEW_WAIT)
			pending_push(l, (uint32_t)i);
	}
	window_advance(l->samples, now);
	refill_slow_calls(l);
}

double live_held_seconds(const struct live *l)
{
	uint64_t now = live_view_time(l);
	return now > l->held_from_ns ? (double)(now - l->held_from_ns) / 1e9 : 0;
}

