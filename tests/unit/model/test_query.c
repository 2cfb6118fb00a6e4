/* Unit tests for the probe a view names (model/query.h, query_probe and
 * query_parse): every spelling --trace accepts for a function finds its
 * probe, FUNC:THRESHOLD after any of them, and names that are not a probe's
 * are refused in one line. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "query.h"

/* Probes: 0 sqlite3_step of libsqlite3 (as record --trace
 * libsqlite3:sqlite3_step stores it), 1 handle of ./server seen through a
 * running target's root, 2 a second sqlite3_step (of libother: named
 * BASE:FUNC), 3 a line probe. */
static struct profile *fixture(void)
{
	struct profile *p = profile_new();
	profile_probe_add(p, "sqlite3_step", "/lib/x86_64-linux-gnu/libsqlite3.so.0", 0x1000);
	profile_probe_add(p, "handle", "/proc/4242/root/srv/server", 0x2000);
	profile_probe_add(p, "libother.so.1:sqlite3_step", "/opt/lib/libother.so.1", 0x3000);
	uint32_t line = profile_probe_add(p, "server.c:12", "/srv/server", 0x2010);
	p->probes[line].point = 0;
	return p;
}

Test(query, every_spelling_of_a_function)
{
	struct profile *p = fixture();
	const char *sqlite[] = {"sqlite3_step", "libsqlite3:sqlite3_step",
				"libsqlite3.so.0:sqlite3_step",
				"/lib/x86_64-linux-gnu/libsqlite3.so.0:sqlite3_step"};
	for (size_t i = 0; i < sizeof(sqlite) / sizeof(*sqlite); i++)
		cr_assert_eq(query_probe(p, sqlite[i]), 0, "%s", sqlite[i]);
	cr_assert_eq(query_probe(p, "handle"), 1);
	cr_assert_eq(query_probe(p, "server:handle"), 1);
	cr_assert_eq(query_probe(p, "/srv/server:handle"), 1, "the path without /proc/PID/root");
	cr_assert_eq(query_probe(p, "libother:sqlite3_step"), 2);
	cr_assert_eq(query_probe(p, "libother.so.1:sqlite3_step"), 2);
	cr_assert_eq(query_probe(p, "/opt/lib/libother.so.1:sqlite3_step"), 2);
	cr_assert_eq(query_probe(p, "server.c:12"), 3, "a line by its name");
	profile_free(p);
}

Test(query, names_of_no_probe)
{
	struct profile *p = fixture();
	const char *none[] = {"libc:sqlite3_step", "libsqlite3:nosuch", "server:sqlite3_step",
			      "/lib/libsqlite3.so.0:sqlite3_step", "nosuch", "12",
			      "libsqlite:sqlite3_step"};
	for (size_t i = 0; i < sizeof(none) / sizeof(*none); i++)
		cr_assert_eq(query_probe(p, none[i]), -1, "%s", none[i]);
	profile_free(p);
}

Test(query, threshold_after_any_spelling)
{
	struct profile *p = fixture();
	struct span_query q;
	char err[512];
	cr_assert_eq(query_parse(p, SPAN_SLOW, "libsqlite3:sqlite3_step", &q, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(q.probe, 0);
	cr_assert_eq(q.threshold.kind, THRESHOLD_PERCENTILE);
	cr_assert_eq(query_parse(p, SPAN_FAST, "libsqlite3:sqlite3_step:5ms", &q, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(q.probe, 0);
	cr_assert_eq(q.threshold.kind, THRESHOLD_ABSOLUTE);
	cr_assert_eq(q.threshold.ns, 5000000);
	cr_assert_eq(query_parse(p, SPAN_SLOW, "sqlite3_step:p9x", &q, err, sizeof(err)), -1);
	cr_assert(strstr(err, "bad threshold 'p9x'"), "%s", err);
	cr_assert_eq(query_parse(p, SPAN_SLOW, "libc:sqlite3_step", &q, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "'libc:sqlite3_step' was not traced in this recording; traced: "
			      "sqlite3_step (libsqlite3.so.0), handle (server), "
			      "libother.so.1:sqlite3_step (libother.so.1), server.c:12");
	cr_assert_eq(query_parse(p, SPAN_SLOW, "nosuch:p95", &q, err, sizeof(err)), -1);
	cr_assert(strstr(err, "'nosuch' was not traced"), "%s", err);
	profile_free(p);
}
