/* optval: numeric option values. Accepted values come back exactly; a bad
 * value is -1, *out untouched, and exactly one error line on stderr, "sonde:
 * bad value 'X' for OPT: expected ...". Each test runs in its own process,
 * so the stderr it checks is its own. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <stdint.h>

#include "optval.h"

TestSuite(optval, .init = cr_redirect_stderr);

Test(optval, number_accepts_strtod_forms_within_bounds)
{
	double v = -1;
	cr_assert_eq(optval_number("-F", "99", "a number", 1, 100000, &v), 0);
	cr_assert_eq(v, 99.0);
	cr_assert_eq(optval_number("-d", "0.5", "seconds", 0.001, 10, &v), 0);
	cr_assert_eq(v, 0.5);
	cr_assert_eq(optval_number("-c", "1e3", "a number", 1, 1e12, &v), 0);
	cr_assert_eq(v, 1000.0);
	cr_assert_eq(optval_number("-x", "0x10", "a number", 0, 100, &v), 0);
	cr_assert_eq(v, 16.0);
	/* The bounds themselves are in. */
	cr_assert_eq(optval_number("-F", "1", "a number", 1, 100000, &v), 0);
	cr_assert_eq(v, 1.0);
	cr_assert_eq(optval_number("-F", "100000", "a number", 1, 100000, &v), 0);
	cr_assert_eq(v, 100000.0);
	fflush(stderr);
	cr_assert_stderr_eq_str("");
}

Test(optval, number_below_min_is_one_line)
{
	double v = 7;
	cr_assert_eq(optval_number("-F", "0", "a number", 1, 100000, &v), -1);
	cr_assert_eq(v, 7.0);
	fflush(stderr);
	cr_assert_stderr_eq_str(
		"sonde: bad value '0' for -F: expected a number from 1 to 100000\n");
}

Test(optval, number_above_max_names_what)
{
	double v = 7;
	cr_assert_eq(optval_number("-i", "3601", "seconds", 0.05, 3600, &v), -1);
	cr_assert_eq(v, 7.0);
	fflush(stderr);
	cr_assert_stderr_eq_str(
		"sonde: bad value '3601' for -i: expected seconds from 0.05 to 3600\n");
}

Test(optval, number_rejects_trailing_text)
{
	double v = 7;
	cr_assert_eq(optval_number("-d", "5s", "a number", 0.001, 1e7, &v), -1);
	cr_assert_eq(v, 7.0);
	fflush(stderr);
	cr_assert_stderr_eq_str(
		"sonde: bad value '5s' for -d: expected a number from 0.001 to 10000000\n");
}

Test(optval, number_rejects_empty_nan_and_overflow)
{
	double v = 7;
	cr_assert_eq(optval_number("-c", "", "a number", 1, 10, &v), -1);
	cr_assert_eq(optval_number("-c", "nan", "a number", 1, 10, &v), -1);
	cr_assert_eq(optval_number("-c", "1e999", "a number", 1, 10, &v), -1);
	cr_assert_eq(v, 7.0);
	fflush(stderr);
	cr_assert_stderr_eq_str("sonde: bad value '' for -c: expected a number from 1 to 10\n"
				"sonde: bad value 'nan' for -c: expected a number from 1 to 10\n"
				"sonde: bad value '1e999' for -c: expected a number from 1 to 10\n");
}

Test(optval, count_accepts_decimal_digits_within_bounds)
{
	uint64_t v = 0;
	cr_assert_eq(optval_count("--pid", "1", 1, UINT32_MAX, &v), 0);
	cr_assert_eq(v, 1);
	cr_assert_eq(optval_count("--pid", "4294967295", 1, UINT32_MAX, &v), 0);
	cr_assert_eq(v, UINT32_MAX);
	cr_assert_eq(optval_count("-n", "007", 1, 10, &v), 0);
	cr_assert_eq(v, 7);
	cr_assert_eq(optval_count("-n", "18446744073709551615", 0, UINT64_MAX, &v), 0);
	cr_assert_eq(v, UINT64_MAX);
	fflush(stderr);
	cr_assert_stderr_eq_str("");
}

Test(optval, count_out_of_bounds)
{
	uint64_t v = 9;
	cr_assert_eq(optval_count("--pid", "0", 1, UINT32_MAX, &v), -1);
	cr_assert_eq(optval_count("--pid", "4294967296", 1, UINT32_MAX, &v), -1);
	cr_assert_eq(v, 9);
	fflush(stderr);
	cr_assert_stderr_eq_str(
		"sonde: bad value '0' for --pid: expected a whole number from 1 to 4294967295\n"
		"sonde: bad value '4294967296' for --pid: expected a whole number from 1 to "
		"4294967295\n");
}

Test(optval, count_rejects_signs_spaces_fractions_and_overflow)
{
	uint64_t v = 9;
	/* strtoull would take these; a count is digits only. */
	cr_assert_eq(optval_count("-n", "-1", 0, 10, &v), -1);
	cr_assert_eq(optval_count("-n", "+1", 0, 10, &v), -1);
	cr_assert_eq(optval_count("-n", " 1", 0, 10, &v), -1);
	cr_assert_eq(optval_count("-n", "1.5", 0, 10, &v), -1);
	cr_assert_eq(optval_count("-n", "", 0, 10, &v), -1);
	cr_assert_eq(optval_count("-n", "18446744073709551616", 0, UINT64_MAX, &v), -1);
	cr_assert_eq(v, 9);
	fflush(stderr);
	cr_assert_stderr_eq_str(
		"sonde: bad value '-1' for -n: expected a whole number from 0 to 10\n"
		"sonde: bad value '+1' for -n: expected a whole number from 0 to 10\n"
		"sonde: bad value ' 1' for -n: expected a whole number from 0 to 10\n"
		"sonde: bad value '1.5' for -n: expected a whole number from 0 to 10\n"
		"sonde: bad value '' for -n: expected a whole number from 0 to 10\n"
		"sonde: bad value '18446744073709551616' for -n: expected a whole number from 0 "
		"to 18446744073709551615\n");
}
