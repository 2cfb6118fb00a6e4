/* chrometrace: the trace has what Perfetto and Firefox Profiler need
 * (checked by tests/js/check_chrometrace.mjs, skipped without node: M names
 * for every pid/tid, nested X slices, V8 Profile/ProfileChunk samples with
 * valid node trees and deltas) and, read back in C, the exact events:
 * times in µs from the profile start, spans cut to nest, node ids, chunking,
 * merging of threads that share a tid, odd names, empty profiles, errors. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chrometrace.h"
#include "profile.h"
#include "unitkit.h"

#define MS 1000000ULL
#define T0 1000000000ULL

/* ---- building profiles ------------------------------------------------ */

struct stacks {
	uint32_t a, b, c; /* main;work  main;work;do_syscall_64  main;helper */
};

static struct stacks make_stacks(struct profile *p)
{
	uint32_t m = frames_intern(p->frames, "main", "/bin/app", "main.c", 10, FRAME_USER);
	uint32_t w = frames_intern(p->frames, "work", "/bin/app", "", 0, FRAME_USER);
	uint32_t k = frames_intern(p->frames, "do_syscall_64", "[kernel.kallsyms]", "", 0,
				   FRAME_KERNEL);
	uint32_t h = frames_intern(p->frames, "helper", "/bin/app", "util.h", 5, FRAME_INLINED);
	return (struct stacks){
		profile_stack_intern(p, (uint32_t[]){m, w}, 2),
		profile_stack_intern(p, (uint32_t[]){m, w, k}, 3),
		profile_stack_intern(p, (uint32_t[]){m, h}, 2),
	};
}

/* pid 100: "app" (tid 100, 4 samples, 5 spans nested, one overlapping its
 * caller's end) and a worker with an awkward name (2 samples, an open span). */
static struct profile *build(bool times)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	if (times)
		profile_meta_set(p, "start_ns", "1000000000");
	profile_meta_set(p, "frequency_hz", "1000");
	struct stacks s = make_stacks(p);
	uint32_t t2 = profile_thread_intern(p, 100, 101, "wo\"rk\\er\n\x01\xff");
	uint32_t t1 = profile_thread_intern(p, 100, 100, "app");
	uint64_t b = times ? T0 : 0;
	unit_sample(p, t1, times ? b + 3 * MS : 0, s.a, 1);
	unit_sample(p, t1, times ? b + 1 * MS : 0, s.a, 1);
	unit_sample(p, t2, times ? b + 3 * MS / 2 : 0, s.c, 1);
	unit_sample(p, t1, times ? b + 2 * MS : 0, s.b, 1);
	unit_sample(p, t1, times ? b + 10 * MS : 0, s.c, 1);
	unit_sample(p, t2, times ? b + 5 * MS / 2 : 0, s.a, 1);
	uint32_t handle = profile_probe_add(p, "handle \"req\"", "/bin/app", 0x1000);
	uint32_t parse = profile_probe_add(p, "parse", "/bin/app", 0x2000);
	unit_span(p, (struct span){.id = 1, .probe = handle, .thread = t1,
				   .depth = 1, .start_ns = T0 + MS / 2, .duration_ns = 5 * MS});
	unit_span(p, (struct span){.id = 2, .parent = 1, .probe = parse, .thread = t1,
				   .depth = 2, .start_ns = T0 + MS, .duration_ns = MS});
	unit_span(p, (struct span){.id = 3, .parent = 1, .probe = parse, .thread = t1,
				   .depth = 2, .start_ns = T0 + 3 * MS, .duration_ns = MS});
	/* ends after handle */
	unit_span(p, (struct span){.id = 5, .parent = 1, .probe = parse, .thread = t1,
				   .depth = 2, .start_ns = T0 + 5 * MS, .duration_ns = 2 * MS});
	unit_span(p, (struct span){.id = 6, .probe = parse, .thread = t1,
				   .depth = 1, .start_ns = T0 + 20 * MS, .duration_ns = 0});
	unit_span(p, (struct span){.id = 4, .probe = handle, .thread = t2, .open = true,
				   .depth = 1, .start_ns = T0 + 2 * MS, .duration_ns = 100 * MS + 1});
	return p;
}

