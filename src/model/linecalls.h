/* linecalls — how a line probe's hits sit in the calls of the function
 * probes: of a function's calls that ended while the line was traced (the
 * kernel's count, every call), how many ran the line (with a predicate:
 * hit it with the predicate true); of its slow calls (over a threshold the
 * caller gives) that have a record, how many hit it. `sonde report` ("line
 * N ran in 8.0% of the calls of handle_request and in 97.0% of its slow
 * calls") and the live status (sonde serve's probes, liveview.h) say it
 * from these numbers. */
#ifndef SONDE_LINECALLS_H
#define SONDE_LINECALLS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct line_in_calls {
	uint32_t probe;          /* the function probe */
	uint64_t calls, hit;     /* its calls; those during which the line ran */
	uint64_t slow_ns;        /* the slow threshold (0: none known: slow is 0) */
	uint64_t slow, slow_hit; /* its calls with a record over it; those that hit the line */
};

/* The slow threshold of function probe `probe` (0: none known). */
typedef uint64_t (*line_calls_slow_fn)(void *arg, uint32_t probe);

/* Fills out[] (room for p->nprobes) for line probe `line`, a function
 * probe each, in the order the profile met the pairs; returns how many. */
size_t line_calls_of(const struct profile *p, uint32_t line, line_calls_slow_fn slow_ns,
		     void *arg, struct line_in_calls *out);

/* part of whole in percent (0 when whole is 0). */
double line_calls_share(uint64_t part, uint64_t whole);

#endif
