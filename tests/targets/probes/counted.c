/* counted — calls counted_work (in libcounted.so) a known number of times
 * and says so: "pid=P calls=N traced=T ns_per_call=X" (T: whether a uprobe
 * was on counted_ready — the marker tests trace last — when it began; X:
 * the loop's wall time per call, what a uprobe on counted_work costs this
 * process).
 *
 * usage: counted CALLS [--children K] [--wait-traced] [--go FILE] [--spin MS]
 *   --children K   fork K children first (no exec); each does the same work
 *   --wait-traced  begin only once counted_ready is traced: trace it after
 *                  the functions to count (see traced.h)
 *   --go FILE      ... or once FILE exists
 *   --spin MS      then burn MS ms of CPU in counted_spin (for samples)
 *   --hold FILE    the parent exits only once FILE exists (after its children)
 * The parent prints its line before it waits for its children. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "traced.h"

uint64_t counted_work(uint64_t x);
void counted_ready(void);

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void counted_spin(double ms)
{
	volatile uint64_t x = 0;
	double end = cpu_ms() + ms;
	while (cpu_ms() < end)
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i;
}

__attribute__((noinline)) long counted_loop(long calls)
{
	long n = 0;
	for (long i = 0; i < calls; i++, n++)
		counted_work((uint64_t)i);
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: counted CALLS [--children K] [--wait-traced] [--go FILE] "
				"[--spin MS] [--hold FILE]\n");
		return 2;
	}
	long calls = atol(argv[1]);
	int children = 0;
	int wait_flag = 0;
	const char *go = NULL, *hold = NULL;
	double spin = 0;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--children") == 0 && i + 1 < argc)
			children = atoi(argv[++i]);
		else if (strcmp(argv[i], "--wait-traced") == 0)
			wait_flag = 1;
		else if (strcmp(argv[i], "--go") == 0 && i + 1 < argc)
			go = argv[++i];
		else if (strcmp(argv[i], "--spin") == 0 && i + 1 < argc)
			spin = atof(argv[++i]);
		else if (strcmp(argv[i], "--hold") == 0 && i + 1 < argc)
			hold = argv[++i];
	}
	int is_child = 0;
	for (int k = 0; k < children; k++) {
		pid_t p = fork();
		if (p < 0) {
			perror("fork");
			return 1;
		}
		if (p == 0) {
			is_child = 1;
			break;
		}
	}
	int traced = (wait_flag || go) ? wait_traced((const void *)counted_ready, go)
				  : function_traced((const void *)counted_ready);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long n = counted_loop(calls);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	if (spin > 0)
		counted_spin(spin);
	printf("pid=%d calls=%ld traced=%d ns_per_call=%.1f\n", (int)getpid(), n, traced,
	       n ? ns / (double)n : 0.0);
	fflush(stdout);
	if (is_child)
		return 0;
	while (wait(NULL) > 0)
		;
	struct stat st;
	const struct timespec ms = {0, 1000000};
	while (hold && stat(hold, &st) != 0)
		nanosleep(&ms, NULL);
	return 0;
}
