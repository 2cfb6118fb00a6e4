/* view_args: the offline commands' view options into a struct view. 1 for
 * an option taken, 0 for one that is not a view option (the command's own),
 * -1 after one error line for a bad value. The time options only count when
 * the command takes a time (time != NULL). */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "view_args.h"

TestSuite(view_args, .init = cr_redirect_stderr);

Test(view_args, filters_fill_the_view)
{
	struct view v = {0};
	cr_assert_eq(view_args_parse_option(&v, NULL, 'P', "1234"), 1);
	cr_assert_eq(v.pid, 1234);
	cr_assert_eq(view_args_parse_option(&v, NULL, 'T', "4294967295"), 1);
	cr_assert_eq(v.tid, 4294967295LL);
	cr_assert_eq(view_args_parse_option(&v, NULL, 'C', "nginx"), 1);
	cr_assert_str_eq(v.comm, "nginx");
	cr_assert_eq(view_args_parse_option(&v, NULL, 'E', "cycles"), 1);
	cr_assert_str_eq(v.event, "cycles");
	cr_assert_eq(view_args_parse_option(&v, NULL, 'O', NULL), 1);
	cr_assert(v.show_overhead);
	cr_assert_eq(v.time, VIEW_ON_CPU);
	fflush(stderr);
	cr_assert_stderr_eq_str("");
}

Test(view_args, bad_pid_and_tid_are_rejected)
{
	struct view v = {.pid = 5, .tid = 6};
	cr_assert_eq(view_args_parse_option(&v, NULL, 'P', "0"), -1);
	cr_assert_eq(view_args_parse_option(&v, NULL, 'T', "12x"), -1);
	cr_assert_eq(view_args_parse_option(&v, NULL, 'P', "4294967296"), -1);
	cr_assert_eq(v.pid, 5);
	cr_assert_eq(v.tid, 6);
	fflush(stderr);
	cr_assert_stderr_eq_str(
		"sonde: bad value '0' for --pid: expected a whole number from 1 to 4294967295\n"
		"sonde: bad value '12x' for --tid: expected a whole number from 1 to 4294967295\n"
		"sonde: bad value '4294967296' for --pid: expected a whole number from 1 to "
		"4294967295\n");
}

Test(view_args, time_options_set_the_time)
{
	struct view v = {0};
	enum view_time t = VIEW_ON_CPU;
	cr_assert_eq(view_args_parse_option(&v, &t, 'X', NULL), 1);
	cr_assert_eq(t, VIEW_OFF_CPU);
	cr_assert_eq(view_args_parse_option(&v, &t, 'L', NULL), 1);
	cr_assert_eq(t, VIEW_WALL);
	cr_assert_eq(view_args_parse_option(&v, &t, 'K', NULL), 1);
	cr_assert_eq(t, VIEW_WAKERS);
	/* The filters still work with a time. */
	cr_assert_eq(view_args_parse_option(&v, &t, 'C', "x"), 1);
	cr_assert_str_eq(v.comm, "x");
}

Test(view_args, time_options_are_not_taken_without_a_time)
{
	struct view v = {0};
	cr_assert_eq(view_args_parse_option(&v, NULL, 'X', NULL), 0);
	cr_assert_eq(view_args_parse_option(&v, NULL, 'L', NULL), 0);
	cr_assert_eq(view_args_parse_option(&v, NULL, 'K', NULL), 0);
	cr_assert_eq(v.time, VIEW_ON_CPU);
}

Test(view_args, other_options_are_left_to_the_command)
{
	struct view v = {0};
	enum view_time t = VIEW_ON_CPU;
	cr_assert_eq(view_args_parse_option(&v, &t, 'o', "out.svg"), 0);
	cr_assert_eq(view_args_parse_option(&v, &t, 'p', "1"), 0);
	cr_assert_eq(t, VIEW_ON_CPU);
	cr_assert_eq(v.pid, 0);
	fflush(stderr);
	cr_assert_stderr_eq_str("");
}

/* --in, --slow, --fast: one of them, kept as given until the profile is
 * loaded. */
Test(view_args, one_span_option_is_kept_with_its_class)
{
	struct view_span_arg s = {0};
	cr_assert_eq(view_args_parse_span(&s, 'P', "1"), 0, "not a span option");
	cr_assert_null(s.arg);
	cr_assert_eq(view_args_parse_span(&s, VIEW_ARGS_OPT_SLOW, "handle:10us"), 1);
	cr_assert_str_eq(s.arg, "handle:10us");
	cr_assert_eq(s.cls, SPAN_SLOW);
	cr_assert_eq(view_args_parse_span(&s, VIEW_ARGS_OPT_FAST, "handle"), -1,
		     "a second span option is refused");
	cr_assert_str_eq(s.arg, "handle:10us");
	struct view_span_arg in = {0};
	cr_assert_eq(view_args_parse_span(&in, VIEW_ARGS_OPT_IN, "handle"), 1);
	cr_assert_eq(in.cls, SPAN_IN);
	fflush(stderr);
	cr_assert_stderr_eq_str("sonde: give one of --in, --slow, --fast\n");
}

/* A profile with probe "handle" and ten calls: nine of 1 us, one of 50 us. */
static struct profile *ten_calls(void)
{
	struct profile *p = profile_new();
	uint32_t probe = profile_probe_add(p, "handle", "/bin/x", 0x1000);
	for (int i = 0; i < 10; i++) {
		uint64_t d = i == 9 ? 50000 : 1000;
		struct span sp = {.id = (uint64_t)i + 1,
				  .start_ns = 1000000 * (uint64_t)i,
				  .duration_ns = d,
				  .raw_duration_ns = d,
				  .probe = probe,
				  .depth = 1};
		cr_assert_geq(profile_span_add(p, &sp), 0);
	}
	return p;
}

Test(view_args, a_span_option_is_resolved_against_the_profile)
{
	struct profile *p = ten_calls();
	struct view v = {0};
	char desc[256];
	struct view_span_arg s = {.arg = "handle:10us", .cls = SPAN_SLOW};
	cr_assert_eq(view_args_apply_span(&s, p, &v, desc, sizeof(desc)), 0);
	cr_expect_eq(v.span_class, SPAN_SLOW);
	cr_expect_eq(v.probe, 0);
	cr_expect_eq(v.threshold_ns, 10000);
	cr_expect(strstr(desc, "samples in slow calls of handle") == desc, "desc: %s", desc);
	cr_expect(strstr(desc, "1 of 10 calls") != NULL, "desc: %s", desc);
	profile_free(p);
	fflush(stderr);
	cr_assert_stderr_eq_str("");
}

Test(view_args, an_unknown_function_is_one_error_line)
{
	struct profile *p = ten_calls();
	struct view v = {0};
	char desc[256] = "";
	struct view_span_arg s = {.arg = "nosuch:10us", .cls = SPAN_SLOW};
	cr_assert_eq(view_args_apply_span(&s, p, &v, desc, sizeof(desc)), -1);
	cr_expect_eq(v.span_class, SPAN_ANY, "the view is left as it was");
	profile_free(p);
	fflush(stderr);
	FILE *f = cr_get_redirected_stderr();
	char line[512];
	cr_assert_not_null(fgets(line, sizeof(line), f));
	cr_expect(strncmp(line, "sonde: ", 7) == 0, "%s", line);
	cr_expect(strstr(line, "nosuch") != NULL, "%s", line);
	cr_expect_null(fgets(line, sizeof(line), f), "one line only");
}
