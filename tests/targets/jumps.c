/* jumps — calls that never return normally, and recursion deeper than the
 * kernel follows returns (its uretprobe nesting limit is 64).
 *
 * usage: jumps N DEPTH ROUNDS
 * N times: jumper() is entered and leaves by longjmp (it never returns),
 * then counted() is called once and returns. Then ROUNDS times, recurse()
 * recurses DEPTH levels deep and returns through every level.
 * Prints "jumps=N counted=N recurse_calls=ROUNDS*DEPTH". */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf back;
static volatile long sink;

__attribute__((noinline)) void jumper(long i)
{
	sink += i;
	longjmp(back, 1);
}

__attribute__((noinline)) long counted(long i)
{
	sink += i;
	return sink;
}

/* Not a tail call: the addition after the call keeps every level's frame. */
__attribute__((noinline)) long recurse(int depth)
{
	if (depth <= 1)
		return sink;
	return recurse(depth - 1) + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int depth = argc > 2 ? atoi(argv[2]) : 100;
	long rounds = argc > 3 ? atol(argv[3]) : 10;
	for (long i = 0; i < n; i++) {
		if (!setjmp(back))
			jumper(i);
		counted(i);
	}
	for (long r = 0; r < rounds; r++)
		sink += recurse(depth);
	printf("jumps=%ld counted=%ld recurse_calls=%ld\n", n, n, rounds * depth);
	return 0;
}
