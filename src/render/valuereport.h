/* valuereport — captured values in `sonde report`: per probe, its hits
 * (and predicate) and per captured variable its count, min, max, sum and
 * most frequent values (values.h); and the calls of a traced function
 * split by the value of one of its captures (--by VAR with --in/--slow/
 * --fast FUNC): per value, its calls, its calls the view takes, and the
 * samples the view takes inside them. The view's thread filters and time
 * range (view_takes_thread_at) hold for all three; its calls are those
 * view_takes_call takes.
 *
 * JSON, inside a probe's object (a function's or a line's): "hits": N,
 * "predicate": "..." (or null), "values": {VAR: {"type", "count", "min",
 * "max", "sum" (numbers only), "top": [[value, count], ...],
 * "optimized_out", "read_errors", "unavailable"}}. Strings, enumerators
 * and pointers (hex) are JSON strings, booleans JSON booleans, integers
 * numbers. */
#ifndef SONDE_VALUEREPORT_H
#define SONDE_VALUEREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "printable.h"
#include "profile.h"
#include "view.h"

#define VALUEREPORT_TOP 10 /* most frequent values shown */

void valuereport_text(FILE *out, const struct profile *p, uint32_t probe, struct printable *keep);
/* Writes the keys above, each preceded by ", ". */
void valuereport_json(FILE *out, const struct profile *p, uint32_t probe);
/* Writes the "values" object alone, on one line (the live status's). */
void valuereport_json_values(FILE *out, const struct profile *p, uint32_t probe);

/* Whether the split below can be made: 0, or -1 with err (one line): no
 * probe in the view, or `var` not captured by it. */
int valuereport_by_check(const struct profile *p, const struct view *v, const char *var,
			 char *err, size_t errlen);

/* A split asked for: the calls of view v's probe in p by its capture `var`. */
struct valuereport_by {
	const struct profile *p;
	const struct view *v;
	const char *var;
};

/* The split `by`, as a table. Returns 0, or -1 with err as
 * valuereport_by_check. */
int valuereport_by_text(FILE *out, const struct valuereport_by *by, struct printable *keep,
			char *err, size_t errlen);
/* As a JSON member ("by": {...},\n). */
int valuereport_by_json(FILE *out, const struct profile *p, const struct view *v,
			const char *var, char *err, size_t errlen);

#endif
