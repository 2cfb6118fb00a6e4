/* brokenstack — stacks a frame-pointer walk cannot follow, made on purpose.
 *
 * usage: brokenstack SECONDS
 * Code built without frame pointers uses %rbp as any other register, so a
 * walk that reaches it reads a "frame" wherever %rbp points. Here
 * call_with_bad_frame() calls a hot leaf with %rbp pointing at a fake frame
 * {next frame 0, return address X}, where X is in turn
 *   - a heap address (leaf spin_heap),
 *   - the address of a global variable, in .data (spin_data),
 *   - 16, which no mapping holds (spin_unmapped),
 * and for comparison run() also calls spin_sound() with a sound frame. The
 * walk from each leaf gives: the leaf, call_with_bad_frame (right: the
 * leaf's own frame is sound), then X, then nothing (next frame 0). Each
 * of the four gets a quarter of the time; prints at exit
 *   pid=<pid> cpu_s=<seconds>
 * x86-64 only (the fake frame is set up in assembly). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define UNIT_ITERATIONS 300000

static volatile unsigned long sink;
static uintptr_t data_word = 1; /* in .data, not .bss */

static double now(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spin(void)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < UNIT_ITERATIONS; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	sink = x;
}

__attribute__((noinline)) void spin_heap(void) { spin(); }
__attribute__((noinline)) void spin_data(void) { spin(); }
__attribute__((noinline)) void spin_unmapped(void) { spin(); }
__attribute__((noinline)) void spin_sound(void) { spin(); }

/* Calls fn with %rbp = frame (the stack kept 16-byte aligned at the call). */
__attribute__((noinline)) void call_with_bad_frame(void (*fn)(void), uintptr_t *frame)
{
	__asm__ volatile("sub $8, %%rsp\n\t"
			 "push %%rbp\n\t"
			 "mov %1, %%rbp\n\t"
			 "call *%0\n\t"
			 "pop %%rbp\n\t"
			 "add $8, %%rsp"
			 : "+r"(fn), "+r"(frame)
			 :
			 : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory",
			   "cc");
}

__attribute__((noinline)) void run(double seconds)
{
	uintptr_t *heap = malloc(64);
	uintptr_t heap_frame[2] = {0, (uintptr_t)(heap + 4)};
	uintptr_t data_frame[2] = {0, (uintptr_t)&data_word};
	uintptr_t unmapped_frame[2] = {0, 16};
	double t0 = now(CLOCK_THREAD_CPUTIME_ID), end = now(CLOCK_MONOTONIC) + seconds;
	while (now(CLOCK_MONOTONIC) < end) {
		call_with_bad_frame(spin_heap, heap_frame);
		call_with_bad_frame(spin_data, data_frame);
		call_with_bad_frame(spin_unmapped, unmapped_frame);
		spin_sound();
	}
	printf("pid=%d cpu_s=%.3f\n", (int)getpid(), now(CLOCK_THREAD_CPUTIME_ID) - t0);
	fflush(stdout);
	free(heap);
}

int main(int argc, char **argv)
{
	run(argc > 1 ? atof(argv[1]) : 2.0);
	return 0;
}