static char *render(struct profile *p)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	cr_assert_not_null(f);
	cr_assert_eq(chrometrace_write(f, p), 0);
	fclose(f);
	return buf;
}

/* ---- node checker ------------------------------------------------------ */

#define REQUIRE_NODE()                                                                         \
	do {                                                                                   \
		if (!have_tool("node"))                                                              \
			cr_skip_test("node not installed: run scripts/bootstrap.sh");          \
	} while (0)

static char *check(const char *json)
{
	return node_check_text("check_chrometrace.mjs", json);
}

static void assert_ok(const char *report)
{
	cr_assert_not_null(strstr(report, "\"ok\":true"), "trace check failed: %s", report);
}

/* ---- tests ------------------------------------------------------------- */

Test(chrometrace, viewers_requirements)
{
	REQUIRE_NODE();
	struct profile *p = build(true);
	char *json = render(p);
	char *report = check(json);
	assert_ok(report);
	cr_assert_eq(json_num(report, "x_events"), 6, "%s", report);
	cr_assert_eq(json_num(report, "m_events"), 3, "%s", report); /* 1 process + 2 threads */
	cr_assert_eq(json_num(report, "samples"), 6, "%s", report);
	cr_assert_eq(json_num(report, "profiles"), 2, "%s", report);
	cr_assert_eq(json_num(report, "chunks"), 2, "%s", report);
	cr_assert_eq(json_num(report, "nodes"), 9, "%s", report);
	cr_assert(strstr(report, "\"samples_by_thread\":{\"100/100\":4,\"100/101\":2}"), "%s",
		  report);
	cr_assert(strstr(report, "\"x_by_thread\":{\"100/100\":5,\"100/101\":1}"), "%s", report);
	cr_assert_eq(json_num(report, "last_sample_us"), 10000, "%s", report);
	free(report);
	free(json);
	profile_free(p);
}

