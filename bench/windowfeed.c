/* windowfeed — the live window's work without a live session: SECONDS
 * seconds of RATE samples a second over STACKS distinct stacks (a skewed,
 * fixed-seed choice) and 16 threads go into a 60-second window, and every
 * second the views a live top asks for are taken (last 10 s, EWMA, the
 * same by thread). Prints a checksum of every view's total, so two builds
 * can be shown to compute the same. Used by bench/tables.sh (callgrind
 * instruction counts, before/after).
 * usage: windowfeed [SECONDS] [RATE] [STACKS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "window.h"

int main(int argc, char **argv)
{
	long secs = argc > 1 ? atol(argv[1]) : 120;
	long rate = argc > 2 ? atol(argv[2]) : 2000;
	long nstacks = argc > 3 ? atol(argv[3]) : 5000;
	const uint64_t NS = 1000000000ULL;
	struct window *w = window_new(60);
	struct stack_weights sw = {0};
	uint64_t x = 88172645463325252ULL;
	double check = 0;
	for (long s = 0; s < secs; s++) {
		for (long k = 0; k < rate; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* skewed: half the samples on 1/16 of the stacks */
			uint32_t stack = (uint32_t)(x % 2 ? x / 2 % (uint64_t)(nstacks / 16 + 1)
						  : x / 2 % (uint64_t)nstacks) + 1;
			window_add_thread(w, (uint64_t)s * NS + (uint64_t)k * (NS / (uint64_t)rate),
					  stack, (uint32_t)(x >> 40) % 16, 1 + x % 3);
		}
		uint64_t now = (uint64_t)s * NS + NS - 1;
		check += window_sum_last(w, now, 10, &sw);
		check += window_ewma(w, now, &sw) + (double)sw.n;
		check += window_thread_sum_last(w, now, 10, &sw);
		check += window_thread_ewma(w, now, &sw);
	}
	printf("%.6f\n", check);
	stack_weights_free(&sw);
	window_free(w);
	return 0;
}
