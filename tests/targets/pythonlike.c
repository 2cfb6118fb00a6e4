/* pythonlike — what an interpreter sonde does not read looks like to it:
 * a program that defines _PyRuntime and says, in Py_Version, that it is
 * CPython 3.9.18. It spins for argv[1] seconds (default 1) in spin(), so
 * its samples show that its stacks stay native. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

__attribute__((used)) char _PyRuntime[4096];
__attribute__((used)) const uint64_t Py_Version = 0x030912f0; /* 3.9.18 final */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long spin(double seconds)
{
	volatile unsigned long x = 0;
	double end = now() + seconds;
	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
	return x;
}

int main(int argc, char **argv)
{
	spin(argc > 1 ? atof(argv[1]) : 1.0);
	return 0;
}