Test(chrometrace, events)
{
	struct profile *p = build(true);
	char *json = render(p);
	cr_assert_eq(strncmp(json, "{\"traceEvents\":[", 16), 0);
	cr_assert(strstr(json, "\n]}\n"));
	cr_assert(strstr(json, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"tid\":100,"
			       "\"ts\":0,\"args\":{\"name\":\"app\"}}"),
		  "%s", json);
	cr_assert(strstr(json, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":101,"
			       "\"ts\":0,\"args\":{\"name\":\"wo\\\"rk\\\\er\\n\\u0001\\ufffd\"}}"),
		  "%s", json);
	/* spans: µs from start_ns with ns precision, sorted, cut to nest */
	const char *x = strstr(json, "{\"ph\":\"X\"");
	cr_assert_not_null(x);
	cr_assert(strstr(x, "{\"ph\":\"X\",\"name\":\"handle \\\"req\\\"\",\"cat\":\"sonde\","
			    "\"ts\":500.000,\"dur\":5000.000,\"pid\":100,\"tid\":100,"
			    "\"args\":{\"span_id\":1,\"parent\":0}},\n"
			    "{\"ph\":\"X\",\"name\":\"parse\",\"cat\":\"sonde\",\"ts\":1000.000,"
			    "\"dur\":1000.000,\"pid\":100,\"tid\":100,"
			    "\"args\":{\"span_id\":2,\"parent\":1}},\n"),
		  "%s", x);
	cr_assert(strstr(json, "\"ts\":5000.000,\"dur\":500.000,\"pid\":100,\"tid\":100,"
			       "\"args\":{\"span_id\":5,\"parent\":1}}"),
		  "%s", json);
	cr_assert(strstr(json, "\"ts\":20000.000,\"dur\":0.000,\"pid\":100,\"tid\":100,"
			       "\"args\":{\"span_id\":6,\"parent\":0}}"),
		  "%s", json);
	cr_assert(strstr(json, "\"ts\":2000.000,\"dur\":100000.001,\"pid\":100,\"tid\":101,"
			       "\"args\":{\"span_id\":4,\"parent\":0,\"open\":true}}"),
		  "%s", json);
	/* samples: tid 100 first (threads by pid/tid), node 1 its root */
	const char *prof = strstr(json, "{\"ph\":\"P\",\"name\":\"Profile\"");
	cr_assert_not_null(prof);
	cr_assert(strstr(prof, "{\"ph\":\"P\",\"name\":\"Profile\",\"cat\":"
			       "\"disabled-by-default-v8.cpu_profiler\",\"id\":\"0x1\",\"pid\":100,"
			       "\"tid\":100,\"ts\":1000,\"args\":{\"data\":{\"startTime\":1000}}},\n"
			       "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"cat\":"
			       "\"disabled-by-default-v8.cpu_profiler\",\"id\":\"0x1\",\"pid\":100,"
			       "\"tid\":100,\"ts\":1000,\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
			       "{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"url\":\"\","
			       "\"lineNumber\":-1,\"columnNumber\":-1}},"
			       "{\"id\":2,\"parent\":1,\"callFrame\":{\"functionName\":\"main\","
			       "\"url\":\"main.c\",\"lineNumber\":9,\"columnNumber\":-1}},"
			       "{\"id\":3,\"parent\":2,\"callFrame\":{\"functionName\":\"work\","
			       "\"url\":\"/bin/app\",\"lineNumber\":-1,\"columnNumber\":-1}},"
			       "{\"id\":4,\"parent\":3,\"callFrame\":{\"functionName\":\"do_syscall_64\","
			       "\"url\":\"[kernel.kallsyms]\",\"lineNumber\":-1,\"columnNumber\":-1}},"
			       "{\"id\":5,\"parent\":2,\"callFrame\":{\"functionName\":\"helper\","
			       "\"url\":\"util.h\",\"lineNumber\":4,\"columnNumber\":-1}}],"
			       "\"samples\":[3,4,3,5]},\"timeDeltas\":[0,1000,1000,7000]}}}"),
		  "%s", prof);
	/* the worker: its own profile and root, node ids continue */
	cr_assert(strstr(json, "\"id\":\"0x2\",\"pid\":100,\"tid\":101,\"ts\":1500,"
			       "\"args\":{\"data\":{\"startTime\":1500}}}"),
		  "%s", json);
	cr_assert(strstr(json, "\"samples\":[8,9]},\"timeDeltas\":[0,1000]}}}"), "%s", json);
	free(json);
	profile_free(p);
}

/* 25000 samples: three chunks of at most 10000, nodes sent once, in the
 * chunk that first needs them; deltas of rounded times do not drift. */
Test(chrometrace, chunks)
{
	struct profile *p = profile_new();
	profile_meta_set(p, "start_ns", "1000000000");
	struct stacks s = make_stacks(p);
	uint32_t t = profile_thread_intern(p, 42, 43, "busy");
	const size_t n = 25000;
	const uint64_t step = 1234567; /* ns: 1234.567 µs */
	for (size_t k = 0; k < n; k++)
		unit_sample(p, t, T0 + 999 + k * step, k < 20000 ? s.a : s.b, 1);
	char *json = render(p);
	size_t chunks = 0;
	for (const char *c = json; (c = strstr(c, "\"name\":\"ProfileChunk\"")); c++)
		chunks++;
	cr_assert_eq(chunks, 3);
	/* the third chunk brings the one new node (do_syscall_64, id 4) */
	const char *third = strstr(json, "\"nodes\":[{\"id\":4,\"parent\":3,");
	cr_assert_not_null(third, "%s", json);
	cr_assert(strstr(json, "\"cpuProfile\":{\"nodes\":[],\"samples\":[3,3"));
	if (have_tool("node")) {
		char *report = check(json);
		assert_ok(report);
		cr_assert_eq(json_num(report, "samples"), (double)n);
		cr_assert_eq(json_num(report, "chunks"), 3);
		cr_assert_eq(json_num(report, "max_chunk_samples"), CHROMETRACE_CHUNK_SAMPLES);
		cr_assert_eq(json_num(report, "nodes"), 4);
		uint64_t last_ns = 999 + (n - 1) * step;
		cr_assert_eq(json_num(report, "last_sample_us"), (double)((last_ns + 500) / 1000), "%s",
			     report);
		free(report);
	}
	free(json);
	profile_free(p);
}

