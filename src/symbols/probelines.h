/* probelines — a line spec ([BINARY:]FILE:LINE) resolved in its binary: a
 * target per address where the line begins a statement (lines.h), each
 * checked safe (probesafety). */
#ifndef SONDE_PROBELINES_H
#define SONDE_PROBELINES_H

#include <stddef.h>
#include <sys/stat.h>

#include "probes.h"
#include "probesafety.h"

/* Every probe address of FILE:LINE in binary (st: its identity), in *out;
 * returns how many, or -1 with err: no DWARF, no such line, or one unsafe
 * address, which refuses the line, since its hits would be missed. */
int resolve_line(struct safety *c, const struct debug_file *dbg, const char *binary,
		 const struct stat *st, const char *spec, const char *file, unsigned line,
		 struct probe_target **out, char *err, size_t errlen);

#endif
