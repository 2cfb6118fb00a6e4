/* speedscope: the JSON validates against speedscope's published schema (with
 * ajv, through tests/js/check_speedscope.mjs, skipped without node), and in
 * C: one sampled profile per thread with samples root first and weights in
 * ns, evented profiles balanced and nested, frames with file/line/module,
 * and the odd cases (no times, no interval, empty profile, write errors). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"
#include "speedscope.h"
#include "unitkit.h"

#define MS 1000000ULL
#define T0 1000000000ULL /* the profile's start_ns */

/* ---- building profiles ------------------------------------------------ */

struct fixture {
	struct profile *p;
	uint32_t main_f, work_f, sys_f, helper_f;
	uint32_t stack_a, stack_b, stack_c;
	uint32_t t1, t2;
	uint32_t handle, parse;
};

/* Two threads of pid 100: "app" (4 samples) and a worker with an awkward
 * name (2 samples); user, kernel and inlined frames; spans nested, one
 * overlapping its caller's end, one still open. */
static struct fixture build(bool times, bool frequency, bool spans)
{
	struct fixture f;
	struct profile *p = f.p = profile_new();
	profile_event_intern(p, "cpu-clock");
	if (times)
		profile_meta_set(p, "start_ns", "1000000000");
	if (frequency)
		profile_meta_set(p, "frequency_hz", "1000");
	f.main_f = frames_intern(p->frames, "main", "/bin/app", "main.c", 10, FRAME_USER);
	f.work_f = frames_intern(p->frames, "work", "/bin/app", "", 0, FRAME_USER);
	f.sys_f = frames_intern(p->frames, "do_syscall_64", "[kernel.kallsyms]", "", 0,
				FRAME_KERNEL);
	f.helper_f = frames_intern(p->frames, "helper", "/bin/app", "util.h", 5, FRAME_INLINED);
	f.stack_a = profile_stack_intern(p, (uint32_t[]){f.main_f, f.work_f}, 2);
	f.stack_b = profile_stack_intern(p, (uint32_t[]){f.main_f, f.work_f, f.sys_f}, 3);
	f.stack_c = profile_stack_intern(p, (uint32_t[]){f.main_f, f.helper_f}, 2);
	f.t1 = profile_thread_intern(p, 100, 100, "app");
	f.t2 = profile_thread_intern(p, 100, 101, "wo\"rk\\er\n\xff");
	uint64_t b = times ? T0 : 0;
	/* out of time order on purpose */
	unit_sample(p, f.t1, times ? b + 3 * MS : 0, f.stack_a, 1);
	unit_sample(p, f.t1, times ? b + 1 * MS : 0, f.stack_a, 1);
	unit_sample(p, f.t2, times ? b + 3 * MS / 2 : 0, f.stack_c, times ? 1 : 5);
	unit_sample(p, f.t1, times ? b + 2 * MS : 0, f.stack_b, 1);
	unit_sample(p, f.t1, times ? b + 10 * MS : 0, f.stack_c, 1);
	unit_sample(p, f.t2, times ? b + 5 * MS / 2 : 0, f.stack_a, 1);
	f.handle = profile_probe_add(p, "handle \"req\"", "/bin/app", 0x1000);
	f.parse = profile_probe_add(p, "parse", "/bin/app", 0x2000);
	if (spans) {
		unit_span(p, (struct span){.id = 1, .probe = f.handle, .thread = f.t1,
					   .depth = 1, .start_ns = T0 + MS / 2, .duration_ns = 5 * MS});
		unit_span(p, (struct span){.id = 2, .parent = 1, .probe = f.parse, .thread = f.t1,
					   .depth = 2, .start_ns = T0 + MS, .duration_ns = MS});
		unit_span(p, (struct span){.id = 3, .parent = 1, .probe = f.parse, .thread = f.t1,
					   .depth = 2, .start_ns = T0 + 3 * MS, .duration_ns = MS});
		/* starts inside handle (ends at 5.5 ms) but ends after it */
		unit_span(p, (struct span){.id = 5, .parent = 1, .probe = f.parse, .thread = f.t1,
					   .depth = 2, .start_ns = T0 + 5 * MS, .duration_ns = 2 * MS});
		unit_span(p, (struct span){.id = 6, .probe = f.parse, .thread = f.t1,
					   .depth = 1, .start_ns = T0 + 20 * MS, .duration_ns = 0});
		unit_span(p, (struct span){.id = 4, .probe = f.handle, .thread = f.t2, .open = true,
					   .depth = 1, .start_ns = T0 + 2 * MS, .duration_ns = 100 * MS});
	}
	return f;
}

