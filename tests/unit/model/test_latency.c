/* latency: exact percentiles, histogram buckets and rows, duration and
 * threshold parsing, and the auto threshold on synthetic distributions
 * generated with a fixed-seed PRNG (so every number below is reproducible). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "latency.h"

/* ---- synthetic data ------------------------------------------------------ */

/* splitmix64: tiny, fixed-seed, good enough for test data. */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double rng_uniform(void)
{
	return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal by Box-Muller. */
static double rng_normal(void)
{
	return sqrt(-2 * log(rng_uniform())) * cos(2 * M_PI * rng_uniform());
}

/* Appends `count` durations log-normally spread around `median_ns`. */
static void add_lognormal(uint64_t *d, size_t *n, size_t count, double median_ns, double sigma)
{
	for (size_t i = 0; i < count; i++)
		d[(*n)++] = (uint64_t)llround(median_ns * exp(sigma * rng_normal()));
}

static void add_exponential(uint64_t *d, size_t *n, size_t count, double mean_ns)
{
	for (size_t i = 0; i < count; i++)
		d[(*n)++] = (uint64_t)llround(-mean_ns * log(rng_uniform()));
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void sort_u64(uint64_t *d, size_t n)
{
	qsort(d, n, sizeof(*d), compare_u64);
}

#define US 1000.0
#define MS 1000000.0

static void assert_near(double got, double want, double tolerance, const char *what)
{
	cr_assert(fabs(got - want) <= tolerance, "%s: got %g, want %g +- %g", what, got, want,
		  tolerance);
}

static void assert_within_pct(uint64_t got, double want, double pct, const char *what)
{
	cr_assert(fabs((double)got - want) <= want * pct / 100, "%s: got %llu, want %g +- %g%%", what,
		  (unsigned long long)got, want, pct);
}

/* ---- percentiles and summary ---------------------------------------------- */

Test(latency, percentile_nearest_rank_on_1_to_100)
{
	uint64_t d[100];
	for (int i = 0; i < 100; i++)
		d[i] = (uint64_t)i + 1;
	cr_assert_eq(latency_percentile(d, 100, 50), 50);
	cr_assert_eq(latency_percentile(d, 100, 90), 90);
	cr_assert_eq(latency_percentile(d, 100, 95), 95);
	cr_assert_eq(latency_percentile(d, 100, 99), 99);
	cr_assert_eq(latency_percentile(d, 100, 99.9), 100);
	cr_assert_eq(latency_percentile(d, 100, 100), 100);
	cr_assert_eq(latency_percentile(d, 100, 1), 1);
	cr_assert_eq(latency_percentile(d, 100, 0.5), 1);
	cr_assert_eq(latency_percentile(d, 100, 50.1), 51);
}

Test(latency, percentile_small_arrays)
{
	uint64_t four[] = {10, 20, 30, 40};
	cr_assert_eq(latency_percentile(four, 4, 25), 10);
	cr_assert_eq(latency_percentile(four, 4, 50), 20);
	cr_assert_eq(latency_percentile(four, 4, 51), 30);
	cr_assert_eq(latency_percentile(four, 4, 75), 30);
	cr_assert_eq(latency_percentile(four, 4, 76), 40);

	uint64_t one[] = {777};
	cr_assert_eq(latency_percentile(one, 1, 50), 777);
	cr_assert_eq(latency_percentile(one, 1, 99.9), 777);
	cr_assert_eq(latency_percentile(NULL, 0, 95), 0);
}

Test(latency, percentile_p999_of_1000_values_is_rank_999)
{
	static uint64_t d[1000];
	for (int i = 0; i < 1000; i++)
		d[i] = (uint64_t)i + 1;
	cr_assert_eq(latency_percentile(d, 1000, 99.9), 999);
	cr_assert_eq(latency_percentile(d, 1000, 99.95), 1000);
}

Test(latency, compute_sorts_and_summarises)
{
	uint64_t d[] = {50, 10, 40, 20, 30};
	struct latency_stats s;
	latency_compute(d, 5, &s);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(d[i], (uint64_t)(i + 1) * 10, "not sorted at %d", i);
	cr_assert_eq(s.count, 5);
	cr_assert_float_eq(s.mean_ns, 30.0, 1e-9);
	cr_assert_eq(s.min_ns, 10);
	cr_assert_eq(s.max_ns, 50);
	cr_assert_eq(s.p50_ns, 30);
	cr_assert_eq(s.p90_ns, 50);
	cr_assert_eq(s.p95_ns, 50);
	cr_assert_eq(s.p99_ns, 50);
	cr_assert_eq(s.p999_ns, 50);
}

Test(latency, compute_1_to_100_percentiles)
{
	uint64_t d[100];
	for (int i = 0; i < 100; i++)
		d[i] = 100 - (uint64_t)i;
	struct latency_stats s;
	latency_compute(d, 100, &s);
	cr_assert_float_eq(s.mean_ns, 50.5, 1e-9);
	cr_assert_eq(s.p50_ns, 50);
	cr_assert_eq(s.p90_ns, 90);
	cr_assert_eq(s.p95_ns, 95);
	cr_assert_eq(s.p99_ns, 99);
	cr_assert_eq(s.p999_ns, 100);
}

Test(latency, compute_empty_is_all_zeros)
{
	struct latency_stats s;
	memset(&s, 0xab, sizeof(s));
	latency_compute(NULL, 0, &s);
	cr_assert_eq(s.count, 0);
	cr_assert_eq(s.mean_ns, 0);
	cr_assert_eq(s.min_ns, 0);
	cr_assert_eq(s.max_ns, 0);
	cr_assert_eq(s.p50_ns, 0);
	cr_assert_eq(s.p999_ns, 0);
}

Test(latency, compute_mean_does_not_overflow)
{
	uint64_t d[] = {UINT64_MAX, UINT64_MAX};
	struct latency_stats s;
	latency_compute(d, 2, &s);
	cr_assert_float_eq(s.mean_ns, 18446744073709551615.0, 1e4);
}

/* ---- histogram ------------------------------------------------------------- */

Test(latency, hist_bucket_boundaries)
{
	cr_assert_eq(latency_hist_bucket(0), 0);
	cr_assert_eq(latency_hist_bucket(1), 0);
	cr_assert_eq(latency_hist_bucket(2), 1);
	cr_assert_eq(latency_hist_bucket(3), 1);
	cr_assert_eq(latency_hist_bucket(4), 2);
	cr_assert_eq(latency_hist_bucket(1023), 9);
	cr_assert_eq(latency_hist_bucket(1024), 10);
	cr_assert_eq(latency_hist_bucket(UINT64_MAX), 63);
	cr_assert_eq(latency_hist_bucket(1ULL << 63), 63);
}

Test(latency, hist_add_counts_and_saturates)
{
	struct latency_hist h = {0};
	latency_hist_add(&h, 1500, 3);
	latency_hist_add(&h, 2047, 2);
	latency_hist_add(&h, 0, 1);
	cr_assert_eq(h.buckets[10], 5);
	cr_assert_eq(h.buckets[0], 1);
	latency_hist_add(&h, 5, UINT64_MAX);
	latency_hist_add(&h, 5, 10);
	cr_assert_eq(h.buckets[2], UINT64_MAX);
}

static char *print_hist(const struct latency_hist *h, int width)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	cr_assert_not_null(f);
	latency_hist_print(f, h, width);
	fclose(f);
	return buf;
}

Test(latency, hist_print_rows_units_and_bars)
{
	struct latency_hist h = {0};
	latency_hist_add(&h, 1500, 3);     /* bucket 10: [1024, 2048) */
	latency_hist_add(&h, 5000, 1);     /* bucket 12 */
	latency_hist_add(&h, 2000000, 40); /* bucket 20: [2^20, 2^21) */
	char *text = print_hist(&h, 10);
	const char *want = "  1.02us -> 2.05us :  3 |*         |\n"
			   "  2.05us -> 4.10us :  0 |          |\n"
			   "  4.10us -> 8.19us :  1 |*         |\n"
			   "  8.19us -> 16.4us :  0 |          |\n"
			   "  16.4us -> 32.8us :  0 |          |\n"
			   "  32.8us -> 65.5us :  0 |          |\n"
			   "  65.5us -> 131us  :  0 |          |\n"
			   "   131us -> 262us  :  0 |          |\n"
			   "   262us -> 524us  :  0 |          |\n"
			   "   524us -> 1.05ms :  0 |          |\n"
			   "  1.05ms -> 2.10ms : 40 |**********|\n";
	cr_assert_str_eq(text, want);
	free(text);
}

Test(latency, hist_print_scales_bars_and_covers_the_extremes)
{
	struct latency_hist h = {0};
	latency_hist_add(&h, 0, 4);
	latency_hist_add(&h, 3, 8);
	char *text = print_hist(&h, 4);
	cr_assert_str_eq(text, "  0ns -> 2ns : 4 |**  |\n"
			       "  2ns -> 4ns : 8 |****|\n");
	free(text);

	struct latency_hist top = {0};
	latency_hist_add(&top, UINT64_MAX, 1);
	text = print_hist(&top, 0);
	cr_assert_str_eq(text, "  9223372037s -> 18446744074s : 1\n");
	free(text);

	struct latency_hist empty = {0};
	text = print_hist(&empty, 40);
	cr_assert_str_eq(text, "");
	free(text);
}

/* ---- durations -------------------------------------------------------------- */

static uint64_t parse_ok(const char *s)
{
	uint64_t ns = 0;
	char err[160] = "";
	cr_assert_eq(duration_parse(s, &ns, err, sizeof(err)), 0, "'%s' rejected: %s", s, err);
	return ns;
}

static void parse_rejects(const char *s, const char *hint)
{
	uint64_t ns = 12345;
	char err[160] = "";
	cr_assert_eq(duration_parse(s, &ns, err, sizeof(err)), -1, "'%s' accepted", s);
	char quoted[64];
	snprintf(quoted, sizeof(quoted), "bad duration '%s'", s);
	cr_assert(strstr(err, quoted), "error for '%s' is '%s'", s, err);
	cr_assert(strstr(err, hint), "error for '%s' lacks '%s': '%s'", s, hint, err);
	cr_assert_null(strchr(err, '\n'));
}

Test(latency, duration_parse_exact_values)
{
	cr_assert_eq(parse_ok("750us"), 750000);
	cr_assert_eq(parse_ok("5ms"), 5000000);
	cr_assert_eq(parse_ok("1.5s"), 1500000000);
	cr_assert_eq(parse_ok("200ns"), 200);
	cr_assert_eq(parse_ok("0.5us"), 500);
	cr_assert_eq(parse_ok("0.1ms"), 100000);
	cr_assert_eq(parse_ok(".25ms"), 250000);
	cr_assert_eq(parse_ok("3\xc2\xb5s"), 3000); /* µs */
	cr_assert_eq(parse_ok("3\xce\xbcs"), 3000); /* μs */
	cr_assert_eq(parse_ok("0ns"), 0);
	cr_assert_eq(parse_ok("1.0000000005s"), 1000000001); /* half a ns rounds up */
	cr_assert_eq(parse_ok("1.4ns"), 1);
	cr_assert_eq(parse_ok("18446744073.709551615s"), UINT64_MAX);
}

Test(latency, duration_parse_rejects_with_one_line)
{
	parse_rejects("5", "use a number with ns, us, ms or s, e.g. 750us");
	parse_rejects("ms", "use a number with ns, us, ms or s");
	parse_rejects("5x", "use a number with ns, us, ms or s");
	parse_rejects("1e400s", "use a number with ns, us, ms or s");
	parse_rejects("nans", "use a number with ns, us, ms or s");
	parse_rejects("", "use a number with ns, us, ms or s");
	parse_rejects("5.ms", "use a number");
	parse_rejects("5 ms", "use a number");
	parse_rejects("5MS", "use a number");
	parse_rejects("-1ms", "cannot be negative");
	parse_rejects("18446744073.709551616s", "too large");
	parse_rejects("99999999999999999999999ns", "too large");
}

Test(latency, duration_parse_null_err_is_fine)
{
	uint64_t ns;
	cr_assert_eq(duration_parse("bogus", &ns, NULL, 0), -1);
	cr_assert_eq(duration_parse(NULL, &ns, NULL, 0), -1);
}

static void format_is(uint64_t ns, const char *want)
{
	char buf[32];
	cr_assert_str_eq(duration_format(ns, buf, sizeof(buf)), want, "format of %llu",
			 (unsigned long long)ns);
}

Test(latency, duration_format_three_significant_digits)
{
	format_is(0, "0ns");
	format_is(812, "812ns");
	format_is(999, "999ns");
	format_is(1000, "1.00us");
	format_is(3250, "3.25us");
	format_is(14100000, "14.1ms");
	format_is(1500000000, "1.50s");
	format_is(999499, "999us");
	format_is(999500, "1.00ms"); /* not "1000us" */
	format_is(99960, "100us");   /* not "100.0us" */
	format_is(9996, "10.0us");   /* not "10.00us" */
	format_is(3600000000000ULL, "3600s");
}

/* ---- thresholds ------------------------------------------------------------- */

static struct threshold threshold_ok(const char *s)
{
	struct threshold t;
	char err[200] = "";
	cr_assert_eq(threshold_parse(s, &t, err, sizeof(err)), 0, "'%s' rejected: %s", s ? s : "NULL",
		     err);
	return t;
}

static void threshold_rejects(const char *s, const char *hint)
{
	struct threshold t;
	char err[200] = "";
	cr_assert_eq(threshold_parse(s, &t, err, sizeof(err)), -1, "'%s' accepted", s);
	cr_assert(strstr(err, s), "error for '%s' does not quote it: '%s'", s, err);
	cr_assert(strstr(err, hint), "error for '%s' lacks '%s': '%s'", s, hint, err);
	cr_assert_null(strchr(err, '\n'));
}

Test(latency, threshold_parse_accepted_forms)
{
	struct threshold t = threshold_ok("p95");
	cr_assert_eq(t.kind, THRESHOLD_PERCENTILE);
	cr_assert_eq(t.percentile, 95.0);
	t = threshold_ok("p99.9");
	cr_assert_eq(t.kind, THRESHOLD_PERCENTILE);
	cr_assert_eq(t.percentile, 99.9);
	cr_assert_eq(threshold_ok("p50").percentile, 50.0);
	cr_assert_eq(threshold_ok("p99.99").percentile, 99.99);
	cr_assert_eq(threshold_ok("p0.5").percentile, 0.5);
	cr_assert_eq(threshold_ok("auto").kind, THRESHOLD_AUTO);
	t = threshold_ok("750us");
	cr_assert_eq(t.kind, THRESHOLD_ABSOLUTE);
	cr_assert_eq(t.ns, 750000);
	cr_assert_eq(threshold_ok("1.5s").ns, 1500000000);
	t = threshold_ok(NULL);
	cr_assert_eq(t.kind, THRESHOLD_PERCENTILE);
	cr_assert_eq(t.percentile, 95.0);
	cr_assert_eq(threshold_ok("").percentile, 95.0);
}

Test(latency, threshold_parse_rejects_with_the_accepted_forms)
{
	const char *forms = "use a percentile (p95, p99.9), a duration (750us, 5ms, 1.5s) or auto";
	threshold_rejects("p0", "must be above p0 and below p100");
	threshold_rejects("p100", "must be above p0 and below p100");
	threshold_rejects("p100.5", "must be above p0 and below p100");
	threshold_rejects("pfoo", forms);
	threshold_rejects("p", forms);
	threshold_rejects("p-5", forms);
	threshold_rejects("p95%", forms);
	threshold_rejects("q95", forms);
	threshold_rejects("5", forms);
	threshold_rejects("AUTO", forms);
}

static void threshold_round_trips(const char *text)
{
	struct threshold t = threshold_ok(text), back;
	char buf[40];
	cr_assert_str_eq(threshold_format(&t, buf, sizeof(buf)), text);
	back = threshold_ok(buf);
	cr_assert_eq(back.kind, t.kind);
	cr_assert_eq(back.percentile, t.percentile);
	cr_assert_eq(back.ns, t.ns);
}

Test(latency, threshold_format_is_canonical_and_exact)
{
	threshold_round_trips("p95");
	threshold_round_trips("p90"); /* not "p9e+01" */
	threshold_round_trips("p50");
	threshold_round_trips("p10");
	threshold_round_trips("p0.5");
	threshold_round_trips("p99.9");
	threshold_round_trips("p99.99");
	threshold_round_trips("auto");
	threshold_round_trips("750us");
	threshold_round_trips("5ms");
	threshold_round_trips("1.5s");
	threshold_round_trips("999ns");
	threshold_round_trips("1.234567ms");

	struct threshold t = {.kind = THRESHOLD_ABSOLUTE, .ns = 1500000};
	char buf[40];
	cr_assert_str_eq(threshold_format(&t, buf, sizeof(buf)), "1.5ms");
	t.ns = 1000000001;
	cr_assert_str_eq(threshold_format(&t, buf, sizeof(buf)), "1.000000001s");
	t.ns = 0;
	cr_assert_str_eq(threshold_format(&t, buf, sizeof(buf)), "0ns");
}

/* ---- auto threshold ------------------------------------------------------------ */

static uint64_t *data;
static size_t ndata;

static void data_setup(void)
{
	data = malloc(1100000 * sizeof(*data));
	ndata = 0;
}

static void data_teardown(void)
{
	free(data);
}

/* "4.2us 74.0%, 5.0us 20.1%, ...": the modes, for failure messages. */
static const char *modes_text(const struct latency_modes *m)
{
	static char text[512];
	size_t off = 0;
	text[0] = 0;
	for (size_t i = 0; i < m->nmodes && off < sizeof(text); i++) {
		char ns[32];
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%s%s %.1f%%", i ? ", " : "",
					duration_format(m->modes[i].ns, ns, sizeof(ns)),
					100 * m->modes[i].share);
	}
	return text;
}

