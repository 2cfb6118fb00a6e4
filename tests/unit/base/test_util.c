/* Unit tests for util's error buffer and count formatting: the one error
 * style every module uses, and the digit grouping the SVG outputs print. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "errbuf.h"
#include "util.h"

Test(errbuf, set_writes_one_line_and_returns_minus_one)
{
	char err[64] = "stale";
	cr_assert_eq(errbuf_set(err, sizeof(err), "bad %s at %d", "thing", 7), -1);
	cr_assert_str_eq(err, "bad thing at 7");
	/* a quoted message of another module may carry line breaks */
	cr_assert_eq(errbuf_set(err, sizeof(err), "%s", "first\nsecond\r\nthird"), -1);
	cr_assert_str_eq(err, "first second  third");
}

Test(errbuf, set_without_room_writes_nothing)
{
	char err[8] = "keep";
	cr_assert_eq(errbuf_set(NULL, 8, "x"), -1);
	cr_assert_eq(errbuf_set(err, 0, "x"), -1);
	cr_assert_str_eq(err, "keep");
	cr_assert_eq(errbuf_set(err, 5, "%s", "truncated"), -1);
	cr_assert_str_eq(err, "trun");
}

Test(errbuf, first_keeps_the_first_failure)
{
	char err[64] = "";
	struct errbuf e = {.err = err, .errlen = sizeof(err)};
	cr_assert_not(e.failed);
	cr_assert_eq(errbuf_first(&e, "unexpected %s", "\"]\""), -1);
	cr_assert(e.failed);
	/* what follows from the first failure does not replace it */
	cr_assert_eq(errbuf_first(&e, "expected a member name"), -1);
	cr_assert_str_eq(err, "unexpected \"]\"");
	/* one line, as errbuf_set */
	char two[16];
	struct errbuf f = {.err = two, .errlen = sizeof(two)};
	errbuf_first(&f, "a\nb");
	cr_assert_str_eq(two, "a b");
	/* no buffer: only the state */
	struct errbuf none = {0};
	cr_assert_eq(errbuf_first(&none, "x"), -1);
	cr_assert(none.failed);
}

Test(errbuf, prefix_goes_in_front_and_the_end_is_cut)
{
	char err[32];
	errbuf_set(err, sizeof(err), "node %u: malformed", 3u);
	errbuf_prefix(err, sizeof(err), "nflxprofile: ");
	cr_assert_str_eq(err, "nflxprofile: node 3: malformed");

	/* the same bytes as writing prefix and message in one go */
	char two[16];
	errbuf_set(two, sizeof(two), "%s", "a long message here");
	errbuf_prefix(two, sizeof(two), "pprof: ");
	cr_assert_str_eq(two, "pprof: a long m");

	char tiny[4] = "ab";
	errbuf_prefix(tiny, sizeof(tiny), "pprof: ");
	cr_assert_str_eq(tiny, "ppr");
	char empty[16] = "";
	errbuf_prefix(empty, sizeof(empty), "pprof: ");
	cr_assert_str_eq(empty, "pprof: ");
	errbuf_prefix(NULL, 16, "pprof: "); /* no buffer: nothing to do */
}

Test(format_count, groups_thousands)
{
	char buf[32];
	cr_assert_str_eq(format_count(0, buf), "0");
	cr_assert_str_eq(format_count(999, buf), "999");
	cr_assert_str_eq(format_count(1000, buf), "1,000");
	cr_assert_str_eq(format_count(1234567, buf), "1,234,567");
	cr_assert_str_eq(format_count(100000, buf), "100,000");
	cr_assert_str_eq(format_count(UINT64_MAX, buf), "18,446,744,073,709,551,615");
	cr_assert_eq(format_count(5, buf), buf);
}
