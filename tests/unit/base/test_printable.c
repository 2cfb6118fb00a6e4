/* Unit tests for printable: what a terminal would take as a command is
 * escaped, byte for byte; everything else, UTF-8 included, is untouched. */
#include <criterion/criterion.h>
#include <string.h>

#include "printable.h"

static void expect(const char *in, const char *want)
{
	struct printable keep = {0};
	const char *got = printable(&keep, in);
	cr_assert_str_eq(got, want, "printable(\"%s\")", want);
	if (strcmp(in, want) == 0)
		cr_assert_eq(got, in, "a clean string is not copied");
	printable_free(&keep);
}

Test(printable, controls_become_escapes)
{
	expect("main", "main");
	expect("", "");
	expect("\x1b]2;pwned\x07", "\\e]2;pwned\\x07");
	expect("a\x1b[2Jb", "a\\e[2Jb");
	expect("line\nforged", "line\\nforged");
	expect("tab\there\r", "tab\\there\\r");
	expect("del\x7f", "del\\x7f");
	expect("\x01\x1f", "\\x01\\x1f");
	/* C1: U+009B (CSI) as UTF-8, and as a lone byte */
	expect("a\xc2\x9b" "31mb", "a\\xc2\\x9b31mb");
	expect("a\x9b" "31mb", "a\\x9b31mb");
	/* not UTF-8: each byte escaped */
	expect("\xff\xfe", "\\xff\\xfe");
	expect("\xe2\x82", "\\xe2\\x82");          /* cut short */
	expect("\xc0\xaf", "\\xc0\\xaf");          /* overlong '/' */
	expect("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* a surrogate */
}

Test(printable, utf8_passes)
{
	expect("caf\xc3\xa9", "caf\xc3\xa9");
	expect("\xe2\x80\x94 \xf0\x9f\x94\xa5", "\xe2\x80\x94 \xf0\x9f\x94\xa5");
	expect("\xc2\xa0nbsp", "\xc2\xa0nbsp"); /* U+00A0 is past C1 */
	expect("std::vector<int>::push_back(int&&)", "std::vector<int>::push_back(int&&)");
}

Test(printable, several_copies_live_together)
{
	struct printable keep = {0};
	const char *a = printable(&keep, "a\x1b");
	const char *b = printable(&keep, "b\x1b");
	const char *c = printable(&keep, NULL);
	cr_assert_str_eq(a, "a\\e");
	cr_assert_str_eq(b, "b\\e");
	cr_assert_null(c);
	printable_free(&keep);
}

Test(printable, text_keeps_lines)
{
	struct printable keep = {0};
	cr_assert_str_eq(printable_text(&keep, "one\n\ttwo\x1b[1m\n"), "one\n\ttwo\\e[1m\n");
	static const char clean[] = "a\nb\n";
	cr_assert_eq(printable_text(&keep, clean), clean);
	printable_free(&keep);
}

Test(printable, copy_into_a_buffer)
{
	char buf[8];
	cr_assert_str_eq(printable_copy(buf, sizeof(buf), "ab\x1b" "cd"), "ab\\ecd");
	/* cut at a whole escape: never half of "\x07" */
	cr_assert_str_eq(printable_copy(buf, sizeof(buf), "abcde\x07"), "abcde");
	cr_assert_str_eq(printable_copy(buf, sizeof(buf), "abcdefghij"), "abcdefg");
	/* nor half of a UTF-8 character */
	cr_assert_str_eq(printable_copy(buf, sizeof(buf), "abcdef\xc3\xa9"), "abcdef");
	cr_assert_str_eq(printable_copy(buf, 1, "x"), "");
}
