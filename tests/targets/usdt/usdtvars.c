/* usdtvars — SDT probes whose arguments are global variables, which gcc
 * writes rip-relative with the variable's name ("-4@counter(%rip)"), in
 * the program (built as a PIE and not) and in a library it links
 * (libusdtvars.so, where the variable is static).
 *
 * usage: usdtvars N [STEPS]
 * Hits sonde:tick N times, with counter (int, += i) and big (long, += 2,
 * from 7) as its arguments, then the library's sonde:libtick N times with
 * its own static lib_count (int, += 3 from -5) and its argument i, and
 * prints "hits=N sum_counter=S sum_big=B sum_lib=L", the sums over the
 * hits of the values each argument had there. Then makes STEPS calls of
 * step(i) (default 0), each spinning ~0.5 ms of CPU, of which those with
 * i % 3 == 0 hit sonde:third (its argument i), and prints "steps=STEPS
 * steps_with_third=K". */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <time.h>

volatile int counter;
volatile long big = 7;

long lib_ticks(int n); /* libusdtvars.c: the sum of its lib_count at its hits */

static volatile unsigned long sink;

/* Spins ~0.5 ms of this thread's CPU time; every third call hits
 * sonde:third on its way. */
__attribute__((noinline)) void step(int i)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	if (i % 3 == 0)
		DTRACE_PROBE1(sonde, third, i);
	do {
		for (int k = 0; k < 1000; k++)
			sink = sink * 6364136223846793005ul + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000l + (t.tv_nsec - t0.tv_nsec) < 500000);
}

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
	int steps = argc > 2 ? atoi(argv[2]) : 0, with_third = 0;
	for (int i = 0; i < steps; i++) {
		step(i);
		with_third += i % 3 == 0;
	}
	printf("steps=%d steps_with_third=%d\n", steps, with_third);
	return 0;
}
