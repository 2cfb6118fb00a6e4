/* probebranch — branch probes: the conditional jumps of a source line, or
 * the one at an address, each with its condition decoded for the kernel.
 *
 * Specs: `branch [BINARY:]FILE:LINE` (every conditional jump in the line's
 * code, in every instance of it: each out-of-line copy, each inlined one;
 * lines.h), `branch [BINARY:]FILE:LINE#K` (only the K-th jump of the line
 * in each instance, by address: `a && b` has two), and
 * `branch [BINARY:]FUNC+0xOFF` (the jump at that offset of the function).
 * The line's code is every row of the line table with that line (not only
 * statement rows: a condition's compare and jump often have rows of their
 * own), decoded with capstone from the start of the function holding it;
 * each jump's taken and fall-through addresses are mapped back to lines.
 *
 * Refused with one line: a line with no conditional jump (naming the lines
 * of its function that have some), a #K past the line's jumps, a jump the
 * kernel's uprobes cannot take (insn.h), one whose outcome sonde cannot
 * evaluate (a loop counting in %ecx), an offset that is no jump. */
#ifndef SONDE_PROBEBRANCH_H
#define SONDE_PROBEBRANCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "probedebug.h"
#include "probes.h"
#include "probesafety.h"

/* Whether spec is a branch probe's ("branch " and a location). */
bool probebranch_is(const char *spec);

/* The location of a branch spec (malloc'd, "branch " and any #K taken
 * off) and K (0: none): 0, or -1 with err for a bad #K. */
int probebranch_split(const char *spec, char **location, unsigned *index, char *err,
		      size_t errlen);

/* A branch spec to resolve in its binary: a line (file set) or a
 * function's offset (func set). */
struct branch_query {
	const char *binary;    /* the file sonde opens */
	const struct stat *st; /* its identity */
	const char *spec;      /* as given, for errors */
	const char *file;      /* FILE of FILE:LINE, or NULL */
	unsigned line;
	const char *func;      /* FUNC of FUNC+0xOFF, or NULL */
	uint64_t offset;
	unsigned index;        /* #K, 0: every jump of the line */
};

/* The jumps of q, one target each (branch set), in *out sorted by
 * instance then address; returns how many, or -1 with err. */
int resolve_branch(struct safety *c, const struct debug_file *dbg, const struct branch_query *q,
		   struct probe_target **out, char *err, size_t errlen);

#endif
