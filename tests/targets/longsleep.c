/* longsleep — a thread that sleeps through the end of a recording.
 *
 * usage: longsleep SLEEP_MS
 * Prints "pid=P ready" and waits for SIGUSR1 (a profiler attached with -p
 * is on by then). Then a thread named "sleeper" calls nap(), which sleeps
 * SLEEP_MS in one nanosleep, while the main thread ("worker") does work()
 * until the sleeper is done: ~1 ms of CPU, then a 1 ms sleep, over and
 * over (the spin reads the clock through now_ns(), out of line: traced,
 * sonde's own machinery takes a share of the samples). As the sleep
 * begins, the sleeper prints when (CLOCK_MONOTONIC, the clock of sonde's
 * times), read before the call:
 *   sleep tid=T start_ns=S
 * and when it is over:
 *   woke tid=T slept_ns=D */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long sleep_ms;
static volatile int done;
static volatile unsigned long sink;

/* Out of line: work() calls it in its spin, thousands of times a
 * millisecond, so a trace on it keeps sonde's probe machinery busy. */
__attribute__((noinline)) static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) static void nap(void)
{
	struct timespec ts = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
	unsigned long long start = now_ns();
	printf("sleep tid=%ld start_ns=%llu\n", (long)syscall(SYS_gettid), start);
	fflush(stdout);
	while (nanosleep(&ts, &ts))
		;
	printf("woke tid=%ld slept_ns=%llu\n", (long)syscall(SYS_gettid), now_ns() - start);
	fflush(stdout);
}

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	nap();
	done = 1;
	return NULL;
}

__attribute__((noinline)) static void work(void)
{
	unsigned long long until = now_ns() + 1000000;
	while (now_ns() < until)
		sink++;
	struct timespec ts = {0, 1000000};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	if (argc != 2 || (sleep_ms = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: longsleep SLEEP_MS\n");
		return 2;
	}
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* the sleeper inherits it */
	pthread_setname_np(pthread_self(), "worker");
	printf("pid=%d ready\n", (int)getpid());
	fflush(stdout);
	int sig;
	sigwait(&usr1, &sig);
	pthread_t t;
	if (pthread_create(&t, NULL, sleeper, NULL))
		return 1;
	while (!done)
		work();
	pthread_join(t, NULL);
	return 0;
}
