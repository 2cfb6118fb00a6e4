/* window: sliding sums over whole seconds (boundaries, clamping, origin),
 * ring wrap-around with counted drops, advancing without samples, the EWMA
 * against closed forms (constant rate, single burst) and against a
 * brute-force EWMA over every sample while buckets leave the ring, the
 * half-life change and its documented approximation, history pruning,
 * thread views, flat memory over 100k seconds, and the flame tree helper. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "frames.h"
#include "profile.h"
#include "window.h"

#define S(x) ((uint64_t)((x) * 1000000000.0 + 0.5)) /* seconds -> ns */
#define NS 1000000000ULL

static double weight_of(const struct stack_weights *sw, uint32_t key)
{
	for (size_t i = 0; i < sw->n; i++)
		if (sw->stack[i] == key)
			return sw->weight[i];
	return 0;
}

static void assert_rel(double got, double want, double tol, const char *what)
{
	double err = fabs(got - want);
	double scale = fabs(want) > 0 ? fabs(want) : 1;
	cr_assert(err <= tol * scale, "%s: got %.17g, want %.17g (rel err %.3g)", what, got, want,
		  err / scale);
}

/* ---- sliding ---- */

Test(window, new_rejects_zero)
{
	cr_assert_null(window_new(0));
	struct window *w = window_new(1);
	cr_assert_not_null(w);
	cr_assert_eq(window_seconds(w), 1);
	cr_assert_eq(window_halflife(w), WINDOW_DEFAULT_HALFLIFE);
	window_free(w);
	window_free(NULL);
}

Test(window, sliding_ten_per_second)
{
	struct window *w = window_new(600);
	struct stack_weights sw = {0};
	/* 10 samples per second for 20 s, the first of each second exactly on
	 * the bucket boundary; stacks 1 and 2 alternate. */
	for (int s = 0; s < 20; s++)
		for (int k = 0; k < 10; k++)
			cr_assert_eq(window_add(w, (uint64_t)s * NS + (uint64_t)k * (NS / 10),
						1 + (uint32_t)(k & 1), 1),
				     0);

	cr_assert_eq(window_sum_last(w, S(19.5), 5, &sw), 50);
	cr_assert_eq(sw.n, 2);
	cr_assert_eq(sw.stack[0], 1);
	cr_assert_eq(sw.stack[1], 2);
	cr_assert_eq(sw.weight[0], 25);
	cr_assert_eq(sw.weight[1], 25);
	/* last nanosecond of second 19: same five buckets */
	cr_assert_eq(window_sum_last(w, 20 * NS - 1, 5, &sw), 50);
	/* exactly 20 s is second 20 (empty): seconds 16..20 */
	cr_assert_eq(window_sum_last(w, 20 * NS, 5, &sw), 40);
	/* fractional seconds round up to whole buckets */
	cr_assert_eq(window_sum_last(w, S(19.5), 4.5, &sw), 50);
	cr_assert_eq(window_sum_last(w, S(19.5), 0.01, &sw), 10);
	/* the current partial second is included, later seconds are not */
	cr_assert_eq(window_sum_last(w, S(10.0), 1, &sw), 10);
	cr_assert_eq(window_sum_last(w, S(10.0), 3, &sw), 30);
	/* more than the ring: clamped to it (600 s holds everything) */
	cr_assert_eq(window_sum_last(w, S(19.5), 1e9, &sw), 200);
	cr_assert_eq(window_sum_last(w, S(19.5), INFINITY, &sw), 200);
	cr_assert_eq(window_sum_last(w, S(19.5), 0, &sw), 0);
	cr_assert_eq(sw.n, 0);
	cr_assert_eq(window_sum_last(w, S(19.5), -3, &sw), 0);
	cr_assert_eq(window_sum_last(w, S(19.5), NAN, &sw), 0);

	struct window_stats st;
	window_stats(w, &st);
	cr_assert_eq(st.samples, 200);
	cr_assert_eq(st.weight, 200);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(st.evicted, 0);
	stack_weights_free(&sw);
	window_free(w);
}

