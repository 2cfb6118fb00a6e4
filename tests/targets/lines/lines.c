/* lines: a source line inlined in two functions, for line probes
 * (tests/integration/trace_lines.sh), built by gcc and clang at -O0 and -O2
 * (see CMakeLists.txt).
 *
 * `count_hit` is always inlined, so its line LINE_HIT has one copy in
 * handle_request and one in handle_batch. handle_request takes the line on
 * every third request; handle_batch on every request of a batch. Between
 * hits, handle_request spins (so samples land there, in calls that hit the
 * line or not). The program prints what it counted:
 *   hits=H request_hits=R batch_hits=B requests=N requests_with_hit=W batches=M */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long hits; /* every execution of LINE_HIT */
static volatile unsigned long sink;

static inline __attribute__((always_inline)) void count_hit(unsigned long v)
{
	hits += v; /* LINE_HIT */
}

static void __attribute__((noinline)) spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) int handle_request(unsigned long i)
{
	int hit = 0;
	if (i % 3 == 0) {
		count_hit(1);
		hit = 1;
	}
	spin(20000);
	return hit;
}

__attribute__((noinline)) void handle_batch(unsigned long n)
{
	/* The call keeps compilers from unrolling the loop: an unrolled copy
	 * of the line has no statement row of its own (lines.h). */
	for (unsigned long i = 0; i < n; i++) {
		count_hit(1);
		spin(10);
	}
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 3000;
	unsigned long with_hit = 0, batches = 0, batch_hits = 0;
	for (unsigned long i = 0; i < n; i++) {
		with_hit += (unsigned long)handle_request(i);
		if (i % 10 == 0) {
			handle_batch(i % 7);
			batch_hits += i % 7;
			batches++;
		}
	}
	printf("hits=%lu request_hits=%lu batch_hits=%lu requests=%lu requests_with_hit=%lu "
	       "batches=%lu\n",
	       (unsigned long)hits, with_hit, batch_hits, n, with_hit, batches);
	return 0;
}
