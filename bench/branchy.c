/* branchy — a tight loop of calls to a function whose one line decides a
 * conditional jump, for what a branch probe costs per outcome counted
 * (bench/branch_cost.sh).
 *
 * usage: branchy N
 * Calls pick(i) N times; the jump on its `if` line is taken or not by i's
 * low bit (half each way). Prints "LOOP_NS CALLS CPU_NS" as calls.c does,
 * then "odd=ODD", the calls with i odd (the program's own count). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static volatile long odd;

/* The volatile store keeps the branch a jump (no compiler turns a
 * volatile store into a conditional move). */
__attribute__((noinline, noipa)) void pick(long i)
{
	if (i & 1) /* BRANCH_LINE */
		odd = odd + 1;
}

static long long ns_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	long long t0 = ns_now();
	for (long i = 0; i < n; i++)
		pick(i);
	long long t1 = ns_now();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	long long cpu = (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
			(long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
	printf("%lld %ld %lld\nodd=%ld\n", t1 - t0, n, cpu, (long)odd);
	return 0;
}