static char *render(struct profile *p, const char *name)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	cr_assert_not_null(f);
	cr_assert_eq(speedscope_write(f, p, name), 0);
	fclose(f);
	return buf;
}

/* ---- node checker ------------------------------------------------------ */

static bool have_checker(void)
{
	if (!have_tool("node"))
		return false;
	return access(SRC_DIR "/tests/js/node_modules/ajv/package.json", R_OK) == 0 &&
	       access(SRC_DIR "/tests/js/node_modules/speedscope/dist/release/file-format-schema.json",
		      R_OK) == 0;
}

#define REQUIRE_CHECKER()                                                                      \
	do {                                                                                   \
		if (!have_checker())                                                           \
			cr_skip_test("node or tests/js/node_modules (ajv, speedscope) missing: " \
				     "run scripts/bootstrap.sh");                              \
	} while (0)

/* Runs check_speedscope.mjs on the JSON text; returns its one-line report. */
static char *check(const char *json)
{
	return node_check_text("check_speedscope.mjs", json);
}

static void assert_valid(const char *report)
{
	cr_assert_not_null(strstr(report, "\"valid\":true"), "speedscope check failed: %s", report);
}

/* ---- reading our own output (its layout is fixed: no spaces) ----------- */

/* Number of elements of the array starting at s ('['), top level only. */
static size_t array_len(const char *s, const char **end)
{
	cr_assert_eq(*s, '[');
	int depth = 0;
	size_t n = 0;
	bool any = false;
	for (;; s++) {
		if (*s == '[' || *s == '{') {
			if (depth == 1 && !any)
				any = true;
			depth++;
		} else if (*s == ']' || *s == '}') {
			if (--depth == 0)
				break;
		} else if (depth == 1 && *s == ',') {
			n++;
		} else if (depth == 1 && *s != ' ' && *s != '\n') {
			any = true;
		}
	}
	if (end)
		*end = s;
	return any ? n + 1 : 0;
}

/* Every sampled profile has as many weights as samples; returns the number
 * of sampled profiles. */
static int check_lengths(const char *json)
{
	int profiles = 0;
	for (const char *s = json; (s = strstr(s, "\"samples\":[")); profiles++) {
		const char *end;
		size_t ns = array_len(s + strlen("\"samples\":"), &end);
		const char *w = strstr(end, "\"weights\":[");
		cr_assert_not_null(w);
		size_t nw = array_len(w + strlen("\"weights\":"), NULL);
		cr_assert_eq(ns, nw, "%zu samples, %zu weights", ns, nw);
		s = w;
	}
	return profiles;
}

/* Events of every evented profile: `at` non-decreasing, O/C balanced and
 * each C closing the frame on top. Returns the number of events. */
static int check_events(const char *json)
{
	int total = 0;
	for (const char *s = json; (s = strstr(s, "\"events\":[")); ) {
		s += strlen("\"events\":[");
		int stack[64], sp = 0;
		unsigned long long last = 0;
		while (*s == '{' || *s == ',') {
			if (*s == ',')
				s++;
			char type;
			unsigned long long at;
			int frame, used = 0;
			cr_assert_eq(sscanf(s, "{\"type\":\"%c\",\"at\":%llu,\"frame\":%d}%n", &type, &at,
					    &frame, &used),
				     3);
			cr_assert_gt(used, 0);
			s += used;
			cr_assert_geq(at, last, "at %llu after %llu", at, last);
			last = at;
			if (type == 'O') {
				cr_assert_lt(sp, 64);
				stack[sp++] = frame;
			} else {
				cr_assert_eq(type, 'C');
				cr_assert_gt(sp, 0, "close without open");
				cr_assert_eq(stack[sp - 1], frame, "closes %d, %d on top", frame,
					     stack[sp - 1]);
				sp--;
			}
			total++;
		}
		cr_assert_eq(*s, ']');
		cr_assert_eq(sp, 0, "%d frames left open", sp);
	}
	return total;
}

/* ---- tests ------------------------------------------------------------- */

