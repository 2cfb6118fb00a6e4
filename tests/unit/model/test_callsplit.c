/* call_split_bound: a call's on-CPU + off-CPU split never exceeds its
 * duration. The samples' estimate (one sampling interval each) is kept when
 * the duration leaves room for it, else the bound (duration less off-CPU
 * time) is shown as such; off-CPU time past the duration is cut. Each case
 * is one worked by hand, the first the one `sonde slow --off-cpu` printed
 * on redis: 2 samples at 999 Hz in a 50.1 ms call off the CPU 50.07 ms. */
#include <criterion/criterion.h>

#include "callsplit.h"

#define US 1000ull
#define MS 1000000ull
#define AT_999HZ (1000000000ull / 999) /* 1.001 ms a sample */

static struct call_split split(uint32_t on_samples, uint64_t off_ns)
{
	return (struct call_split){.on_samples = on_samples, .off_ns = off_ns};
}

Test(callsplit, samples_past_the_duration_give_the_bound)
{
	struct call_split c = split(2, 50070 * US);
	call_split_bound(&c, AT_999HZ, 50100 * US);
	cr_assert(c.on_capped);
	cr_assert_eq(c.on_ns, 30 * US);
	cr_assert_eq(c.off_ns, 50070 * US);
	cr_assert_eq(c.on_ns + c.off_ns, 50100 * US);
	char b[64];
	cr_assert_str_eq(call_split_on_text(&c, b, sizeof(b)), "on-CPU <=30.0us");
}

Test(callsplit, an_estimate_within_the_duration_stays)
{
	struct call_split c = split(3, 2 * MS);
	call_split_bound(&c, MS, 10 * MS);
	cr_assert(!c.on_capped);
	cr_assert_eq(c.on_ns, 3 * MS);
	cr_assert_eq(c.off_ns, 2 * MS);
	char b[64];
	cr_assert_str_eq(call_split_on_text(&c, b, sizeof(b)), "on-CPU ~3.00ms");
}

Test(callsplit, an_estimate_that_fills_the_rest_exactly_is_not_capped)
{
	struct call_split c = split(2, 8 * MS);
	call_split_bound(&c, MS, 10 * MS);
	cr_assert(!c.on_capped);
	cr_assert_eq(c.on_ns, 2 * MS);
}

Test(callsplit, no_samples_is_zero)
{
	struct call_split c = split(0, 10800 * US);
	call_split_bound(&c, AT_999HZ, 11100 * US);
	cr_assert(!c.on_capped);
	cr_assert_eq(c.on_ns, 0);
	char b[64];
	cr_assert_str_eq(call_split_on_text(&c, b, sizeof(b)), "on-CPU ~0ns");
}

Test(callsplit, off_cpu_time_past_the_duration_is_cut)
{
	/* Durations have sonde's own cost taken out; the intervals do not. */
	struct call_split c = split(1, 5 * MS + 7 * US);
	call_split_bound(&c, AT_999HZ, 5 * MS);
	cr_assert_eq(c.off_ns, 5 * MS);
	cr_assert_eq(c.on_ns, 0);
	cr_assert(c.on_capped);
}

Test(callsplit, without_a_sampling_frequency_there_is_no_estimate)
{
	/* -c PERIOD: a sample is not an interval of time. */
	struct call_split c = split(4, 1 * MS);
	call_split_bound(&c, 0, 10 * MS);
	cr_assert_eq(c.on_ns, 0);
	cr_assert(!c.on_capped);
}
