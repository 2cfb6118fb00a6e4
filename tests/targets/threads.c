/* threads — several threads burning CPU in distinct functions.
 *
 * usage: threads SECONDS NTHREADS
 * Thread i runs worker_even() when i is even and worker_odd() when odd, each
 * spinning for SECONDS of wall time; threads are started 100 ms after the
 * process (so a profiler attached with -p sees them created). The main
 * thread sleeps in pthread_join. Prints "pid=<pid> threads=<n>" at start. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static double seconds = 2.0;

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn_until(double end)
{
	unsigned long x = sink;
	while (wall_now() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline)) void worker_even(double end)
{
	burn_until(end);
}

__attribute__((noinline)) void worker_odd(double end)
{
	burn_until(end);
}

static void *thread_main(void *arg)
{
	long i = (long)arg;
	double end = wall_now() + seconds;
	if (i % 2 == 0)
		worker_even(end);
	else
		worker_odd(end);
	return NULL;
}

int main(int argc, char **argv)
{
	seconds = argc > 1 ? atof(argv[1]) : 2.0;
	int n = argc > 2 ? atoi(argv[2]) : 4;
	if (n < 1 || n > 64)
		n = 4;
	printf("pid=%d threads=%d\n", (int)getpid(), n);
	fflush(stdout);
	usleep(100000);
	pthread_t t[64];
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
