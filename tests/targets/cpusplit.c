/* cpusplit — burns CPU in two functions with a known split and measures it.
 *
 * usage: cpusplit SECONDS [HOT_UNITS COLD_UNITS] [wait]
 * Loops for SECONDS of wall time, and until it used at least 0.3 s of CPU
 * time however busy the machine (tests compare samples with it: it must be
 * a measurement; tests/integration/lib.sh asks for 0.2 s); each round calls work_hot() HOT_UNITS
 * times and work_cold() COLD_UNITS times (default 3 and 1), every call
 * spinning the same number of iterations. It measures the thread CPU time
 * spent inside each function itself and prints at exit:
 *   pid=<pid> hot_share=<0..1> cold_share=<0..1> cpu_s=<seconds> end_ns=<ns>
 * so tests compare the profiler's shares against the program's own (end_ns:
 * CLOCK_MONOTONIC as it finishes, the clock of a recording's end_ns). The
 * call chain is main -> run -> work_hot|work_cold -> spin. With "wait" it
 * prints "pid=<pid> ready" and starts only once it gets SIGUSR1. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNIT_ITERATIONS 200000
#define MIN_CPU_S 0.3

static volatile unsigned long sink;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void spin(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	sink = x;
}

__attribute__((noinline)) void work_hot(void)
{
	spin(UNIT_ITERATIONS);
}

__attribute__((noinline)) void work_cold(void)
{
	spin(UNIT_ITERATIONS);
}

__attribute__((noinline)) void run(double seconds, int hot_units, int cold_units)
{
	double hot = 0, cold = 0, t0 = cpu_now();
	double end = wall_now() + seconds;
	while (wall_now() < end || cpu_now() - t0 < MIN_CPU_S) {
		double a = cpu_now();
		for (int i = 0; i < hot_units; i++)
			work_hot();
		double b = cpu_now();
		for (int i = 0; i < cold_units; i++)
			work_cold();
		double c = cpu_now();
		hot += b - a;
		cold += c - b;
	}
	double total = cpu_now() - t0;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	printf("pid=%d hot_share=%.4f cold_share=%.4f cpu_s=%.3f end_ns=%llu\n", (int)getpid(),
	       hot / total, cold / total, total,
	       (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	/* A last argument "wait": print "ready" and start only on SIGUSR1, so a
	 * test can attach a profiler first, however long that takes. */
	if (argc > 1 && strcmp(argv[argc - 1], "wait") == 0) {
		argc--;
		sigset_t usr1;
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, NULL);
		printf("pid=%d ready\n", (int)getpid());
		fflush(stdout);
		int sig;
		sigwait(&usr1, &sig);
	}
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	int hot = argc > 2 ? atoi(argv[2]) : 3;
	int cold = argc > 3 ? atoi(argv[3]) : 1;
	run(seconds, hot, cold);
	return 0;
}
