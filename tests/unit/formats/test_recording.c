/* Unit tests for the recording loader against hostile files: a real
 * recording whose schema was edited so that reading it would run the
 * file's own queries (views, virtual tables, generated columns) or build
 * huge arrays from a few rows. Each must be refused with one line, quickly
 * and without the memory the file asks for. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "profile.h"
#include "recording.h"
#include "sonde_abi.h"

static struct profile *small_profile(void)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	uint32_t m = frames_intern(p->frames, "main", "/bin/x", "x.c", 1, FRAME_USER);
	uint32_t a = frames_intern(p->frames, "a", "/bin/x", "x.c", 2, FRAME_USER);
	uint32_t t = profile_thread_intern(p, 10, 11, "prog");
	uint32_t pr = profile_probe_add(p, "a", "/bin/x", 0x40);
	profile_span_add(p, &(struct span){.id = 1, .probe = pr, .thread = t, .depth = 1,
					   .start_ns = 100, .duration_ns = 50, .raw_duration_ns = 60});
	for (int i = 0; i < 5; i++) {
		struct sample s = {.time_ns = 100 + (uint64_t)i, .weight = 1, .thread = t,
				   .stack = profile_stack_intern(p, (uint32_t[]){m, a}, 2)};
		profile_add_sample(p, &s, &(struct span_link){1, pr}, 1);
	}
	/* A pass: one thread asleep with the stack it left the CPU with, one
	 * running with its last sample's, one with none. */
	uint32_t b = frames_intern(p->frames, "b", "/bin/x", "x.c", 3, FRAME_USER);
	uint32_t u = profile_thread_intern(p, 10, 12, "prog");
	uint32_t v = profile_thread_intern(p, 10, 13, "prog");
	profile_add_thread_sample(p, &(struct thread_sample){
		.time_ns = 1000, .state_since_ns = 900, .thread = t, .syscall = 0, .syscall_since_ns = 900,
		.state = TSTATE_SLEEPING, .stack = profile_stack_intern(p, (uint32_t[]){m, b}, 2),
		.stack_ns = 899});
	profile_add_thread_sample(p, &(struct thread_sample){
		.time_ns = 1000, .state_since_ns = 950, .thread = u, .syscall = -1,
		.stack = profile_stack_intern(p, (uint32_t[]){m, a}, 2), .stack_ns = 990,
		.stack_on_cpu = true});
	profile_add_thread_sample(p, &(struct thread_sample){
		.time_ns = 1000, .state_since_ns = 500, .thread = v, .syscall = -1,
		.state = TSTATE_SLEEPING});
	return p;
}

/* The names of a stack's frames, root first, joined by ';'. */
static void stack_names(const struct profile *p, uint32_t stack, char *out, size_t size)
{
	uint32_t ids[16];
	size_t n = profile_stack_frames(p, stack, ids, 16);
	out[0] = 0;
	for (size_t i = 0; i < n && i < 16; i++)
		snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? ";" : "",
			 frames_get(p->frames, ids[i])->name);
}

/* Saves the small profile, runs `sql` on the file, loads it back. */
static struct profile *load_edited(const char *sql, char *err, size_t errlen, double *seconds)
{
	char path[] = "/tmp/sonde-unit-rec-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	struct profile *p = small_profile();
	cr_assert_eq(recording_save(p, path, err, errlen), 0, "%s", err);
	profile_free(p);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	char *msg = NULL;
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s", msg);
	sqlite3_close(db);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct profile *q = recording_load(path, err, errlen);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (seconds)
		*seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	unlink(path);
	return q;
}

static void expect_refused(const char *sql, const char *needle)
{
	char err[512] = "";
	double s;
	struct profile *q = load_edited(sql, err, sizeof(err), &s);
	cr_assert_null(q, "loaded a hostile file (wanted: %s)", needle);
	cr_assert(strstr(err, needle), "error \"%s\" lacks \"%s\"", err, needle);
	cr_assert(strstr(err, "not a readable sonde recording"), "%s", err);
	cr_assert_null(strchr(err, '\n'));
	/* refused from the schema, not after running the file's query: on a
	 * busy machine a few seconds, never the minutes the queries take */
	cr_assert_lt(s, 5.0, "took %.1f s", s);
}

