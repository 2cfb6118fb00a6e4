/* cpuwatch — the CPU time other processes actually got, over time.
 *
 * usage: cpuwatch OUT PID...
 * Every millisecond, appends to OUT one line per PID still running:
 *   <CLOCK_MONOTONIC ns> <pid> <process CPU ns>
 * the CPU time being the kernel's count for the whole process (all its
 * threads, clock_getcpuclockid). Runs until every PID has exited (one last
 * line each, at the moment it was found gone) or until SIGTERM.
 *
 * Tests use it to know how much CPU a target got between a recording's
 * start_ns and end_ns (the same clock): on a busy machine that is what the
 * number of cpu-clock samples must match, not the wall time. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: cpuwatch OUT PID...\n");
		return 2;
	}
	FILE *out = fopen(argv[1], "w");
	if (!out) {
		fprintf(stderr, "cpuwatch: cannot write %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	int n = argc - 2;
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	clockid_t *clocks = calloc((size_t)n, sizeof(*clocks));
	int *alive = calloc((size_t)n, sizeof(*alive));
	uint64_t *last = calloc((size_t)n, sizeof(*last));
	if (!pids || !clocks || !alive || !last)
		return 1;
	int running = 0;
	for (int i = 0; i < n; i++) {
		pids[i] = (pid_t)atoi(argv[i + 2]);
		if (clock_getcpuclockid(pids[i], &clocks[i]) != 0) {
			fprintf(stderr, "cpuwatch: no process %d\n", (int)pids[i]);
			return 1;
		}
		alive[i] = 1;
		running++;
	}
	struct sigaction sa = {.sa_handler = on_term};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	while (running > 0 && !stop) {
		for (int i = 0; i < n; i++) {
			if (!alive[i])
				continue;
			struct timespec cpu, mono;
			int r = clock_gettime(clocks[i], &cpu);
			clock_gettime(CLOCK_MONOTONIC, &mono);
			if (r != 0) {
				/* Gone (reaped): its CPU time stays what it last was. */
				fprintf(out, "%llu %d %llu\n", (unsigned long long)ns_of(&mono),
					(int)pids[i], (unsigned long long)last[i]);
				alive[i] = 0;
				running--;
				continue;
			}
			last[i] = ns_of(&cpu);
			fprintf(out, "%llu %d %llu\n", (unsigned long long)ns_of(&mono),
				(int)pids[i], (unsigned long long)last[i]);
		}
		fflush(out);
		struct timespec pause = {0, 1000000};
		nanosleep(&pause, NULL);
	}
	fclose(out);
	return 0;
}
