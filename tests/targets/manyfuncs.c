/* manyfuncs — 300 distinct small functions, f000..f299, called in rounds
 * once a file appears, so a test can set probes up (and take them down)
 * before any call.
 *
 * usage: manyfuncs READY_FILE ROUNDS [END_FILE]
 * Prints "pid=<pid>" at once, waits (up to 120 s) until READY_FILE exists,
 * then calls every fNNN once per round, ROUNDS rounds, and prints
 * "rounds=R functions=300": each function is called exactly R times. Then
 * it waits (up to 120 s) until END_FILE exists, if one is given, so a live
 * session can still be asked about it. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

/* Each body differs (__COUNTER__), so no two are folded into one. */
#define F(n) __attribute__((noinline)) void f##n(void) { sink += __COUNTER__ + 1; }
#define F10(p) F(p##0) F(p##1) F(p##2) F(p##3) F(p##4) F(p##5) F(p##6) F(p##7) F(p##8) F(p##9)
#define F100(p) F10(p##0) F10(p##1) F10(p##2) F10(p##3) F10(p##4) F10(p##5) F10(p##6) \
	F10(p##7) F10(p##8) F10(p##9)
F100(0)
F100(1)
F100(2)

#define R(n) f##n,
#define R10(p) R(p##0) R(p##1) R(p##2) R(p##3) R(p##4) R(p##5) R(p##6) R(p##7) R(p##8) R(p##9)
#define R100(p) R10(p##0) R10(p##1) R10(p##2) R10(p##3) R10(p##4) R10(p##5) R10(p##6) \
	R10(p##7) R10(p##8) R10(p##9)
static void (*const functions[])(void) = {R100(0) R100(1) R100(2)};
#define NFUNCTIONS (sizeof(functions) / sizeof(functions[0]))

static void wait_for(const char *file)
{
	struct timespec tick = {0, 10 * 1000 * 1000};
	for (int i = 0; i < 12000 && access(file, F_OK) != 0; i++)
		nanosleep(&tick, NULL);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: manyfuncs READY_FILE ROUNDS\n");
		return 2;
	}
	long rounds = atol(argv[2]);
	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	wait_for(argv[1]);
	for (long r = 0; r < rounds; r++)
		for (size_t i = 0; i < NFUNCTIONS; i++)
			functions[i]();
	printf("rounds=%ld functions=%zu\n", rounds, NFUNCTIONS);
	fflush(stdout);
	if (argc > 3)
		wait_for(argv[3]);
	return 0;
}