/* A thread whose comm changed (exec) is interned twice: one track. */
Test(chrometrace, same_tid_one_track)
{
	struct profile *p = profile_new();
	struct stacks s = make_stacks(p);
	uint32_t a = profile_thread_intern(p, 5, 6, "before");
	uint32_t b = profile_thread_intern(p, 5, 6, "after");
	uint32_t pr = profile_probe_add(p, "f", "/bin/f", 0);
	unit_sample(p, a, 100000, s.a, 1);
	unit_sample(p, b, 300000, s.b, 1);
	unit_span(p, (struct span){.id = 1, .probe = pr, .thread = a,
				   .depth = 1, .start_ns = 100000, .duration_ns = 100000});
	unit_span(p, (struct span){.id = 2, .probe = pr, .thread = b,
				   .depth = 1, .start_ns = 250000, .duration_ns = 100000});
	char *json = render(p);
	size_t names = 0;
	for (const char *c = json; (c = strstr(c, "\"thread_name\"")); c++)
		names++;
	cr_assert_eq(names, 1);
	cr_assert(strstr(json, "\"args\":{\"name\":\"before\"}"), "%s", json);
	/* process name: no thread has tid == pid, so the first thread's */
	cr_assert(strstr(json, "\"process_name\",\"pid\":5,\"tid\":5,\"ts\":0,"
			       "\"args\":{\"name\":\"before\"}"),
		  "%s", json);
	cr_assert(strstr(json, "\"ts\":0.000,\"dur\":100.000,\"pid\":5,\"tid\":6"), "%s", json);
	cr_assert(strstr(json, "\"ts\":150.000,\"dur\":100.000,\"pid\":5,\"tid\":6"), "%s", json);
	cr_assert(strstr(json, "\"samples\":[3,4]},\"timeDeltas\":[0,200]}"), "%s", json);
	if (have_tool("node")) {
		char *report = check(json);
		assert_ok(report);
		cr_assert(strstr(report, "\"samples_by_thread\":{\"5/6\":2}"), "%s", report);
		cr_assert_eq(json_num(report, "profiles"), 1);
		free(report);
	}
	free(json);
	profile_free(p);
}

/* Samples without times are spread at the sampling interval (1 ms here). */
Test(chrometrace, no_times)
{
	struct profile *p = build(false);
	char *json = render(p);
	cr_assert(strstr(json, "\"samples\":[3,3,4,5]},\"timeDeltas\":[0,1000,1000,1000]}"),
		  "%s", json);
	if (have_tool("node")) {
		char *report = check(json);
		assert_ok(report);
		cr_assert_eq(json_num(report, "samples"), 6);
		free(report);
	}
	free(json);
	profile_free(p);
}

Test(chrometrace, empty_profile)
{
	struct profile *p = profile_new();
	char *json = render(p);
	cr_assert_str_eq(json, "{\"traceEvents\":[\n]}\n");
	if (have_tool("node")) {
		char *report = check(json);
		assert_ok(report);
		cr_assert_eq(json_num(report, "events"), 0);
		free(report);
	}
	free(json);
	profile_free(p);
}

