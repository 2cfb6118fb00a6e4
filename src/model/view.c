/* view — which samples a view takes. The contract is in view.h. */
#include "view.h"

#include <stdio.h>
#include <string.h>

#include "errbuf.h"
#include "syscalls.h"
#include "util.h"

/* The outermost call of `probe` the sample was taken in: true when there
 * is one, with its span's index in *span (-1: the call has no record). */
static bool sample_call(const struct profile *p, const struct sample *s, uint32_t probe,
			int64_t *span)
{
	uint64_t id = profile_sample_call(p, s, probe);
	if (!id)
		return false;
	*span = profile_span_find(p, id);
	return true;
}

/* Whether the sample names call span_id among its calls in flight. */
static bool sample_in_span(const struct profile *p, const struct sample *s, uint64_t span_id)
{
	for (uint32_t i = 0; i < s->nlinks; i++)
		if (s->links + i < p->nspan_links && p->span_links[s->links + i].span_id == span_id)
			return true;
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
/* An on-CPU sample of another event than the view's. */
static bool other_event(const struct view *v, const struct profile *p, const struct sample *s)
{
	uint32_t want = v->event_plus1 ? v->event_plus1 - 1 : p->main_event;
	return want != UINT32_MAX && s->event != want;
}

static bool sample_selected(const struct view *v, const struct profile *p, const struct sample *s)
{
	if (!(v && v->show_overhead) && profile_sample_is_overhead(p, s))
		return false;
	if (!v)
		return !profile_sample_is_offcpu(p, s) && !profile_sample_is_waker(p, s);
	if (v->has_range && (s->time_ns < v->start_ns || s->time_ns > v->end_ns))
		return false;
	if (profile_sample_is_waker(p, s) != (v->time == VIEW_WAKERS))
		return false;
	bool off = profile_sample_is_offcpu(p, s);
	if (off ? v->time == VIEW_ON_CPU : v->time == VIEW_OFF_CPU)
		return false;
	if (!off && v->time != VIEW_WAKERS && other_event(v, p, s))
		return false;
	if (!thread_selected(v, &p->threads[s->thread]))
		return false;
	if (v->span_id && !sample_in_span(p, s, v->span_id))
		return false;
	return !(v->exclude && v->exclude(p, s));
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Whether a call that lasted `duration` is in the view's span class. */
static bool duration_in_class(const struct view *v, uint64_t duration)
{
	switch (v->span_class) {
	case SPAN_SLOW:
		return duration > v->threshold_ns;
	case SPAN_FAST:
		return duration <= v->threshold_ns;
	case SPAN_BAND:
	case SPAN_NOT_BAND:
		return (duration >= v->band_lo_ns && duration <= v->band_hi_ns) ==
		       (v->span_class == SPAN_BAND);
	default:
		return true;
	}
}

/* Whether a sampled call is too close to the view's threshold (or a band's
 * edge) to be told on either side: within its samples' uncertainty
 * (owncost.h). */
static bool too_close_to_call(const struct view *v, const struct profile *p,
			      const struct span *sp)
{
	uint64_t u = sp->samples && sp->probe < p->nprobes
			     ? p->probes[sp->probe].sample_uncertainty_ns * sp->samples
			     : 0;
	if (!u)
		return false;
	uint64_t d = sp->duration_ns;
	uint64_t edges[2] = {v->threshold_ns, v->threshold_ns};
	if (v->span_class == SPAN_BAND || v->span_class == SPAN_NOT_BAND) {
		edges[0] = v->band_lo_ns;
		edges[1] = v->band_hi_ns;
	} else if (v->span_class != SPAN_SLOW && v->span_class != SPAN_FAST) {
		return false;
	}
	for (int i = 0; i < 2; i++)
		if ((d > edges[i] ? d - edges[i] : edges[i] - d) < u)
			return true;
	return false;
}

/* Whether a call is in the view's span class: its duration is, and it is
 * not too close to call. */
static bool span_in_class(const struct view *v, const struct profile *p, const struct span *sp)
{
	return duration_in_class(v, sp->duration_ns) && !too_close_to_call(v, p, sp);
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
	if (v->when_points && (span < 0 || !(p->spans[span].points & v->when_points)))
		return VIEW_SKIP;
	if (v->span_class == SPAN_IN)
		return VIEW_TAKE; /* inside the call, record or not */
	bool band = v->span_class == SPAN_BAND || v->span_class == SPAN_NOT_BAND;
	if (!band && live && live->threshold_unknown)
		return VIEW_WAIT;
	uint64_t duration;
	if (span >= 0) {
		return span_in_class(v, p, &p->spans[span]) ? VIEW_TAKE : VIEW_SKIP;
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
	return duration_in_class(v, duration) ? VIEW_TAKE : VIEW_SKIP;
}

bool view_takes(const struct view *v, const struct profile *p, const struct sample *s)
{
	return view_decide(v, p, s, NULL) == VIEW_TAKE;
}

bool view_takes_thread_at(const struct view *v, const struct profile *p, uint32_t thread,
			  uint64_t time_ns)
{
	if (!v)
		return true;
	if (v->has_range && (time_ns < v->start_ns || time_ns > v->end_ns))
		return false;
	return thread < p->nthreads && thread_selected(v, &p->threads[thread]);
}

bool view_takes_call(const struct view *v, const struct profile *p, const struct span *sp)
{
	if (!view_takes_thread_at(v, p, sp->thread, sp->start_ns))
		return false;
	if (!v)
		return true;
	if (v->span_id && sp->id != v->span_id)
		return false;
	if (v->span_class == SPAN_ANY)
		return true;
	return sp->probe == v->probe && span_in_class(v, p, sp) &&
	       (!v->when_points || (sp->points & v->when_points));
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

int view_set_time(struct view *v, const struct profile *p, enum view_time t, char *err,
		  size_t errlen)
{
	v->time = t;
	v->sample_ns = 0;
	if (t == VIEW_ON_CPU)
		return 0;
	if (t == VIEW_WAKERS) {
		if (p->waker_event == UINT32_MAX && !profile_meta_u64(p, "wakers"))
			return errbuf_set(err, errlen,
					  "--wakers needs the wakers of off-CPU intervals, and this "
					  "profile has none: record it with sonde record --off-cpu "
					  "--wakers");
		return 0;
	}
	if (p->offcpu_event == UINT32_MAX && !profile_meta_u64(p, "off_cpu")) {
		errbuf_set(err, errlen,
			   "%s needs off-CPU intervals, and this profile has none: record it with "
			   "sonde record --off-cpu",
			   t == VIEW_WALL ? "--wall" : "--off-cpu");
		return -1;
	}
	if (t != VIEW_WALL)
		return 0;
	uint64_t hz = profile_meta_u64(p, "frequency_hz");
	if (!hz) {
		errbuf_set(err, errlen,
			   "--wall needs samples taken at a frequency (record -F, the default), "
			   "not every Nth event: their time is unknown");
		return -1;
	}
	v->sample_ns = 1000000000ull / hz;
	return 0;
}

bool view_counts_time(const struct view *v)
{
	return v && v->time != VIEW_ON_CPU;
}

uint64_t view_weight(const struct view *v, const struct profile *p, const struct sample *s)
{
	if (v && v->time == VIEW_WALL && !profile_sample_is_offcpu(p, s))
		return s->weight > UINT64_MAX / (v->sample_ns ? v->sample_ns : 1)
			       ? UINT64_MAX
			       : s->weight * v->sample_ns;
	return s->weight;
}

uint32_t view_leaf_frame(const struct view *v, struct profile *p, const struct sample *s)
{
	if (!v || v->time != VIEW_WALL || profile_sample_is_offcpu(p, s))
		return 0;
	return view_state_frame(p, TSTATE_RUNNING, -1);
}

static const char *const state_names[] = {
	[TSTATE_RUNNING] = "running",
	[TSTATE_RUNNABLE] = "runnable",
	[TSTATE_SLEEPING] = "sleeping",
	[TSTATE_UNINTERRUPTIBLE] = "uninterruptible",
	[TSTATE_DISK] = "disk",
	[TSTATE_STOPPED] = "stopped",
};

const char *view_state_name(unsigned off_state)
{
	return off_state < sizeof(state_names) / sizeof(state_names[0]) && state_names[off_state]
		       ? state_names[off_state]
		       : "off-cpu";
}

int view_state_parse(const char *name)
{
	for (unsigned i = 0; i < sizeof(state_names) / sizeof(state_names[0]); i++)
		if (state_names[i] && strcmp(state_names[i], name) == 0)
			return (int)i;
	return -1;
}

uint32_t view_state_frame(struct profile *p, unsigned off_state, long syscall)
{
	const char *state = view_state_name(off_state);
	const char *sc = syscall >= 0 ? syscalls_name(syscall) : NULL;
	char name[96];
	/* Waiting for a CPU says nothing about the call it was in. */
	if (syscall < 0 || off_state == TSTATE_RUNNING || off_state == TSTATE_RUNNABLE)
		snprintf(name, sizeof(name), "[%s]", state);
	else if (sc)
		snprintf(name, sizeof(name), "[%s: %s]", state, sc);
	else
		snprintf(name, sizeof(name), "[%s: syscall %ld]", state, syscall);
	return frames_intern(p->frames, name, "", "", 0, FRAME_STATE);
}

int view_set_event(struct view *v, const struct profile *p, char *err, size_t errlen)
{
	v->event_plus1 = 0;
	if (!v->event)
		return 0;
	int64_t i = profile_event_find(p, v->event);
	if (i >= 0 && (uint32_t)i != p->offcpu_event && (uint32_t)i != p->waker_event) {
		v->event_plus1 = (uint32_t)i + 1;
		return 0;
	}
	char names[256] = "";
	size_t k = 0;
	for (size_t j = 0; j < p->nevents && k < sizeof(names); j++) {
		if (j == p->offcpu_event || j == p->waker_event)
			continue;
		int w = snprintf(names + k, sizeof(names) - k, "%s%s", k ? ", " : "", p->events[j]);
		if (w < 0)
			break;
		k += (size_t)w;
	}
	return errbuf_set(err, errlen, "no samples of event '%s' here; its events: %s", v->event,
			  k ? names : "none");
}

int view_profile_rewrite(struct profile *p, enum view_time t, uint64_t div, char *err,
			 size_t errlen)
{
	struct view v = {.show_overhead = true};
	if (t != VIEW_ON_CPU && view_set_time(&v, p, t, err, errlen))
		return -1;
	v.time = t;
	if (!div)
		div = 1;
	size_t kept = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		struct sample s = p->samples[i];
		bool off = profile_sample_is_offcpu(p, &s);
		if (off ? t == VIEW_ON_CPU : t == VIEW_OFF_CPU)
			continue;
		if (profile_sample_is_waker(p, &s) != (t == VIEW_WAKERS))
			continue;
		if (!off && t != VIEW_WAKERS && other_event(&v, p, &s))
			continue;
		uint64_t w = (view_weight(&v, p, &s) + div / 2) / div;
		uint32_t leaf = view_leaf_frame(&v, p, &s);
		if (leaf)
			s.stack = profile_stack_child(p, s.stack, leaf);
		s.weight = div > 1 && !w ? 1 : w;
		p->samples[kept++] = s; /* span links stay where they are */
	}
	p->nsamples = kept;
	/* What is left is plain weights now: no view tells its samples apart
	 * (all of one event). */
	uint32_t main = p->main_event != UINT32_MAX ? p->main_event : 0;
	for (size_t i = 0; i < kept; i++)
		p->samples[i].event = main;
	p->offcpu_event = UINT32_MAX;
	p->waker_event = UINT32_MAX;
	if (p->nevents && p->main_event == UINT32_MAX)
		p->main_event = 0;
	return 0;
}

uint32_t view_waker_frame(struct profile *p, const char *woken_comm)
{
	char name[64];
	snprintf(name, sizeof(name), "[wakes: %s]", woken_comm);
	return frames_intern(p->frames, name, "", "", 0, FRAME_STATE);
}
