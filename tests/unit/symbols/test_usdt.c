/* usdt: the operand specs of SDT notes (x86-64), as gcc's <sys/sdt.h>
 * writes them, and what is refused. */
#include <criterion/criterion.h>

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
	cr_expect_eq(usdt_parse_arg("8@sym(%rip)", &a), -1, "a symbol the assembler left");
	cr_expect_eq(usdt_parse_arg("8@16(%rax", &a), -1);
	cr_expect_eq(usdt_parse_arg("4@$", &a), -1);
}
