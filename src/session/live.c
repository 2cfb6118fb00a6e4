/* live — a session steered while it runs. The contract is in live.h. */
#define _GNU_SOURCE
#include "live.h"
#include "threadtable.h"
#include "valuereport.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drops.h"
#include "errbuf.h"
#include "events.h"
#include "hashmap.h"
#include "join.h"
#include "outfile.h"
#include "printable.h"
#include "probes.h"
#include "query.h"
#include "sonde_abi.h"
#include "util.h"
#include "view.h"
#include "window.h"

/* Call durations go in log-linear buckets: 16 per power of two. */
#define FINE_BITS 10 /* buckets per probe: < 1024 */
#define RATE_SECONDS 8
#define RATE_SPAN 5 /* samples/s and calls/s: over the last 5 whole seconds */
#define JOIN_MAX_FRAMES 4

/* Samples taken inside a call that has not ended yet, by span id: for the
 * latest-slow-calls list (how many samples, and where they were). */
/* What a slow call's list entry says of its samples (from the samples
 * model/join held for it). */
struct call_samples {
	uint32_t nsamples;    /* on-CPU samples */
	struct call_split split; /* on-CPU samples and off-CPU intervals by state */
	uint32_t frame[JOIN_MAX_FRAMES]; /* leaf functions seen, with counts */
	uint32_t count[JOIN_MAX_FRAMES];
};

struct probe_state {
	struct live_slow_call slow[LIVE_SLOW_KEEP]; /* ring, newest at slow_head - 1 */
	size_t nslow, slow_head;
	uint64_t slow_threshold_ns; /* cached, re-resolved every second */
	uint64_t calls_base;        /* in-kernel count at the last reset */
	uint64_t entered_base;      /* calls entered at the last reset */
};

struct rate_ring {
	uint64_t second[RATE_SECONDS];
	uint64_t count[RATE_SECONDS];
};

struct live {
	struct session *s;
	struct profile *p;
	struct live_options o;
	struct window *samples; /* the view's samples: stack -> weight */
	struct window *calls;   /* (probe << FINE_BITS | bucket) -> calls */
	/* Which samples the view takes (view.h); its threshold_ns is resolved
	 * from view_threshold over the window (UINT64_MAX until known), and its
	 * comm points at filter_comm. */
	struct view view;
	struct threshold view_threshold;
	char filter_comm[COMMAND_COMM_MAX + 1];
	bool threshold_known;
	struct latency_modes view_modes; /* auto: what it found (found false: the p95) */
	size_t cursor;       /* next raw sample to take in */
	size_t span_cursor;  /* next raw call to take in */
	uint32_t *pending;   /* raw sample indexes waiting for their call to end */
	size_t npending, pending_cap;
	uint64_t undecided;  /* samples whose call never ended while held */
	uint64_t calls_trimmed; /* call records dropped: older than --keep, beyond --keep-calls */
	struct join *join; /* the samples of calls not ended yet (model/join) */
	struct probe_state probes[SESSION_MAX_PROBES];
	struct rate_ring sample_rate, call_rate;
	uint64_t *sec_id, *sec_weight; /* every sample's weight per second, ring of keep_s */
	size_t nsec;
	/* Several processes (-a, -p A,B): stacks get their process name as the
	 * root, so the tree splits by process as FlameGraph's does. */
	bool by_process;
	uint32_t *thread_root;          /* thread index -> process-name frame (0: not yet) */
	size_t nthread_root;
	struct hashmap rooted; /* root frame << 32 | stack -> node */
	uint64_t nsamples, ncalls; /* received / counted since the start (or reset) */
	/* The kernel's counts of every call, as last put in the calls window:
	 * the window takes what they grew by. */
	uint64_t (*calls_fed)[SONDE_HIST_BUCKETS]; /* [SESSION_MAX_PROBES] */
	uint64_t calls_fed_ns;
	uint64_t last_second;      /* when the once-a-second work last ran */
	uint64_t start_ns;
	uint64_t held_from_ns;     /* raw data before this was dropped */
	uint64_t frozen_ns;        /* when the session ended: views stay at that time */
	/* Scratch for views, kept across calls so a warm session allocates
	 * little. */
	struct stack_weights sw;
	double *fn_self, *fn_total;
	uint32_t *fn_seen, *fn_mark; /* generation marks, see next_gen */
	size_t fn_cap;
	uint32_t view_gen, stack_gen;
	/* A save that could not be written (a full disk): its recording stays
	 * here until a `save` to another path writes it, or the end rescues
	 * it. */
	struct unsaved {
		struct recording_image *img;
		char *path;          /* where it could not be written */
		double at_s;         /* when it was taken, seconds into the session */
		size_t samples, calls;
		double held_s;
	} unsaved;
};


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
static uint64_t view_time(const struct live *l)
{
	return l->frozen_ns ? l->frozen_ns : monotonic_ns();
}

