/* optval — the numeric values of command-line options, parsed one way in
 * every command: a bad value is one error line, "bad value 'X' for OPT:
 * expected ...", printed here, and -1. */
#ifndef SONDE_OPTVAL_H
#define SONDE_OPTVAL_H

#include <stdint.h>

/* A number (strtod's forms) from min to max; `what` names it in the error
 * ("a number", "seconds"). */
int optval_number(const char *opt, const char *arg, const char *what, double min, double max,
		  double *out);

/* A whole number (decimal digits only) from min to max. */
int optval_count(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *out);

#endif
