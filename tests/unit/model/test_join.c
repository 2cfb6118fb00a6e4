/* Unit tests for the span <-> sample join (model/join): samples noted in
 * the calls they were taken in, handed over when a call ends, forgotten
 * when its record never comes, kept right across the profile's trims, and
 * bounded with the drop counted. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "join.h"
#include "profile.h"
#include "unitkit.h"

/* A profile of `n` samples 1 us apart; sample i is in call 100 + i / 2
 * (two samples a call), and the odd ones also in call 900 (an outer call
 * that stays open). */
static struct profile *calls_profile(size_t n)
{
	struct profile *p = profile_new();
	uint32_t f[1] = {unit_frame(p, "work", FRAME_USER)};
	uint32_t st = profile_stack_intern(p, f, 1);
	uint32_t th = profile_thread_intern(p, 10, 10, "t");
	for (size_t i = 0; i < n; i++) {
		struct span_link l[2] = {{.span_id = 100 + i / 2, .probe = 0},
					 {.span_id = 900, .probe = 1}};
		struct sample s = {.time_ns = (i + 1) * 1000, .weight = 1, .thread = th, .stack = st};
		cr_assert_eq(profile_add_sample(p, &s, l, i % 2 ? 2 : 1), 0);
	}
	return p;
}

Test(join, take_gives_a_calls_samples_once)
{
	struct profile *p = calls_profile(6);
	struct join *j = join_new(1000);
	for (size_t i = 0; i < p->nsamples; i++)
		join_add_sample(j, p, i, NULL);
	cr_assert_eq(join_calls(j), 4); /* 100, 101, 102 and 900 */
	size_t n;
	const uint32_t *s = join_take(j, 101, &n);
	cr_assert_eq(n, 2);
	cr_assert_eq(s[0], 2);
	cr_assert_eq(s[1], 3);
	cr_assert_null(join_take(j, 101, &n), "taken once");
	cr_assert_eq(n, 0);
	cr_assert_null(join_take(j, 555, &n), "a call with no sample");
	cr_assert_eq(n, 0);
	s = join_take(j, 900, &n);
	cr_assert_eq(n, 3);
	cr_assert_eq(s[0], 1);
	cr_assert_eq(s[1], 3);
	cr_assert_eq(s[2], 5);
	cr_assert_eq(join_calls(j), 2);
	cr_assert_eq(join_dropped(j), 0);
	join_free(j);
	profile_free(p);
}

Test(join, only_the_calls_asked_for)
{
	struct profile *p = calls_profile(6);
	struct join *j = join_new(1000);
	struct hashmap only = {0};
	hashmap_set(&only, 102, 1);
	for (size_t i = 0; i < p->nsamples; i++)
		join_add_sample(j, p, i, &only);
	cr_assert_eq(join_calls(j), 1);
	size_t n;
	const uint32_t *s = join_take(j, 102, &n);
	cr_assert_eq(n, 2);
	cr_assert_eq(s[0], 4);
	cr_assert_eq(s[1], 5);
	hashmap_free(&only);
	join_free(j);
	profile_free(p);
}

/* A call whose first sample is older than the cutoff is forgotten; a
 * trimmed profile's indexes shift, and samples it dropped are not given. */
Test(join, sweep_and_shift_follow_the_profiles_trim)
{
	struct profile *p = calls_profile(8);
	struct join *j = join_new(1000);
	for (size_t i = 0; i < p->nsamples; i++)
		join_add_sample(j, p, i, NULL);
	/* Samples at 1..8 us: calls 100 (1, 2 us) and 900 (from 2 us) begin
	 * before 3 us. */
	cr_assert_eq(join_sweep(j, 3000), 2);
	size_t n;
	cr_assert_null(join_take(j, 100, &n));
	cr_assert_null(join_take(j, 900, &n));
	profile_trim(p, 2, 0, SIZE_MAX);
	join_shift(j, 2);
	const uint32_t *s = join_take(j, 101, &n); /* samples 2 and 3, now 0 and 1 */
	cr_assert_eq(n, 2);
	cr_assert_eq(s[0], 0);
	cr_assert_eq(s[1], 1);
	cr_assert_eq(p->samples[s[1]].time_ns, 4000);
	join_free(j);
	/* A call noted before a shift that dropped some of its samples gives
	 * only those that are left. */
	j = join_new(1000);
	join_add_sample(j, p, 2, NULL); /* call 102's first (5 us) */
	join_add_sample(j, p, 3, NULL); /* and second (6 us) */
	profile_trim(p, 3, 0, SIZE_MAX);
	join_shift(j, 3);
	s = join_take(j, 102, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(s[0], 0);
	cr_assert_eq(p->samples[0].time_ns, 6000);
	cr_assert_eq(join_sweep(j, UINT64_MAX), 1, "call 900 (from 6 us) forgotten");
	cr_assert_eq(join_calls(j), 0);
	join_free(j);
	profile_free(p);
}

Test(join, full_join_counts_what_it_drops)
{
	struct profile *p = calls_profile(6); /* 9 links: 6 + 3 in call 900 */
	struct join *j = join_new(5);
	for (size_t i = 0; i < p->nsamples; i++)
		join_add_sample(j, p, i, NULL);
	cr_assert_eq(join_dropped(j), 4);
	size_t n;
	join_take(j, 100, &n);
	cr_assert_eq(n, 2);
	/* Room again once a call is taken. */
	join_add_sample(j, p, 5, NULL);
	cr_assert_eq(join_dropped(j), 4);
	cr_assert_gt(join_bytes(j), 0);
	join_free(j);
	profile_free(p);
}
