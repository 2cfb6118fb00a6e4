/* window — per-second ring of stack weights, sliding and EWMA views.
 * The contract is in window.h. */
#include "window.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "order.h"
#include "util.h"

#define NS_PER_S 1000000000LL
/* The history's values are referenced to one time and new buckets are added
 * scaled up by 2^((end - ref)/h); once that factor would pass 2^REBASE_EXP
 * the values are rescaled to a newer reference. */
#define REBASE_EXP 256.0

enum { DIM_STACK, DIM_THREAD, NDIMS };

/* A map's value (a hashmap's uint64_t, seen through this union). */
union wval {
	uint64_t u; /* bucket maps: exact summed weight */
	double d;   /* history and scratch maps */
};
_Static_assert(sizeof(union wval) == sizeof(uint64_t), "a wval is a hashmap value");

struct bucket {
	struct hashmap maps[NDIMS];
	uint64_t nsamples;
};

struct window {
	size_t cap;          /* ring capacity in seconds */
	struct bucket *ring; /* second s lives at ring[s % cap] */
	uint64_t origin_ns;
	bool started;        /* head is valid */
	int64_t head;        /* newest second */
	double halflife;     /* seconds */

	/* EWMA history: value of key k at time hist_ref (seconds since the
	 * origin, a bucket boundary) is the value of k in hist[d], as .d. */
	struct hashmap hist[NDIMS];
	bool has_hist;
	int64_t hist_ref;
	int64_t hist_last_end; /* end of the newest absorbed bucket */

	struct hashmap scratch;
	struct window_stats stats;
};

/* ---- map ---- */

/* The value of `key`, inserted as zero when absent. */
static union wval *map_slot(struct hashmap *m, uint32_t key)
{
	return (union wval *)hashmap_put(m, key, NULL);
}

/* The value of `key`, or NULL. */
static const union wval *map_find(const struct hashmap *m, uint32_t key)
{
	return (const union wval *)hashmap_find(m, key);
}

/* Each entry of m as (key, value): for (size_t pos = 0; map_each(...);) */
static inline bool map_each(const struct hashmap *m, size_t *pos, uint32_t *key, union wval **val)
{
	uint64_t k, *v;
	if (!hashmap_next(m, pos, &k, &v))
		return false;
	*key = (uint32_t)k;
	*val = (union wval *)v;
	return true;
}

/* ---- output ---- */

void stack_weights_free(struct stack_weights *sw)
{
	free(sw->stack);
	free(sw->weight);
	memset(sw, 0, sizeof(*sw));
}

double stack_weights_total(const struct stack_weights *sw)
{
	double t = 0;
	for (size_t i = 0; i < sw->n; i++)
		t += sw->weight[i];
	return t;
}

/* Copies the scratch map into out, sorted by key; returns the total. */
static double emit(struct window *w, struct stack_weights *out)
{
	struct hashmap *m = &w->scratch;
	out->n = 0;
	if (hashmap_count(m) > out->cap) {
		size_t cap = out->cap ? out->cap : 16;
		while (cap < hashmap_count(m))
			cap *= 2;
		out->stack = xrealloc(out->stack, cap * sizeof(*out->stack));
		out->weight = xrealloc(out->weight, cap * sizeof(*out->weight));
		out->cap = cap;
	}
	uint32_t key;
	union wval *v;
	for (size_t pos = 0; map_each(m, &pos, &key, &v);)
		out->stack[out->n++] = key;
	if (out->n) /* qsort's array may not be NULL, even for no elements */
		qsort(out->stack, out->n, sizeof(*out->stack), order_u32);
	double total = 0;
	for (size_t i = 0; i < out->n; i++) {
		out->weight[i] = map_find(m, out->stack[i])->d;
		total += out->weight[i];
	}
	return total;
}

/* ---- lifecycle ---- */

struct window *window_new(size_t seconds)
{
	if (!seconds)
		return NULL;
	struct window *w = xcalloc(1, sizeof(*w));
	w->cap = seconds;
	w->ring = xcalloc(seconds, sizeof(*w->ring));
	w->halflife = WINDOW_DEFAULT_HALFLIFE;
	return w;
}

void window_free(struct window *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->cap; i++)
		for (int d = 0; d < NDIMS; d++)
			hashmap_free(&w->ring[i].maps[d]);
	free(w->ring);
	for (int d = 0; d < NDIMS; d++)
		hashmap_free(&w->hist[d]);
	hashmap_free(&w->scratch);
	free(w);
}

int window_set_origin(struct window *w, uint64_t origin_ns)
{
	if (w->started)
		return -1;
	w->origin_ns = origin_ns;
	return 0;
}

size_t window_seconds(const struct window *w)
{
	return w->cap;
}

double window_halflife(const struct window *w)
{
	return w->halflife;
}

void window_stats(const struct window *w, struct window_stats *out)
{
	*out = w->stats;
}