/* The modes a reason names ("at 1.20us (65.0%") are listed modes, as
 * listed. */
static void assert_reason_names_modes(const struct latency_modes *m)
{
	static const char *const cues[] = {"the main mode at ", "the slow one at "};
	for (size_t c = 0; c < 2; c++) {
		const char *at = strstr(m->reason, cues[c]);
		if (!at)
			continue;
		at += strlen(cues[c]);
		bool listed = false;
		for (size_t i = 0; i < m->nmodes && !listed; i++) {
			char ns[32], want[64];
			snprintf(want, sizeof(want), "%s (%.1f%%",
				 duration_format(m->modes[i].ns, ns, sizeof(ns)), 100 * m->modes[i].share);
			listed = strncmp(at, want, strlen(want)) == 0;
		}
		cr_assert(listed, "'%s' names a mode not in %s", m->reason, modes_text(m));
	}
}

static double share_sum(const struct latency_modes *m)
{
	double sum = 0;
	for (size_t i = 0; i < m->nmodes; i++)
		sum += m->modes[i].share;
	return sum;
}

Test(latency, auto_finds_the_valley_between_two_modes, .init = data_setup, .fini = data_teardown)
{
	rng_state = 42;
	add_lognormal(data, &ndata, 9000, 100 * US, 0.2);
	add_lognormal(data, &ndata, 1000, 5 * MS, 0.2);
	sort_u64(data, ndata);

	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), 0, "%s", m.reason);
	cr_assert(m.found);
	cr_assert_eq(m.nmodes, 2, "%zu modes: %s", m.nmodes, m.reason);
	assert_near(m.modes[0].share, 0.9, 0.03, "fast share");
	assert_near(m.modes[1].share, 0.1, 0.03, "slow share");
	assert_near(share_sum(&m), 1.0, 1e-9, "shares");
	assert_within_pct(m.modes[0].ns, 100 * US, 15, "fast mode");
	assert_within_pct(m.modes[1].ns, 5 * MS, 15, "slow mode");
	cr_assert(m.threshold_ns > 200 * US && m.threshold_ns < 2.5 * MS, "threshold %llu",
		  (unsigned long long)m.threshold_ns);
	/* basins tile the data: first from the minimum, last past the maximum */
	cr_assert_eq(m.modes[0].lo_ns, data[0]);
	cr_assert_eq(m.modes[0].hi_ns, m.modes[1].lo_ns);
	cr_assert_eq(m.modes[1].hi_ns, data[ndata - 1] + 1);
	cr_assert(strncmp(m.reason, "between the main mode at ", 25) == 0, "%s", m.reason);

	struct threshold t = {.kind = THRESHOLD_AUTO};
	struct latency_modes again;
	cr_assert_eq(threshold_resolve(&t, data, ndata, &again), m.threshold_ns);
	cr_assert(again.found);
	cr_assert_eq(threshold_resolve(&t, data, ndata, NULL), m.threshold_ns);
}

