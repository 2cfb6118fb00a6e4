/* jit — a process that runs code it generated, named in /tmp/perf-PID.map,
 * as Node, the JVM and Python 3.12 do for perf.
 *
 * usage: jit SECONDS [unlink]
 * Phase 1 (SECONDS / 2 of CPU-bound work): a hot loop of machine code
 * copied into anonymous memory (mapped RW, then mprotect RX), with a
 * frame-pointer prologue (push rbp; mov rbp, rsp ... pop rbp; ret) so
 * frame-pointer walks go through it, is named "jit_hot_loop" in the map
 * and called from run_jit():
 *     main;run_jit;jit_hot_loop
 * Then 0.3 s asleep (the profiler has read phase 1's samples by then).
 * Phase 2 (SECONDS / 2): the JIT "recompiles": it rewrites the code at the
 * same address and names it anew, "jit_recompiled_loop" (a later line of
 * the map overrides an earlier one), and generates a second function in a
 * new mapping, named "LazyCompile:*jit_second_loop /app/jit.js:7" (a name
 * with blanks, as Node's are). run_jit_later() calls the two in turn:
 *     main;run_jit_later;jit_recompiled_loop
 *     main;run_jit_later;LazyCompile:*jit_second_loop /app/jit.js:7
 * The map's lines are written before the code they name runs, as JITs do;
 * phase 2 also writes one line that is not "START SIZE NAME".
 * With "unlink" the map is removed before the process exits (what is in
 * it must have been read while the process ran).
 * Prints at exit
 *     pid=<pid> phase1_cpu_s=<s> phase2_cpu_s=<s> map=<path>
 * with the CPU time of each phase. x86-64 only (the code is x86-64). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* long loop(long n): sums n + (n-1) + ... + 1, with a frame. */
static const unsigned char LOOP_CODE[] = {
	0x55,             /* push %rbp */
	0x48, 0x89, 0xe5, /* mov %rsp, %rbp */
	0x31, 0xc0,       /* xor %eax, %eax */
	0x48, 0x89, 0xf9, /* mov %rdi, %rcx */
	/* 1: */
	0x48, 0x01, 0xc8, /* add %rcx, %rax */
	0x48, 0xff, 0xc9, /* dec %rcx */
	0x75, 0xf8,       /* jnz 1b */
	0x5d,             /* pop %rbp */
	0xc3,             /* ret */
};
#define FUNC_SIZE 0x40 /* the size the map gives each function */
#define ITERATIONS 200000

typedef long (*loop_fn)(long);

static volatile long sink;
static FILE *map;

static double now(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Writes the code at `at` (page-aligned, mapped RW) and makes it RX. */
static void emit(unsigned char *at, size_t len)
{
	memcpy(at, LOOP_CODE, sizeof(LOOP_CODE));
	memset(at + sizeof(LOOP_CODE), 0xcc, FUNC_SIZE - sizeof(LOOP_CODE)); /* int3 */
	if (mprotect(at, len, PROT_READ | PROT_EXEC) != 0) {
		perror("jit: mprotect");
		exit(1);
	}
}

static void name(void *at, const char *fn)
{
	fprintf(map, "%lx %x %s\n", (unsigned long)(uintptr_t)at, FUNC_SIZE, fn);
	fflush(map);
}

static unsigned char *new_code_page(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("jit: mmap");
		exit(1);
	}
	return p;
}

__attribute__((noinline)) double run_jit(loop_fn fn, double seconds)
{
	double t0 = now(CLOCK_THREAD_CPUTIME_ID), end = now(CLOCK_MONOTONIC) + seconds;
	while (now(CLOCK_MONOTONIC) < end)
		sink += fn(ITERATIONS);
	return now(CLOCK_THREAD_CPUTIME_ID) - t0;
}

__attribute__((noinline)) double run_jit_later(loop_fn a, loop_fn b, double seconds)
{
	double t0 = now(CLOCK_THREAD_CPUTIME_ID), end = now(CLOCK_MONOTONIC) + seconds;
	while (now(CLOCK_MONOTONIC) < end) {
		sink += a(ITERATIONS);
		sink += b(ITERATIONS);
	}
	return now(CLOCK_THREAD_CPUTIME_ID) - t0;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	bool unlink_map = argc > 2 && strcmp(argv[2], "unlink") == 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map) {
		perror("jit: cannot write the perf map");
		return 1;
	}

	unsigned char *a = new_code_page(page);
	name(a, "jit_hot_loop");
	emit(a, page);
	double cpu1 = run_jit((loop_fn)(void *)a, seconds / 2);

	struct timespec pause = {0, 300000000};
	nanosleep(&pause, NULL);

	/* Recompile: the same address gets new code and a new name. */
	if (mprotect(a, page, PROT_READ | PROT_WRITE) != 0) {
		perror("jit: mprotect");
		return 1;
	}
	fputs("a line a broken JIT wrote\n", map); /* skipped and counted */
	name(a, "jit_recompiled_loop");
	emit(a, page);
	unsigned char *b = new_code_page(page);
	name(b, "LazyCompile:*jit_second_loop /app/jit.js:7");
	emit(b, page);
	double cpu2 = run_jit_later((loop_fn)(void *)a, (loop_fn)(void *)b, seconds / 2);

	fclose(map);
	if (unlink_map)
		unlink(path);
	printf("pid=%d phase1_cpu_s=%.3f phase2_cpu_s=%.3f map=%s\n", (int)getpid(), cpu1, cpu2,
	       path);
	fflush(stdout);
	return 0;
}
