/* values: a py: probe's values (kind CAPTURE_PYTHON) from the kernel's
 * record (its pytype, value word and bytes) to the text the profile keeps,
 * as Python's repr shows it: ints of every size and sign, bools, floats
 * (the fewest digits that read back), None, str of each width (Latin-1,
 * UCS-2, UCS-4 turned to UTF-8; a str longer than was read ends in ...),
 * another type by its name; a name that is no local of the function is a
 * value not read. */
#include <criterion/criterion.h>
#include <string.h>

#include "profile.h"
#include "sonde_abi.h"
#include "values.h"

static struct profile *p;
static uint32_t probe, thread;

static void setup(void)
{
	p = profile_new();
	probe = profile_probe_add(p, "py:app.handle", "python3.12", 0);
	struct probe_capture c = {.probe = probe, .name = "x", .type = "object",
				  .kind = CAPTURE_PYTHON};
	uint32_t slot = values_capture_intern(p, &c);
	values_set_probe(p, probe, &slot, 1, NULL);
	thread = profile_thread_intern(p, 10, 10, "t");
}

static void teardown(void)
{
	profile_free(p);
}

/* The text of one value the kernel sent: (pytype, value, bytes). */
static const char *text_of(uint8_t pytype, uint64_t value, const void *bytes, size_t n,
			   uint8_t *status)
{
	struct sonde_values r = {.probe = probe, .nvalues = 1,
				 .layout = p->probes[probe].capture_layout};
	r.pytype[0] = pytype;
	r.value[0] = value;
	memcpy(r.str[0], bytes, n);
	cr_assert_eq(values_add_record(p, &r, thread), 0);
	const struct hit_value *v = &p->hit_values[p->hits[p->nhits - 1].first];
	*status = v->status;
	static char buf[512];
	return values_format(p, v, buf, sizeof(buf));
}

static void expect(uint8_t pytype, uint64_t value, const void *bytes, size_t n, const char *want)
{
	uint8_t status;
	const char *got = text_of(pytype, value, bytes, n, &status);
	cr_assert_eq(status, CAPTURE_OK, "%s: status %u", want, status);
	cr_assert_str_eq(got, want);
}

static uint64_t bits(double d)
{
	uint64_t b;
	memcpy(&b, &d, sizeof(b));
	return b;
}

TestSuite(pyvalues, .init = setup, .fini = teardown);

Test(pyvalues, ints_bools_none)
{
	expect(SONDE_PYV_INT, 42, "", 0, "42");
	expect(SONDE_PYV_INT, (uint64_t)-7, "", 0, "-7");
	expect(SONDE_PYV_INT, (uint64_t)INT64_MIN, "", 0, "-9223372036854775808");
	expect(SONDE_PYV_UINT, UINT64_MAX, "", 0, "18446744073709551615");
	expect(SONDE_PYV_BIGINT, 3, "", 0, "<int of more than 64 bits>");
	expect(SONDE_PYV_BIGINT, (uint64_t)-3, "", 0, "<negative int of more than 64 bits>");
	expect(SONDE_PYV_BOOL, 1, "", 0, "True");
	expect(SONDE_PYV_BOOL, 0, "", 0, "False");
	expect(SONDE_PYV_NONE, 0, "", 0, "None");
	expect(SONDE_PYV_UNBOUND, 0, "", 0, "<unbound>");
	expect(SONDE_PYV_OTHER, 0, "list", 5, "<list object>");
}

/* As repr(float) in CPython 3.12. */
Test(pyvalues, floats_as_repr)
{
	expect(SONDE_PYV_FLOAT, bits(0.1), "", 0, "0.1");
	expect(SONDE_PYV_FLOAT, bits(110.0), "", 0, "110.0");
	expect(SONDE_PYV_FLOAT, bits(2.5), "", 0, "2.5");
	expect(SONDE_PYV_FLOAT, bits(-0.0), "", 0, "-0.0");
	expect(SONDE_PYV_FLOAT, bits(1e16), "", 0, "1e+16");
	expect(SONDE_PYV_FLOAT, bits(123456789012345.6), "", 0, "123456789012345.6");
	expect(SONDE_PYV_FLOAT, bits(2.5e-05), "", 0, "2.5e-05");
	expect(SONDE_PYV_FLOAT, bits(0.0001), "", 0, "0.0001");
	expect(SONDE_PYV_FLOAT, bits(1.0 / 3), "", 0, "0.3333333333333333");
}

Test(pyvalues, strs_of_each_width)
{
	expect(SONDE_PYV_STR, 3, "GET", 3, "'GET'");
	expect(SONDE_PYV_STR, 4, "it's", 4, "'it\\'s'");
	expect(SONDE_PYV_STR, 100, "abc", 3, "'abc'...");
	/* control characters as repr writes them */
	expect(SONDE_PYV_STR, 6, "a\tb\nc\x01", 6, "'a\\tb\\nc\\x01'");
	/* a UTF-8 copy read up to its byte limit, cut inside a character: the
	 * character is left out, the str said to go on */
	expect(SONDE_PYV_STR, 5, "abc\xe2\x82", 5, "'abc'...");
	expect(SONDE_PYV_STR, 4, "abc\xe2\x82\xac", 6, "'abc\xe2\x82\xac'");
	expect(SONDE_PYV_STR1, 2, "\xe9x", 2, "'\xc3\xa9x'");
	expect(SONDE_PYV_STR2, 1, "\xac\x20", 2, "'\xe2\x82\xac'");
	expect(SONDE_PYV_STR4, 1, "\x00\xf6\x01\x00", 4, "'\xf0\x9f\x98\x80'");
	/* 60 bytes are read of a wider str: 15 of its UCS-4 characters. */
	uint8_t wide[60];
	for (int i = 0; i < 15; i++)
		memcpy(wide + 4 * i, "\x41\x00\x00\x00", 4);
	uint8_t status;
	const char *t = text_of(SONDE_PYV_STR4, 20, wide, sizeof(wide), &status);
	cr_assert_str_eq(t, "'AAAAAAAAAAAAAAA'...");
}

Test(pyvalues, no_such_local_is_not_a_value)
{
	uint8_t status;
	text_of(SONDE_PYV_NO_LOCAL, 0, "", 0, &status);
	cr_assert_eq(status, CAPTURE_UNAVAILABLE);
	cr_assert_str_eq(values_kind_name(CAPTURE_PYTHON), "python");
	cr_assert_eq(values_kind_from_name("python"), CAPTURE_PYTHON);
}