Test(latency, auto_finds_a_slow_mode_of_two_percent, .init = data_setup, .fini = data_teardown)
{
	rng_state = 7;
	add_lognormal(data, &ndata, 9800, 40 * US, 0.3);
	add_lognormal(data, &ndata, 200, 2 * MS, 0.3);
	sort_u64(data, ndata);

	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), 0, "%s", m.reason);
	cr_assert_eq(m.nmodes, 2);
	assert_near(m.modes[1].share, 0.02, 0.005, "slow share");
	cr_assert(m.threshold_ns > 100 * US && m.threshold_ns < 1 * MS, "threshold %llu",
		  (unsigned long long)m.threshold_ns);
}

/* Fast calls split into near modes (trap jitter on a virtual machine gave
 * 4.0 and 4.9 us, plus a little one at 6.7 us) are one cluster: the
 * threshold goes before the real slow mode, not between the near ones
 * (regression: it fell at 4.2 us, so "slow calls" were the 4.9 us ones). */
Test(latency, auto_near_fast_modes_are_one_cluster, .init = data_setup, .fini = data_teardown)
{
	rng_state = 11;
	add_lognormal(data, &ndata, 55000, 4.0 * US, 0.04);
	add_lognormal(data, &ndata, 42000, 4.9 * US, 0.04);
	add_lognormal(data, &ndata, 1500, 6.7 * US, 0.05);
	add_lognormal(data, &ndata, 1100, 62 * US, 0.05);
	sort_u64(data, ndata);

	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), 0, "%s", m.reason);
	cr_assert(m.nmodes >= 3, "%zu modes: %s", m.nmodes, m.reason);
	cr_assert(m.threshold_ns > 8 * US && m.threshold_ns < 50 * US, "threshold %llu: %s",
		  (unsigned long long)m.threshold_ns, m.reason);
}