Test(speedscope, validates_against_published_schema)
{
	REQUIRE_CHECKER();
	struct fixture f = build(true, true, true);
	char *json = render(f.p, "my \"profile\"");
	char *report = check(json);
	assert_valid(report);
	cr_assert_eq(json_num(report, "profiles"), 4, "%s", report); /* 2 sampled + 2 evented */
	cr_assert_eq(json_num(report, "sampled"), 2);
	cr_assert_eq(json_num(report, "evented"), 2);
	cr_assert_eq(json_num(report, "samples"), 6);
	cr_assert_eq(json_num(report, "weights_sum"), 6.0 * MS, "%s", report); /* 6 x 1 ms */
	cr_assert_eq(json_num(report, "events"), 12);                           /* 6 spans */
	cr_assert_eq(json_num(report, "frames"), 6, "%s", report);              /* 4 + 2 probes */
	free(report);
	free(json);
	profile_free(f.p);
}

Test(speedscope, structure)
{
	struct fixture f = build(true, true, true);
	char *json = render(f.p, NULL);
	cr_assert_eq(check_lengths(json), 2);
	cr_assert_eq(check_events(json), 12);
	cr_assert(strstr(json, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""));
	cr_assert(strstr(json, "\"exporter\":\"sonde\""));
	cr_assert(strstr(json, "\"activeProfileIndex\":0"));
	cr_assert(strstr(json, "\"name\":\"sonde\",\"activeProfileIndex\""));
	/* frames: file+line from source, else the module; bare names */
	cr_assert(strstr(json, "{\"name\":\"main\",\"file\":\"main.c\",\"line\":10}"));
	cr_assert(strstr(json, "{\"name\":\"work\",\"file\":\"/bin/app\"}"));
	cr_assert(strstr(json, "{\"name\":\"do_syscall_64\",\"file\":\"[kernel.kallsyms]\",\"kind\":\"kernel\"}"));
	cr_assert(strstr(json, "{\"name\":\"helper\",\"file\":\"util.h\",\"line\":5,\"kind\":\"inlined\"}"));
	cr_assert(strstr(json, "{\"name\":\"handle \\\"req\\\"\",\"file\":\"/bin/app\"}"));
	/* the busiest thread first, samples in time order, root first:
	 * 1 ms a, 2 ms b, 3 ms a, 10 ms c with main=0 work=1 sys=2 helper=3 */
	const char *app = strstr(json, "\"type\":\"sampled\",\"name\":\"app (100/100)\"");
	const char *worker = strstr(json, "\"type\":\"sampled\",\"name\":\"wo\\\"rk\\\\er\\n\\ufffd (100/101)\"");
	cr_assert_not_null(app, "%s", json);
	cr_assert_not_null(worker, "%s", json);
	cr_assert_lt(app, worker);
	cr_assert(strstr(app, "\"unit\":\"nanoseconds\",\"startValue\":1000000,\"endValue\":5000000,"
			      "\"samples\":[[0,1],[0,1,2],[0,1],[0,3]],"
			      "\"weights\":[1000000,1000000,1000000,1000000]}"),
		  "%s", json);
	cr_assert(strstr(worker, "\"startValue\":1500000,\"endValue\":3500000,"
				 "\"samples\":[[0,3],[0,1]]"),
		  "%s", json);
	/* spans: handle 0.5..5.5 ms holding parse 1..2, 3..4 and 5..5.5 (cut from
	 * 5..7); a zero-length parse at 20 ms; on the worker an open handle */
	const char *ev = strstr(json, "\"type\":\"evented\",\"name\":\"app (100/100) traced calls\"");
	cr_assert_not_null(ev, "%s", json);
	cr_assert(strstr(ev, "\"unit\":\"nanoseconds\",\"startValue\":500000,\"endValue\":20000000,"
			     "\"events\":["
			     "{\"type\":\"O\",\"at\":500000,\"frame\":4},"
			     "{\"type\":\"O\",\"at\":1000000,\"frame\":5},"
			     "{\"type\":\"C\",\"at\":2000000,\"frame\":5},"
			     "{\"type\":\"O\",\"at\":3000000,\"frame\":5},"
			     "{\"type\":\"C\",\"at\":4000000,\"frame\":5},"
			     "{\"type\":\"O\",\"at\":5000000,\"frame\":5},"
			     "{\"type\":\"C\",\"at\":5500000,\"frame\":5},"
			     "{\"type\":\"C\",\"at\":5500000,\"frame\":4},"
			     "{\"type\":\"O\",\"at\":20000000,\"frame\":5},"
			     "{\"type\":\"C\",\"at\":20000000,\"frame\":5}]}"),
		  "%s", ev);
	cr_assert(strstr(json, "traced calls\",\"unit\":\"nanoseconds\",\"startValue\":2000000,"
			       "\"endValue\":102000000,\"events\":["
			       "{\"type\":\"O\",\"at\":2000000,\"frame\":4},"
			       "{\"type\":\"C\",\"at\":102000000,\"frame\":4}]}"),
		  "%s", json);
	free(json);
	profile_free(f.p);
}

