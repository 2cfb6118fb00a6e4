/* pycode_line: an instruction's source line from a code object's line
 * table, in 3.10's format (byte-offset ranges with line deltas) and in the
 * location table of 3.11 on (entries of code units, varint line deltas).
 * The tables here are written by hand after CPython's own descriptions
 * (Objects/lnotab_notes.txt, Objects/locations.md); python_frames.sh checks
 * the lines of real interpreters against the scripts' own tracebacks. */
#include <criterion/criterion.h>

#include "pyframes.h"

Test(pyframes, python_310_ranges_and_no_line)
{
	/* 4 bytes at line +1, 6 bytes at +2, 2 bytes with no line. */
	const uint8_t t[] = {4, 1, 6, 2, 2, (uint8_t)-128};
	cr_expect_eq(pycode_line(10, t, sizeof(t), 10, 0), 11);
	cr_expect_eq(pycode_line(10, t, sizeof(t), 10, 1), 11, "unit 1 is byte 2");
	cr_expect_eq(pycode_line(10, t, sizeof(t), 10, 2), 13);
	cr_expect_eq(pycode_line(10, t, sizeof(t), 10, 4), 13);
	cr_expect_eq(pycode_line(10, t, sizeof(t), 10, 5), -1, "bytes 10-11 have no line");
	cr_expect_eq(pycode_line(10, t, sizeof(t), 10, 6), -1, "past the table");
	cr_expect_eq(pycode_line(10, t, sizeof(t), 10, -1), -1, "not started");
}

Test(pyframes, location_table_of_311_on)
{
	const uint8_t t[] = {
		0xE9, 0x02,             /* no columns (13), 2 units: line +1 */
		0xD8, 0x00, 0x05,       /* one line (11), 1 unit: +1, two column bytes */
		0xFA,                   /* no location (15), 3 units */
		0x80, 0x07,             /* short form (0), 1 unit: same line, one column byte */
		0xF0, 0x05, 0x00, 0x01, 0x02, /* long form (14), 1 unit: -2, end line, columns */
		0xE8, 0x50, 0x01,       /* no columns, 1 unit: +40 (a varint of two bytes) */
	};
	for (unsigned minor = 11; minor <= 13; minor++) {
		cr_expect_eq(pycode_line(minor, t, sizeof(t), 10, 0), 11);
		cr_expect_eq(pycode_line(minor, t, sizeof(t), 10, 1), 11);
		cr_expect_eq(pycode_line(minor, t, sizeof(t), 10, 2), 12);
		cr_expect_eq(pycode_line(minor, t, sizeof(t), 10, 3), -1);
		cr_expect_eq(pycode_line(minor, t, sizeof(t), 10, 5), -1);
		cr_expect_eq(pycode_line(minor, t, sizeof(t), 10, 6), 12, "no location moves no line");
		cr_expect_eq(pycode_line(minor, t, sizeof(t), 10, 7), 10);
		cr_expect_eq(pycode_line(minor, t, sizeof(t), 10, 8), 50);
		cr_expect_eq(pycode_line(minor, t, sizeof(t), 10, 9), -1, "past the table");
	}
}

Test(pyframes, a_table_out_of_step_names_no_line)
{
	/* A byte without bit 7 where an entry should begin. */
	const uint8_t t[] = {0xE8, 0x02, 0x02, 0xE8, 0x02};
	cr_expect_eq(pycode_line(12, t, sizeof(t), 1, 0), 2);
	cr_expect_eq(pycode_line(12, t, sizeof(t), 1, 1), -1);
	/* A varint that never ends. */
	const uint8_t u[] = {0xE8, 0x41, 0x41};
	cr_expect_eq(pycode_line(12, u, sizeof(u), 1, 0), -1);
}