/* --- duration buckets -------------------------------------------------------- */

/* Calls are counted by probe and log-linear bucket (latency.h), the
 * kernel's histogram layout. */
static void fine_bounds(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	latency_loglin_bounds(b, lo, hi);
}

static uint64_t fine_mid(uint32_t b)
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
static double rate_get(const struct rate_ring *r, uint64_t now_second, double elapsed_s)
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

/* Bounded: past this many samples noted in calls not ended yet, samples
 * are not noted (and counted among the drops). */
#define JOIN_LINKS (1u << 22)

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
static uint32_t rooted_stack(struct live *l, const struct sample *s)
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
	uint32_t frames[SONDE_MAX_STACK * 4];
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
	uint32_t stack = l->by_process ? rooted_stack(l, s) : s->stack;
	uint32_t leaf = view_leaf_frame(&l->view, l->p, s); /* "[running]" (--wall) */
	if (leaf)
		stack = profile_stack_child(l->p, stack, leaf);
	window_add(l->samples, s->time_ns, stack, view_weight(&l->view, l->p, s));
}

static void pending_push(struct live *l, uint32_t idx)
{
	grow_array((void **)&l->pending, &l->pending_cap, l->npending + 1, sizeof(*l->pending));
	l->pending[l->npending++] = idx;
}

static void decide_pending(struct live *l, uint64_t now)
{
	size_t kept = 0;
	for (size_t i = 0; i < l->npending; i++) {
		const struct sample *s = &l->p->samples[l->pending[i]];
		enum view_decision d = decide(l, s, now);
		if (d == VIEW_TAKE)
			take_sample(l, s);
		else if (d == VIEW_WAIT)
			l->pending[kept++] = l->pending[i];
	}
	l->npending = kept;
}

