#include "owncost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latency.h"
#include "order.h"
#include "util.h"

static bool is_on_cpu(const struct profile *p, const struct sample *s)
{
	/* Off-CPU intervals and wakers carry the calls in flight too, but
	 * cost the call no interrupt. */
	return s->event != p->offcpu_event && s->event != p->waker_event;
}

/* span.samples of every span. */
static void count_all(struct profile *p)
{
	for (size_t i = 0; i < p->nspans; i++)
		p->spans[i].samples = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		if (!is_on_cpu(p, s))
			continue;
		for (uint32_t j = 0; j < s->nlinks; j++) {
			int64_t k = profile_span_find(p, p->span_links[s->links + j].span_id);
			if (k >= 0)
				p->spans[k].samples++;
		}
	}
}

/* Half the 10th-90th percentile range of sorted v[0..n). */
static uint64_t spread(const uint64_t *v, size_t n)
{
	return n ? (v[n * 9 / 10] - v[n / 10]) / 2 : 0;
}

/* The median of the values of sorted v[0..n) in [lo, hi) (n_in: how many). */
static uint64_t median_in(const uint64_t *v, size_t n, uint64_t lo, uint64_t hi, size_t *n_in)
{
	size_t a = 0, b;
	while (a < n && v[a] < lo)
		a++;
	for (b = a; b < n && v[b] < hi; b++)
		;
	*n_in = b - a;
	return b > a ? v[a + (b - a) / 2] : 0;
}

/* The same, each value weighted by itself: the middle of the durations a
 * sample would land in, since it lands in a call as often as the call is
 * long. */
static uint64_t weighted_median_in(const uint64_t *v, size_t n, uint64_t lo, uint64_t hi,
				   size_t *n_in)
{
	size_t a = 0, b;
	while (a < n && v[a] < lo)
		a++;
	double total = 0;
	for (b = a; b < n && v[b] < hi; b++)
		total += (double)v[b];
	*n_in = b - a;
	double half = total / 2, cum = 0;
	for (size_t i = a; i < b; i++) {
		cum += (double)v[i];
		if (cum >= half)
			return v[i];
	}
	return b > a ? v[b - 1] : 0;
}

/* The calls compared, their durations sorted: those no sample landed in
 * (uns) and the one-sample calls (one). */
struct compared_calls {
	uint64_t *uns;
	size_t nu;
	uint64_t *one;
	size_t none;
};

/* The unsampled calls' durations, and the one-sample calls', of probe's
 * closed spans. */
static void gather_calls(const struct profile *p, uint32_t probe, struct compared_calls *c)
{
	const struct probe_info *pi = &p->probes[probe];
	uint64_t *hist = xcalloc(LATENCY_LOGLIN_BUCKETS, sizeof(*hist));
	uint64_t *one = NULL, *uns_spans = NULL;
	size_t none = 0, ncap = 0, nuns = 0, ucap = 0;
	if (!pi->all_calls)
		memcpy(hist, pi->hist, sizeof(pi->hist));
	for (size_t i = 0; i < p->nspans; i++) {
		const struct span *sp = &p->spans[i];
		if (sp->probe != probe || sp->open)
			continue;
		uint64_t n = sp->samples;
		if (n == 0) {
			if (pi->all_calls) {
				grow_array((void **)&uns_spans, &ucap, nuns + 1, sizeof(*uns_spans));
				uns_spans[nuns++] = sp->duration_ns;
			}
			continue;
		}
		unsigned b = latency_loglin_bucket(sp->duration_ns);
		if (!pi->all_calls && hist[b])
			hist[b]--; /* the kernel counted it among all calls */
		if (n == 1) {
			grow_array((void **)&one, &ncap, none + 1, sizeof(*one));
			one[none++] = sp->duration_ns;
		}
	}
	size_t nu = 0;
	uint64_t *uns;
	if (pi->all_calls) {
		qsort(uns_spans, nuns, sizeof(*uns_spans), order_u64);
		uns = uns_spans;
		nu = nuns;
	} else {
		uns = latency_loglin_durations(hist, 200000, &nu, NULL);
	}
	if (one)
		qsort(one, none, sizeof(*one), order_u64);
	free(hist);
	c->uns = uns;
	c->nu = nu;
	c->one = one;
	c->none = none;
}

/* Where the calls are compared. */
struct compared_side {
	bool side;    /* compared on the fast side of auto's valley */
	uint64_t top; /* where the compared calls end */
};

/* r from the calls of c: fills r's mode_ns, sampled, unsampled, known and
 * ns_per_sample when there are enough unsampled calls. Returns where the
 * calls were compared. */
