/* optval — numeric option values. The contract is in optval.h. */
#include "optval.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "errbuf.h"
#include "util.h"

int optval_number(const char *opt, const char *arg, const char *what, double min, double max,
		  double *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (end == arg || *end || errno || !(v >= min && v <= max)) {
		errorf("bad value '%s' for %s: expected %s from %.15g to %.15g", arg, opt, what, min,
		       max);
		return -1;
	}
	*out = v;
	return 0;
}

int optval_count(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (!isdigit((unsigned char)*arg) || *end || errno || v < min || v > max) {
		errorf("bad value '%s' for %s: expected a whole number from %" PRIu64 " to %" PRIu64,
		       arg, opt, min, max);
		return -1;
	}
	*out = v;
	return 0;
}
