/* libusdtvars — usdtvars' library: an SDT probe whose first argument is a
 * static variable of the library (rip-relative, named by its local
 * symbol), the second the loop's index. */
#include <sys/sdt.h>

static volatile int lib_count = -5;

long lib_ticks(int n)
{
	long sum = 0;
	for (int i = 0; i < n; i++) {
		lib_count += 3;
		sum += lib_count;
		DTRACE_PROBE2(sonde, libtick, lib_count, i);
	}
	return sum;
}
