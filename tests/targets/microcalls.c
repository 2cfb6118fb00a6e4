/* microcalls — a handler of a few microseconds, slow for a known 1% of its
 * calls because of one function: the case where sonde's own cost (a sample
 * takes ~10 us from the thread it interrupts, a nested traced call ~2 us) is
 * as large as the calls themselves.
 *
 * usage: microcalls NCALLS [FAST_US] [SLOW_US] [SLOW_EVERY]
 * handle() does FAST_US microseconds of work in fast_work() (default 5); every
 * SLOW_EVERY-th call (default 100: call indexes 99, 199, ...) also runs
 * slow_fn(), SLOW_US microseconds of work (default 60). The work is a fixed
 * number of loop iterations, calibrated once at start (the least time of
 * several tries, so interference does not inflate it): like real code, a call
 * that is interrupted gets longer, it does not absorb the interruption.
 * One thread; handle() is called NCALLS times, in index order.
 * Prints "calls=N slow=M iters_per_us=X slow_ns=S all_ns=A": S and A are
 * the time its slow calls and all its calls took by its own clock (read
 * around each call, so a tracer's traps and samples are in them): a sample
 * lands in the slow calls with the chance S / A. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static unsigned long iters_per_us;

/* Out of line, so fast_work and slow_fn are not leaves: they begin with
 * the usual frame-pointer push, an instruction the kernel's uprobes emulate
 * (a function whose first instruction is single-stepped instead costs ~10 us
 * more per traced call on some virtual machines, with much jitter). */
__attribute__((noinline)) static unsigned long spin(unsigned long iters)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < iters; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void calibrate(void)
{
	const unsigned long n = 2000000;
	double best = 1e9;
	for (int i = 0; i < 15; i++) {
		double t0 = now();
		sink = spin(n);
		double t = now() - t0;
		best = t < best ? t : best;
	}
	iters_per_us = (unsigned long)((double)n / (best * 1e6));
	if (iters_per_us == 0)
		iters_per_us = 1;
}

static unsigned long fast_iters, slow_iters;

__attribute__((noinline)) void fast_work(void)
{
	sink = spin(fast_iters);
}

__attribute__((noinline)) void slow_fn(void)
{
	sink = spin(slow_iters);
}

__attribute__((noinline)) void handle(long i, long slow_every)
{
	fast_work();
	if (i % slow_every == slow_every - 1)
		slow_fn();
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	double fast_us = argc > 2 ? atof(argv[2]) : 5;
	double slow_us = argc > 3 ? atof(argv[3]) : 60;
	long slow_every = argc > 4 ? atol(argv[4]) : 100;
	if (n <= 0 || slow_every <= 0 || fast_us < 0 || slow_us < 0) {
		fprintf(stderr, "usage: microcalls NCALLS [FAST_US] [SLOW_US] [SLOW_EVERY]\n");
		return 2;
	}
	calibrate();
	fast_iters = (unsigned long)(fast_us * (double)iters_per_us);
	slow_iters = (unsigned long)(slow_us * (double)iters_per_us);
	long slow = 0;
	unsigned long long slow_ns = 0, all_ns = 0;
	for (long i = 0; i < n; i++) {
		unsigned long long t0 = now_ns();
		handle(i, slow_every);
		unsigned long long t = now_ns() - t0;
		int is_slow = i % slow_every == slow_every - 1;
		slow += is_slow;
		slow_ns += is_slow ? t : 0;
		all_ns += t;
	}
	printf("calls=%ld slow=%ld iters_per_us=%lu slow_ns=%llu all_ns=%llu\n", n, slow, iters_per_us,
	       slow_ns, all_ns);
	return 0;
}
