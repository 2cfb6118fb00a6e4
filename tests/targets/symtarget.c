/* symtarget — a program with known symbols for the symbolizer tests.
 *
 * It has a plain out-of-line function (symtarget_plain), a function that is
 * always inlined into another (symtarget_inlined into symtarget_outer), and
 * a call into a shared library (symlib_sum in libsymlib.so), so a test can
 * cross-check every kind of frame against addr2line.
 *
 * `symtarget serve` prints "name 0xaddr" for each of its functions (and the
 * library's) on stdout, one per line, then sleeps until killed, so a test can resolve live addresses of a running process. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

long symlib_sum(long n);
int main(int argc, char **argv);

volatile long symtarget_sink;

__attribute__((noinline)) long symtarget_plain(long x)
{
	symtarget_sink += x;
	return symtarget_sink * 3;
}

static inline __attribute__((always_inline)) long symtarget_inlined(long x)
{
	symtarget_sink += x * 7;
	return symtarget_sink ^ x;
}

__attribute__((noinline)) long symtarget_outer(long x)
{
	long a = symtarget_plain(x);
	long b = symtarget_inlined(a);
	return a + b;
}

__attribute__((noinline)) long symtarget_call_lib(long x)
{
	return symlib_sum(x) + 1;
}

static void print_address(const char *name, void *addr)
{
	printf("%s %p\n", name, addr);
}

static int serve(void)
{
	print_address("symtarget_plain", (void *)symtarget_plain);
	print_address("symtarget_outer", (void *)symtarget_outer);
	print_address("symtarget_call_lib", (void *)symtarget_call_lib);
	print_address("symlib_sum", (void *)symlib_sum);
	print_address("main", (void *)main);
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "serve") == 0)
		return serve();
	long r = symtarget_outer(argc) + symtarget_call_lib(argc + 10);
	printf("%ld\n", r);
	return 0;
}
