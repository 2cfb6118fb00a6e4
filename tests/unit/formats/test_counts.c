/* Counts that do not fit: a profile's weights add up to at most
 * PROFILE_MAX_WEIGHT (2^63 - 1), and every reader refuses input past it with
 * one line naming the line or sample (folded: a count of 2^64, four counts
 * of 2^62; perf script; pprof; a recording edited with SQL); the largest
 * count that fits is kept exactly; writers that turn weights into
 * nanoseconds (pprof, speedscope) refuse with EOVERFLOW instead of writing a
 * saturated number; flame_add refuses to overflow a tree. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flame.h"
#include "folded.h"
#include "pb.h"
#include "perfscript.h"
#include "pprof.h"
#include "profile.h"
#include "recording.h"
#include "speedscope.h"
#include "viewtree.h"

#define MAX "9223372036854775807"

static struct profile *folded(const char *text, char *err, size_t errlen)
{
	err[0] = 0;
	return folded_read(text, strlen(text), err, errlen);
}

Test(counts, a_folded_count_of_2_64_is_refused_as_too_large)
{
	char err[256];
	cr_assert_null(folded("p;a 1\np;b 18446744073709551616\n", err, sizeof(err)));
	cr_assert_str_eq(err, "line 2: count 18446744073709551616 is too large (at most " MAX ")");
	cr_assert_null(folded("p;a 9223372036854775808\n", err, sizeof(err)));
	cr_assert_str_eq(err, "line 1: count 9223372036854775808 is too large (at most " MAX ")");
}

Test(counts, folded_counts_that_add_up_past_the_limit_are_refused)
{
	char err[256];
	/* 2^62 four times is 2^64: it wrapped to "samples: 0" */
	const char *four = "p;a 4611686018427387904\np;b 4611686018427387904\n"
			   "p;c 4611686018427387904\np;d 4611686018427387904\n";
	cr_assert_null(folded(four, err, sizeof(err)));
	cr_assert_str_eq(err, "line 2: the counts add up to more than " MAX
			      " (the most one profile holds)");
}

Test(counts, the_largest_folded_total_is_kept_exactly)
{
	char err[256];
	struct profile *p = folded("p;a 9223372036854775806\n\np;b 1\n", err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	cr_assert_eq(viewtree_total_weight(p, NULL), PROFILE_MAX_WEIGHT);
	struct flame_tree *t = viewtree_flame(p, NULL, FLAME_ROOT_COMM);
	cr_assert_eq(t->root->total, PROFILE_MAX_WEIGHT);
	flame_free(t);
	/* not one more */
	struct sample s = {.weight = 1};
	cr_assert_eq(profile_add_sample(p, &s, NULL, 0), -1);
	cr_assert_eq(p->nsamples, 2);
	profile_free(p);
}

Test(counts, perf_script_periods_past_the_limit_are_refused)
{
	static const char head[] = "prog 1/1 [000] 1.000000: %s cycles:\n\tffff0001 main (/bin/prog)\n\n";
	char text[1024], err[256] = "";
	snprintf(text, sizeof(text), head, "18446744073709551616");
	cr_assert_null(perfscript_read(text, strlen(text), err, sizeof(err)));
	cr_assert_str_eq(err, "line 1: the period is too large (at most " MAX ")");
	int n = 0;
	for (int i = 0; i < 3; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, head, "4611686018427387904");
	cr_assert_null(perfscript_read(text, strlen(text), err, sizeof(err)));
	cr_assert_str_eq(err, "line 4: the periods add up to more than " MAX
			      " (the most one profile holds)");
}

/* A profile.proto with one sample type (samples/count) and two samples of
 * the given values, no locations. */
static void pprof_of_two(uint64_t a, uint64_t b, struct pb_buf *out)
{
	struct pb_buf type = {0}, s1 = {0}, s2 = {0};
	memset(out, 0, sizeof(*out));
	pb_put_uint(&type, 1, 1);
	pb_put_uint(&type, 2, 2);
	pb_put_message(out, 1, &type);
	pb_put_uint(&s1, 2, a);
	pb_put_uint(&s2, 2, b);
	pb_put_message(out, 2, &s1);
	pb_put_message(out, 2, &s2);
	pb_put_string(out, 6, "");
	pb_put_string(out, 6, "samples");
	pb_put_string(out, 6, "count");
	pb_buf_free(&type);
	pb_buf_free(&s1);
	pb_buf_free(&s2);
}

Test(counts, pprof_values_past_the_limit_are_refused)
{
	struct pb_buf b;
	char err[256] = "";
	pprof_of_two(PROFILE_MAX_WEIGHT - 1, 1, &b);
	struct profile *p = pprof_read(b.data, b.len, err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	cr_assert_eq(viewtree_total_weight(p, NULL), PROFILE_MAX_WEIGHT);
	profile_free(p);
	pb_buf_free(&b);
	pprof_of_two(PROFILE_MAX_WEIGHT, PROFILE_MAX_WEIGHT, &b);
	cr_assert_null(pprof_read(b.data, b.len, err, sizeof(err)));
	cr_assert_str_eq(err, "pprof: sample 1: the values add up to more than " MAX
			      " (the most one profile holds)");
	pb_buf_free(&b);
}

static void sql(const char *path, const char *statement)
{
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, statement, NULL, NULL, NULL), SQLITE_OK, "%s",
		     sqlite3_errmsg(db));
	sqlite3_close(db);
}

