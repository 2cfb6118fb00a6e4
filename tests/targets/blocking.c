/* blocking — a request handler whose slow calls wait: in read() on a pipe,
 * in nanosleep(), and on a mutex (a futex) another thread holds.
 *
 * usage: blocking NREQ [BLOCK_MS] [wait]
 * handle_request(i) spins ~0.3 ms of CPU in compute(); every 4th request
 * is slow: it also waits BLOCK_MS (default 4) in one of wait_pipe() (read
 * on a pipe a helper thread writes BLOCK_MS later), wait_sleep()
 * (nanosleep BLOCK_MS) or wait_lock() (pthread_mutex_lock on a mutex the
 * helper holds for BLOCK_MS), in turn. The helper thread (helper_loop)
 * waits in read() on its command pipe between requests.
 *
 * At the end it prints what it measured itself (CLOCK_MONOTONIC around each
 * call, so with any time a thread was preempted too; CPU time with
 * CLOCK_THREAD_CPUTIME_ID):
 *   pid=P requests=N slow=S
 *   wait_pipe_ns=... wait_sleep_ns=... wait_lock_ns=...   (time in the call)
 *   slow_ns=...    total duration of the slow handle_request calls
 *   request_ns=... total duration of all handle_request calls
 *   cpu_ns=...     CPU time of the main thread inside handle_request
 * With "wait" it prints "pid=<pid> ready" and starts only once it gets
 * SIGUSR1 (a profiler attached with -p has read its mappings by then: every
 * stack unwinds with the tables from the first request). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <signal.h>
#include <string.h>

static int to_helper[2], from_helper[2];
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static long block_ms = 4;
static volatile unsigned long sink;

static unsigned long long clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts))
		;
}

static void put(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		abort();
}

static char get(int fd)
{
	char c;
	if (read(fd, &c, 1) != 1)
		abort();
	return c;
}

/* 'p': write to the main thread BLOCK_MS from now; 'l': hold the mutex for
 * BLOCK_MS (saying so first); 'q': end. */
__attribute__((noinline)) static void *helper_loop(void *arg)
{
	(void)arg;
	for (;;) {
		char c = get(to_helper[0]);
		if (c == 'q')
			return NULL;
		if (c == 'p') {
			sleep_ms(block_ms);
			put(from_helper[1], 'x');
		} else if (c == 'l') {
			pthread_mutex_lock(&held);
			put(from_helper[1], 'h');
			sleep_ms(block_ms);
			pthread_mutex_unlock(&held);
		}
	}
}

__attribute__((noinline)) void compute(void)
{
	unsigned long long end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + 300000;
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 200; i++)
			sink += (unsigned long)i * sink + 1;
}

__attribute__((noinline)) void wait_pipe(void)
{
	put(to_helper[1], 'p');
	get(from_helper[0]);
}

__attribute__((noinline)) void wait_sleep(void)
{
	sleep_ms(block_ms);
}

__attribute__((noinline)) void wait_lock(void)
{
	pthread_mutex_lock(&held);
	pthread_mutex_unlock(&held);
}

static unsigned long long waited[3]; /* ns in wait_pipe, wait_sleep, wait_lock */

__attribute__((noinline)) void handle_request(int i)
{
	compute();
	if (i % 4 != 3)
		return;
	int kind = (i / 4) % 3;
	if (kind == 2) { /* the helper takes the mutex before the wait starts */
		put(to_helper[1], 'l');
		get(from_helper[0]);
	}
	unsigned long long t0 = clock_ns(CLOCK_MONOTONIC);
	if (kind == 0)
		wait_pipe();
	else if (kind == 1)
		wait_sleep();
	else
		wait_lock();
	waited[kind] += clock_ns(CLOCK_MONOTONIC) - t0;
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && strcmp(argv[argc - 1], "wait") == 0;
	argc -= wait;
	int n = argc > 1 ? atoi(argv[1]) : 200;
	if (argc > 2)
		block_ms = atol(argv[2]);
	if (pipe(to_helper) || pipe(from_helper))
		return 1;
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL); /* the helper thread inherits it */
	pthread_t helper;
	pthread_create(&helper, NULL, helper_loop, NULL);
	if (wait) {
		printf("pid=%d ready\n", (int)getpid());
		fflush(stdout);
		int sig;
		sigwait(&usr1, &sig);
	}
	unsigned long long slow = 0, all = 0, cpu = 0;
	int nslow = 0;
	for (int i = 0; i < n; i++) {
		unsigned long long c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		unsigned long long t0 = clock_ns(CLOCK_MONOTONIC);
		handle_request(i);
		unsigned long long d = clock_ns(CLOCK_MONOTONIC) - t0;
		cpu += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		all += d;
		if (i % 4 == 3) {
			slow += d;
			nslow++;
		}
	}
	put(to_helper[1], 'q');
	pthread_join(helper, NULL);
	printf("pid=%d requests=%d slow=%d\n", (int)getpid(), n, nslow);
	printf("wait_pipe_ns=%llu wait_sleep_ns=%llu wait_lock_ns=%llu\n", waited[0], waited[1],
	       waited[2]);
	printf("slow_ns=%llu request_ns=%llu cpu_ns=%llu\n", slow, all, cpu);
	return 0;
}
