/* usdtvars — SDT probes whose arguments are global variables, which gcc
 * writes rip-relative with the variable's name ("-4@counter(%rip)"), in
 * the program (built as a PIE and not) and in a library it links
 * (libusdtvars.so, where the variable is static).
 *
 * usage: usdtvars N
 * Hits sonde:tick N times, with counter (int, += i) and big (long, += 2,
 * from 7) as its arguments, then the library's sonde:libtick N times with
 * its own static lib_count (int, += 3 from -5) and its argument i, and
 * prints "hits=N sum_counter=S sum_big=B sum_lib=L", the sums over the
 * hits of the values each argument had there. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

volatile int counter;
volatile long big = 7;

long lib_ticks(int n); /* libusdtvars.c: the sum of its lib_count at its hits */

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long sum_counter = 0, sum_big = 0;
	for (int i = 0; i < n; i++) {
		counter += i;
		big += 2;
		sum_counter += counter;
		sum_big += big;
		DTRACE_PROBE2(sonde, tick, counter, big);
	}
	long sum_lib = lib_ticks(n);
	printf("hits=%d sum_counter=%ld sum_big=%ld sum_lib=%ld\n", n, sum_counter, sum_big, sum_lib);
	return 0;
}