/* Fast calls lengthened by interrupts and trap jitter on a busy virtual
 * machine make humps at 2-4x the main mode, each holding more calls than
 * the real slow mode (1%, 13x), with shallow valleys between them: the
 * threshold goes in the clear gap before the slow mode (regression: the
 * largest hump above the main cluster was taken for the slow mode and the
 * threshold fell at 7 us, so `--slow auto` showed 55-75% of the slow
 * function where the gap gives 90%). */
Test(latency, auto_humps_of_lengthened_fast_calls_are_not_the_slow_mode, .init = data_setup,
     .fini = data_teardown)
{
	rng_state = 21;
	add_lognormal(data, &ndata, 74000, 4.2 * US, 0.04);
	add_lognormal(data, &ndata, 20000, 5.0 * US, 0.05);
	add_lognormal(data, &ndata, 2700, 6.1 * US, 0.06);
	add_lognormal(data, &ndata, 1500, 12 * US, 0.15);
	add_lognormal(data, &ndata, 1000, 21 * US, 0.2);
	add_lognormal(data, &ndata, 1100, 63 * US, 0.05);
	sort_u64(data, ndata);

	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), 0, "%s", m.reason);
	cr_assert(m.threshold_ns > 35 * US && m.threshold_ns < 55 * US, "threshold %llu: %s; modes %s",
		  (unsigned long long)m.threshold_ns, m.reason, modes_text(&m));
	cr_assert(strstr(m.reason, "slow one at 6"), "%s", m.reason);
}

