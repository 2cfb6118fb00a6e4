/* libsymlib — the shared library symtarget calls into, so symbol tests can
 * resolve an address inside a library mapping (a different binary, loaded at
 * a base chosen at run time). Kept tiny and self-contained on purpose: every
 * test target links against it. */

/* Sums 1..n the slow way; volatile keeps the loop and the call real. */
__attribute__((noinline)) long symlib_sum(long n)
{
	volatile long total = 0;
	for (long i = 1; i <= n; i++)
		total += i;
	return total;
}
