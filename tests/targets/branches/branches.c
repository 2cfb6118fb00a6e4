/* branches: conditional jumps whose outcomes the program counts itself,
 * for branch probes (tests/integration/trace_branches.sh), built by gcc
 * and clang at -O0 and -O2 (see CMakeLists.txt). The test finds each line
 * by its marker comment.
 *
 * handle_request(i, len) takes the slow path when len > 4096 (LINE_BIG:
 * every 8th request), tests `(i & 1) && check(i)` (LINE_AND: two jumps),
 * runs a loop i % 5 times (LINE_LOOP) and clamps a value through an
 * always-inlined function whose branch (LINE_CLAMP) has a copy in
 * handle_request and one in handle_batch. The bodies call functions, so no
 * compiler turns a branch into a conditional move. The program prints
 * what it counted:
 *   requests=N big=B odd=O both=A loop_calls=N loop_zero=Z loop_iters=T
 *   clamp_calls=C clamp_over=H asm_calls=N asm_zero=Z asm_iters=T
 *   flag_calls=N not_l=.. not_g=.. not_b=.. not_o=.. not_p=.. not_s=..
 * and count_down runs jrcxz and loop (LINE_ASM), which test %rcx; hinted
 * has a jump with a branch hint (LINE_HINT), which no probe may take. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;
static unsigned long big, odd, both, loop_zero, loop_iters, clamp_calls, clamp_over, asm_zero,
	asm_iters;

static void __attribute__((noinline)) spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

/* The slow calls' work, and the fast calls' (a sample's leaf says which
 * kind of call it is in: their loops are their own, no tail call). */
static void __attribute__((noinline)) slow_path(void)
{
	for (unsigned long i = 0; i < 60000; i++)
		sink += i;
}

static void __attribute__((noinline)) fast_path(void)
{
	for (unsigned long i = 0; i < 6000; i++)
		sink += i;
}

static int __attribute__((noinline)) check(unsigned long i)
{
	odd++;
	return i % 3 == 0;
}

static inline __attribute__((always_inline)) unsigned long clamp(unsigned long v, unsigned long hi)
{
	clamp_calls++;
	if (v > hi) { /* LINE_CLAMP */
		clamp_over++;
		spin(5);
		return hi;
	}
	return v;
}

__attribute__((noinline)) unsigned long handle_request(unsigned long i, unsigned long len)
{
	if (len > 4096) { /* LINE_BIG */
		big++;
		slow_path();
	} else {
		fast_path();
	}
	if ((i & 1) && check(i)) { /* LINE_AND */
		both++;
		spin(10);
	}
	unsigned long m = i % 5;
	loop_zero += m == 0;
	for (unsigned long k = 0; k < m; k++) { /* LINE_LOOP */
		loop_iters++;
		spin(3);
	}
	return clamp((i * 7919) % 5000, 3000);
}

/* jrcxz and loop, the jumps that test %rcx (the kernel steps them, it
 * does not emulate them): jrcxz is taken when n is 0, loop runs n times and
 * is taken n - 1 of them. */
__attribute__((noinline)) unsigned long count_down(unsigned long n)
{
	unsigned long acc = 0;
	__asm__ volatile("jrcxz 2f\n1: incq %0\nloop 1b\n2:" : "+r"(acc), "+c"(n) : : "cc"); /* LINE_ASM */
	return acc;
}

/* A jump with a branch hint (a DS prefix, 0x3e: "likely taken"), which
 * the kernel's uprobes refuse: a branch probe on its line is refused with
 * the reason. */
__attribute__((noinline)) unsigned long hinted(unsigned long i)
{
	unsigned long r = 0;
	__asm__ volatile("test %1, %1\n.byte 0x3e\njne 1f\nincq %0\n1:" : "+r"(r) : "r"(i) : "cc"); /* LINE_HINT */
	return r;
}

/* One jump on each flag the kernel-side evaluator reads, on one line
 * (LINE_FLAGS), in order: jl (SF != OF), jg (ZF = 0 and SF = OF) after a
 * - b, jb (CF) after the same compare, jo (OF) after a + b, jp (PF: the
 * low byte of a - b has even parity) and js (SF) after a - b. Each jump
 * skips an increment of its own counter, so a counter is how often its
 * jump was not taken. */
static unsigned long flag_calls, not_l, not_g, not_b, not_o, not_p, not_s;
__attribute__((noinline)) void flags(long a, long b)
{
	unsigned long t;
	__asm__ volatile( /* LINE_FLAGS: the jumps' line, the asm statement's first */
			 "cmp %8, %7\njl 1f\nincq %0\n1:\n"
			 "cmp %8, %7\njg 2f\nincq %1\n2:\n"
			 "cmp %8, %7\njb 3f\nincq %2\n3:\n"
			 "mov %7, %6\nadd %8, %6\njo 4f\nincq %3\n4:\n"
			 "mov %7, %6\nsub %8, %6\njp 5f\nincq %4\n5:\n"
			 "mov %7, %6\nsub %8, %6\njs 6f\nincq %5\n6:"
			 : "+m"(not_l), "+m"(not_g), "+m"(not_b), "+m"(not_o), "+m"(not_p), "+m"(not_s),
			   "=&r"(t)
			 : "r"(a), "r"(b)
			 : "cc");
	flag_calls++;
}

__attribute__((noinline)) unsigned long handle_batch(unsigned long i)
{
	return clamp((i * 104729) % 5000, 1000);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4000;
	unsigned long total = 0;
	for (unsigned long i = 0; i < n; i++) {
		total += handle_request(i, i % 8 == 7 ? 8192 : 512);
		total += handle_batch(i);
		asm_zero += i % 4 == 0;
		asm_iters += count_down(i % 4);
		total += hinted(i & 1);
		/* operands that overflow now and then: an LCG's values */
		unsigned long x = i * 6364136223846793005UL + 1442695040888963407UL;
		flags((long)x, (long)(x * 2862933555777941757UL + 3037000493UL));
	}
	printf("requests=%lu big=%lu odd=%lu both=%lu loop_calls=%lu loop_zero=%lu loop_iters=%lu "
	       "clamp_calls=%lu clamp_over=%lu asm_calls=%lu asm_zero=%lu asm_iters=%lu "
	       "flag_calls=%lu not_l=%lu not_g=%lu not_b=%lu not_o=%lu not_p=%lu not_s=%lu total=%lu\n",
	       n, big, odd, both, n, loop_zero, loop_iters, clamp_calls, clamp_over, n, asm_zero,
	       asm_iters, flag_calls, not_l, not_g, not_b, not_o, not_p, not_s, total);
	return 0;
}