/* A slow mode that holds far more calls than anything above it is the slow
 * mode, even when a small far hump (slow calls that were also preempted)
 * lies beyond an emptier gap: the threshold goes before the slow mode, not
 * in that gap (which would count the slow calls as fast). */
Test(latency, auto_small_far_hump_stays_on_the_slow_side, .init = data_setup,
     .fini = data_teardown)
{
	rng_state = 77;
	add_lognormal(data, &ndata, 8800, 100 * US, 0.2);
	add_lognormal(data, &ndata, 200, 400 * US, 0.6); /* preempted fast calls in the gap */
	add_lognormal(data, &ndata, 1000, 2 * MS, 0.15);
	add_lognormal(data, &ndata, 150, 50 * MS, 0.1);
	sort_u64(data, ndata);
	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), 0, "%s", m.reason);
	cr_assert(m.threshold_ns > 500 * US && m.threshold_ns < 1.5 * MS, "threshold %llu: %s",
		  (unsigned long long)m.threshold_ns, m.reason);
	cr_assert(strstr(m.reason, "the slow one at 1.9"), "%s", m.reason);
}

Test(latency, auto_unimodal_falls_back_to_p95, .init = data_setup, .fini = data_teardown)
{
	for (uint64_t seed = 1; seed <= 5; seed++) {
		rng_state = seed;
		ndata = 0;
		add_lognormal(data, &ndata, 10000, 1 * MS, 0.3 + 0.1 * (double)seed);
		sort_u64(data, ndata);

		struct latency_modes m;
		cr_assert_eq(latency_auto_threshold(data, ndata, &m), -1, "seed %llu: %s",
			     (unsigned long long)seed, m.reason);
		cr_assert_not(m.found);
		cr_assert_eq(m.nmodes, 1);
		cr_assert(strncmp(m.reason, "unimodal: one mode at ", 22) == 0, "%s", m.reason);
		assert_within_pct(m.modes[0].ns, 1 * MS, 10, "mode");
		assert_near(m.modes[0].share, 1.0, 1e-9, "share");

		struct threshold t = {.kind = THRESHOLD_AUTO};
		struct latency_modes out;
		cr_assert_eq(threshold_resolve(&t, data, ndata, &out), latency_percentile(data, ndata, 95));
		cr_assert_not(out.found);
		cr_assert_str_eq(out.reason, m.reason);
	}
}