Test(window, bucket_boundaries_and_origin)
{
	struct window *w = window_new(60);
	struct stack_weights sw = {0};
	const uint64_t origin = S(1000.25);
	cr_assert_eq(window_set_origin(w, origin), 0);
	/* the last ns of second 4 and the first ns of second 5 */
	window_add(w, origin + 5 * NS - 1, 7, 3);
	window_add(w, origin + 5 * NS, 8, 4);
	window_add(w, origin + 5 * NS + NS - 1, 8, 5);
	cr_assert_eq(window_set_origin(w, 0), -1, "origin is fixed once samples came");
	cr_assert_eq(window_sum_last(w, origin + 5 * NS, 1, &sw), 9);
	cr_assert_eq(sw.n, 1);
	cr_assert_eq(weight_of(&sw, 8), 9);
	cr_assert_eq(window_sum_last(w, origin + 6 * NS - 1, 2, &sw), 12);
	cr_assert_eq(weight_of(&sw, 7), 3);
	cr_assert_eq(window_sum_last(w, origin + 5 * NS - 1, 1, &sw), 3);
	/* before the origin: nothing, and samples there are dropped */
	cr_assert_eq(window_sum_last(w, origin - 1, 60, &sw), 0);
	cr_assert_eq(window_add(w, origin - 1, 7, 11), -1);
	/* the reserved key is refused */
	cr_assert_eq(window_add(w, origin + 5 * NS, UINT32_MAX, 13), -1);
	struct window_stats st;
	window_stats(w, &st);
	cr_assert_eq(st.samples, 3);
	cr_assert_eq(st.weight, 12);
	cr_assert_eq(st.dropped, 2);
	cr_assert_eq(st.dropped_weight, 24);
	stack_weights_free(&sw);
	window_free(w);
}

Test(window, wrap_around_and_drops)
{
	struct window *w = window_new(10);
	struct stack_weights sw = {0};
	/* one sample per second for 30 s, weight s + 1, stack s % 3 */
	for (int s = 0; s < 30; s++)
		cr_assert_eq(window_add(w, (uint64_t)s * NS + NS / 2, (uint32_t)(s % 3),
					(uint64_t)s + 1),
			     0);
	/* the ring holds seconds 20..29: weights 21..30 */
	cr_assert_eq(window_sum_last(w, S(29.9), 10, &sw), 255);
	cr_assert_eq(window_sum_last(w, S(29.9), 100, &sw), 255, "clamped to the ring");
	cr_assert_eq(weight_of(&sw, 0), 22 + 25 + 28);
	cr_assert_eq(weight_of(&sw, 1), 23 + 26 + 29);
	cr_assert_eq(weight_of(&sw, 2), 21 + 24 + 27 + 30);
	/* an old view: seconds before 20 are gone */
	cr_assert_eq(window_sum_last(w, S(22.0), 10, &sw), 21 + 22 + 23);

	/* second 19 left the ring: dropped and counted; 20 is still in */
	cr_assert_eq(window_add(w, S(19.999), 1, 100), -1);
	cr_assert_eq(window_add(w, S(20.0), 1, 1000), 0);
	cr_assert_eq(window_add(w, S(3.0), 1, 7), -1);
	cr_assert_eq(window_sum_last(w, S(29.9), 10, &sw), 1255);

	struct window_stats st;
	window_stats(w, &st);
	cr_assert_eq(st.samples, 31);
	cr_assert_eq(st.weight, 465 + 1000);
	cr_assert_eq(st.dropped, 2);
	cr_assert_eq(st.dropped_weight, 107);
	cr_assert_eq(st.evicted, 20);

	/* a sample far in the future moves the whole ring */
	cr_assert_eq(window_add(w, S(1000.0), 2, 5), 0);
	cr_assert_eq(window_sum_last(w, S(1000.0), 10, &sw), 5);
	cr_assert_eq(sw.n, 1);
	window_stats(w, &st);
	cr_assert_eq(st.evicted, 30);
	cr_assert_eq(window_add(w, S(990.5), 2, 5), -1, "second 990 left with head at 1000");
	cr_assert_eq(window_add(w, S(991.0), 2, 6), 0);
	stack_weights_free(&sw);
	window_free(w);
}

