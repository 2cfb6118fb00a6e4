/* nofp — a known call chain in code without frame pointers: built
 * -O2 -fomit-frame-pointer by gcc and by clang (nofp-gcc, nofp-clang), with
 * a library built the same way in the middle (libnofp-*.so):
 *
 *   main -> run -> stage_a -> nofp_lib_stage (libnofp) -> stage_b -> leaf_spin
 *
 * usage: nofp spin    leaf_spin loops for ever (stop it anywhere: SIGSTOP,
 *                     ptrace), a leaf without a frame
 *        nofp stop    leaf_spin raises SIGSTOP itself after 1000 rounds, so
 *                     the stack is libc's raise above the chain
 *        nofp signal  leaf_spin loops until a timer's SIGALRM interrupts it:
 *                     the handler, on_signal, raises SIGSTOP, so the stack
 *                     goes through the kernel's signal frame (__restore_rt)
 *        nofp qsort   main -> sort_keys -> libc's qsort -> cmp_keys, which
 *                     raises SIGSTOP on its 1000th call
 *   The -for modes start 0.3 s after exec: samples taken before a profiler
 *   has read the new program's maps (sonde: counted as table misses) are
 *   not what they measure.
 *        nofp spin-for S    the chain's leaf spins for S seconds (SIGALRM
 *                     ends it), then prints "rate R": rounds of leaf_spin
 *                     per CPU second of the process, its own work rate, and
 *                     "cpu C", the CPU seconds it used
 *        nofp qsort-for S   main -> sort_keys -> qsort -> cmp_keys, sorting
 *                     again and again for S seconds; prints "rate R" (compares
 *                     per CPU second)
 *        nofp signal-for S  the chain's leaf is interrupted by SIGALRM, whose
 *                     handler, spin_in_handler, spins until S seconds have
 *                     passed: ...;stage_b;leaf_spin;__restore_rt;
 *                     spin_in_handler, through the kernel's signal frame
 *        nofp dlopen LIB S  sleeps 1 s (a profiler attaches), then dlopens
 *                     LIB (a libnofp) and runs the chain through its
 *                     nofp_lib_stage until S seconds have passed: main ->
 *                     run_dl -> nofp_lib_stage (LIB) -> stage_b -> leaf_spin
 * Functions are global and noinline, and every call is followed by work of
 * the caller's, so the compilers keep each frame (no inlining, no tail
 * calls) whatever they do inside them. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "nofp.h"

static volatile unsigned long sink;
static int stop_mode;
static volatile sig_atomic_t time_up; /* the -for modes' SIGALRM came */
static unsigned long rounds;

__attribute__((noinline)) long leaf_spin(long n)
{
	unsigned long x = (unsigned long)n;
	for (unsigned long i = 0;; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		if (stop_mode && i == 1000) {
			raise(SIGSTOP);
			break;
		}
		if (time_up) {
			rounds = i;
			break;
		}
		sink = x;
	}
	return (long)x;
}

__attribute__((noinline)) long stage_b(long n)
{
	volatile long keep[4] = { n, n + 1, n + 2, n + 3 };
	long r = leaf_spin(n + keep[2]);
	return r ^ keep[1];
}

__attribute__((noinline)) long stage_a(long n)
{
	volatile long keep[10];
	for (int i = 0; i < 10; i++)
		keep[i] = n * i;
	long r = nofp_lib_stage(stage_b, n + keep[7]);
	return r + keep[3];
}

__attribute__((noinline)) long run(long n)
{
	volatile long keep[2] = { n, 2 * n };
	long r = stage_a(n + keep[1]);
	return r - keep[0];
}

__attribute__((noinline)) void on_signal(int sig)
{
	(void)sig;
	raise(SIGSTOP);
	sink++;
}

static unsigned long compares;

