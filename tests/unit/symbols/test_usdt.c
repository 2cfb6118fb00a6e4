/* usdt: the operand specs of SDT notes (x86-64), as gcc's <sys/sdt.h>
 * writes them, and what is refused. */
#include <criterion/criterion.h>

#include <string.h>

#include "usdt.h"

Test(usdt, registers_of_each_width)
{
	struct usdt_arg a;
	cr_assert_eq(usdt_parse_arg("-4@%eax", &a), 0);
	cr_expect_eq(a.kind, USDT_ARG_REG);
	cr_expect_eq(a.size, 4);
	cr_expect(a.is_signed);
	cr_expect_eq(a.reg, 0);
	cr_assert_eq(usdt_parse_arg("8@%r15", &a), 0);
	cr_expect_eq(a.reg, 15);
	cr_expect(!a.is_signed);
	cr_assert_eq(usdt_parse_arg("1@%sil", &a), 0);
	cr_expect_eq(a.reg, 4);
	cr_assert_eq(usdt_parse_arg("-2@%r9w", &a), 0);
	cr_expect_eq(a.reg, 9);
	cr_expect_eq(a.size, 2);
}

Test(usdt, memory_operands)
{
	struct usdt_arg a;
	cr_assert_eq(usdt_parse_arg("-4@112(%rsp)", &a), 0);
	cr_expect_eq(a.kind, USDT_ARG_MEM);
	cr_expect_eq(a.reg, 7);
	cr_expect_eq(a.offset, 112);
	cr_assert_eq(usdt_parse_arg("8@-16(%rbp)", &a), 0);
	cr_expect_eq(a.reg, 6);
	cr_expect_eq(a.offset, -16);
	cr_assert_eq(usdt_parse_arg("8@(%rbx)", &a), 0);
	cr_expect_eq(a.offset, 0);
	cr_assert_eq(usdt_parse_arg("4@0x20(%rip)", &a), 0);
	cr_expect_eq(a.reg, 16);
	cr_expect_eq(a.offset, 0x20);
	cr_expect_str_eq(a.symbol, "");
}

/* gcc writes a variable as the assembler takes it: its name, rip-relative
 * (usdt_read turns the name into the variable's address). */
Test(usdt, variables_by_name)
{
	struct usdt_arg a;
	cr_assert_eq(usdt_parse_arg("-4@counter(%rip)", &a), 0);
	cr_expect_eq(a.kind, USDT_ARG_MEM);
	cr_expect_eq(a.reg, 16);
	cr_expect_str_eq(a.symbol, "counter");
	cr_expect_eq(a.offset, 0);
	cr_expect_eq(a.size, 4);
	cr_expect(a.is_signed);
	cr_assert_eq(usdt_parse_arg("8@table.lto_priv.0+16(%rip)", &a), 0);
	cr_expect_str_eq(a.symbol, "table.lto_priv.0");
	cr_expect_eq(a.offset, 16);
	cr_assert_eq(usdt_parse_arg("2@_val-4(%rip)", &a), 0);
	cr_expect_str_eq(a.symbol, "_val");
	cr_expect_eq(a.offset, -4);
	cr_expect_eq(usdt_parse_arg("4@counter(%rbx)", &a), -1, "a name is an address only off rip");
	cr_expect_eq(usdt_parse_arg("4@counter16(%rip", &a), -1);
	cr_expect_eq(usdt_parse_arg("4@counter*2(%rip)", &a), -1);
}

Test(usdt, constants)
{
	struct usdt_arg a;
	cr_assert_eq(usdt_parse_arg("4@$5", &a), 0);
	cr_expect_eq(a.kind, USDT_ARG_CONST);
	cr_expect_eq(a.offset, 5);
	cr_assert_eq(usdt_parse_arg("-8@$-1", &a), 0);
	cr_expect_eq(a.offset, -1);
}

Test(usdt, what_is_refused)
{
	struct usdt_arg a;
	cr_expect_eq(usdt_parse_arg("3@%eax", &a), -1, "no 3-byte values");
	cr_expect_eq(usdt_parse_arg("16@%rax", &a), -1);
	cr_expect_eq(usdt_parse_arg("%eax", &a), -1, "a size is needed");
	cr_expect_eq(usdt_parse_arg("4@%xmm0", &a), -1);
	cr_expect_eq(usdt_parse_arg("4@%rip", &a), -1, "rip alone is not a value");
	cr_expect_eq(usdt_parse_arg("8@16(%rax", &a), -1);
	cr_expect_eq(usdt_parse_arg("4@$", &a), -1);
}

#include "capexpr.h"
#include "usdtfetch.h"

/* A site of gc__start as Debian's python3.11 has it: -4@112(%rsp), and a
 * pointer in a register. */
static const struct usdt_arg SITE_ARGS[] = {
	{.kind = USDT_ARG_MEM, .size = 4, .is_signed = true, .reg = 7, .offset = 112},
	{.kind = USDT_ARG_REG, .size = 8, .reg = 14},
};

static int compile_text(const char *text, struct fetch_build *b, char *err, size_t n)
{
	struct cap_spec spec;
	if (capexpr_parse(text, &spec, err, n))
		return -1;
	struct usdtfetch_site site = {SITE_ARGS, 2, 0x4287f3};
	int r = usdtfetch_compile(&site, &spec, b, err, n);
	capexpr_free(&spec);
	return r;
}

Test(usdt, arguments_become_captures)
{
	struct fetch_build b;
	char err[256];
	cr_assert_eq(compile_text("arg0 str(arg1) if arg0 > 1", &b, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(b.ndesc, 2);
	cr_expect_eq(b.desc[0].kind, CAPTURE_SIGNED);
	cr_expect_eq(b.desc[0].size, 4);
	cr_expect_str_eq(b.desc[0].type, "int32");
	cr_expect_eq(b.desc[1].kind, CAPTURE_STRING);
	cr_expect_str_eq(b.desc[1].name, "str(arg1)");
	dwarfvar_build_free(&b);
}

Test(usdt, what_arguments_refuse)
{
	struct fetch_build b;
	char err[256];
	cr_expect_eq(compile_text("arg2", &b, err, sizeof(err)), -1);
	cr_expect(strstr(err, "no argument arg2 (the probe has 2)"), "%s", err);
	cr_expect_eq(compile_text("len", &b, err, sizeof(err)), -1);
	cr_expect(strstr(err, "not an argument"), "%s", err);
	cr_expect_eq(compile_text("arg1->next", &b, err, sizeof(err)), -1);
	cr_expect(strstr(err, "numbers without types"), "%s", err);
	cr_expect_eq(compile_text("arg0 if str(arg1) == 0", &b, err, sizeof(err)), -1);
	cr_expect(strstr(err, "a capture of its own"), "%s", err);
}
