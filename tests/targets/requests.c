/* requests — a request handler that is slow for a known fraction of calls
 * because of one slow-path function.
 *
 * usage: requests NREQ [NTHREADS] [SLOW_EVERY]
 * Handles NREQ requests in total, split evenly over NTHREADS threads (default
 * 1). Every call of handle_request() spins ~100us in parse_request(); every
 * SLOW_EVERY-th request (default 10) also calls slow_path(), which spins
 * ~2ms. Each request also calls nested() once, which calls inner() 3 times,
 * recurse(4) once (5 calls of recurse per request), and getppid() once.
 * So, exactly: handle_request = parse_request = nested = getppid = NREQ,
 * inner = 3*NREQ, recurse = 5*NREQ, slow_path = NREQ/SLOW_EVERY (NREQ is
 * rounded down to a multiple of NTHREADS*SLOW_EVERY).
 * Prints "pid=<pid> requests=<n> slow=<m>" at the end. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static int per_thread, slow_every;

static double thread_cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Spins for `seconds` of this thread's CPU time. */
__attribute__((noinline)) static void burn(double seconds)
{
	double end = thread_cpu_now() + seconds;
	unsigned long x = sink;
	while (thread_cpu_now() < end)
		for (int i = 0; i < 200; i++)
			x = x * 6364136223846793005UL + 1;
	sink = x;
}

__attribute__((noinline)) void parse_request(void)
{
	burn(100e-6);
}

__attribute__((noinline)) void slow_path(void)
{
	burn(2e-3);
}

__attribute__((noinline)) void inner(void)
{
	sink++;
}

__attribute__((noinline)) void nested(void)
{
	for (int i = 0; i < 3; i++)
		inner();
}

__attribute__((noinline)) int recurse(int n)
{
	sink++;
	return n > 0 ? recurse(n - 1) + 1 : 0;
}

/* Exists only inlined (no symbol): tracing it must say where it went. */
static inline __attribute__((always_inline)) int request_is_slow(int id)
{
	return id % slow_every == slow_every - 1;
}

__attribute__((noinline)) void handle_request(int id)
{
	parse_request();
	if (request_is_slow(id))
		slow_path();
	nested();
	recurse(4);
	sink += (unsigned long)getppid();
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < per_thread; i++)
		handle_request(i);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	slow_every = argc > 3 ? atoi(argv[3]) : 10;
	if (threads < 1 || threads > 64)
		threads = 1;
	if (slow_every < 1)
		slow_every = 10;
	per_thread = n / threads / slow_every * slow_every;
	pthread_t t[64];
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("pid=%d requests=%d slow=%d\n", (int)getpid(), per_thread * threads,
	       per_thread * threads / slow_every);
	return 0;
}
