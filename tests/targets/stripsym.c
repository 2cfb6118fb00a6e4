/* stripsym — a hot function whose symbol is stripped after the build, as
 * static functions of Debian's libraries have none.
 *
 * usage: stripsym SECONDS
 * Loops for SECONDS of wall time calling shown_before() (a few
 * instructions) and hidden_hot() (a million iterations of a loop), so
 * nearly every sample is in hidden_hot; prints at exit
 *   pid=<pid> cpu_s=<seconds>
 * The binary keeps the source order (GCC with -fno-toplevel-reorder; clang
 * does anyway, for functions that are not static): shown_before is the
 * symbol right before hidden_hot. The build makes three files
 * (tests/targets/CMakeLists.txt):
 *   stripsym          hidden_hot's symbol stripped, DWARF kept (DWARF names it)
 *   stripsym-nodebug  the symbol and DWARF stripped: only .eh_frame knows
 *                     the function (addr2line names it after shown_before)
 *   stripsym-full     untouched: tests find hidden_hot there
 * The assembly block adds two functions with no ELF size, as hand-written
 * code often has: stripsym_asm_sizeless (no unwind info), then an unnamed
 * function (no symbol, an FDE) after it. The main loop never calls them. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

/* Not inlined: clang describes inlined copies with DW_FORM_rnglistx ranges,
 * which binutils 2.40's addr2line does not follow (the tests compare). */
__attribute__((noinline)) static double now(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void shown_before(void)
{
	sink++;
}

__attribute__((noinline)) void hidden_hot(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__asm__(".text\n"
	".globl stripsym_asm_sizeless\n"
	".type stripsym_asm_sizeless, @function\n"
	"stripsym_asm_sizeless:\n"
	"\tnop\n\tnop\n\tnop\n\tret\n"
	".p2align 4\n"
	".Lstripsym_unnamed:\n"
	"\t.cfi_startproc\n"
	"\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tret\n"
	"\t.cfi_endproc\n");

__attribute__((noinline)) void run(double seconds)
{
	double t0 = now(CLOCK_THREAD_CPUTIME_ID), end = now(CLOCK_MONOTONIC) + seconds;
	while (now(CLOCK_MONOTONIC) < end) {
		shown_before();
		hidden_hot(1000000);
	}
	printf("pid=%d cpu_s=%.3f\n", (int)getpid(), now(CLOCK_THREAD_CPUTIME_ID) - t0);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	run(argc > 1 ? atof(argv[1]) : 2.0);
	return 0;
}