/* The probe-p slice of a calls-window read (keys sorted ascending). */
static void probe_slice(const struct stack_weights *cw, uint32_t probe, size_t *from, size_t *to)
{
	uint32_t lo = probe << FINE_BITS, hi = (probe + 1) << FINE_BITS;
	size_t a = 0, b = cw->n;
	while (a < b) {
		size_t m = (a + b) / 2;
		if (cw->stack[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	size_t e = a;
	while (e < cw->n && cw->stack[e] < hi)
		e++;
	*from = a;
	*to = e;
}

static double read_calls(struct live *l, uint64_t now, struct stack_weights *out)
{
	return l->o.ewma ? window_ewma(l->calls, now, out)
			 : window_sum_last(l->calls, now, l->o.window_s, out);
}

/* A probe's log-linear counts in the window (a slice of a calls-window
 * read), in whole calls; malloc'd. Every figure of the window's durations
 * is read on them, as a recording's on its histogram. */
static uint64_t *window_counts(const struct stack_weights *cw, size_t from, size_t to)
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
	uint64_t(*h)[SONDE_HIST_BUCKETS] = xcalloc(np, sizeof(*h));
	if (session_probe_hists(l->s, h) == 0) {
		uint64_t added = 0;
		for (size_t p = 0; p < np; p++)
			for (unsigned b = 0; b < SONDE_HIST_BUCKETS; b++) {
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
	read_calls(l, now, &cw);
	for (size_t p = 0; p < l->p->nprobes; p++) {
		size_t a, b;
		probe_slice(&cw, (uint32_t)p, &a, &b);
		uint64_t *counts = window_counts(&cw, a, b);
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
		session_keep_calls_over(l->s, (uint32_t)p, l->probes[p].slow_threshold_ns);
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
		const struct session_options *o = session_options(l->s);
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

static void take_calls(struct live *l)
{
	for (; l->span_cursor < l->p->nspans; l->span_cursor++) {
		const struct span *sp = &l->p->spans[l->span_cursor];
		size_t n;
		const uint32_t *idx = join_take(l->join, sp->id, &n);
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
	struct join *again = join_new(JOIN_LINKS);
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
	uint64_t(*h)[SONDE_HIST_BUCKETS] = xcalloc(np, sizeof(*h));
	if (session_probe_hists(l->s, h) == 0) {
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
			for (unsigned b = 0; b < SONDE_HIST_BUCKETS; b++)
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
	uint64_t now = (uint64_t)(session_end_time(l->s) * 1e9);
	l->frozen_ns = now;
	window_advance(l->samples, now);
	window_advance(l->calls, now);
	feed_recorded_calls(l, now);
	resolve_thresholds(l, now);
	take_samples(l, now);
	take_calls(l);
	if (l->npending)
		decide_pending(l, now);
}

void live_update(struct live *l)
{
	if (l->frozen_ns)
		return;
	if (session_replay_path(l->s)) {
		take_recording(l);
		return;
	}
	uint64_t now = monotonic_ns();
	if (session_ended(l->s))
		l->frozen_ns = now; /* take in the final drain, then keep still */
	window_advance(l->samples, now);
	window_advance(l->calls, now);
	take_samples(l, now);
	take_calls(l);
	feed_calls(l, now);
	if (l->npending)
		decide_pending(l, now);
	uint64_t second = now / 1000000000ull;
	if (second != l->last_second) {
		l->last_second = second;
		resolve_thresholds(l, now);
		trim(l, now);
	}
}

/* --- setting up --------------------------------------------------------------------- */

static struct window *new_window(const struct live *l)
{
	struct window *w = window_new((size_t)ceil(l->o.keep_s));
	window_set_halflife(w, l->o.halflife_s);
	return w;
}

struct live *live_new(struct session *s, const struct live_options *o, char *err, size_t errlen)
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
	l->p = session_profile(s);
	l->o = *o;
	l->o.window_s = ceil(o->window_s);
	l->samples = new_window(l);
	l->calls = new_window(l);
	l->join = join_new(JOIN_LINKS);
	l->view.threshold_ns = UINT64_MAX;
	l->view.comm = l->filter_comm;
	l->view.show_overhead = o->show_overhead;
	const struct session_options *sopt = session_options(s);
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
	const struct session_options *so = session_options(s);
	l->by_process = so->system_wide || so->npids > 1;
	for (size_t i = 1; session_replay_path(s) && i < l->p->nthreads && !l->by_process; i++)
		l->by_process = l->p->threads[i].pid != l->p->threads[0].pid;
	l->nsec = (size_t)ceil(l->o.keep_s);
	l->sec_id = xcalloc(l->nsec, sizeof(*l->sec_id));
	l->sec_weight = xcalloc(l->nsec, sizeof(*l->sec_weight));
	l->start_ns = (uint64_t)(session_start_time(s) * 1e9);
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
static void rebuild(struct live *l)
{
	window_free(l->samples);
	l->samples = new_window(l);
	l->npending = 0;
	uint64_t now = view_time(l);
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
	if (id >= 0 && (session_probe_attached(l->s, (uint32_t)id) || session_replay_path(l->s)))
		return id;
	int n = 0;
	id = session_trace(l->s, func, &n, err, errlen);
	if (id < 0)
		return -1;
	if (n != 1)
		return errbuf_set(err, errlen,
				  "'%s' names %d functions: a view takes one (untrace %s to undo)", func,
				  n, func);
	*traced_now = true;
	return id;
}

static void describe_view(const struct live *l, char *buf, size_t size)
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

static void describe_filter(const struct live *l, char *buf, size_t size)
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

static void describe_window(const struct live *l, char *buf, size_t size)
{
	if (l->o.ewma)
		snprintf(buf, size, "EWMA half-life %gs", l->o.halflife_s);
	else
		snprintf(buf, size, "last %gs", l->o.window_s);
}

static double held_seconds(const struct live *l)
{
	uint64_t now = view_time(l);
	return now > l->held_from_ns ? (double)(now - l->held_from_ns) / 1e9 : 0;
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
		rebuild(l);
	}
	char desc[192];
	describe_view(l, desc, sizeof(desc));
	fprintf(out, "view: %s%s (rebuilt from the %.0f s held)\n", desc,
		traced_now ? "; traced it now, so only calls from now on count" : "",
		held_seconds(l));
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
	rebuild(l);
	char desc[64];
	describe_filter(l, desc, sizeof(desc));
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
	int first = session_trace(l->s, spec, &n, note, sizeof(note));
	if (first < 0)
		return errbuf_set(err, errlen, "%s", note);
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
	const struct session_options *o = session_options(l->s);
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
	int r = session_set_sampling(l->s, c->kind == CMD_SAMPLE_OFF ? NULL : event, freq, period,
				     err, errlen);
	if (r)
		return -1;
	if (c->kind == CMD_SAMPLE_OFF) {
		fprintf(out, "sampling off (traced calls are still timed)\n");
		return 0;
	}
	o = session_options(l->s);
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
	l->samples = new_window(l);
	l->calls = new_window(l);
	uint64_t now = monotonic_ns();
	profile_trim(l->p, l->p->nsamples, UINT64_MAX, 0);
	l->cursor = l->span_cursor = 0;
	l->npending = 0;
	join_free(l->join); /* its calls' samples are gone */
	l->join = join_new(JOIN_LINKS);
	for (size_t i = 0; i < l->p->nprobes; i++) {
		uint64_t h[SONDE_HIST_BUCKETS], total = 0;
		if (session_probe_hist(l->s, (uint32_t)i, h) == 0)
			for (unsigned b = 0; b < SONDE_HIST_BUCKETS; b++)
				total += h[b];
		l->probes[i].calls_base = total;
		l->probes[i].entered_base = session_probe_entered(l->s, (uint32_t)i);
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
	struct recording_image *img = session_recording(l->s, err, errlen);
	if (!img)
		return -1;
	if (recording_image_write(img, path, why, sizeof(why))) {
		/* Nothing is lost: the recording waits in memory for a path
		 * that has room. */
		char size[32];
		l->unsaved = (struct unsaved){
			.img = img,
			.path = xstrdup(path),
			.at_s = (double)(view_time(l) - l->start_ns) / 1e9,
			.samples = l->p->nsamples,
			.calls = l->p->nspans,
			.held_s = held_seconds(l),
		};
		return errbuf_set(err, errlen,
				  "%s; the recording (%s) is kept in memory: `save OTHER_FILE` writes "
				  "it (else it is saved in $TMPDIR or /tmp when the session ends)",
				  why, outfile_size_text(recording_image_size(img), size, sizeof(size)));
	}
	recording_image_free(img);
	fprintf(out, "saved %zu samples and %zu calls (the last %.0f s held) to %s\n",
		l->p->nsamples, l->p->nspans, held_seconds(l), path);
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
			(unsigned long long)trimmed, held_seconds(l));
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
		threadtable_write_json(data, l->p, rows, n, when, view_time(l));
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
	fprintf(out, "over the %.0f s held:", held_seconds(l));
	valuereport_by_text(out, l->p, &l->view, var, &keep, err, errlen);
	printable_free(&keep);
	return 0;
}

static int exec_command(struct live *l, const struct command *c, FILE *out, FILE *data,
			char *err, size_t errlen)
{
	char why[512];
	if ((command_changes_gathering(c->kind) || c->kind == CMD_RESET) &&
	    session_refuse_replay(l->s, why, sizeof(why)))
		return errbuf_set(err, errlen, "%s: %s", command_name(c->kind), why);
	if (l->frozen_ns && command_changes_gathering(c->kind))
		return errbuf_set(err, errlen,
				  "the session has ended (the targets exited): views, filters, save, "
				  "status and help still work");
	switch (c->kind) {
	case CMD_NONE:
		return 0;
	case CMD_TRACE:
		return do_trace(l, c->arg, out, err, errlen);
	case CMD_UNTRACE: {
		int n = session_untrace(l->s, c->arg, err, errlen);
		if (n < 0)
			return -1;
		fprintf(out, "untraced %d function%s (what they gathered stays)\n", n,
			n == 1 ? "" : "s");
		return 0;
	}
	case CMD_SAMPLE_HZ:
	case CMD_SAMPLE_OFF:
	case CMD_SAMPLE_EVENT:
		return do_sampling(l, c, out, err, errlen);
	case CMD_SAMPLE_OFFCPU:
	case CMD_SAMPLE_OFFCPU_OFF:
		if (session_set_offcpu(l->s, c->kind == CMD_SAMPLE_OFFCPU, err, errlen))
			return -1;
		fprintf(out, c->kind == CMD_SAMPLE_OFFCPU
				     ? "recording off-CPU intervals too (where threads wait)\n"
				     : "off-CPU intervals off\n");
		return 0;
	case CMD_SAMPLE_THREADS:
	case CMD_SAMPLE_THREADS_OFF:
		if (session_set_threads(l->s, c->kind == CMD_SAMPLE_THREADS, c->hz, err, errlen))
			return -1;
		if (c->kind == CMD_SAMPLE_THREADS)
			fprintf(out, "sampling every thread's state %" PRIu64 " times a second\n",
				c->hz ? c->hz : (uint64_t)SESSION_THREADS_HZ);
		else
			fprintf(out, "thread states off\n");
		return 0;
	case CMD_SAMPLE_IN:
	case CMD_SAMPLE_IN_OFF:
		if (session_set_sample_in(l->s, c->kind == CMD_SAMPLE_IN ? c->arg : NULL, err,
					  errlen))
			return -1;
		if (c->kind == CMD_SAMPLE_IN)
			fprintf(out, "sampling only inside calls of %s (decided in the kernel)\n", c->arg);
		else
			fprintf(out, "sample-in off\n");
		return 0;
	case CMD_SAMPLE_WHEN:
	case CMD_SAMPLE_WHEN_OFF:
		if (session_set_sample_when(l->s, c->kind == CMD_SAMPLE_WHEN ? c->arg : NULL, err,
					    errlen))
			return -1;
		if (c->kind == CMD_SAMPLE_WHEN)
			fprintf(out, "sampling only in calls during which %s ran (decided in the "
				     "kernel)\n",
				c->arg);
		else
			fprintf(out, "sample-when off\n");
		return 0;
	case CMD_SAMPLE_SLOW:
	case CMD_SAMPLE_SLOW_OFF: {
		if (session_set_sample_slow(l->s, c->kind == CMD_SAMPLE_SLOW ? c->arg : NULL, c->ns,
					    err, errlen))
			return -1;
		char d[32];
		if (c->kind == CMD_SAMPLE_SLOW)
			fprintf(out, "sampling only inside calls of %s running longer than %s\n",
				c->arg, duration_format(c->ns, d, sizeof(d)));
		else
			fprintf(out, "sample-slow off\n");
		return 0;
	}
	case CMD_VIEW_IN:
	case CMD_VIEW_SLOW:
	case CMD_VIEW_FAST:
	case CMD_VIEW_ALL:
		return set_view(l, c, out, err, errlen);
	case CMD_WINDOW: {
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
	case CMD_EWMA: {
		double h = (double)c->ns / 1e9;
		if (window_set_halflife(l->samples, h) || window_set_halflife(l->calls, h))
			return errbuf_set(err, errlen, "bad half-life");
		l->o.halflife_s = h;
		l->o.ewma = true;
		fprintf(out, "window: EWMA half-life %gs\n", h);
		return 0;
	}
	case CMD_FILTER_PID:
	case CMD_FILTER_TID:
	case CMD_FILTER_COMM:
	case CMD_FILTER_CLEAR:
		return set_filter(l, c, out);
	case CMD_RESET:
		return do_reset(l, out);
	case CMD_SAVE:
		return do_save(l, c->arg, out, err, errlen);
	case CMD_STATUS:
		print_status(l, out, data);
		return 0;
	case CMD_THREADS:
		print_threads(l, out, data);
		return 0;
	case CMD_BY:
		return do_by(l, c->arg, out, err, errlen);
	case CMD_HELP:
		command_help(out, c->arg);
		return 0;
	}
	return errbuf_set(err, errlen, "command not handled");
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

/* --- views ------------------------------------------------------------------------------ */

static void fill_target(struct live *l, char *buf, size_t size)
{
	const struct session_options *o = session_options(l->s);
	const char *path = session_replay_path(l->s);
	if (path) {
		struct printable shown = {0};
		snprintf(buf, size, "recording %s", printable_text(&shown, path));
		printable_free(&shown);
	} else if (o->system_wide) {
		snprintf(buf, size, "system-wide");
	} else if (o->cmd) {
		snprintf(buf, size, "command %s (PID %d)", o->cmd[0], (int)session_command_pid(l->s));
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
	const struct session_options *o = session_options(l->s);
	fill_target(l, st->target, sizeof(st->target));
	if (session_replay_path(l->s))
		describe_recorded_sampling(l->p, st->sampling, sizeof(st->sampling));
	else if (session_ended(l->s))
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
	describe_window(l, st->window, sizeof(st->window));
	describe_view(l, st->view, sizeof(st->view));
	describe_filter(l, st->filter, sizeof(st->filter));
	st->elapsed_s = now > l->start_ns ? (double)(now - l->start_ns) / 1e9 : 0;
	uint64_t sec = now / 1000000000ull;
	double since = now > l->held_from_ns ? (double)(now - l->held_from_ns) / 1e9 : 0;
	st->samples_per_s = rate_get(&l->sample_rate, sec, since);
	st->calls_per_s = rate_get(&l->call_rate, sec, since);
	st->samples = l->nsamples;
	st->calls = l->ncalls;
	struct engine_stats es;
	struct collector_stats cs;
	session_get_stats(l->s, &es, &cs);
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
	st->held_s = held_seconds(l);
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
	read_calls(l, now, &cw);
	v->nprobes = l->p->nprobes;
	v->probes = xcalloc(v->nprobes + 1, sizeof(*v->probes));
	uint64_t(*hists)[SONDE_HIST_BUCKETS] = xcalloc(v->nprobes + 1, sizeof(*hists));
	bool have_hists = session_probe_hists(l->s, hists) == 0;
	double rate_base = l->o.ewma ? 1.0 - pow(2.0, -1.0 / l->o.halflife_s) : 0;
	double since = now > l->held_from_ns ? (double)(now - l->held_from_ns) / 1e9 : 0;
	double span_s = since < l->o.window_s ? since : l->o.window_s;
	for (size_t i = 0; i < v->nprobes; i++) {
		struct live_probe_view *pv = &v->probes[i];
		struct probe_state *ps = &l->probes[i];
		pv->name = xstrdup(l->p->probes[i].name);
		pv->attached = session_probe_attached(l->s, (uint32_t)i) || session_replay_path(l->s);
		size_t a, b;
		probe_slice(&cw, (uint32_t)i, &a, &b);
		double total = 0;
		pv->buckets = b > a ? xcalloc(b - a, sizeof(*pv->buckets)) : NULL;
		for (size_t k = a; k < b; k++) {
			total += cw.weight[k];
			uint64_t lo, hi;
			fine_bounds(cw.stack[k] & ((1u << FINE_BITS) - 1), &lo, &hi);
			latency_hist_add(&pv->hist, lo, (uint64_t)llround(cw.weight[k]));
			if (cw.weight[k] > 0)
				pv->buckets[pv->nbuckets++] =
					(struct live_bucket){lo, hi, cw.weight[k]};
		}
		pv->calls = total;
		pv->calls_per_s = l->o.ewma ? total * rate_base : span_s >= 1 ? total / span_s : total;
		/* As a recording's and the thresholds': on the same durations. */
		uint64_t *counts = window_counts(&cw, a, b);
		pv->p50_ns = latency_hist_percentile(counts, 50);
		pv->p90_ns = latency_hist_percentile(counts, 90);
		pv->p95_ns = latency_hist_percentile(counts, 95);
		pv->p99_ns = latency_hist_percentile(counts, 99);
		pv->max_ns = latency_hist_percentile(counts, 100);
		free(counts);
		uint64_t all = 0;
		for (unsigned k = 0; have_hists && k < SONDE_HIST_BUCKETS; k++)
			all += hists[i][k];
		pv->total_calls = all > ps->calls_base ? all - ps->calls_base : 0;
		uint64_t entered = session_probe_entered(l->s, (uint32_t)i);
		pv->entered = entered > ps->entered_base ? entered - ps->entered_base : 0;
		pv->predicated = l->p->probes[i].predicate != NULL;
		if (l->p->probes[i].point >= 0) { /* a line: its hits (no durations) */
			/* Brings its hits up to date (a line has no histogram). */
			uint64_t none[SONDE_HIST_BUCKETS];
			session_probe_hist(l->s, (uint32_t)i, none);
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
		if (pv->predicate || pv->values || pv->in_calls)
			continue; /* added already */
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
	uint64_t now = view_time(l);
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
	uint64_t now = view_time(l);
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
	uint32_t frames[SONDE_MAX_STACK * 4 + 1];
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
		uint32_t stack = l->by_process ? rooted_stack(l, s) : s->stack;
		size_t n = profile_stack_frames(l->p, stack, frames, sizeof(frames) / sizeof(*frames));
		if (n > sizeof(frames) / sizeof(*frames))
			n = sizeof(frames) / sizeof(*frames);
		flame_add(din == VIEW_TAKE ? b->in : b->out, frames, n, view_weight(&in, l->p, s));
	}
	/* Calls in and outside the band, at the histogram's resolution: a
	 * bucket counts as in when its middle is. */
	struct stack_weights cw = {0};
	read_calls(l, now, &cw);
	size_t a, z;
	probe_slice(&cw, (uint32_t)id, &a, &z);
	for (size_t k = a; k < z; k++) {
		uint64_t mid = fine_mid(cw.stack[k] & ((1u << FINE_BITS) - 1));
		if (mid >= lo_ns && mid <= hi_ns)
			b->calls_in += cw.weight[k];
		else
			b->calls_out += cw.weight[k];
	}
	stack_weights_free(&cw);
	return b;
}
