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
 * Prints "pid=<pid> requests=<n> slow=<m>" at the end.
 * With REQUESTS_TIMES=FILE in the environment, also writes there one line per
 * request as it ends, "<thread> <index> <inner ns> <outer ns> <cpu ns>": how
 * long each handle_request() took by the target's own CLOCK_MONOTONIC,
 * measured inside it (inner: without the probe traps at its entry and
 * return) and around its call (outer: with them), both with any time the
 * thread was not running, and the thread CPU time around the call. A
 * tracer's duration lies between inner and outer (less what it corrects for
 * its own cost). On a busy machine a fast request preempted for a while is
 * slow too; tests count such calls from this file, not from assumptions.
 * With REQUESTS_SLOW_PAST_NS=NS, slow_path also sums the CPU time it spent
 * once NS of wall time had passed since it began, printed at the end as
 * "slow_cpu_past_ns=<ns>".
 * With REQUESTS_WAIT_TRACED=1, it starts only once handle_request() has a
 * uprobe (probes/traced.h), so a tool attached with -p sees every request
 * however long it takes to start; with REQUESTS_WAIT_TRACED=go, once
 * requests_go() (never called) has one: traced after handle_request, it
 * says handle_request's probe is complete, its config and fetch program
 * in place, so a tool counts every call exactly.
 * With REQUESTS_LINGER=FILE, it waits once done (its line printed) until
 * FILE exists, so a live session on it can be asked about all its requests
 * before it ends. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probes/traced.h"

static volatile unsigned long sink;
static int per_thread, slow_every;
static FILE *times; /* REQUESTS_TIMES, line-buffered, or NULL */
static pthread_mutex_t times_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int thread_no;
static __thread unsigned long long last_inner;

static unsigned long long thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static unsigned long long mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

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

/* REQUESTS_SLOW_PAST_NS: the CPU time slow_path spent once that much wall
 * time had passed since it began, summed over its calls (what a sampler
 * that samples only past that point can take). */
static unsigned long long slow_past_ns, slow_cpu_past_ns;

__attribute__((noinline)) void slow_path(void)
{
	if (!slow_past_ns) {
		burn(2e-3);
		return;
	}
	/* burn(2e-3), noting the CPU clock when the wall clock passes the mark */
	unsigned long long w0 = mono_ns(), c0 = thread_cpu_ns(), c = c0, cut = 0;
	unsigned long x = sink;
	while ((c = thread_cpu_ns()) < c0 + 2000000) {
		if (!cut && mono_ns() - w0 >= slow_past_ns)
			cut = c;
		for (int i = 0; i < 200; i++)
			x = x * 6364136223846793005UL + 1;
	}
	sink = x;
	if (cut)
		__atomic_add_fetch(&slow_cpu_past_ns, c - cut, __ATOMIC_RELAXED);
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

/* A marker for REQUESTS_WAIT_TRACED=go: only its uprobe matters. */
__attribute__((noinline)) void requests_go(void)
{
	sink++;
}

__attribute__((noinline)) void handle_request(int id)
{
	unsigned long long t0 = times ? mono_ns() : 0;
	parse_request();
	if (request_is_slow(id))
		slow_path();
	nested();
	recurse(4);
	sink += (unsigned long)getppid();
	if (times)
		last_inner = mono_ns() - t0;
}

static void *worker(void *arg)
{
	thread_no = (int)(long)arg;
	for (int i = 0; i < per_thread; i++) {
		unsigned long long c0 = times ? thread_cpu_ns() : 0;
		unsigned long long t0 = times ? mono_ns() : 0;
		handle_request(i);
		if (times) {
			unsigned long long outer = mono_ns() - t0, cpu = thread_cpu_ns() - c0;
			pthread_mutex_lock(&times_lock);
			fprintf(times, "%d %d %llu %llu %llu\n", thread_no, i, last_inner, outer,
				cpu);
			pthread_mutex_unlock(&times_lock);
		}
	}
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
	const char *times_file = getenv("REQUESTS_TIMES");
	if (times_file && *times_file) {
		times = fopen(times_file, "w");
		if (!times) {
			fprintf(stderr, "requests: cannot write %s\n", times_file);
			return 1;
		}
		setvbuf(times, NULL, _IOLBF, 0); /* readable while it runs */
	}
	const char *past = getenv("REQUESTS_SLOW_PAST_NS");
	if (past)
		slow_past_ns = strtoull(past, NULL, 10);
	const char *wait = getenv("REQUESTS_WAIT_TRACED");
	if (wait && strcmp(wait, "1") == 0)
		wait_traced((const void *)handle_request, NULL);
	else if (wait && strcmp(wait, "go") == 0)
		wait_traced((const void *)requests_go, NULL);
	pthread_t t[64];
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(long)i);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	if (times)
		fclose(times);
	printf("pid=%d requests=%d slow=%d\n", (int)getpid(), per_thread * threads,
	       per_thread * threads / slow_every);
	if (slow_past_ns)
		printf("slow_cpu_past_ns=%llu\n", slow_cpu_past_ns);
	fflush(stdout);
	const char *linger = getenv("REQUESTS_LINGER");
	const struct timespec ms = {0, 1000000};
	while (linger && *linger && access(linger, F_OK) != 0)
		nanosleep(&ms, NULL);
	return 0;
}