Test(window, advance_without_samples)
{
	struct window *w = window_new(10);
	struct stack_weights sw = {0};
	for (int s = 0; s < 10; s++)
		window_add(w, (uint64_t)s * NS, 4, 1);
	cr_assert_eq(window_sum_last(w, S(9.5), 10, &sw), 10);
	window_advance(w, S(14.5)); /* seconds 0..4 leave */
	cr_assert_eq(window_sum_last(w, S(14.5), 10, &sw), 5);
	cr_assert_eq(window_sum_last(w, S(9.5), 10, &sw), 5, "older view, same ring");
	window_advance(w, S(3.0)); /* backwards: no-op */
	cr_assert_eq(window_sum_last(w, S(14.5), 10, &sw), 5);
	window_advance(w, S(19.0)); /* second 9 leaves */
	cr_assert_eq(window_sum_last(w, S(19.0), 10, &sw), 0);
	cr_assert_eq(sw.n, 0);
	window_advance(w, S(100000.0));
	cr_assert_eq(window_sum_last(w, S(100000.0), 10, &sw), 0);
	struct window_stats st;
	window_stats(w, &st);
	cr_assert_eq(st.evicted, 10);
	cr_assert_eq(st.dropped, 0);
	/* advancing first starts the ring: a sample older than it is dropped */
	struct window *v = window_new(5);
	window_advance(v, S(50.0));
	cr_assert_eq(window_add(v, S(45.9), 1, 1), -1);
	cr_assert_eq(window_add(v, S(46.0), 1, 1), 0);
	window_free(v);
	stack_weights_free(&sw);
	window_free(w);
}

/* ---- EWMA ---- */

Test(window, ewma_constant_rate_closed_form)
{
	const double h = 10.0;
	const int r = 7, N = 2000;
	struct window *w = window_new(60);
	struct stack_weights sw = {0};
	cr_assert_eq(window_set_halflife(w, h), 0);
	for (int s = 0; s < N; s++)
		for (int k = 0; k < r; k++)
			window_add(w, (uint64_t)s * NS + (uint64_t)k * (NS / r), 1, 1);
	/* At N s (the end of the newest bucket) ages are 0, 1, ..., N-1:
	 * r * sum 2^(-k/h) = r (1 - q^N) / (1 - q), q = 2^(-1/h). */
	const double q = exp2(-1.0 / h);
	const double want = r * (1 - pow(q, N)) / (1 - q);
	assert_rel(window_ewma(w, (uint64_t)N * NS, &sw), want, 1e-9, "finite sum");
	assert_rel(weight_of(&sw, 1), want, 1e-9, "stack 1");
	assert_rel(window_ewma(w, (uint64_t)N * NS, &sw), r / (1 - q), 1e-9, "limit r/(1-q)");
	/* half a second later everything is a further 2^(-0.5/h) down */
	assert_rel(window_ewma(w, (uint64_t)N * NS + NS / 2, &sw), want * exp2(-0.5 / h), 1e-9,
		   "mid-second");
	/* moving the ring does not change the value */
	window_advance(w, (uint64_t)N * NS + NS / 2);
	assert_rel(window_ewma(w, (uint64_t)N * NS + NS / 2, &sw), want * exp2(-0.5 / h), 1e-9,
		   "after advance");
	struct window_stats st;
	window_stats(w, &st);
	cr_assert_eq(st.evicted, (uint64_t)(N + 1 - 60));
	/* the rate: multiply by 1 - q */
	assert_rel(window_ewma(w, (uint64_t)N * NS, &sw) * (1 - q), r, 1e-9, "rate");
	stack_weights_free(&sw);
	window_free(w);
}

Test(window, ewma_burst_halves_every_halflife)
{
	const double h = 4.0;
	struct window *w = window_new(10);
	struct stack_weights sw = {0};
	window_set_halflife(w, h);
	for (int k = 0; k < 100; k++) /* all within second 0 */
		window_add(w, (uint64_t)k * (NS / 100), 3, 1);
	/* during the burst's own second it counts fully */
	cr_assert_eq(window_ewma(w, S(0.5), &sw), 100);
	for (int k = 0; k <= 40; k++) {
		uint64_t now = NS + (uint64_t)k * 4 * NS; /* bucket end + k half-lives */
		window_advance(w, now);
		double got = window_ewma(w, now, &sw);
		cr_assert_eq(sw.n, 1);
		assert_rel(got, 100.0 * exp2(-k), 1e-9, "burst");
		cr_assert(fabs(got - 100.0 * exp2(-k)) <= 1e-9);
	}
	struct window_stats st;
	window_stats(w, &st);
	cr_assert_eq(st.evicted, 1, "the burst lives in the history by now");
	stack_weights_free(&sw);
	window_free(w);
}

struct smp {
	uint64_t t, weight;
	uint32_t stack, thread;
};

/* Brute-force EWMA of every sample of key `key` (dim 0 stack, 1 thread), by
 * the header's definition: seconds <= now's, age from the bucket's end
 * clamped at 0. */