static long max_rss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

Test(recording_hostile, plain_recording_loads, .timeout = 60)
{
	char err[512] = "";
	struct profile *q = load_edited("SELECT 1", err, sizeof(err), NULL);
	cr_assert_not_null(q, "%s", err);
	cr_assert_eq(q->nsamples, 5);
	cr_assert_eq(q->nspans, 1);
	cr_assert_eq(q->spans[0].raw_duration_ns, 60);
	/* Thread samples keep their stacks, when they were taken and from what. */
	cr_assert_eq(q->nthread_samples, 3);
	char names[128];
	stack_names(q, q->thread_samples[0].stack, names, sizeof(names));
	cr_assert_str_eq(names, "main;b");
	cr_assert_eq(q->thread_samples[0].stack_ns, 899);
	cr_assert_not(q->thread_samples[0].stack_on_cpu);
	stack_names(q, q->thread_samples[1].stack, names, sizeof(names));
	cr_assert_str_eq(names, "main;a");
	cr_assert_eq(q->thread_samples[1].stack_ns, 990);
	cr_assert(q->thread_samples[1].stack_on_cpu);
	cr_assert_eq(q->thread_samples[2].stack, 0);
	profile_free(q);
}

Test(recording_hostile, thread_sample_with_a_bad_stack, .timeout = 60)
{
	expect_refused("UPDATE thread_samples SET stack = 999 WHERE stack IS NOT NULL",
		       "a thread sample has a bad stack");
	expect_refused("UPDATE thread_samples SET stack_from = 'x' WHERE stack IS NOT NULL",
		       "a thread sample has a bad stack");
}

/* SQLite keeps text in an INTEGER column; read as a number it is 0
 * ("samples: 0" and exit 0 before). */
Test(recording_hostile, numbers_that_are_not_integers, .timeout = 60)
{
	expect_refused("UPDATE samples SET weight = 'abc' WHERE id = (SELECT min(id) FROM samples)",
		       "its weight is text, not an integer");
	expect_refused("UPDATE samples SET time_ns = 1.5", "its time_ns is a real number");
	expect_refused("UPDATE spans SET duration_ns = x'00'", "its duration_ns is a blob");
	expect_refused("UPDATE spans SET depth = ''", "its depth is text");
}

Test(recording_hostile, endless_recursive_view, .timeout = 60)
{
	expect_refused("DROP TABLE frames;"
		       "CREATE VIEW frames(id, name, module, file, line, kind) AS"
		       " WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r)"
		       " SELECT i, 'f', 'm', '', 0, 'user' FROM r;",
		       "frames is a view, not a table");
}

Test(recording_hostile, huge_view, .timeout = 60)
{
	long before = max_rss_kb();
	expect_refused("DROP TABLE samples;"
		       "CREATE VIEW samples(id, time_ns, cpu, thread, event, stack, weight) AS"
		       " WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r"
		       " WHERE i < 100000000)"
		       " SELECT i, i, 0, 0, 0, NULL, 1 FROM r;",
		       "samples is a view, not a table");
	cr_assert_lt(max_rss_kb() - before, 100 * 1024, "the refusal took %ld kB",
		     max_rss_kb() - before);
}

Test(recording_hostile, virtual_table, .timeout = 60)
{
	expect_refused("DROP TABLE frames;"
		       "CREATE VIRTUAL TABLE frames USING fts4(id, name, module, file, line, kind);",
		       "frames is a virtual table");
}

Test(recording_hostile, generated_column, .timeout = 60)
{
	expect_refused("DROP TABLE frames;"
		       "CREATE TABLE frames(id INTEGER PRIMARY KEY, module TEXT, file TEXT,"
		       " line INTEGER, kind TEXT, name TEXT AS (printf('%.*c', 100000000, 'x')));"
		       "INSERT INTO frames(id, module, file, line, kind) VALUES (1, 'm', '', 0, 'user'),"
		       " (2, 'm', '', 0, 'user');",
		       "frames.name is a generated column");
}

