/* view_args: the offline commands' view options into a struct view. 1 for
 * an option taken, 0 for one that is not a view option (the command's own),
 * -1 after one error line for a bad value. The time options only count when
 * the command takes a time (time != NULL). */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <stdint.h>

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