Test(latency, auto_exponential_service_times_are_unimodal, .init = data_setup,
     .fini = data_teardown)
{
	rng_state = 3;
	add_exponential(data, &ndata, 20000, 250 * US);
	sort_u64(data, ndata);
	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), -1, "%s", m.reason);
	cr_assert_eq(m.nmodes, 1, "%s", m.reason);
}

Test(latency, auto_all_equal_is_unimodal)
{
	uint64_t d[100];
	for (int i = 0; i < 100; i++)
		d[i] = 1200000;
	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(d, 100, &m), -1);
	cr_assert_str_eq(m.reason, "unimodal: one mode at 1.20ms");
	cr_assert_eq(m.nmodes, 1);
	assert_within_pct(m.modes[0].ns, 1200000, 1, "mode");
}

/* Calls sonde's correction brought to 0 ns (or 1) are no mode of their own:
 * they join the mode above, and the threshold goes before the slow calls,
 * not among the nanoseconds (regression: malloc's "modes: 1ns (75.4% of
 * calls)", "auto threshold 11ns"). */
Test(latency, auto_calls_corrected_to_zero_join_the_mode_above, .init = data_setup,
     .fini = data_teardown)
{
	rng_state = 17;
	for (int i = 0; i < 6000; i++)
		data[ndata++] = (uint64_t)(i % 2);
	add_lognormal(data, &ndata, 3000, 200, 0.1);
	add_lognormal(data, &ndata, 1000, 1 * MS, 0.1);
	sort_u64(data, ndata);
	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), 0, "%s", m.reason);
	cr_assert_eq(m.nmodes, 2, "%s; modes %s", m.reason, modes_text(&m));
	cr_assert_eq(m.modes[0].lo_ns, 0);
	assert_near(m.modes[0].share, 0.9, 0.01, "fast share");
	cr_assert(m.threshold_ns > 400 && m.threshold_ns < 500 * US, "threshold %llu: %s",
		  (unsigned long long)m.threshold_ns, m.reason);
	assert_reason_names_modes(&m);
}

/* Modes less than 2x apart are sub-modes of one kind of call: with a slow
 * mode farther away, the threshold goes before it, not between them. */
Test(latency, auto_sub_modes_within_2x_stay_together, .init = data_setup, .fini = data_teardown)
{
	rng_state = 23;
	add_lognormal(data, &ndata, 14000, 1 * US, 0.05);
	add_lognormal(data, &ndata, 5000, 1.6 * US, 0.05);
	add_lognormal(data, &ndata, 1000, 20 * US, 0.1);
	sort_u64(data, ndata);
	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), 0, "%s", m.reason);
	cr_assert_eq(m.nmodes, 3, "%s; modes %s", m.reason, modes_text(&m));
	cr_assert(m.threshold_ns > 2 * US && m.threshold_ns < 15 * US, "threshold %llu: %s",
		  (unsigned long long)m.threshold_ns, m.reason);
	cr_assert_null(strstr(m.reason, "less than 2x apart"), "%s", m.reason);
	assert_reason_names_modes(&m);
}

/* ... and only when nothing else is there, between them, saying so. */
Test(latency, auto_sub_modes_split_when_no_mode_is_farther, .init = data_setup,
     .fini = data_teardown)
{
	rng_state = 29;
	add_lognormal(data, &ndata, 15000, 1 * US, 0.05);
	add_lognormal(data, &ndata, 5000, 1.6 * US, 0.05);
	sort_u64(data, ndata);
	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), 0, "%s", m.reason);
	cr_assert(m.threshold_ns > 1.1 * US && m.threshold_ns < 1.5 * US, "threshold %llu: %s",
		  (unsigned long long)m.threshold_ns, m.reason);
	cr_assert(strstr(m.reason, "less than 2x apart: no mode farther"), "%s", m.reason);
	assert_reason_names_modes(&m);
}

/* A rare far tail (0.3% of the calls, 1000x slower) is a mode, and the
 * threshold separates it. */
Test(latency, auto_rare_far_tail_is_separated, .init = data_setup, .fini = data_teardown)
{
	rng_state = 31;
	add_lognormal(data, &ndata, 100000, 1 * US, 0.3);
	add_lognormal(data, &ndata, 300, 1 * MS, 0.2);
	sort_u64(data, ndata);
	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), 0, "%s", m.reason);
	cr_assert(m.threshold_ns > 5 * US && m.threshold_ns < 500 * US, "threshold %llu: %s",
		  (unsigned long long)m.threshold_ns, m.reason);
	assert_near(m.modes[m.nmodes - 1].share, 0.003, 0.0005, "tail share");
	assert_reason_names_modes(&m);
}

/* The shape redis-server showed under SET/GET with LRANGE at once: the main
 * mode with sub-modes up to 1.95x above it, and the LRANGE calls at 14 us.
 * The threshold separates LRANGE (regression: it fell at 471 ns, between
 * the main mode and its 489 ns sub-mode). */
Test(latency, auto_redis_set_get_with_lrange, .init = data_setup, .fini = data_teardown)
{
	rng_state = 37;
	add_lognormal(data, &ndata, 65000, 251, 0.05);
	add_lognormal(data, &ndata, 12000, 295, 0.05);
	add_lognormal(data, &ndata, 8000, 409, 0.05);
	add_lognormal(data, &ndata, 4000, 489, 0.05);
	add_lognormal(data, &ndata, 11000, 14 * US, 0.1);
	sort_u64(data, ndata);
	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), 0, "%s", m.reason);
	cr_assert(m.threshold_ns > 1 * US && m.threshold_ns < 10 * US, "threshold %llu: %s; modes %s",
		  (unsigned long long)m.threshold_ns, m.reason, modes_text(&m));
	cr_assert(strstr(m.reason, "the slow one at 14"), "%s", m.reason);
	assert_reason_names_modes(&m);
}