size_t window_memory_bytes(const struct window *w)
{
	size_t b = sizeof(*w) + w->cap * sizeof(*w->ring);
	for (size_t i = 0; i < w->cap; i++)
		for (int d = 0; d < NDIMS; d++)
			b += hashmap_bytes(&w->ring[i].maps[d]);
	for (int d = 0; d < NDIMS; d++)
		b += hashmap_bytes(&w->hist[d]);
	return b + hashmap_bytes(&w->scratch);
}

/* ---- history ---- */

/* Rescales the history to reference time `ref` (seconds), dropping entries
 * that underflow. */
static void hist_rebase(struct window *w, int64_t ref)
{
	double f = exp2(-(double)(ref - w->hist_ref) / w->halflife);
	for (int d = 0; d < NDIMS; d++) {
		struct hashmap *m = &w->hist[d];
		size_t dead = 0;
		uint32_t key;
		union wval *v;
		for (size_t pos = 0; map_each(m, &pos, &key, &v);) {
			v->d *= f;
			if (v->d < DBL_MIN)
				dead++;
		}
		if (dead) { /* some underflowed: rebuild without them */
			struct hashmap keep = {0};
			hashmap_reserve(&keep, hashmap_count(m) - dead);
			for (size_t pos = 0; map_each(m, &pos, &key, &v);)
				if (v->d >= DBL_MIN)
					map_slot(&keep, key)->d = v->d;
			hashmap_free(m);
			*m = keep;
		}
	}
	w->hist_ref = ref;
}

/* Folds bucket `b` (second s, ending at s + 1) into the history and empties
 * it. */
static void evict(struct window *w, struct bucket *b, int64_t s)
{
	if (!b->nsamples)
		return;
	int64_t end = s + 1;
	if (!w->has_hist) {
		w->has_hist = true;
		w->hist_ref = end;
	} else if ((double)(end - w->hist_ref) / w->halflife > REBASE_EXP) {
		hist_rebase(w, end);
	}
	double f = exp2((double)(end - w->hist_ref) / w->halflife);
	for (int d = 0; d < NDIMS; d++) {
		struct hashmap *m = &b->maps[d];
		uint32_t key;
		union wval *v;
		for (size_t pos = 0; map_each(m, &pos, &key, &v);)
			map_slot(&w->hist[d], key)->d += (double)v->u * f;
		hashmap_recycle(m);
	}
	if (end > w->hist_last_end)
		w->hist_last_end = end;
	b->nsamples = 0;
	w->stats.evicted++;
}

/* ---- ring ---- */

static struct bucket *bucket_of(struct window *w, int64_t s)
{
	return &w->ring[(uint64_t)s % w->cap];
}

static void advance_to(struct window *w, int64_t sec)
{
	if (!w->started) {
		w->started = true;
		w->head = sec;
		return;
	}
	if (sec <= w->head)
		return;
	int64_t c = (int64_t)w->cap;
	/* Seconds head-C+1 .. sec-C leave the ring, oldest first. */
	int64_t from = w->head - c + 1, to = sec - c;
	if (to > w->head)
		to = w->head;
	if (from < 0)
		from = 0;
	for (int64_t s = from; s <= to; s++)
		evict(w, bucket_of(w, s), s);
	w->head = sec;
}

static int drop(struct window *w, uint64_t weight)
{
	w->stats.dropped++;
	w->stats.dropped_weight += weight;
	return -1;
}

int window_add_thread(struct window *w, uint64_t time_ns, uint32_t stack, uint32_t thread,
		      uint64_t weight)
{
	if (stack == UINT32_MAX || time_ns < w->origin_ns)
		return drop(w, weight);
	int64_t sec = (int64_t)((time_ns - w->origin_ns) / NS_PER_S);
	if (w->started && sec <= w->head - (int64_t)w->cap)
		return drop(w, weight);
	advance_to(w, sec);
	struct bucket *b = bucket_of(w, sec);
	map_slot(&b->maps[DIM_STACK], stack)->u += weight;
	if (thread != WINDOW_NO_THREAD)
		map_slot(&b->maps[DIM_THREAD], thread)->u += weight;
	b->nsamples++;
	w->stats.samples++;
	w->stats.weight += weight;
	return 0;
}

int window_add(struct window *w, uint64_t time_ns, uint32_t stack, uint64_t weight)
{
	return window_add_thread(w, time_ns, stack, WINDOW_NO_THREAD, weight);
}

void window_advance(struct window *w, uint64_t now_ns)
{
	if (now_ns < w->origin_ns)
		return;
	advance_to(w, (int64_t)((now_ns - w->origin_ns) / NS_PER_S));
}

/* ---- views ---- */

/* now's second, or -1 before the origin. */
static int64_t now_second(const struct window *w, uint64_t now_ns)
{
	if (now_ns < w->origin_ns)
		return -1;
	return (int64_t)((now_ns - w->origin_ns) / NS_PER_S);
}

