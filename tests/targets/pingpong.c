/* pingpong — a context-switch flood: two threads pass a byte back and forth
 * over two pipes, so a round trip blocks each thread in read() about once
 * (not always: with both on their own CPU the byte may be there first).
 *
 * usage: pingpong ROUNDS
 * Prints "pid=P rounds=N switches_per_s=R elapsed_ns=E blocked=B" at the
 * end: R is 2 reads per round per second, as it measured; B the times the
 * two threads blocked during the rounds (their voluntary context switches,
 * getrusage RUSAGE_THREAD). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static long rounds;
static long ponger_blocked;

static long voluntary_switches(void)
{
	struct rusage u;
	getrusage(RUSAGE_THREAD, &u);
	return u.ru_nvcsw;
}

static void xfer(int in, int out)
{
	char c = 0;
	if (in >= 0 && read(in, &c, 1) != 1)
		abort();
	if (out >= 0 && write(out, &c, 1) != 1)
		abort();
}

__attribute__((noinline)) static void *ponger(void *arg)
{
	(void)arg;
	long v0 = voluntary_switches();
	for (long i = 0; i < rounds; i++)
		xfer(ping[0], pong[1]);
	ponger_blocked = voluntary_switches() - v0;
	return NULL;
}

__attribute__((noinline)) static void pinger(void)
{
	for (long i = 0; i < rounds; i++) {
		xfer(-1, ping[1]);
		xfer(pong[0], -1);
	}
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 100000;
	if (pipe(ping) || pipe(pong))
		return 1;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	pthread_t t;
	pthread_create(&t, NULL, ponger, NULL);
	long v0 = voluntary_switches();
	pinger();
	long pinger_blocked = voluntary_switches() - v0;
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	long long ns = (b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec);
	printf("pid=%d rounds=%ld switches_per_s=%.0f elapsed_ns=%lld blocked=%ld\n", (int)getpid(),
	       rounds, 2.0 * (double)rounds * 1e9 / (double)ns, ns, pinger_blocked + ponger_blocked);
	return 0;
}
