/* strlens — calls libc's strlen (an IFUNC: the loader picks an
 * implementation for the CPU) a known number of times, once a file
 * appears.
 *
 * usage: strlens READY_FILE N
 * Prints "pid=<pid>", waits (up to 120 s) until READY_FILE exists, calls
 * strlen N times on a string it changes every time (so no call is folded
 * away), and prints "calls=N total=T" with write(2): nothing else of libc
 * that might call strlen runs between the first and the last call. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: strlens READY_FILE N\n");
		return 2;
	}
	long n = 0;
	for (const char *p = argv[2]; *p >= '0' && *p <= '9'; p++)
		n = n * 10 + (*p - '0');
	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	struct timespec tick = {0, 10 * 1000 * 1000};
	for (int i = 0; i < 12000 && access(argv[1], F_OK) != 0; i++)
		nanosleep(&tick, NULL);
	char buf[64] = "a string of some length to measure, changed each time";
	size_t total = 0;
	for (long i = 0; i < n; i++) {
		buf[i % 40] = (char)('a' + i % 26);
		total += strlen(buf);
	}
	char out[96];
	int len = snprintf(out, sizeof(out), "calls=%ld total=%zu\n", n, total);
	if (write(1, out, (size_t)len) < 0)
		return 1;
	return 0;
}