Test(recording_hostile, missing_column, .timeout = 60)
{
	expect_refused("DROP VIEW stack_frames; ALTER TABLE stacks DROP COLUMN depth;", "table stacks has no column depth");
}

Test(recording_hostile, a_table_named_in_another_case, .timeout = 60)
{
	/* SQLite names are case-insensitive: FRAMES is the frames the loader reads */
	expect_refused("DROP TABLE frames;"
		       "CREATE VIEW FRAMES(id, name, module, file, line, kind) AS"
		       " SELECT 1, 'f', 'm', '', 0, 'user';",
		       "frames is a view");
}

/* meta and events are searched by name as they are read: millions of rows
 * there would take hours, and no recording has more than a few dozen. */
Test(recording_hostile, too_many_meta_rows, .timeout = 60)
{
	expect_refused("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r"
		       " WHERE i < 20000)"
		       " INSERT INTO meta(key, value) SELECT 'k' || i, 'v' FROM r;",
		       "more than 10000 meta rows");
}

Test(recording_hostile, too_many_events, .timeout = 60)
{
	expect_refused("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r"
		       " WHERE i < 20000)"
		       " INSERT INTO events(id, name) SELECT i, 'e' || i FROM r;",
		       "more than 10000 events");
}

/* Frame and stack ids index arrays: one row with a huge id in a small file
 * must not allocate hundreds of megabytes. */
Test(recording_hostile, sparse_ids, .timeout = 60)
{
	long before = max_rss_kb();
	expect_refused("INSERT INTO frames(id, name, module, file, line, kind)"
		       " VALUES (99999999, 'f', 'm', '', 0, 'user');",
		       "frame id out of range");
	expect_refused("INSERT INTO stacks(id, parent, frame, depth) VALUES (99999999, NULL, 1, 1);",
		       "stack id out of range");
	cr_assert_lt(max_rss_kb() - before, 100 * 1024, "took %ld kB", max_rss_kb() - before);
}

/* Recordings made before probes had their totals and spans their raw
 * durations still load. */
Test(recording_hostile, older_recordings_load, .timeout = 60)
{
	char err[512] = "";
	struct profile *q = load_edited("ALTER TABLE probes DROP COLUMN entered;"
					"ALTER TABLE probes DROP COLUMN raw_ns;"
					"ALTER TABLE probes DROP COLUMN own_ns;"
					"ALTER TABLE spans DROP COLUMN raw_duration_ns;"
					"ALTER TABLE thread_samples DROP COLUMN stack;"
					"ALTER TABLE thread_samples DROP COLUMN stack_ns;"
					"ALTER TABLE thread_samples DROP COLUMN stack_from;",
					err, sizeof(err), NULL);
	cr_assert_not_null(q, "%s", err);
	cr_assert_eq(q->nthread_samples, 3);
	cr_assert_eq(q->thread_samples[0].stack, 0, "no stacks in recordings made before them");
	cr_assert_eq(q->nspans, 1);
	cr_assert_eq(q->spans[0].duration_ns, 50);
	cr_assert_eq(q->spans[0].raw_duration_ns, 50, "raw = corrected when not stored");
	profile_free(q);
}

/* The step budget leaves room for big recordings: 300,000 samples in a
 * file of some megabytes load whole. */
Test(recording_hostile, big_recording_within_budget, .timeout = 120)
{
	char err[512] = "";
	struct profile *q = load_edited(
		"WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 300000)"
		" INSERT INTO samples(id, time_ns, cpu, thread, event, stack, weight)"
		" SELECT 100 + i, i, 0, 0, 0, 2, 1 FROM r;"
		"WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 300000)"
		" INSERT INTO sample_spans(sample, position, span, probe) SELECT 100 + i, 0, 1, 0 FROM r;",
		err, sizeof(err), NULL);
	cr_assert_not_null(q, "%s", err);
	cr_assert_eq(q->nsamples, 300005);
	cr_assert_eq(q->nspan_links, 300005);
	profile_free(q);
}