Test(latency, auto_too_few_calls)
{
	uint64_t d[] = {1, 2, 3, 1000, 2000};
	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(d, 5, &m), -1);
	cr_assert_str_eq(m.reason, "too few calls (5) to find modes; need at least 50");
	cr_assert_eq(latency_auto_threshold(NULL, 0, &m), -1);

	struct threshold t = {.kind = THRESHOLD_AUTO};
	cr_assert_eq(threshold_resolve(&t, d, 5, NULL), 2000);
	cr_assert_eq(threshold_resolve(&t, NULL, 0, NULL), 0);
}

Test(latency, auto_main_mode_slowest_has_no_threshold, .init = data_setup, .fini = data_teardown)
{
	rng_state = 11;
	add_lognormal(data, &ndata, 2000, 20 * US, 0.2);
	add_lognormal(data, &ndata, 8000, 1 * MS, 0.2);
	sort_u64(data, ndata);
	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), -1);
	cr_assert_eq(m.nmodes, 2);
	cr_assert(strstr(m.reason, "no mode slower than the main mode at "), "%s", m.reason);
	struct threshold t = {.kind = THRESHOLD_AUTO};
	cr_assert_eq(threshold_resolve(&t, data, ndata, NULL), latency_percentile(data, ndata, 95));
}

/* Trimodal, with every gap empty: the threshold goes in the gap right above
 * the main mode, so the small medium mode counts as slow with the slow one. */
Test(latency, auto_trimodal_separated_modes_cut_above_the_main, .init = data_setup,
     .fini = data_teardown)
{
	rng_state = 5;
	add_lognormal(data, &ndata, 8500, 100 * US, 0.2);
	add_lognormal(data, &ndata, 400, 1 * MS, 0.2);
	add_lognormal(data, &ndata, 1100, 10 * MS, 0.2);
	sort_u64(data, ndata);

	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), 0, "%s", m.reason);
	cr_assert_eq(m.nmodes, 3, "%s", m.reason);
	assert_near(m.modes[0].share, 0.85, 0.02, "main share");
	assert_near(m.modes[1].share, 0.04, 0.01, "medium share");
	assert_near(m.modes[2].share, 0.11, 0.02, "slow share");
	assert_within_pct(m.modes[1].ns, 1 * MS, 15, "medium mode");
	cr_assert(m.threshold_ns > 220 * US && m.threshold_ns < 600 * US, "threshold %llu",
		  (unsigned long long)m.threshold_ns);
}

/* Trimodal, with the medium mode near the main one: the deepest valley is
 * the wide gap below the slow mode, so the medium mode counts as normal. */
Test(latency, auto_trimodal_near_medium_mode_stays_normal, .init = data_setup,
     .fini = data_teardown)
{
	rng_state = 9;
	add_lognormal(data, &ndata, 8000, 100 * US, 0.2);
	add_lognormal(data, &ndata, 800, 300 * US, 0.2);
	add_lognormal(data, &ndata, 1200, 5 * MS, 0.2);
	sort_u64(data, ndata);

	struct latency_modes m;
	cr_assert_eq(latency_auto_threshold(data, ndata, &m), 0, "%s", m.reason);
	cr_assert_eq(m.nmodes, 3, "%s", m.reason);
	assert_within_pct(m.modes[1].ns, 300 * US, 15, "medium mode");
	cr_assert(m.threshold_ns > 600 * US && m.threshold_ns < 2.5 * MS, "threshold %llu",
		  (unsigned long long)m.threshold_ns);
}

Test(latency, auto_a_million_calls_is_fast, .init = data_setup, .fini = data_teardown)
{
	rng_state = 1234;
	add_lognormal(data, &ndata, 900000, 100 * US, 0.2);
	add_lognormal(data, &ndata, 100000, 5 * MS, 0.2);
	sort_u64(data, ndata);

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct latency_modes m;
	int rc = latency_auto_threshold(data, ndata, &m);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	cr_assert_eq(rc, 0, "%s", m.reason);
	cr_assert_eq(m.nmodes, 2);
	assert_near(m.modes[1].share, 0.1, 0.01, "slow share");
	cr_assert(m.threshold_ns > 200 * US && m.threshold_ns < 2.5 * MS);
	cr_assert(seconds < 1.0, "took %.3f s", seconds);
}

Test(latency, resolve_percentile_and_absolute)
{
	uint64_t d[100];
	for (int i = 0; i < 100; i++)
		d[i] = (uint64_t)i + 1;
	struct threshold p99 = {.kind = THRESHOLD_PERCENTILE, .percentile = 99};
	struct threshold abs = {.kind = THRESHOLD_ABSOLUTE, .ns = 42};
	struct latency_modes m;
	memset(&m, 0xab, sizeof(m));
	cr_assert_eq(threshold_resolve(&p99, d, 100, &m), 99);
	cr_assert_eq(m.nmodes, 0);
	cr_assert_not(m.found);
	cr_assert_eq(threshold_resolve(&abs, d, 100, NULL), 42);
	cr_assert_eq(threshold_resolve(&abs, NULL, 0, NULL), 42);
}

