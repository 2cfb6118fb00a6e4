/* The auto threshold on histograms recorded from real programs
 * (fixtures/auto/README.md says how): for each, the threshold falls where
 * what the program did says it must, and the reason names listed modes. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latency.h"
#include "view.h"

#define FIXTURES SRC_DIR "/tests/unit/model/fixtures/auto/"

/* The durations that stand for a fixture's calls, as a recording's figures
 * take them (latency_hist_durations). */
static uint64_t *fixture_durations(const char *name, size_t *n)
{
	static uint64_t counts[LATENCY_LOGLIN_BUCKETS];
	memset(counts, 0, sizeof(counts));
	char path[512], line[256];
	snprintf(path, sizeof(path), FIXTURES "%s", name);
	FILE *f = fopen(path, "r");
	cr_assert(f, "cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		uint64_t lo, hi, calls, blo, bhi;
		if (line[0] == '#')
			continue;
		cr_assert_eq(sscanf(line, "%" SCNu64 " %" SCNu64 " %" SCNu64, &lo, &hi, &calls), 3,
			     "%s: bad line '%s'", name, line);
		unsigned b = latency_loglin_bucket(lo);
		latency_loglin_bounds(b, &blo, &bhi);
		cr_assert(blo == lo && bhi == hi, "%s: [%" PRIu64 ", %" PRIu64 ") is no bucket", name,
			  lo, hi);
		counts[b] += calls;
	}
	fclose(f);
	uint64_t *d = latency_hist_durations(counts, n);
	cr_assert(d && *n > 0, "%s: no calls", name);
	return d;
}

static size_t count_above(const uint64_t *d, size_t n, uint64_t ns)
{
	size_t above = 0;
	for (size_t i = 0; i < n; i++)
		above += d[i] > ns;
	return above;
}

/* True when `text` at `at` reads "<duration> (<share>%" of listed mode. */
static bool names_a_mode(const struct latency_modes *m, const char *at)
{
	for (size_t i = 0; i < m->nmodes; i++) {
		char ns[32], want[64];
		snprintf(want, sizeof(want), "%s (%.1f%%", duration_format(m->modes[i].ns, ns, sizeof(ns)),
			 100 * m->modes[i].share);
		if (strncmp(at, want, strlen(want)) == 0)
			return true;
	}
	return false;
}

/* Every mode the reason names ("the main mode at X (S%", "the slow one at
 * X (S%") is one of the listed modes, as listed. */
static void assert_reason_names_listed_modes(const char *name, const struct latency_modes *m)
{
	static const char *const cues[] = {"the main mode at ", "the slow one at "};
	size_t named = 0;
	for (size_t c = 0; c < 2; c++) {
		const char *at = strstr(m->reason, cues[c]);
		if (!at)
			continue;
		named++;
		cr_assert(names_a_mode(m, at + strlen(cues[c])), "%s: '%s' names no listed mode",
			  name, m->reason);
	}
	cr_assert(!m->found || named == 2, "%s: '%s' names neither mode", name, m->reason);
}

struct auto_case {
	const char *fixture;
	/* what the program did: calls of the fast and of the slow kind */
	size_t fast_calls, slow_calls;
};

/* At least 95% of the slow kind above the threshold, 95% of the fast kind
 * at or below it: counted on all calls, so a threshold inside either kind
 * leaves fewer than that on its side. And most calls above it are of the
 * slow kind (fast calls lengthened by a preemption or a sample are there
 * too, but a threshold below a hump of them, where the slow kind is rarer
 * than the hump, would show more of them than slow calls). */
static void assert_separates(const struct auto_case *c, uint64_t *threshold)
{
	size_t n;
	uint64_t *d = fixture_durations(c->fixture, &n);
	struct latency_modes m;
	int rc = latency_auto_threshold(d, n, &m);
	cr_assert_eq(rc, 0, "%s: %s", c->fixture, m.reason);
	assert_reason_names_listed_modes(c->fixture, &m);
	size_t above = count_above(d, n, m.threshold_ns);
	cr_assert(above >= 0.95 * (double)c->slow_calls,
		  "%s: %zu calls above %" PRIu64 " ns, of %zu slow ones (%s)", c->fixture, above,
		  m.threshold_ns, c->slow_calls, m.reason);
	cr_assert(above <= 2 * c->slow_calls,
		  "%s: %zu calls above %" PRIu64 " ns, over twice the %zu slow ones (%s)", c->fixture,
		  above, m.threshold_ns, c->slow_calls, m.reason);
	cr_assert(n - above >= 0.95 * (double)c->fast_calls,
		  "%s: %zu calls at or below %" PRIu64 " ns, of %zu fast ones (%s)", c->fixture,
		  n - above, m.threshold_ns, c->fast_calls, m.reason);
	struct threshold t = {.kind = THRESHOLD_AUTO};
	cr_assert_eq(threshold_resolve(&t, d, n, NULL), m.threshold_ns);
	free(d);
	if (threshold)
		*threshold = m.threshold_ns;
}

