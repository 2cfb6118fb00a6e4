/* calls — a tight loop of calls to an empty function, for measuring what
 * tracing one function costs per call (bench/trace_cost.sh) and how many
 * span events sonde's ring-buffer consumer sustains
 * (bench/ringbuf_throughput.sh).
 *
 * usage: calls N [THREADS]
 * Each of THREADS threads (default 1) calls target_fn(&item, i) N times,
 * item.len cycling through 0..8191. Prints
 * "LOOP_NS CALLS CPU_NS": the wall time of the loops alone (clock_gettime
 * around them, from the moment all threads are released to the moment the
 * last one is done, so start-up and the profiler's attach do not count), the
 * total number of calls made, and the process's CPU time (user + system,
 * which includes the uprobes' and BPF programs' cost). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

/* Empty in effect, but neither inlined nor removed (noipa keeps GCC from
 * proving the call has no effect), and with the usual frame-pointer prologue
 * (push %rbp; mov %rsp,%rbp), which is where a uprobe on a real function
 * compiled with frame pointers lands: a truly empty body compiles to a bare
 * `ret`, whose probe the kernel must single-step instead of emulating. */
struct item {
	long id;
	int len;
};

/* Its arguments are for captures (bench/trace_cost.sh reads it->len, it->id
 * and i with a predicate on it->len); the body ignores them. */
__attribute__((noinline, noipa)) void target_fn(struct item *it, long i)
{
	volatile char frame = 0;
	(void)frame;
	(void)it;
	(void)i;
}

static long n_calls;
static pthread_barrier_t start;

static void *loop(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	struct item it = {.id = 42};
	for (long i = 0; i < n_calls; i++) {
		it.len = (int)(i & 8191); /* > 4096 in 4095 of 8192 calls */
		target_fn(&it, i);
	}
	return NULL;
}

static long long ns_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	n_calls = argc > 1 ? atol(argv[1]) : 1000000;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	if (n_calls < 0 || threads < 1 || threads > 256) {
		fprintf(stderr, "usage: calls N [THREADS (1-256)]\n");
		return 2;
	}
	pthread_t tids[256];
	pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
	for (int t = 0; t < threads; t++)
		if (pthread_create(&tids[t], NULL, loop, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	pthread_barrier_wait(&start);
	long long t0 = ns_now();
	for (int t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	long long t1 = ns_now();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	long long cpu_ns = ((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
			   ((long long)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
	printf("%lld %ld %lld\n", t1 - t0, n_calls * threads, cpu_ns);
	return 0;
}
