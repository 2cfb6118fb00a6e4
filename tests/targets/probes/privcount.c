/* privcount — calls priv_work (libprivcount.so, found only through this
 * program's RUNPATH or RPATH, or LD_LIBRARY_PATH) CALLS times and prints
 * "calls=N lib=PATH": PATH is the copy of the library the loader chose.
 *
 * usage: privcount CALLS [--wait-traced]   (waits until priv_ready is traced) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traced.h"

uint64_t priv_work(uint64_t x);
void priv_ready(void);

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 0;
	if (argc > 2 && strcmp(argv[2], "--wait-traced") == 0)
		wait_traced((const void *)priv_ready, NULL); /* traced last by the test */
	long n = 0;
	for (long i = 0; i < calls; i++, n++)
		priv_work((uint64_t)i);
	Dl_info info;
	const char *lib = dladdr((void *)priv_work, &info) && info.dli_fname ? info.dli_fname : "?";
	printf("calls=%ld lib=%s\n", n, lib);
	return 0;
}