/* ---- log-linear histogram ------------------------------------------------- */

Test(latency, loglin_buckets_cover_every_value_once)
{
	/* Every bucket's [lo, hi) holds exactly the values mapped to it, and
	 * buckets are contiguous and at most 1/16 of their start wide. */
	uint64_t prev_hi = 0;
	for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++) {
		uint64_t lo, hi;
		latency_loglin_bounds(b, &lo, &hi);
		cr_assert_eq(lo, prev_hi, "bucket %u starts at %lu, previous ended at %lu", b,
			     (unsigned long)lo, (unsigned long)prev_hi);
		cr_assert_eq(latency_loglin_bucket(lo), b, "lo of bucket %u", b);
		cr_assert_eq(latency_loglin_bucket(hi - 1), b, "hi-1 of bucket %u", b);
		if (lo >= 16)
			cr_assert(hi - lo <= lo / 16 + 1, "bucket %u is %lu wide at %lu", b,
				  (unsigned long)(hi - lo), (unsigned long)lo);
		prev_hi = hi;
	}
	cr_assert_eq(prev_hi, UINT64_MAX);
	cr_assert_eq(latency_loglin_bucket(UINT64_MAX), LATENCY_LOGLIN_BUCKETS - 1);
	/* The kernel's formula (bpf/sonde_abi.h) on a few values. */
	cr_assert_eq(latency_loglin_bucket(15), 15);
	cr_assert_eq(latency_loglin_bucket(16), 16);
	cr_assert_eq(latency_loglin_bucket(17), 17);
	cr_assert_eq(latency_loglin_bucket(32), 32);
	cr_assert_eq(latency_loglin_bucket(1000), (9 - 3) * 16 + ((1000 >> 5) & 15));
}

Test(latency, loglin_durations_give_percentiles_within_the_bucket_width)
{
	/* Two modes and a tail, 200k calls: the percentiles read on the
	 * histogram's stand-in durations are those of the calls within 3.2%,
	 * whether all values or 2^14 evenly ranked ones are returned. */
	rng_state = 42;
	size_t n = 0, cap = 200000;
	uint64_t *d = malloc(cap * sizeof(*d));
	add_lognormal(d, &n, 150000, 5 * US, 0.2);
	add_lognormal(d, &n, 45000, 60 * US, 0.1);
	add_exponential(d, &n, 5000, 2 * MS);
	sort_u64(d, n);
	uint64_t *counts = calloc(LATENCY_LOGLIN_BUCKETS, sizeof(*counts));
	for (size_t i = 0; i < n; i++)
		counts[latency_loglin_bucket(d[i])]++;
	size_t maxes[] = {cap, 1u << 14};
	for (int m = 0; m < 2; m++) {
		size_t k;
		uint64_t total;
		uint64_t *h = latency_loglin_durations(counts, maxes[m], &k, &total);
		cr_assert_eq(total, n);
		cr_assert_eq(k, m == 0 ? n : (size_t)1 << 14);
		for (size_t i = 1; i < k; i++)
			cr_assert(h[i - 1] <= h[i], "values ascend");
		double pcts[] = {1, 50, 75, 90, 95, 99, 99.9};
		for (int p = 0; p < 7; p++) {
			char what[64];
			snprintf(what, sizeof(what), "p%g of %zu values", pcts[p], k);
			assert_within_pct(latency_percentile(h, k, pcts[p]),
					  (double)latency_percentile(d, n, pcts[p]), 3.2, what);
		}
		struct latency_modes exact, approx;
		latency_auto_threshold(d, n, &exact);
		latency_auto_threshold(h, k, &approx);
		cr_assert(exact.found && approx.found, "auto finds the slow mode");
		assert_within_pct(approx.threshold_ns, (double)exact.threshold_ns, 10, "auto threshold");
		free(h);
	}
	free(counts);
	free(d);
}

/* A percentile read on the histogram without its stand-in durations is the
 * number read on them, exactly (a window's p99 and a p99 threshold are one
 * figure), whether every call or 2^14 evenly ranked ones stand in. */
Test(latency, loglin_percentile_is_that_of_the_durations)
{
	rng_state = 99;
	size_t n = 0;
	uint64_t *d = malloc(60000 * sizeof(*d));
	add_lognormal(d, &n, 50000, 14 * US, 0.3);
	add_lognormal(d, &n, 10000, 300 * US, 0.2);
	uint64_t *counts = calloc(LATENCY_LOGLIN_BUCKETS, sizeof(*counts));
	for (size_t i = 0; i < n; i++)
		counts[latency_loglin_bucket(d[i])]++;
	size_t maxes[] = {n, 1u << 14, 7};
	double pcts[] = {0, 0.1, 1, 50, 90, 95, 99, 99.9, 99.99, 100};
	for (int m = 0; m < 3; m++) {
		size_t k;
		uint64_t *h = latency_loglin_durations(counts, maxes[m], &k, NULL);
		for (int p = 0; p < 10; p++)
			cr_assert_eq(latency_loglin_percentile(counts, maxes[m], pcts[p]),
				     latency_percentile(h, k, pcts[p]), "p%g of %zu values", pcts[p], k);
		free(h);
	}
	memset(counts, 0, LATENCY_LOGLIN_BUCKETS * sizeof(*counts));
	cr_assert_eq(latency_loglin_percentile(counts, n, 99), 0);
	free(counts);
	free(d);
}
