/* view — which samples a view takes. The contract is in view.h. */
#include "view.h"

#include <string.h>

/* The outermost call of `probe` the sample was taken in: true when there
 * is one, with its span's index in *span (-1: the call has no record). */
static bool sample_call(const struct profile *p, const struct sample *s, uint32_t probe,
			int64_t *span)
{
	for (uint32_t i = 0; i < s->nlinks; i++) {
		const struct span_link *l = &p->span_links[s->links + i];
		if (l->probe == probe) {
			*span = profile_span_find(p, l->span_id);
			return true;
		}
	}
	return false;
}

static bool thread_selected(const struct view *v, const struct thread_info *t)
{
	if (v->pid > 0 && (int64_t)t->pid != v->pid)
		return false;
	if (v->tid > 0 && (int64_t)t->tid != v->tid)
		return false;
	return !v->comm || !v->comm[0] || strcmp(t->comm ? t->comm : "", v->comm) == 0;
}

/* Every condition but the span condition. */
static bool sample_selected(const struct view *v, const struct profile *p, const struct sample *s)
{
	if (!(v && v->show_overhead) && profile_sample_is_overhead(p, s))
		return false;
	if (!v)
		return true;
	if (v->has_range && (s->time_ns < v->start_ns || s->time_ns > v->end_ns))
		return false;
	if (!thread_selected(v, &p->threads[s->thread]))
		return false;
	return !(v->exclude && v->exclude(p, s));
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

enum view_decision view_decide(const struct view *v, const struct profile *p,
			       const struct sample *s, const struct view_live *live)
{
	if (!sample_selected(v, p, s))
		return VIEW_SKIP;
	if (!v || v->span_class == SPAN_ANY)
		return VIEW_TAKE;
	int64_t span;
	if (!sample_call(p, s, v->probe, &span))
		return VIEW_SKIP;
	if (v->span_class == SPAN_IN)
		return VIEW_TAKE; /* inside the call, record or not */
	bool band = v->span_class == SPAN_BAND || v->span_class == SPAN_NOT_BAND;
	if (!band && live && live->threshold_unknown)
		return VIEW_WAIT;
	uint64_t duration;
	if (span >= 0) {
		duration = p->spans[span].duration_ns;
	} else if (!live) {
		return VIEW_SKIP; /* no record: its duration is unknown */
	} else {
		/* No record of its end: once the call was still running a
		 * delivery slack after the threshold (the band's end), it has run
		 * longer than that by now. */
		uint64_t cutoff = band ? v->band_hi_ns : v->threshold_ns;
		if (live->now_ns <= s->time_ns ||
		    live->now_ns - s->time_ns <= sat_add(cutoff, VIEW_RECORD_SLACK_NS))
			return VIEW_WAIT;
		duration = sat_add(cutoff, 1);
	}
	bool takes;
	switch (v->span_class) {
	case SPAN_SLOW:
		takes = duration > v->threshold_ns;
		break;
	case SPAN_FAST:
		takes = duration <= v->threshold_ns;
		break;
	case SPAN_BAND:
	case SPAN_NOT_BAND:
		takes = (duration >= v->band_lo_ns && duration <= v->band_hi_ns) ==
			(v->span_class == SPAN_BAND);
		break;
	default:
		takes = true;
	}
	return takes ? VIEW_TAKE : VIEW_SKIP;
}

bool view_takes(const struct view *v, const struct profile *p, const struct sample *s)
{
	return view_decide(v, p, s, NULL) == VIEW_TAKE;
}

uint64_t view_count_unknown(const struct view *v, const struct profile *p)
{
	if (!v || v->span_class == SPAN_ANY)
		return 0;
	uint64_t n = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		int64_t span;
		if (sample_selected(v, p, s) && sample_call(p, s, v->probe, &span) && span < 0)
			n += s->weight;
	}
	return n;
}

uint64_t *view_durations(const uint64_t *counts, size_t *n)
{
	return latency_loglin_durations(counts, VIEW_DURATIONS_MAX, n, NULL);
}