static double brute(const struct smp *v, size_t n, int dim, uint32_t key, uint64_t now, double h)
{
	uint64_t nowsec = now / NS;
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		if ((dim ? v[i].thread : v[i].stack) != key)
			continue;
		uint64_t sec = v[i].t / NS;
		if (sec > nowsec)
			continue;
		int64_t age = (int64_t)now - (int64_t)((sec + 1) * NS);
		if (age < 0)
			age = 0;
		sum += (double)v[i].weight * exp2(-((double)age / 1e9) / h);
	}
	return sum;
}

static uint64_t lcg_state;
static uint32_t rnd(uint32_t n)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)((lcg_state >> 33) % n);
}

Test(window, ewma_matches_brute_force_across_evictions)
{
	const double h = 3.3;
	const int secs = 2000; /* > 256 h: the history is rebased several times */
	struct window *w = window_new(8);
	struct stack_weights sw = {0}, tw = {0};
	window_set_halflife(w, h);
	size_t cap = 16, n = 0;
	struct smp *v = malloc(cap * sizeof(*v));
	lcg_state = 42;
	int checks = 0;
	for (int s = 0; s < secs; s++) {
		uint32_t k = rnd(10) < 2 ? 0 : rnd(6); /* some empty seconds */
		uint64_t t = (uint64_t)s * NS;
		for (uint32_t j = 0; j < k; j++) {
			t += rnd((uint32_t)(NS / 8));
			/* stack 9 only in the first 20 s, so it decays for long */
			uint32_t st = s < 20 && rnd(4) == 0 ? 9 : 1 + rnd(5);
			struct smp x = {t, 1 + rnd(1000), st, rnd(3)};
			if (n == cap)
				v = realloc(v, (cap *= 2) * sizeof(*v));
			v[n++] = x;
			cr_assert_eq(window_add_thread(w, x.t, x.stack, x.thread, x.weight), 0);
		}
		if (s % 7 != 3)
			continue;
		uint64_t now = (uint64_t)s * NS + rnd((uint32_t)NS);
		double before = window_ewma(w, now, &sw);
		for (uint32_t st = 1; st <= 9; st++) {
			double want = brute(v, n, 0, st, now, h);
			if (st > 5 && st != 9)
				cr_assert_eq(weight_of(&sw, st), 0);
			else
				assert_rel(weight_of(&sw, st), want, 1e-9, "stack vs brute force");
		}
		window_thread_ewma(w, now, &tw);
		for (uint32_t th = 0; th < 3; th++)
			assert_rel(weight_of(&tw, th), brute(v, n, 1, th, now, h), 1e-9,
				   "thread vs brute force");
		assert_rel(stack_weights_total(&tw), before, 1e-9, "threads sum to stacks");
		/* evicting buckets does not move the EWMA */
		window_advance(w, now + 3 * NS);
		assert_rel(window_ewma(w, now, &sw), before, 1e-12, "continuity over eviction");
		window_advance(w, now);
		checks++;
	}
	cr_assert_gt(checks, 250);
	struct window_stats st;
	window_stats(w, &st);
	cr_assert_gt(st.evicted, 1000);
	cr_assert_eq(st.dropped, 0);
	free(v);
	stack_weights_free(&sw);
	stack_weights_free(&tw);
	window_free(w);
}

