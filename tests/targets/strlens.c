/* strlens — calls libc's strlen (an IFUNC: the loader picks an
 * implementation for the CPU) a known number of times, once a file
 * appears.
 *
 * usage: strlens READY_FILE N [strlen|getppid [END_FILE]]
 * Prints "pid=<pid>", waits (up to 120 s) until READY_FILE exists, calls
 * strlen N times on a string it changes every time (so no call is folded
 * away), and prints "calls=N total=T" with write(2): nothing else of libc
 * that might call strlen runs between the first and the last call. With
 * "getppid", it calls getppid N times instead. With END_FILE, it then waits
 * (up to 120 s) until that file exists, so a live session can still be
 * asked about it. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void wait_for(const char *file)
{
	struct timespec tick = {0, 10 * 1000 * 1000};
	for (int i = 0; i < 12000 && access(file, F_OK) != 0; i++)
		nanosleep(&tick, NULL);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: strlens READY_FILE N [strlen|getppid [END_FILE]]\n");
		return 2;
	}
	long n = 0;
	for (const char *p = argv[2]; *p >= '0' && *p <= '9'; p++)
		n = n * 10 + (*p - '0');
	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	wait_for(argv[1]);
	char buf[64] = "a string of some length to measure, changed each time";
	size_t total = 0;
	if (argc > 3 && strcmp(argv[3], "getppid") == 0) {
		for (long i = 0; i < n; i++)
			total += (size_t)getppid();
	} else {
		for (long i = 0; i < n; i++) {
			buf[i % 40] = (char)('a' + i % 26);
			total += strlen(buf);
		}
	}
	char out[96];
	int len = snprintf(out, sizeof(out), "calls=%ld total=%zu\n", n, total);
	if (write(1, out, (size_t)len) < 0)
		return 1;
	if (argc > 4)
		wait_for(argv[4]);
	return 0;
}
