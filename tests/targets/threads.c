/* threads — several threads burning CPU in distinct functions.
 *
 * usage: threads SECONDS NTHREADS [wait]
 * Thread i runs worker_even() when i is even and worker_odd() when odd, each
 * spinning for SECONDS of wall time and at least 0.3 s of its own CPU
 * time; threads are started 100 ms after the
 * process, or with "wait" only once the process gets SIGUSR1 (so a profiler
 * attached with -p sees them created, however long it took to attach). The
 * main thread sleeps in pthread_join. Prints "pid=<pid> threads=<n>" at
 * start (followed by " ready" with "wait"), "created_ns=<CLOCK_MONOTONIC ns>" (when it began creating the threads), one
 * line "thread=<i> tid=<tid> cpu_s=<its own CPU time>" per thread as it ends
 * and "end_ns=<CLOCK_MONOTONIC ns>" just before exiting. */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

/* Each thread burns at least this much CPU time, however busy the machine:
 * the tests compare its samples with its CPU time, which must be large
 * enough to be a measurement (tests/integration/lib.sh asks for 0.2 s). */
#define MIN_CPU_S 0.3

static double own_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn_until(double end)
{
	unsigned long x = sink;
	while (wall_now() < end || own_cpu_s() < MIN_CPU_S)
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

static unsigned long long mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void *thread_main(void *arg)
{
	long i = (long)arg;
	double end = wall_now() + seconds;
	if (i % 2 == 0)
		worker_even(end);
	else
		worker_odd(end);
	struct timespec cpu;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	pthread_mutex_lock(&out_lock);
	printf("thread=%ld tid=%ld cpu_s=%.4f\n", i, (long)syscall(SYS_gettid),
	       (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	seconds = argc > 1 ? atof(argv[1]) : 2.0;
	int n = argc > 2 ? atoi(argv[2]) : 4;
	if (n < 1 || n > 64)
		n = 4;
	bool wait_signal = argc > 3 && strcmp(argv[3], "wait") == 0;
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (wait_signal)
		sigprocmask(SIG_BLOCK, &usr1, NULL); /* before saying our PID */
	printf("pid=%d threads=%d%s\n", (int)getpid(), n, wait_signal ? " ready" : "");
	fflush(stdout);
	if (wait_signal) {
		int sig;
		sigwait(&usr1, &sig);
	} else {
		usleep(100000);
	}
	pthread_t t[64];
	unsigned long long created = mono_ns();
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)i);
	pthread_mutex_lock(&out_lock);
	printf("created_ns=%llu\n", created);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("end_ns=%llu\n", mono_ns());
	return 0;
}