static struct compared_side find_residual(const struct compared_calls *c,
					  struct owncost_residual *r)
{
	const uint64_t *uns = c->uns, *one = c->one;
	size_t nu = c->nu, none = c->none;
	bool side = false;
	uint64_t top = 0;
	if (nu >= OWNCOST_MIN_UNSAMPLED) {
		uint64_t m = uns[nu / 2];
		size_t in_u = 0, in_s = 0;
		/* The calls below the valley auto finds above the main mode,
		 * when it lies beyond 2m: the fast side may hold several modes
		 * of typical calls (redis' SET/GET at 0.3 and 1 us), whose
		 * sampled calls mix as a sample lands in calls, in proportion
		 * to their length: against those, the unsampled calls' median
		 * weighted by duration, over the same side. Else the main
		 * mode's plain median. */
		struct latency_modes modes;
		side = latency_auto_threshold(uns, nu, &modes) == 0 && modes.threshold_ns > 2 * m;
		top = side ? modes.threshold_ns : 4 * m;
		uint64_t mu = side ? weighted_median_in(uns, nu, 0, top, &in_u)
				   : median_in(uns, nu, m / 2, 2 * m, &in_u);
		int64_t res = 0;
		for (int round = 0; round < 3; round++) {
			/* A sample's cost varies by more than a short call lasts:
			 * the one-sample calls of that side spread over [0, top +
			 * r), top being 4m for a lone mode (a narrower window
			 * drifts along a broad spread). */
			int64_t hi = (int64_t)top + res;
			uint64_t ms = median_in(one, none, 0, hi > 0 ? (uint64_t)hi : 0, &in_s);
			if (in_s < OWNCOST_MIN_SAMPLED)
				break;
			res = (int64_t)ms - (int64_t)mu;
		}
		r->mode_ns = m;
		r->sampled = in_s;
		r->unsampled = in_u;
		r->known = in_s >= OWNCOST_MIN_SAMPLED && in_u >= OWNCOST_MIN_UNSAMPLED;
		r->ns_per_sample = r->known ? res : 0;
	}
	return (struct compared_side){.side = side, .top = top};
}

/* The spread the samples add: of the one-sample calls around the mode,
 * corrected, beyond that of the calls without one. For a known r. */
static uint64_t sample_uncertainty(const struct compared_calls *cc, struct compared_side s,
				   const struct owncost_residual *r)
{
	const uint64_t *uns = cc->uns, *one = cc->one;
	size_t nu = cc->nu, none = cc->none;
	bool side = s.side;
	uint64_t top = s.top;
	uint64_t *c = xcalloc(none + 1, sizeof(*c));
	size_t nc = 0;
	for (size_t i = 0; i < none; i++) {
		int64_t d = (int64_t)one[i] - r->ns_per_sample;
		if (d < (int64_t)top)
			c[nc++] = d > 0 ? (uint64_t)d : 0;
	}
	size_t a = 0, b;
	while (a < nu && uns[a] < (side ? 0 : r->mode_ns / 2))
		a++;
	for (b = a; b < nu && uns[b] < (side ? top : 2 * r->mode_ns); b++)
		;
	uint64_t su = spread(uns + a, b - a), ss = spread(c, nc);
	free(c);
	return ss > su ? ss - su : 0;
}

/* Takes ns_per_sample times its samples out of each sampled span of probe
 * (never below 0, never above its raw duration), moving it in the probe's
 * histogram along. Returns the spans changed. */
static uint64_t subtract_residual(struct profile *p, uint32_t probe, int64_t ns_per_sample)
{
	uint64_t changed = 0;
	for (size_t i = 0; i < p->nspans; i++) {
		struct span *sp = &p->spans[i];
		uint64_t n = sp->samples;
		if (sp->probe != probe || n == 0)
			continue;
		int64_t d = (int64_t)sp->duration_ns - (int64_t)n * ns_per_sample;
		if (d < 0)
			d = 0;
		if ((uint64_t)d > sp->raw_duration_ns)
			d = (int64_t)sp->raw_duration_ns;
		/* The histogram of every call keeps holding the spans'
		 * durations: those who subtract a span from it find it. */
		uint64_t *h = p->probes[probe].hist;
		unsigned from = latency_loglin_bucket(sp->duration_ns);
		if (h[from]) {
			h[from]--;
			h[latency_loglin_bucket((uint64_t)d)]++;
		}
		sp->duration_ns = (uint64_t)d;
		changed++;
	}
	return changed;
}

struct owncost_residual owncost_correct(struct profile *p, uint32_t probe)
{
	struct owncost_residual r = {0};
	if (p->probes[probe].point >= 0)
		return r;
	struct compared_calls calls;
	gather_calls(p, probe, &calls);
	struct compared_side side = find_residual(&calls, &r);
	if (r.known)
		r.uncertainty_ns = sample_uncertainty(&calls, side, &r);
	free(calls.uns);
	free(calls.one);
	p->probes[probe].sample_uncertainty_ns = r.uncertainty_ns;
	if (r.known && r.ns_per_sample != 0)
		r.calls_changed = subtract_residual(p, probe, r.ns_per_sample);
	return r;
}

void owncost_correct_all(struct profile *p)
{
	if (profile_meta_get(p, "sample_residual_done"))
		return;
	count_all(p);
	for (size_t i = 0; i < p->nprobes; i++) {
		if (p->probes[i].point >= 0)
			continue;
		struct owncost_residual r = owncost_correct(p, (uint32_t)i);
		char key[320], val[96];
		if (r.known) {
			snprintf(key, sizeof(key), "sample_residual_ns:%s", p->probes[i].name);
			snprintf(val, sizeof(val), "%lld", (long long)r.ns_per_sample);
			profile_meta_set(p, key, val);
			snprintf(key, sizeof(key), "sample_uncertainty_ns:%s", p->probes[i].name);
			snprintf(val, sizeof(val), "%llu", (unsigned long long)r.uncertainty_ns);
		} else {
			snprintf(key, sizeof(key), "sample_residual_unknown:%s", p->probes[i].name);
			snprintf(val, sizeof(val), "%llu sampled, %llu unsampled calls in the main mode",
				 (unsigned long long)r.sampled, (unsigned long long)r.unsampled);
		}
		profile_meta_set(p, key, val);
	}
	profile_meta_set(p, "sample_residual_done", "1");
}

void owncost_count(struct profile *p)
{
	count_all(p);
	for (size_t i = 0; i < p->nprobes; i++) {
		char key[320];
		snprintf(key, sizeof(key), "sample_uncertainty_ns:%s", p->probes[i].name);
		p->probes[i].sample_uncertainty_ns = profile_meta_u64(p, key);
	}
}
