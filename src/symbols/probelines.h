/* probelines — a line spec ([BINARY:]FILE:LINE) resolved in its binary: a
 * target per address where the line begins a statement (lines.h), each
 * checked safe (probesafety). */
#ifndef SONDE_PROBELINES_H
#define SONDE_PROBELINES_H

#include <stddef.h>
#include <sys/stat.h>

#include "probes.h"
#include "probesafety.h"

/* A line spec to resolve: its binary and line. */
struct line_query {
	const char *binary;    /* the file sonde opens */
	const struct stat *st; /* its identity */
	const char *spec;      /* the spec as given, for errors */
	const char *file;      /* FILE of FILE:LINE */
	unsigned line;
};

/* Every probe address of q's line, in *out; returns how many, or -1 with
 * err: no DWARF, no such line, or one unsafe address, which refuses the
 * line, since its hits would be missed. */
int resolve_line(struct safety *c, const struct debug_file *dbg, const struct line_query *q,
		 struct probe_target **out, char *err, size_t errlen);

#endif