__attribute__((noinline)) int cmp_keys(const void *a, const void *b)
{
	if (++compares == 1000 && stop_mode)
		raise(SIGSTOP);
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) long sort_keys(long n)
{
	long *keys = malloc((size_t)n * sizeof(*keys));
	if (!keys)
		return -1;
	for (long i = 0; i < n; i++)
		keys[i] = (i * 7919) % n;
	qsort(keys, (size_t)n, sizeof(*keys), cmp_keys);
	long r = keys[n / 2];
	free(keys);
	return r;
}

static volatile sig_atomic_t handler_done;

__attribute__((noinline)) void spin_in_handler(int sig)
{
	unsigned long x = (unsigned long)sig;
	while (!handler_done) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		sink = x;
	}
}

static void *end_after(void *arg)
{
	usleep((useconds_t)(atof(arg) * 1e6));
	handler_done = 1;
	time_up = 1;
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	time_up = 1;
}

static void alarm_in(const char *seconds)
{
	signal(SIGALRM, on_alarm);
	double s = atof(seconds);
	struct itimerval it = { .it_value = { (time_t)s, (suseconds_t)((s - (long)s) * 1e6) } };
	setitimer(ITIMER_REAL, &it, NULL);
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The chain through a library dlopened now (nofp dlopen). */
__attribute__((noinline)) long run_dl(const char *lib, long n)
{
	void *h = dlopen(lib, RTLD_NOW);
	long (*stage)(long (*)(long), long) = h ? (long (*)(long (*)(long), long))dlsym(h, "nofp_lib_stage") : NULL;
	if (!stage) {
		fprintf(stderr, "nofp: cannot load %s: %s\n", lib, dlerror());
		exit(1);
	}
	volatile long keep[2] = { n, 3 * n };
	long r = stage(stage_b, n + keep[1]);
	return r - keep[0];
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: nofp spin|stop|signal|qsort | spin-for S|qsort-for S|signal-for S | dlopen LIB S\n");
		return 2;
	}
	long r;
	if (strstr(argv[1], "-for"))
		usleep(300000);
	if (strcmp(argv[1], "spin-for") == 0 && argc > 2) {
		alarm_in(argv[2]);
		double c0 = cpu_seconds();
		r = run(argc);
		printf("rate %.0f\ncpu %.3f\n", (double)rounds / (cpu_seconds() - c0), cpu_seconds());
	} else if (strcmp(argv[1], "signal-for") == 0 && argc > 2) {
		/* The timer's SIGALRM must interrupt leaf_spin, never the thread
		 * that ends the handler: a handler run there would spin for ever
		 * (the kernel may give a process signal to any thread not
		 * blocking it). The thread starts with it blocked. */
		sigset_t alrm, old;
		sigemptyset(&alrm);
		sigaddset(&alrm, SIGALRM);
		pthread_sigmask(SIG_BLOCK, &alrm, &old);
		pthread_t t;
		pthread_create(&t, NULL, end_after, argv[2]);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		signal(SIGALRM, spin_in_handler);
		struct itimerval it = { .it_value = { 0, 10000 } };
		setitimer(ITIMER_REAL, &it, NULL);
		r = run(argc);
		pthread_join(t, NULL);
	} else if (strcmp(argv[1], "qsort-for") == 0 && argc > 2) {
		alarm_in(argv[2]);
		double c0 = cpu_seconds();
		for (r = 0; !time_up;)
			r += sort_keys(4096);
		printf("rate %.0f\ncpu %.3f\n", (double)compares / (cpu_seconds() - c0), cpu_seconds());
	} else if (strcmp(argv[1], "dlopen") == 0 && argc > 3) {
		alarm_in(argv[3]);
		sleep(1);
		r = run_dl(argv[2], argc);
	} else if (strcmp(argv[1], "qsort") == 0) {
		stop_mode = 1;
		r = sort_keys(4096);
	} else {
		stop_mode = strcmp(argv[1], "stop") == 0;
		if (strcmp(argv[1], "signal") == 0) {
			signal(SIGALRM, on_signal);
			struct itimerval it = { .it_value = { 0, 20000 } };
			setitimer(ITIMER_REAL, &it, NULL);
		}
		r = run(argc);
	}
	printf("%ld\n", r);
	return 0;
}
