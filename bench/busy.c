/* busy — a busy service for the live-session soak (bench/live_session.sh):
 * THREADS threads handle "requests" for SECONDS seconds, each request going
 * through ten distinct stage functions (stage_0 .. stage_9) that spin for
 * different lengths, with every 20th request taking a slow path in stage_7.
 * So a profiler sees a stable set of stacks, ten functions worth tracing
 * at tens of thousands of calls per second, and a latency distribution with
 * a slow mode.
 *
 * With MARKS, the main thread marks moments for bench/serve_latency.sh:
 * at each SIGUSR1 it calls the next of mark_0 .. mark_{MARKS-1}, functions
 * that run nowhere else, so a profile shows each one for the first time
 * after that moment. Each spins on its own (self time) for 20 ms of its
 * thread's CPU time and prints when it began and when it had had 1 ms of
 * CPU (by then a 999 Hz sampler has taken its first sample in it), both
 * CLOCK_REALTIME ns: "mark=<k> entry_ns=<n> cpu1ms_ns=<n>".
 *
 * usage: busy SECONDS [THREADS [MARKS]]
 * Prints "requests=<n> calls=<n>" at the end. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
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

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One mark: 20 ms of this thread's CPU in this function's own loop. */
#define MARK(k)                                                                    \
	__attribute__((noinline)) void mark_##k(void)                               \
	{                                                                          \
		uint64_t entry = clock_ns(CLOCK_REALTIME), cpu1 = 0;                \
		uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), c;                 \
		while ((c = clock_ns(CLOCK_THREAD_CPUTIME_ID)) - c0 < 20000000u) { \
			for (int i = 0; i < 1000; i++)                              \
				sink += (unsigned long)i;                           \
			if (!cpu1 && c - c0 >= 1000000u)                            \
				cpu1 = clock_ns(CLOCK_REALTIME);                    \
		}                                                                  \
		printf("mark=%d entry_ns=%llu cpu1ms_ns=%llu\n", k,                 \
		       (unsigned long long)entry, (unsigned long long)cpu1);        \
		fflush(stdout);                                                    \
	}
MARK(0) MARK(1) MARK(2) MARK(3) MARK(4) MARK(5) MARK(6) MARK(7)
MARK(8) MARK(9) MARK(10) MARK(11) MARK(12) MARK(13) MARK(14) MARK(15)
static void (*const marks[])(void) = {mark_0, mark_1, mark_2,  mark_3,  mark_4,  mark_5,
				      mark_6, mark_7, mark_8,  mark_9,  mark_10, mark_11,
				      mark_12, mark_13, mark_14, mark_15};
#define MAX_MARKS (int)(sizeof(marks) / sizeof(*marks))

/* Calls the next mark at each SIGUSR1 (blocked in every thread) until
 * MARKS are done or the run's end. */
static void run_marks(int nmarks, const sigset_t *usr1)
{
	double end = now() + seconds;
	for (int k = 0; k < nmarks && now() < end;) {
		struct timespec wait = {0, 200000000};
		if (sigtimedwait(usr1, NULL, &wait) == SIGUSR1)
			marks[k++]();
	}
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
	int nmarks = argc > 3 ? atoi(argv[3]) : 0;
	if (nmarks < 0 || nmarks > MAX_MARKS) {
		fprintf(stderr, "busy: MARKS is 0 to %d\n", MAX_MARKS);
		return 2;
	}
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* the threads inherit it */
	pthread_t t[64];
	unsigned long counts[64] = {0};
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, &counts[i]);
	run_marks(nmarks, &usr1);
	unsigned long total = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		total += counts[i];
	}
	printf("requests=%lu calls=%lu\n", total, total * 11);
	return 0;
}
