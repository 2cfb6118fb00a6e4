/* callpairs — the per-call cost of two probes on one machine at one time:
 * three identical functions are called in turns, in batches, by one thread
 * (bench/trace_cost.sh puts an empty BPF program pair on floor_fn, sonde on
 * traced_fn, and nothing on plain_fn). Each batch is timed by the thread's
 * own CPU time, which counts the traps and the BPF programs run on it and
 * not the time it waits for a CPU. A trap's cost drifts on a shared
 * machine by more than sonde adds to it (the same run of 300,000 calls took
 * 263 to 429 ms here); batches of a few hundred microseconds in turns see
 * the same drift, so their ratio does not.
 *
 * usage: callpairs N [BATCH]
 * Calls each function N times, BATCH (default 256) at a time, and prints
 * "PLAIN_NS FLOOR_NS TRACED_NS N": each function's batches' total CPU time. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The same body as bench/calls.c's target_fn: a frame-pointer prologue
 * (an emulated first instruction, as on real functions) and nothing else;
 * noipa keeps GCC from merging or removing them. */
#define BODY                               \
	{                                  \
		volatile char frame = 0;   \
		(void)frame;               \
		(void)i;                   \
	}
__attribute__((noinline, noipa)) void plain_fn(long i) BODY
__attribute__((noinline, noipa)) void floor_fn(long i) BODY
__attribute__((noinline, noipa)) void traced_fn(long i) BODY

static long long cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	long batch = argc > 2 ? atol(argv[2]) : 256;
	if (n <= 0 || batch <= 0) {
		fprintf(stderr, "usage: callpairs N [BATCH]\n");
		return 2;
	}
	void (*fns[3])(long) = {plain_fn, floor_fn, traced_fn};
	long long total[3] = {0, 0, 0};
	for (long done = 0; done < n; done += batch) {
		long k = n - done < batch ? n - done : batch;
		for (int f = 0; f < 3; f++) {
			long long t0 = cpu_now();
			for (long i = 0; i < k; i++)
				fns[f](done + i);
			total[f] += cpu_now() - t0;
		}
	}
	printf("%lld %lld %lld %ld\n", total[0], total[1], total[2], n);
	return 0;
}