/* Without frequency_hz, a sample stands for the gap to the thread's next one
 * capped at the median gap (1 ms here: gaps 1, 1, 7 and 1 ms). */
Test(speedscope, weights_from_gaps_without_interval)
{
	struct fixture f = build(true, false, false);
	char *json = render(f.p, "x");
	cr_assert(strstr(json, "\"name\":\"app (100/100)\",\"unit\":\"nanoseconds\","
			       "\"startValue\":1000000,\"endValue\":5000000,"),
		  "%s", json);
	cr_assert(strstr(json, "\"weights\":[1000000,1000000,1000000,1000000]"), "%s", json);
	cr_assert_null(strstr(json, "\"type\":\"evented\""));
	if (have_checker()) {
		char *report = check(json);
		assert_valid(report);
		cr_assert_eq(json_num(report, "weights_sum"), 6.0 * MS, "%s", report);
		free(report);
	}
	free(json);
	profile_free(f.p);
}

/* Folded imports have no times: unit none, weights are the sample weights. */
Test(speedscope, no_times)
{
	struct fixture f = build(false, false, false);
	char *json = render(f.p, "folded");
	cr_assert_eq(check_lengths(json), 2);
	cr_assert(strstr(json, "\"unit\":\"none\",\"startValue\":0,\"endValue\":4,"), "%s", json);
	cr_assert(strstr(json, "\"unit\":\"none\",\"startValue\":0,\"endValue\":6,"
			       "\"samples\":[[0,3],[0,1]],\"weights\":[5,1]}"),
		  "%s", json);
	if (have_checker()) {
		char *report = check(json);
		assert_valid(report);
		cr_assert_eq(json_num(report, "samples"), 6);
		cr_assert_eq(json_num(report, "weights_sum"), 10);
		free(report);
	}
	free(json);
	profile_free(f.p);
}

/* Spans only, on a thread without samples: evented profile alone. */
Test(speedscope, spans_without_samples)
{
	struct profile *p = profile_new();
	uint32_t t = profile_thread_intern(p, 7, 8, "tracee");
	uint32_t pr = profile_probe_add(p, "f", "/bin/f", 0);
	unit_span(p, (struct span){.id = 1, .probe = pr, .thread = t,
				   .depth = 1, .start_ns = 5000, .duration_ns = 100});
	unit_span(p, (struct span){.id = 2, .parent = 1, .probe = pr, .thread = t,
				   .depth = 2, .start_ns = 5010, .duration_ns = 10});
	char *json = render(p, "spans");
	cr_assert_eq(check_lengths(json), 0);
	cr_assert_eq(check_events(json), 4);
	cr_assert(strstr(json, "\"frames\":[\n{\"name\":\"f\",\"file\":\"/bin/f\"}]"), "%s", json);
	cr_assert(strstr(json, "\"startValue\":0,\"endValue\":100,"), "%s", json);
	if (have_checker()) {
		char *report = check(json);
		assert_valid(report);
		cr_assert_eq(json_num(report, "profiles"), 1);
		cr_assert_eq(json_num(report, "events"), 4);
		free(report);
	}
	free(json);
	profile_free(p);
}

Test(speedscope, empty_profile)
{
	struct profile *p = profile_new();
	char *json = render(p, "empty");
	cr_assert(strstr(json, "\"profiles\":[\n{\"type\":\"sampled\",\"name\":\"empty\","
			       "\"unit\":\"none\",\"startValue\":0,\"endValue\":0,\"samples\":[],"
			       "\"weights\":[]}]"),
		  "%s", json);
	if (have_checker()) {
		char *report = check(json);
		assert_valid(report);
		cr_assert_eq(json_num(report, "profiles"), 1);
		cr_assert_eq(json_num(report, "samples"), 0);
		free(report);
	}
	free(json);
	profile_free(p);
}

