/* busy — a busy service for the live-session soak (bench/live_session.sh):
 * THREADS threads handle "requests" for SECONDS seconds, each request going
 * through ten distinct stage functions (stage_0 .. stage_9) that spin for
 * different lengths, with every 20th request taking a slow path in stage_7.
 * So a profiler sees a stable set of stacks, ten functions worth tracing
 * at tens of thousands of calls per second, and a latency distribution with
 * a slow mode.
 *
 * usage: busy SECONDS [THREADS]
 * Prints "requests=<n> calls=<n>" at the end. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static double seconds;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

#define STAGE(k, work)                                                  \
	__attribute__((noinline)) void stage_##k(unsigned long req)     \
	{                                                               \
		spin(work);                                             \
		(void)req;                                              \
	}
STAGE(0, 4000)
STAGE(1, 8000)
STAGE(2, 12000)
STAGE(3, 16000)
STAGE(4, 20000)
STAGE(5, 24000)
STAGE(6, 28000)
STAGE(8, 36000)
STAGE(9, 40000)

__attribute__((noinline)) void stage_7(unsigned long req)
{
	spin(req % 20 == 0 ? 2000000 : 32000);
}

__attribute__((noinline)) void handle(unsigned long req)
{
	stage_0(req);
	stage_1(req);
	stage_2(req);
	stage_3(req);
	stage_4(req);
	stage_5(req);
	stage_6(req);
	stage_7(req);
	stage_8(req);
	stage_9(req);
}

static void *worker(void *arg)
{
	unsigned long *count = arg;
	double end = now() + seconds;
	while (now() < end)
		for (int i = 0; i < 100; i++)
			handle((*count)++);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: busy SECONDS [THREADS]\n");
		return 2;
	}
	seconds = atof(argv[1]);
	int nthreads = argc > 2 ? atoi(argv[2]) : 2;
	if (nthreads < 1 || nthreads > 64)
		nthreads = 2;
	pthread_t t[64];
	unsigned long counts[64] = {0};
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, &counts[i]);
	unsigned long total = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		total += counts[i];
	}
	printf("requests=%lu calls=%lu\n", total, total * 11);
	return 0;
}