/* Threads but no samples or spans: still named, still valid. */
Test(chrometrace, threads_only)
{
	struct profile *p = profile_new();
	profile_thread_intern(p, 9, 9, "idle");
	char *json = render(p);
	cr_assert(strstr(json, "\"thread_name\",\"pid\":9,\"tid\":9"), "%s", json);
	if (have_tool("node")) {
		char *report = check(json);
		assert_ok(report);
		cr_assert_eq(json_num(report, "m_events"), 2);
		free(report);
	}
	free(json);
	profile_free(p);
}

Test(chrometrace, write_error)
{
	FILE *f = fopen("/dev/full", "w");
	if (!f)
		cr_skip_test("no /dev/full");
	struct profile *p = build(true);
	cr_assert_eq(chrometrace_write(f, p), -1);
	fclose(f);
	profile_free(p);
}

/* The checker is not vacuous: it rejects what the viewers would refuse. */
Test(chrometrace, checker_rejects_broken_files)
{
	REQUIRE_NODE();
	node_check_refuses(
		"check_chrometrace.mjs",
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":1},"
		"{\"ph\":\"X\",\"name\":\"b\",\"ts\":5,\"dur\":10,\"pid\":1,\"tid\":1},"
		"{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"id\":\"0x1\",\"pid\":1,\"tid\":1,\"ts\":0,"
		"\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":[],\"samples\":[1]},\"timeDeltas\":[0]}}},"
		"{\"ph\":\"P\",\"name\":\"Profile\",\"id\":\"0x2\",\"pid\":1,\"tid\":2,\"ts\":0,"
		"\"args\":{\"data\":{\"startTime\":0}}},"
		"{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"id\":\"0x2\",\"pid\":1,\"tid\":2,\"ts\":0,"
		"\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
		"{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\"}},"
		"{\"id\":3,\"parent\":7,\"callFrame\":{\"functionName\":\"f\"}}],"
		"\"samples\":[1,9]},\"timeDeltas\":[0.5]}}}]}",
		"\"ok\":false",
		(const char *const[]){"no Profile with id 0x1 before it", "parent 7 is not an earlier node",
				      "1 timeDeltas for 2 samples", "sample names node 9", "not dense",
				      "pid 1 has no process_name", "thread 1/1 has no thread_name",
				      "slice b [5000, 15000] ns overlaps a", NULL});
	node_check_refuses("check_chrometrace.mjs", "{\"traceEvents\":[", NULL,
			   (const char *const[]){"not JSON", NULL});
}

/* One function sampled at different lines is one node under its parent. */
Test(chrometrace, nodes_grouped_by_function)
{
	struct profile *p = profile_new();
	uint32_t m10 = frames_intern(p->frames, "main", "/bin/app", "main.c", 10, FRAME_USER);
	uint32_t m12 = frames_intern(p->frames, "main", "/bin/app", "main.c", 12, FRAME_USER);
	uint32_t w = frames_intern(p->frames, "work", "/bin/app", "w.c", 7, FRAME_USER);
	uint32_t t = profile_thread_intern(p, 1, 1, "x");
	unit_sample(p, t, 1000, UNIT_STACK(p, m10, w), 1);
	unit_sample(p, t, 2000, UNIT_STACK(p, m12, w), 1);
	unit_sample(p, t, 3000, UNIT_STACK(p, m12), 1);
	char *json = render(p);
	cr_assert(strstr(json, "{\"id\":2,\"parent\":1,\"callFrame\":{\"functionName\":\"main\","
			       "\"url\":\"main.c\",\"lineNumber\":-1,"),
		  "%s", json);
	cr_assert(strstr(json, "{\"id\":3,\"parent\":2,\"callFrame\":{\"functionName\":\"work\","
			       "\"url\":\"w.c\",\"lineNumber\":6,"),
		  "%s", json);
	cr_assert(strstr(json, "}],\"samples\":[3,3,2]}"), "%s", json);
	if (have_tool("node")) {
		char *report = check(json);
		assert_ok(report);
		cr_assert_eq(json_num(report, "nodes"), 3);
		free(report);
	}
	free(json);
	profile_free(p);
}