/* Samples with stacks whose frames come back empty (stack 0). */
Test(speedscope, empty_stack_sample)
{
	struct profile *p = profile_new();
	uint32_t t = profile_thread_intern(p, 1, 1, "x");
	unit_sample(p, t, 10, 0, 1);
	char *json = render(p, "x");
	cr_assert(strstr(json, "\"samples\":[[]],\"weights\":["), "%s", json);
	if (have_checker()) {
		char *report = check(json);
		assert_valid(report);
		free(report);
	}
	free(json);
	profile_free(p);
}

Test(speedscope, write_error)
{
	FILE *f = fopen("/dev/full", "w");
	if (!f)
		cr_skip_test("no /dev/full");
	struct fixture fx = build(true, true, true);
	cr_assert_eq(speedscope_write(f, fx.p, "x"), -1);
	fclose(f);
	profile_free(fx.p);
}

/* The checker is not vacuous: it rejects what speedscope would refuse. */
Test(speedscope, checker_rejects_broken_files)
{
	REQUIRE_CHECKER();
	node_check_refuses(
		"check_speedscope.mjs",
		"{\"$schema\":\"" "https://www.speedscope.app/file-format-schema.json"
		"\",\"shared\":{\"frames\":[{\"name\":\"a\"}]},\"profiles\":["
		"{\"type\":\"sampled\",\"name\":\"x\",\"unit\":\"nanoseconds\","
		"\"startValue\":0,\"endValue\":1,\"samples\":[[0],[1]],\"weights\":[1]},"
		"{\"type\":\"evented\",\"name\":\"y\",\"unit\":\"nanoseconds\","
		"\"startValue\":0,\"endValue\":5,\"events\":["
		"{\"type\":\"O\",\"at\":3,\"frame\":0},{\"type\":\"C\",\"at\":2,\"frame\":0},"
		"{\"type\":\"C\",\"at\":4,\"frame\":0}]}]}",
		"\"valid\":false",
		(const char *const[]){"2 samples but 1 weights", "bad frame index", "at 2 before 3",
				      "closes with nothing open", NULL});
	node_check_refuses("check_speedscope.mjs",
			   "{\"shared\":{\"frames\":[]},\"profiles\":[{\"type\":\"sampled\"}]}",
			   "\"valid\":false", (const char *const[]){"schema: ", NULL});
	node_check_refuses("check_speedscope.mjs", "{\"profiles\":[", NULL,
			   (const char *const[]){"not JSON", NULL});
}

/* Frames of one function sampled at different lines are one speedscope
 * frame (without a line); same name elsewhere stays apart. */
Test(speedscope, frames_grouped_by_function)
{
	struct profile *p = profile_new();
	uint32_t m10 = frames_intern(p->frames, "main", "/bin/app", "main.c", 10, FRAME_USER);
	uint32_t m12 = frames_intern(p->frames, "main", "/bin/app", "main.c", 12, FRAME_USER);
	uint32_t w = frames_intern(p->frames, "work", "/bin/app", "", 0, FRAME_USER);
	uint32_t w2 = frames_intern(p->frames, "work", "/lib/other.so", "", 0, FRAME_USER);
	uint32_t wi = frames_intern(p->frames, "work", "/bin/app", "", 0, FRAME_INLINED);
	uint32_t t = profile_thread_intern(p, 1, 1, "x");
	unit_sample(p, t, 10, UNIT_STACK(p, m10, w), 1);
	unit_sample(p, t, 20, UNIT_STACK(p, m12, w), 1);
	unit_sample(p, t, 30, UNIT_STACK(p, m12, w2), 1);
	unit_sample(p, t, 40, UNIT_STACK(p, m10, wi), 1);
	char *json = render(p, "x");
	cr_assert(strstr(json, "\"frames\":[\n{\"name\":\"main\",\"file\":\"main.c\"},\n"
			       "{\"name\":\"work\",\"file\":\"/bin/app\"},\n"
			       "{\"name\":\"work\",\"file\":\"/lib/other.so\"}]"),
		  "%s", json);
	cr_assert(strstr(json, "\"samples\":[[0,1],[0,1],[0,2],[0,1]]"), "%s", json);
	uint32_t *line, *canon = speedscope_frame_groups(p->frames, &line);
	cr_assert_eq(canon[m12], m10);
	cr_assert_eq(canon[wi], w);
	cr_assert_eq(canon[w2], w2);
	cr_assert_eq(line[m10], 0);
	free(canon);
	free(line);
	free(json);
	profile_free(p);
}
