/* avxentry — functions whose first instruction is one the kernel's uprobes
 * refuse or step wrongly (trace_avx.sh; insn.h says why):
 *   vex_bcast   vmovd %edi,%xmm0 (refused when the file is mapped), then
 *               vpbroadcastb (taken for a js and skipped), then a plain
 *               instruction: the entry probe goes there, and every result
 *               must stay right;
 *   vex_gpr     vmovd %xmm0,%eax first: the probe cannot move past a write
 *               of a general-purpose register, so the function is refused;
 *   vex_loop    vpxor first, then a loop whose branch lands on the first
 *               plain instruction: refused (the probe would fire each turn);
 *   evex_gpr    the AVX-512 repro (vpbroadcastb %esi,%ymm17; vmovd
 *               %xmm17,%eax): refused; evex_moved: moved. Never called on
 *               CPUs without AVX-512 (their results are checked where the
 *               CPU has it).
 * Usage: avxentry CALLS. Prints "NAME calls=N wrong=W" per function called
 * and exits 1 if any result was wrong. */
#include <stdio.h>
#include <stdlib.h>

__asm__(".text\n"
	".globl vex_bcast\n.type vex_bcast,@function\nvex_bcast:\n"
	"\tvmovd %edi,%xmm0\n"
	"\tvpbroadcastb %xmm0,%xmm1\n"
	"\txor %eax,%eax\n"
	"\tvmovd %xmm1,%eax\n"
	"\tret\n.size vex_bcast,.-vex_bcast\n"
	".globl vex_gpr\n.type vex_gpr,@function\nvex_gpr:\n"
	"\tvmovd %xmm0,%eax\n"
	"\tadd $1,%eax\n"
	"\tret\n.size vex_gpr,.-vex_gpr\n"
	".globl vex_loop\n.type vex_loop,@function\nvex_loop:\n"
	"\tvpxor %xmm0,%xmm0,%xmm0\n"
	"1:\tadd $3,%esi\n"
	"\tdec %edi\n"
	"\tjnz 1b\n"
	"\tmov %esi,%eax\n"
	"\tret\n.size vex_loop,.-vex_loop\n"
	".globl evex_gpr\n.type evex_gpr,@function\nevex_gpr:\n"
	"\tvpbroadcastb %esi,%ymm17\n"
	"\tvmovd %xmm17,%eax\n"
	"\tvzeroupper\n"
	"\tret\n.size evex_gpr,.-evex_gpr\n"
	".globl evex_moved\n.type evex_moved,@function\nevex_moved:\n"
	"\tvpbroadcastb %edi,%xmm17\n"
	"\txor %eax,%eax\n"
	"\tvmovd %xmm17,%eax\n"
	"\tret\n.size evex_moved,.-evex_moved\n");

typedef int v4si __attribute__((vector_size(16)));
unsigned vex_bcast(unsigned c);
unsigned vex_gpr(v4si x);
unsigned vex_loop(unsigned n, unsigned acc);
unsigned evex_gpr(unsigned unused, unsigned c);
unsigned evex_moved(unsigned c);

/* vex_line: a C line whose code begins with a VEX instruction (the load of
 * its vector add): a line probe there is refused, and `sonde probe
 * --lines vex_line` marks the line so (trace_avx.sh). */
typedef int v8si __attribute__((vector_size(32)));
__attribute__((noinline, used, target("avx2"))) int vex_line(const v8si *a, const v8si *b)
{
	v8si s = *a + *b; /* VEX_LINE */
	return s[0] + s[7];
}

static void report(const char *name, long calls, long wrong, int *bad)
{
	printf("%s calls=%ld wrong=%ld\n", name, calls, wrong);
	*bad |= wrong != 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	if (!__builtin_cpu_supports("avx2")) {
		fprintf(stderr, "avxentry: this CPU has no AVX2\n");
		return 77;
	}
	int bad = 0;
	long wrong = 0;
	for (long i = 0; i < n; i++) {
		unsigned c = (unsigned)(i * 7 + 1) & 0xff;
		wrong += vex_bcast(c) != c * 0x01010101u;
	}
	report("vex_bcast", n, wrong, &bad);
	wrong = 0;
	for (long i = 0; i < n; i++)
		wrong += vex_gpr((v4si){(int)i, 0, 0, 0}) != (unsigned)i + 1;
	report("vex_gpr", n, wrong, &bad);
	wrong = 0;
	for (long i = 0; i < n; i++)
		wrong += vex_loop((unsigned)(i % 5) + 1, 0) != 3u * (unsigned)(i % 5 + 1);
	report("vex_loop", n, wrong, &bad);
	if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
		wrong = 0;
		for (long i = 0; i < n; i++) {
			unsigned c = (unsigned)i & 0xff;
			wrong += evex_gpr(0, c) != c * 0x01010101u;
		}
		report("evex_gpr", n, wrong, &bad);
		wrong = 0;
		for (long i = 0; i < n; i++) {
			unsigned c = (unsigned)i & 0xff;
			wrong += evex_moved(c) != c * 0x01010101u;
		}
		report("evex_moved", n, wrong, &bad);
	}
	return bad;
}