Test(auto_fixtures, redis_mix_separates_set_get_from_lrange)
{
	struct auto_case c = {"redis_mix.hist", .fast_calls = 400000, .slow_calls = 20000};
	uint64_t t;
	assert_separates(&c, &t);
	/* The calls of each benchmark alone, against the mix's threshold. */
	size_t n;
	uint64_t *d = fixture_durations("redis_setget.hist", &n);
	size_t above = count_above(d, n, t);
	cr_assert(n - above >= 0.95 * (double)n, "SET/GET: %zu of %zu at or below %" PRIu64 " ns",
		  n - above, n, t);
	free(d);
	d = fixture_durations("redis_lrange.hist", &n);
	above = count_above(d, n, t);
	cr_assert(above >= 0.95 * (double)n, "LRANGE: %zu of %zu above %" PRIu64 " ns", above, n, t);
	free(d);
}

/* The same mix on another day: a quarter of the SET/GET calls in a second
 * mode 3.5x above the first (24.6% at ~1 us, 70.6% at ~0.3 us), LRANGE at
 * 23 us. Before, the second fast mode, holding over 3x LRANGE's share,
 * was taken for the slow one: the threshold fell between the SET/GET
 * modes and the fast view held 15 samples. */
Test(auto_fixtures, redis_mix_with_two_fast_modes_separates_lrange)
{
	assert_separates(&(struct auto_case){"redis_mix_two_fast_modes.hist",
					     .fast_calls = 300000, .slow_calls = 15000},
			 NULL);
}

/* The mix with every core busy with another process: SET/GET at 0.3 us
 * (76.8%) and 1.5 us (17.4%, under a quarter of the main mode's calls),
 * a hump at 5.4 us (1%), LRANGE at 22 us (4.8%). Before, the 1.5 us mode,
 * holding over 3x LRANGE's share, was taken for the slow one (0.68-0.77 of
 * the slow view LRANGE). */
Test(auto_fixtures, redis_mix_loaded_separates_lrange)
{
	assert_separates(&(struct auto_case){"redis_mix_loaded.hist", .fast_calls = 300000,
					     .slow_calls = 15000},
			 NULL);
}

Test(auto_fixtures, sqlite_separates_commits)
{
	assert_separates(&(struct auto_case){"sqlite_autocommit.hist", .fast_calls = 8000,
					     .slow_calls = 2001},
			 NULL);
}

Test(auto_fixtures, python_separates_the_looping_calls)
{
	assert_separates(&(struct auto_case){"python_calls.hist", .fast_calls = 190000,
					     .slow_calls = 10000},
			 NULL);
}

Test(auto_fixtures, microcalls_separates_slow_fn)
{
	assert_separates(&(struct auto_case){"microcalls.hist", .fast_calls = 19800,
					     .slow_calls = 200},
			 NULL);
}

Test(auto_fixtures, requests_separates_the_slow_path)
{
	assert_separates(&(struct auto_case){"requests.hist", .fast_calls = 2615,
					     .slow_calls = 300},
			 NULL);
}

/* malloc: most calls corrected to ~0 ns, the rest within a few hundred ns,
 * and a rare far tail: the threshold goes before the tail (not among the
 * nanoseconds), and the slow mode it names is the tail. */
Test(auto_fixtures, malloc_separates_its_rare_far_tail)
{
	size_t n;
	uint64_t *d = fixture_durations("libc_malloc.hist", &n);
	size_t fast = n - count_above(d, n, 2048), tail = count_above(d, n, 8192);
	free(d);
	cr_assert(tail < n / 200, "the fixture's tail holds %zu of %zu calls", tail, n);
	assert_separates(&(struct auto_case){"libc_malloc.hist", .fast_calls = fast,
					     .slow_calls = tail},
			 NULL);
}

/* The reason of every fixture's own analysis (also the benchmarks alone,
 * where the slow kind is whatever auto finds) names listed modes, and a
 * reason saying no mode is slower than the main one means none is listed
 * above it. */
Test(auto_fixtures, reasons_name_listed_modes)
{
	static const char *const all[] = {
		"redis_mix.hist",    "redis_setget.hist", "redis_lrange.hist",
		"sqlite_autocommit.hist", "python_calls.hist", "libc_malloc.hist",
		"microcalls.hist",   "requests.hist",     "redis_mix_two_fast_modes.hist",
		"redis_mix_loaded.hist",
	};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		size_t n;
		uint64_t *d = fixture_durations(all[i], &n);
		struct latency_modes m;
		latency_auto_threshold(d, n, &m);
		free(d);
		assert_reason_names_listed_modes(all[i], &m);
		cr_assert(m.nmodes >= 1 && m.nmodes <= LATENCY_MAX_MODES, "%s: %zu modes", all[i],
			  m.nmodes);
		if (!strstr(m.reason, "no mode slower than the main mode"))
			continue;
		size_t main = 0;
		for (size_t j = 1; j < m.nmodes; j++)
			main = m.modes[j].share > m.modes[main].share ? j : main;
		cr_assert_eq(main, m.nmodes - 1, "%s: '%s', yet mode %zu is slower", all[i], m.reason,
			     main + 1);
	}
}