Test(window, halflife_change)
{
	struct stack_weights sw = {0};
	/* Everything still in the ring: recomputed exactly at the new rate. */
	struct window *w = window_new(600);
	window_set_halflife(w, 5);
	for (int s = 0; s < 30; s++)
		window_add(w, (uint64_t)s * NS + NS / 3, 1, (uint64_t)s + 1);
	double sum = 0;
	for (int s = 0; s < 30; s++)
		sum += (s + 1) * exp2(-(29.5 - (s + 1) > 0 ? 29.5 - (s + 1) : 0) / 5);
	assert_rel(window_ewma(w, S(29.5), &sw), sum, 1e-9, "h=5");
	cr_assert_eq(window_set_halflife(w, 2), 0);
	cr_assert_eq(window_halflife(w), 2);
	sum = 0;
	for (int s = 0; s < 30; s++)
		sum += (s + 1) * exp2(-(29.5 - (s + 1) > 0 ? 29.5 - (s + 1) : 0) / 2);
	assert_rel(window_ewma(w, S(29.5), &sw), sum, 1e-9, "h=2");
	cr_assert_eq(window_set_halflife(w, 0), -1);
	cr_assert_eq(window_set_halflife(w, -1), -1);
	cr_assert_eq(window_set_halflife(w, NAN), -1);
	cr_assert_eq(window_set_halflife(w, INFINITY), -1);
	cr_assert_eq(window_halflife(w), 2);
	window_free(w);

	/* With history: bursts at seconds 0 (stack 1, 64) and 2 (stack 2, 32),
	 * ring of 3 s, h = 2; both evicted by 10 s. The newest absorbed bucket
	 * ends at 3 s, where the old-rate EWMA is 64·2^-1 = 32 and 32·2^0 = 32.
	 * Switching to h = 1 makes that decay at the new rate from 3 s. */
	w = window_new(3);
	window_set_halflife(w, 2);
	window_add(w, S(0.5), 1, 64);
	window_add(w, S(2.5), 2, 32);
	window_advance(w, S(10.0));
	assert_rel(window_ewma(w, S(10.0), &sw), 64 * exp2(-9.0 / 2) + 32 * exp2(-7.0 / 2), 1e-12,
		   "h=2 history exact");
	window_set_halflife(w, 1);
	window_ewma(w, S(10.0), &sw);
	assert_rel(weight_of(&sw, 1), 32 * exp2(-7.0), 1e-12, "stack 1 approximated");
	assert_rel(weight_of(&sw, 2), 32 * exp2(-7.0), 1e-12, "stack 2 (exact: ends at 3 s)");
	/* Later buckets enter the history at the new rate. */
	window_add(w, S(20.5), 3, 8);
	window_advance(w, S(30.0));
	window_ewma(w, S(30.0), &sw);
	assert_rel(weight_of(&sw, 3), 8 * exp2(-9.0), 1e-12, "new bucket at new rate");
	assert_rel(weight_of(&sw, 1), 32 * exp2(-27.0), 1e-12, "old history at new rate");
	/* Changing it back and forth with no new evictions is lossless. */
	window_set_halflife(w, 7);
	window_set_halflife(w, 1);
	window_ewma(w, S(30.0), &sw);
	assert_rel(weight_of(&sw, 3), 8 * exp2(-9.0), 1e-12, "round trip");
	stack_weights_free(&sw);
	window_free(w);
}

Test(window, history_prunes_underflowed_stacks)
{
	struct window *w = window_new(4);
	struct stack_weights sw = {0};
	window_set_halflife(w, 0.5);
	window_add(w, S(0.1), 5, 1);
	for (int s = 1; s < 3000; s++)
		window_add(w, (uint64_t)s * NS, 6, 1);
	/* stack 5 decayed by 2^-5998: gone, not kept as a zero entry */
	window_ewma(w, 3000 * NS, &sw);
	cr_assert_eq(sw.n, 1);
	cr_assert_eq(sw.stack[0], 6);
	assert_rel(sw.weight[0], (1 - exp2(-2 * 2999.0)) / (1 - exp2(-2.0)), 1e-9, "stack 6");
	stack_weights_free(&sw);
	window_free(w);
}

Test(window, thread_sliding)
{
	struct window *w = window_new(30);
	struct stack_weights sw = {0};
	for (int s = 0; s < 10; s++) {
		window_add_thread(w, (uint64_t)s * NS, 1, 0, 2);
		window_add_thread(w, (uint64_t)s * NS + 1, 2, 1, 3);
		window_add(w, (uint64_t)s * NS + 2, 2, 100); /* no thread */
	}
	cr_assert_eq(window_thread_sum_last(w, S(9.5), 4, &sw), 20);
	cr_assert_eq(sw.n, 2);
	cr_assert_eq(weight_of(&sw, 0), 8);
	cr_assert_eq(weight_of(&sw, 1), 12);
	cr_assert_eq(window_sum_last(w, S(9.5), 4, &sw), 420);
	cr_assert_eq(weight_of(&sw, 2), 412);
	stack_weights_free(&sw);
	window_free(w);
}

/* ---- memory ---- */

