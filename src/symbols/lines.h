/* lines — source lines to code addresses, through the DWARF line table.
 *
 * A line probe goes where a line begins a statement (is_stmt rows), once
 * per instance of the code holding it: each out-of-line copy of a function
 * and each place it was inlined (the innermost DW_TAG_subprogram or
 * DW_TAG_inlined_subroutine at the address). Within an instance the lowest
 * such address is taken, as gdb places a breakpoint: a compiler that splits
 * a line into several statement rows (scheduling, a loop's parts) would
 * otherwise count one execution of the line several times. A loop the
 * compiler unrolled is the limit: its copies of the line share one
 * statement row (clang -O2 unrolls `for (...) x += v;` by 4), so a hit
 * there counts a pass through the unrolled body, not each iteration.
 *
 * FILE is matched against the line table's full paths: equal, or a suffix
 * that starts after a '/' ("x.c", "src/x.c"). Paths that differ but both
 * match are ambiguous: the error lists them.
 *
 * Addresses are ELF virtual addresses of the file whose DWARF is given (a
 * separate debug file has the same addresses as its binary). */
#ifndef SONDE_LINES_H
#define SONDE_LINES_H

#include <stddef.h>
#include <stdint.h>

typedef struct Dwarf Dwarf; /* libdw's, opaque here: libdw is the symbols layer's own */

struct line_site {
	uint64_t vaddr;
	const char *function; /* the instance's function (its DWARF name), or NULL */
	int inlined;          /* 1: an inlined instance */
};

/* A source line looked up: FILE:LINE in the DWARF dw of the file that
 * `binary` names in messages. */
struct line_lookup {
	Dwarf *dw;
	const char *binary;
	const char *file;
	unsigned line;
};

/* The probe addresses of q's line, sorted by address (free with free()).
 * Returns how many (>= 1), or -1 with one line in err: no such file ("no
 * file x.c in the debug info of BINARY"), an ambiguous file, or a line
 * without code ("no code at x.c:1300; nearest lines with code: 1298,
 * 1302"). */
int lines_resolve(const struct line_lookup *q, struct line_site **out, char *err, size_t errlen);

/* The code of a line in one instance (see above): [lo, hi), every row of
 * the line's (statements or not), adjacent rows joined. */
struct line_range {
	uint64_t lo, hi;
	uint64_t instance;    /* the instance's identity (a DIE offset) */
	const char *function; /* its function (DWARF name), or NULL */
	int inlined;
	const char *path;     /* the line table's path of the file (owned by dw) */
};

/* The code of q's line, sorted by instance then address (free with
 * free()). Returns how many (>= 1), or -1 with lines_resolve's errors. */
int lines_ranges(const struct line_lookup *q, struct line_range **out, char *err, size_t errlen);

/* The line holding addr (the line table's row at or before it): 0 with
 * *line and *path (may be NULL; owned by dw), or -1 when no row covers it. */
int lines_line_of(Dwarf *dw, uint64_t addr, const char **path, unsigned *line);

/* A line of a function's code, for listings (perf probe -L). */
struct line_row {
	const char *file; /* the line table's path (owned by dw) */
	unsigned line;
	int sites;        /* probe addresses of this line inside the function */
	uint64_t first_site; /* the lowest of them */
	/* Why a line probe here is refused (the kernel cannot step one of its
	 * addresses: probes_function_lines fills it, malloc'd), or NULL. */
	char *refused;
};

/* The lines with code in [lo, hi) of the CU holding lo, sorted by file then
 * line, each with how many probe addresses (line_site) it has inside that
 * range. Returns how many rows (free with free()), or -1 with err. */
int lines_in_range(Dwarf *dw, uint64_t lo, uint64_t hi, struct line_row **out, char *err,
		   size_t errlen);

/* True when a line table path names FILE (see above). */
int lines_file_matches(const char *path, const char *file);

#endif
