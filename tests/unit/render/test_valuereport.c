/* valuereport --by: a function's calls split by a captured value count
 * what the view takes, every column: with --pid/--tid/--comm (and a time
 * range), the calls of those threads, as the samples; IN VIEW by the
 * view's class (view_takes_call). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capdesc.h"
#include "profile.h"
#include "valuereport.h"
#include "values.h"
#include "view.h"

#define MS 1000000ull

/* Threads srv (pid 100, tid 100), worker (pid 100, tid 101), other (pid
 * 200, tid 200). 12 calls of `work`, call i on thread i % 3, starting at
 * i * 100 ms, with n = i % 2 captured at its entry; calls 0, 4 and 8 are
 * slow (5 ms), the others 1 ms; each has a record and 2 samples. */
static struct profile *fixture(void)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	uint32_t w = frames_intern(p->frames, "work", "/bin/x", "x.c", 2, FRAME_USER);
	uint32_t stack = profile_stack_intern(p, &w, 1);
	uint32_t th[3] = {profile_thread_intern(p, 100, 100, "srv"),
			  profile_thread_intern(p, 100, 101, "worker"),
			  profile_thread_intern(p, 200, 200, "other")};
	cr_assert_eq(profile_probe_add(p, "work", "/bin/x", 0x10), 0);
	uint32_t n = values_capture_intern(p, &(struct probe_capture){.name = "n", .type = "int",
								      .kind = CAPTURE_SIGNED});
	values_set_probe(p, 0, &n, 1, NULL);
	for (uint64_t i = 0; i < 12; i++) {
		struct span sp = {.id = i + 1, .start_ns = i * 100 * MS,
				  .duration_ns = i % 4 == 0 ? 5 * MS : 1 * MS, .probe = 0,
				  .thread = th[i % 3], .depth = 1};
		sp.raw_duration_ns = sp.duration_ns;
		cr_assert_geq(profile_span_add(p, &sp), 0);
		struct probe_hit h = {.time_ns = sp.start_ns, .span_id = sp.id, .probe = 0,
				      .thread = sp.thread};
		struct hit_value v = {.capture = n, .status = CAPTURE_OK, .num = i % 2};
		values_add_hit(p, &h, &v, 1);
		struct span_link link = {sp.id, 0};
		for (uint64_t k = 1; k <= 2; k++) {
			struct sample s = {.time_ns = sp.start_ns + k * 100000, .weight = 1,
					   .thread = sp.thread, .stack = stack};
			cr_assert_eq(profile_add_sample(p, &s, &link, 1), 0);
		}
	}
	return p;
}

struct row {
	unsigned long long calls, view_calls, samples;
};

/* The --by n row of value `value` in the JSON. */
static struct row row_of(const struct profile *p, const struct view *v, int value)
{
	char *json = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&json, &len);
	char err[256];
	cr_assert_eq(valuereport_by_json(f, p, v, "n", err, sizeof(err)), 0, "%s", err);
	fclose(f);
	char key[32];
	snprintf(key, sizeof(key), "{\"value\": %d,", value);
	const char *at = strstr(json, key);
	struct row r = {0};
	if (at)
		cr_assert_eq(sscanf(at + strlen(key), " \"calls\": %llu, \"view_calls\": %llu, "
						      "\"samples\": %llu}",
				    &r.calls, &r.view_calls, &r.samples),
			     3, "%s", json);
	free(json);
	return r;
}

static void assert_row(const struct profile *p, const struct view *v, int value,
		       struct row want, const char *what)
{
	struct row r = row_of(p, v, value);
	cr_assert(r.calls == want.calls && r.view_calls == want.view_calls &&
			  r.samples == want.samples,
		  "%s, n = %d: calls %llu, in view %llu, samples %llu; want %llu, %llu, %llu", what,
		  value, r.calls, r.view_calls, r.samples, want.calls, want.view_calls,
		  want.samples);
}

Test(valuereport, by_counts_the_calls_of_the_filtered_threads)
{
	struct profile *p = fixture();
	/* --slow work:2ms --by n: every thread. Calls with n = 0 are the even
	 * ones (6), slow among them 0, 4, 8; n = 1: 6, none slow. */
	struct view v = {.span_class = SPAN_SLOW, .probe = 0, .threshold_ns = 2 * MS};
	assert_row(p, &v, 0, (struct row){6, 3, 6}, "all threads");
	assert_row(p, &v, 1, (struct row){6, 0, 0}, "all threads");
	/* --tid 101: worker's calls 1, 4, 7, 10 (n = 1, 0, 1, 0; 4 slow). */
	v.tid = 101;
	assert_row(p, &v, 0, (struct row){2, 1, 2}, "tid 101");
	assert_row(p, &v, 1, (struct row){2, 0, 0}, "tid 101");
	/* --comm other: calls 2, 5, 8, 11 (n = 0, 1, 0, 1; 8 slow). */
	v.tid = 0;
	v.comm = "other";
	assert_row(p, &v, 0, (struct row){2, 1, 2}, "comm other");
	assert_row(p, &v, 1, (struct row){2, 0, 0}, "comm other");
	/* --pid 100 --in work: srv's and worker's 8 calls, 4 each value. */
	v = (struct view){.span_class = SPAN_IN, .probe = 0, .pid = 100};
	assert_row(p, &v, 0, (struct row){4, 4, 8}, "pid 100");
	assert_row(p, &v, 1, (struct row){4, 4, 8}, "pid 100");
	/* A time range: the calls that started in it (0..5), as their samples. */
	v = (struct view){.span_class = SPAN_IN, .probe = 0, .has_range = true, .start_ns = 0,
			  .end_ns = 550 * MS};
	assert_row(p, &v, 0, (struct row){3, 3, 6}, "range 0-550ms");
	assert_row(p, &v, 1, (struct row){3, 3, 6}, "range 0-550ms");
	profile_free(p);
}