Test(window, memory_flat_over_100k_seconds, .timeout = 100)
{
	struct window *w = window_new(60);
	struct stack_weights sw = {0};
	const int warm = 200, secs = 100000, per_sec = 50;
	size_t before = 0;
	for (int s = 0; s < warm + secs; s++) {
		for (int k = 0; k < per_sec; k++)
			window_add_thread(w, (uint64_t)s * NS + (uint64_t)k * (NS / per_sec),
					  (uint32_t)((s + k) % 40) + 1, (uint32_t)(k % 8),
					  1 + (uint64_t)k);
		if (s % 997 == 0 || s == warm - 1) {
			window_ewma(w, (uint64_t)s * NS, &sw);
			cr_assert_eq(sw.n, 40);
			window_sum_last(w, (uint64_t)s * NS, 60, &sw);
			window_thread_ewma(w, (uint64_t)s * NS, &sw);
		}
		if (s == warm - 1)
			before = window_memory_bytes(w);
	}
	size_t after = window_memory_bytes(w);
	cr_assert_eq(after, before, "memory grew: %zu -> %zu bytes", before, after);
	cr_assert_lt(after, 200000, "bounded: %zu bytes", after);
	/* and the numbers are still right: a stable rate per stack */
	double total = window_sum_last(w, (uint64_t)(warm + secs - 1) * NS, 60, &sw);
	cr_assert_eq(total, 60.0 * (per_sec * (per_sec + 1) / 2));
	struct window_stats st;
	window_stats(w, &st);
	cr_assert_eq(st.evicted, (uint64_t)(warm + secs - 60));
	stack_weights_free(&sw);
	window_free(w);
}

/* ---- flame ---- */

static const struct flame_node *child(const struct flame_tree *t, const struct flame_node *n,
				      const char *name)
{
	for (size_t i = 0; i < n->nchildren; i++) {
		const struct frame *f = frames_get(t->frames, n->children[i]->frame);
		if (f && !strcmp(f->name, name))
			return n->children[i];
	}
	return NULL;
}

Test(window, flame_from_weights)
{
	struct profile *p = profile_new();
	uint32_t m = frames_intern(p->frames, "main", "/bin/x", "x.c", 10, FRAME_USER);
	uint32_t a = frames_intern(p->frames, "a", "/bin/x", "x.c", 20, FRAME_USER);
	uint32_t b1 = frames_intern(p->frames, "b", "/bin/x", "x.c", 30, FRAME_USER);
	uint32_t b2 = frames_intern(p->frames, "b", "/bin/x", "x.c", 31, FRAME_USER);
	uint32_t c = frames_intern(p->frames, "c", "/bin/x", "x.c", 40, FRAME_USER);
	uint32_t s1 = profile_stack_intern(p, (uint32_t[]){m, a, b1}, 3);
	uint32_t s2 = profile_stack_intern(p, (uint32_t[]){m, a, b2}, 3);
	uint32_t s3 = profile_stack_intern(p, (uint32_t[]){m, a}, 2);
	uint32_t s4 = profile_stack_intern(p, (uint32_t[]){m, c}, 2);

	/* through a window, as a live view would */
	struct window *w = window_new(10);
	window_add(w, S(1.0), s1, 24);
	window_add(w, S(1.1), s2, 12);
	window_add(w, S(1.2), s4, 4);
	window_add(w, S(1.3), s3, 1);
	window_add(w, S(1.4), 999999, 50); /* not in the profile: skipped */
	struct stack_weights sw = {0};
	window_sum_last(w, S(1.5), 10, &sw);
	cr_assert_eq(sw.n, 5);

	/* scale 0.5: 12 + 6 + 2 + llround(0.5) = 1 */
	struct flame_tree *t = window_flame(p, &sw, 0.5);
	cr_assert_eq(t->root->total, 21);
	const struct flame_node *nm = child(t, t->root, "main");
	cr_assert_not_null(nm);
	cr_assert_eq(nm->total, 21);
	const struct flame_node *na = child(t, nm, "a");
	cr_assert_eq(na->total, 19);
	cr_assert_eq(na->self, 1);
	cr_assert_eq(na->nchildren, 1, "b at two lines merges into one function");
	const struct flame_node *nb = child(t, na, "b");
	cr_assert_eq(nb->total, 18);
	cr_assert_eq(nb->self, 18);
	cr_assert_eq(child(t, nm, "c")->total, 2);
	flame_free(t);

	/* scale 0.1: stack s3 rounds to 0 and is skipped */
	t = window_flame(p, &sw, 0.1);
	cr_assert_eq(t->root->total, 2 + 1 + 0); /* 2.4 -> 2, 1.2 -> 1, 0.4 -> 0 */
	na = child(t, child(t, t->root, "main"), "a");
	cr_assert_eq(na->self, 0);
	flame_free(t);

	stack_weights_free(&sw);
	window_free(w);
	profile_free(p);
}