static double sum_last(struct window *w, int dim, uint64_t now_ns, double seconds,
		       struct stack_weights *out)
{
	hashmap_clear(&w->scratch);
	int64_t nowsec = now_second(w, now_ns);
	if (w->started && nowsec >= 0 && seconds > 0) {
		double n = ceil(seconds);
		int64_t k = n >= (double)w->cap ? (int64_t)w->cap : (int64_t)n;
		int64_t lo = nowsec - k + 1, hi = nowsec;
		if (lo < w->head - (int64_t)w->cap + 1)
			lo = w->head - (int64_t)w->cap + 1;
		if (lo < 0)
			lo = 0;
		if (hi > w->head)
			hi = w->head;
		for (int64_t s = lo; s <= hi; s++) {
			struct hashmap *m = &bucket_of(w, s)->maps[dim];
			uint32_t key;
			union wval *v;
			for (size_t pos = 0; map_each(m, &pos, &key, &v);)
				map_slot(&w->scratch, key)->d += (double)v->u;
		}
	}
	return emit(w, out);
}

static double ewma(struct window *w, int dim, uint64_t now_ns, struct stack_weights *out)
{
	hashmap_clear(&w->scratch);
	int64_t nowsec = now_second(w, now_ns);
	if (w->started && nowsec >= 0) {
		int64_t now_rel = (int64_t)(now_ns - w->origin_ns);
		int64_t lo = w->head - (int64_t)w->cap + 1, hi = w->head;
		if (lo < 0)
			lo = 0;
		if (hi > nowsec)
			hi = nowsec;
		for (int64_t s = lo; s <= hi; s++) {
			struct bucket *b = bucket_of(w, s);
			struct hashmap *m = &b->maps[dim];
			if (!hashmap_count(m))
				continue;
			int64_t age_ns = now_rel - (s + 1) * NS_PER_S;
			if (age_ns < 0)
				age_ns = 0;
			double f = exp2(-((double)age_ns / 1e9) / w->halflife);
			uint32_t key;
			union wval *v;
			for (size_t pos = 0; map_each(m, &pos, &key, &v);)
				map_slot(&w->scratch, key)->d += (double)v->u * f;
		}
		struct hashmap *h = &w->hist[dim];
		if (w->has_hist && hashmap_count(h)) {
			int64_t at = now_rel;
			if (at < w->hist_last_end * NS_PER_S)
				at = w->hist_last_end * NS_PER_S;
			int64_t age_ns = at - w->hist_ref * NS_PER_S;
			double f = exp2(-((double)age_ns / 1e9) / w->halflife);
			uint32_t key;
			union wval *v;
			for (size_t pos = 0; map_each(h, &pos, &key, &v);)
				map_slot(&w->scratch, key)->d += v->d * f;
		}
	}
	return emit(w, out);
}

double window_sum_last(struct window *w, uint64_t now_ns, double seconds,
		       struct stack_weights *out)
{
	return sum_last(w, DIM_STACK, now_ns, seconds, out);
}

double window_thread_sum_last(struct window *w, uint64_t now_ns, double seconds,
			      struct stack_weights *out)
{
	return sum_last(w, DIM_THREAD, now_ns, seconds, out);
}

double window_ewma(struct window *w, uint64_t now_ns, struct stack_weights *out)
{
	return ewma(w, DIM_STACK, now_ns, out);
}

double window_thread_ewma(struct window *w, uint64_t now_ns, struct stack_weights *out)
{
	return ewma(w, DIM_THREAD, now_ns, out);
}

int window_set_halflife(struct window *w, double seconds)
{
	if (!(seconds > 0) || !isfinite(seconds))
		return -1;
	/* The history becomes its old-rate value at its newest end, decaying
	 * at the new rate from there. */
	if (w->has_hist)
		hist_rebase(w, w->hist_last_end);
	w->halflife = seconds;
	return 0;
}

/* ---- flame ---- */

struct flame_tree *window_flame(struct profile *p, const struct stack_weights *sw,
				double scale)
{
	struct flame_tree *t = flame_new(p->frames);
	size_t cap = 64;
	uint32_t *buf = xmalloc(cap * sizeof(*buf));
	for (size_t i = 0; i < sw->n; i++) {
		uint32_t st = sw->stack[i];
		if (st >= p->nnodes)
			continue;
		double c = sw->weight[i] * scale;
		if (!(c >= 0.5) || c >= 18446744073709549568.0) /* NaN, rounds to 0, > u64 */
			continue;
		uint64_t count = c < 9.2e18 ? (uint64_t)llround(c) : (uint64_t)c;
		size_t depth = p->nodes[st].depth;
		if (depth > cap) {
			cap = depth * 2;
			buf = xrealloc(buf, cap * sizeof(*buf));
		}
		size_t n = profile_stack_frames(p, st, buf, cap);
		for (size_t k = 0; k < n; k++)
			buf[k] = profile_function_frame(p, buf[k]);
		flame_add(t, buf, n, count);
	}
	free(buf);
	return t;
}