Test(counts, recording_weights_past_the_limit_or_negative_are_refused)
{
	char err[512];
	struct profile *p = folded("p;a 1\np;b 1\n", err, sizeof(err));
	char dir[] = "/tmp/sonde-counts-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char path[64], want[256];
	snprintf(path, sizeof(path), "%s/x.sonde", dir);
	cr_assert_eq(recording_save(p, path, err, sizeof(err)), 0, "%s", err);
	sql(path, "UPDATE samples SET weight = 9223372036854775807;");
	cr_assert_null(recording_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want),
		 "%s is not a readable sonde recording (at sample 2 the weights add up to more "
		 "than " MAX ")",
		 path);
	cr_assert_str_eq(err, want);
	sql(path, "UPDATE samples SET weight = -1 WHERE id = 1;");
	cr_assert_null(recording_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want),
		 "%s is not a readable sonde recording (sample 1 has a negative weight)", path);
	cr_assert_str_eq(err, want);
	unlink(path);
	rmdir(dir);
	profile_free(p);
}

/* 10^12 samples' weight at 99 Hz is ~10^19 ns of CPU: more than pprof's
 * int64 values and speedscope's weights hold. */
Test(counts, writers_refuse_weights_in_nanoseconds_that_do_not_fit)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	profile_meta_set(p, "frequency_hz", "99");
	uint32_t f = frames_intern(p->frames, "main", "", "", 0, FRAME_USER);
	struct sample s = {.time_ns = 1000000000, .weight = 1000000000000ULL,
			   .thread = profile_thread_intern(p, 1, 1, "x"),
			   .stack = profile_stack_intern(p, &f, 1)};
	cr_assert_eq(profile_add_sample(p, &s, NULL, 0), 0);
	cr_assert_not(profile_weight_ns_fits(p, 1e9 / 99));
	FILE *null = fopen("/dev/null", "w");
	errno = 0;
	cr_assert_eq(pprof_write(null, p, NULL), -1);
	cr_assert_eq(errno, EOVERFLOW);
	errno = 0;
	cr_assert_eq(speedscope_write(null, p, NULL), -1);
	cr_assert_eq(errno, EOVERFLOW);
	/* at 1000 Hz, 10^18 ns: fits */
	profile_meta_set(p, "frequency_hz", "1000");
	cr_assert(profile_weight_ns_fits(p, 1e6));
	cr_assert_eq(pprof_write(null, p, NULL), 0);
	cr_assert_eq(speedscope_write(null, p, NULL), 0);
	fclose(null);
	profile_free(p);
}

Test(counts, flame_add_refuses_to_overflow_a_tree)
{
	struct frame_table *ft = frames_new();
	uint32_t a = frames_intern(ft, "a", "", "", 0, FRAME_USER);
	struct flame_tree *t = flame_new(ft);
	cr_assert_eq(flame_add(t, &a, 1, UINT64_MAX - 1), 0);
	cr_assert_eq(flame_add(t, &a, 1, 2), -1);
	cr_assert_eq(t->root->total, UINT64_MAX - 1);
	cr_assert_eq(t->root->children[0]->self, UINT64_MAX - 1);
	cr_assert_eq(flame_add(t, &a, 1, 1), 0);
	cr_assert_eq(t->root->total, UINT64_MAX);
	flame_free(t);
	frames_free(ft);
}
