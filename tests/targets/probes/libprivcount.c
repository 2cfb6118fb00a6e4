/* libprivcount — a shared library that lives only in private directories
 * (private-lib/, decoy-lib/ and rpath-lib/ under the test targets' directory,
 * none a system directory): a program finds it only through its RUNPATH,
 * RPATH or LD_LIBRARY_PATH. */
#include <stdint.h>

volatile uint64_t priv_sink;

/* Never called: the readiness marker, as counted_ready in libcounted.c. */
__attribute__((noinline)) void priv_ready(void)
{
	priv_sink = 0;
}

__attribute__((noinline)) uint64_t priv_work(uint64_t x)
{
	priv_sink += x;
	return priv_sink;
}
