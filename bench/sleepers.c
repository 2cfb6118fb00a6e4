/* sleepers — many threads that mostly sleep, for the cost of a
 * thread-state pass (bench/threads.sh).
 *
 * usage: sleepers NTHREADS SECONDS
 * NTHREADS threads each sleep 50 ms at a time (nanosleep) for SECONDS;
 * prints "threads=N" once all are created. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *sleeper(void *arg)
{
	double end = *(double *)arg;
	struct timespec d = {0, 50 * 1000 * 1000};
	while (now_s() < end)
		nanosleep(&d, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: sleepers NTHREADS SECONDS\n");
		return 2;
	}
	int n = atoi(argv[1]);
	seconds = atof(argv[2]);
	double end = now_s() + seconds;
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, sleeper, &end)) {
			fprintf(stderr, "sleepers: cannot create thread %d\n", i);
			return 1;
		}
	printf("threads=%d\n", n);
	fflush(stdout);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	return 0;
}
