/* cpubound — a fixed amount of CPU work with a deep-ish call chain, for
 * measuring what sampling costs the profiled program (wall time with and
 * without a profiler). usage: cpubound ITERATIONS_MILLIONS */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long leaf(unsigned long x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

/* Recursion gives every sample a 20-frame user stack to walk and symbolize. */
__attribute__((noinline)) static unsigned long descend(int depth, unsigned long x, long n)
{
	if (depth == 0)
		return leaf(x, n);
	unsigned long r = descend(depth - 1, x + 1, n);
	sink += (unsigned long)depth;
	return r;
}

int main(int argc, char **argv)
{
	long millions = argc > 1 ? atol(argv[1]) : 2000;
	unsigned long x = 1;
	for (long m = 0; m < millions; m++)
		x ^= descend(20, x, 1000000);
	printf("%lu\n", x & 1);
	return 0;
}
