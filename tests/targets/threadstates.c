/* threadstates — threads blocked in known system calls for a known time,
 * for the thread table (sonde threads, record --threads).
 *
 * usage: threadstates HOLD_MS
 * Five threads, each named (its comm) after what it does, in a function of
 * its own (the stack a thread table shows names it):
 *   reader   handle_request() -> wait_read(): read() on a pipe main writes
 *            HOLD_MS later
 *   sleeper  handle_request() -> wait_sleep(): nanosleep(HOLD_MS)
 *   locker   handle_request() -> wait_lock(): pthread_mutex_lock on a mutex
 *            main holds for HOLD_MS (a futex wait)
 *   idler    wait_signal(): pthread_cond_wait (a futex wait) for HOLD_MS,
 *            outside any request
 *   spinner  spin(): spins on the CPU for HOLD_MS, outside any request
 * Each prints, before its blocking call, what it is about to do (and
 * at_ns: the time as it says so, inside its request: after the request
 * began, before the call did), and after it when the call began (read
 * just before it) and how long it took; times are CLOCK_MONOTONIC, the
 * clock of sonde's times:
 *   start name=reader tid=T syscall=read at_ns=A
 *   done name=reader tid=T start_ns=S blocked_ns=D
 * Main waits until every thread has printed its start, sleeps HOLD_MS,
 * then releases them all (write, unlock, signal) and ends. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int pipefd[2];
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int released;
static long hold_ms;
static pthread_mutex_t started_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t started_cond = PTHREAD_COND_INITIALIZER;
static int started;
static volatile unsigned long sink;

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static unsigned long long begin(const char *name, const char *call)
{
	pthread_mutex_lock(&started_lock);
	started++;
	pthread_cond_signal(&started_cond);
	pthread_mutex_unlock(&started_lock);
	printf("start name=%s tid=%ld syscall=%s at_ns=%llu\n", name, (long)syscall(SYS_gettid),
	       call, now_ns());
	fflush(stdout);
	return now_ns();
}

static void end(const char *name, unsigned long long t0)
{
	unsigned long long t1 = now_ns();
	printf("done name=%s tid=%ld start_ns=%llu blocked_ns=%llu\n", name,
	       (long)syscall(SYS_gettid), t0, t1 - t0);
	fflush(stdout);
}

enum what { READ, SLEEP, LOCK };

/* The blocking calls, each in its own function; none is a tail call (each
 * checks what the call returned), so each stays on the stack. */
__attribute__((noinline)) void wait_read(void)
{
	char c;
	if (read(pipefd[0], &c, 1) != 1)
		exit(1);
}

__attribute__((noinline)) void wait_sleep(void)
{
	struct timespec d = {hold_ms / 1000, hold_ms % 1000 * 1000000};
	if (nanosleep(&d, NULL))
		exit(1);
}

__attribute__((noinline)) void wait_lock(void)
{
	if (pthread_mutex_lock(&held))
		exit(1);
}

__attribute__((noinline)) void handle_request(enum what w)
{
	unsigned long long t0;
	switch (w) {
	case READ:
		t0 = begin("reader", "read");
		wait_read();
		end("reader", t0);
		break;
	case SLEEP:
		t0 = begin("sleeper", "clock_nanosleep");
		wait_sleep();
		end("sleeper", t0);
		break;
	case LOCK:
		t0 = begin("locker", "futex");
		wait_lock();
		end("locker", t0);
		pthread_mutex_unlock(&held);
		break;
	}
}

__attribute__((noinline)) void wait_signal(void)
{
	while (!released)
		if (pthread_cond_wait(&cond, &cond_lock))
			exit(1);
}

__attribute__((noinline)) void spin(unsigned long long t0)
{
	while (now_ns() - t0 < (unsigned long long)hold_ms * 1000000ull)
		sink++;
}

static void *run(void *arg)
{
	static const char *const names[] = {"reader", "sleeper", "locker"};
	long w = (long)arg;
	if (w <= LOCK) {
		pthread_setname_np(pthread_self(), names[w]);
		handle_request((enum what)w);
	} else if (w == 3) {
		pthread_setname_np(pthread_self(), "idler");
		pthread_mutex_lock(&cond_lock);
		unsigned long long t0 = begin("idler", "futex");
		wait_signal();
		pthread_mutex_unlock(&cond_lock);
		end("idler", t0);
	} else {
		pthread_setname_np(pthread_self(), "spinner");
		unsigned long long t0 = begin("spinner", "none");
		spin(t0);
		end("spinner", t0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (hold_ms = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: threadstates HOLD_MS\n");
		return 2;
	}
	if (pipe(pipefd))
		return 1;
	pthread_mutex_lock(&held);
	pthread_t t[5];
	for (long i = 0; i < 5; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	pthread_mutex_lock(&started_lock);
	while (started < 5)
		pthread_cond_wait(&started_cond, &started_lock);
	pthread_mutex_unlock(&started_lock);
	struct timespec d = {hold_ms / 1000, hold_ms % 1000 * 1000000};
	nanosleep(&d, NULL);
	if (write(pipefd[1], "x", 1) != 1)
		return 1;
	pthread_mutex_unlock(&held);
	pthread_mutex_lock(&cond_lock);
	released = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&cond_lock);
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	return 0;
}
