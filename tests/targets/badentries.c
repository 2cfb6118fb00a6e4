/* badentries — functions a span probe would break, next to ones it would
 * not.
 *
 * usage: badentries [ARGS...]
 * Prints "argc=N sum=S" and exits through finish(), which never returns
 * (noreturn: DW_AT_noreturn in the debug info). S = the sum over i < 1000
 * of magic(i), where magic(i) = 0x1122334455667788 + i (mod 2^64), so
 * S = 1000 * 0x1122334455667788 + 499500 (mod 2^64).
 * magic loads its constant with one 10-byte instruction; the symbol
 * magic_inside names a byte inside that instruction (as a wrong or
 * hand-written symbol table can): a breakpoint there would change the
 * constant. _start, the entry point, is jumped to and never returns. */
#include <stdio.h>
#include <unistd.h>

unsigned long magic(unsigned long i);
__asm__(".text\n"
	".globl magic\n"
	".type magic, @function\n"
	"magic:\n"
	".cfi_startproc\n"
	"	.byte 0x48, 0xb8\n" /* movabs $imm64, %rax */
	".globl magic_inside\n"
	".type magic_inside, @function\n"
	"magic_inside:\n"
	"	.quad 0x1122334455667788\n"
	".size magic_inside, 8\n"
	"	add %rdi, %rax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size magic, .-magic\n");

__attribute__((noreturn, noinline)) void finish(int code)
{
	fflush(stdout);
	_exit(code);
}

int main(int argc, char **argv)
{
	(void)argv;
	unsigned long sum = 0;
	for (unsigned long i = 0; i < 1000; i++)
		sum += magic(i);
	printf("argc=%d sum=%lu\n", argc, sum);
	finish(0);
}
