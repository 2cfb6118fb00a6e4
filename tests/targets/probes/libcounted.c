/* libcounted — a shared library with one function for the probe tests to
 * trace (tests/integration/probes_*.sh). The programs that call it count
 * their own calls, so a traced count can be checked exactly. */
#include <stdint.h>

volatile uint64_t counted_sink;

/* Never called: tests trace it last, and the programs wait until its uprobe
 * is in their memory (traced.h); the probes attached before it are then
 * complete. */
__attribute__((noinline)) void counted_ready(void)
{
	counted_sink = 0;
}

static __attribute__((noinline)) uint64_t counted_add(uint64_t x)
{
	counted_sink += x;
	return counted_sink;
}

/* Not a leaf, so it has the frame-pointer prologue a real function built
 * with frame pointers has, where its uprobe lands (push %rbp: the kernel
 * emulates it instead of single-stepping it). */
__attribute__((noinline)) uint64_t counted_work(uint64_t x)
{
	return counted_add(x) + 1;
}
