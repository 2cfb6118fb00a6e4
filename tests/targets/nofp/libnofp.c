/* libnofp — the shared library in the middle of nofp's call chain, built
 * like nofp without frame pointers (see CMakeLists.txt). */
#include "nofp.h"

__attribute__((noinline)) long nofp_lib_stage(long (*back)(long), long n)
{
	volatile long keep[6];
	for (int i = 0; i < 6; i++)
		keep[i] = n + i;
	long r = back(n + keep[3]);
	return r + keep[1];
}
