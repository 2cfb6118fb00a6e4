/* forker — a parent that forks a child which execs nothing and burns CPU in
 * child_work() while the parent burns in parent_work(), both for SECONDS
 * of wall time and at least 0.3 s of their own CPU time.
 * Used to check that a profiled command's children are followed.
 * usage: forker SECONDS
 * Each prints "<child|parent> pid=<pid> cpu_s=<its own CPU time>" as it ends
 * (the child first): on a busy machine the two need not get equal shares. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Each process burns at least this much CPU time, however busy the machine:
 * the tests compare its samples with its CPU time, which must be large
 * enough to be a measurement (tests/integration/lib.sh asks for 0.2 s). */
#define MIN_CPU_S 0.3

static double own_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn_until(double end)
{
	unsigned long x = sink;
	while (wall_now() < end || own_cpu_s() < MIN_CPU_S)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1;
	sink = x;
}

__attribute__((noinline)) void child_work(double end)
{
	burn_until(end);
}

__attribute__((noinline)) void parent_work(double end)
{
	burn_until(end);
}

static void report(const char *who)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	printf("%s pid=%d cpu_s=%.4f\n", who, (int)getpid(),
	       (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double end = wall_now() + seconds;
	pid_t pid = fork();
	if (pid == 0) {
		child_work(end);
		report("child");
		_exit(0);
	}
	parent_work(end);
	waitpid(pid, NULL, 0);
	report("parent");
	return 0;
}
