/* explorer — a function's structure (symbols/structure.h) as `sonde
 * explore` prints it: its source lines with per-line marks (the addresses a
 * line probe would use, one per instance of the line's code; conditional
 * jumps; a line the kernel cannot probe), optionally each line's
 * instructions; its basic blocks with their successors, its loops (back
 * edges), its inlined calls and lexical blocks. Where the source file was
 * not found, each line is shown by its instructions.
 *
 * With counts from a recording: samples per line (linesamples.h: sampled,
 * SELF where the line itself ran, TOTAL where it ran or called), and what
 * the recording's line and branch probes on the function's lines counted
 * (exact: every hit, every outcome). */
#ifndef SONDE_EXPLORER_H
#define SONDE_EXPLORER_H

#include <stdbool.h>
#include <stdio.h>

#include "linesamples.h"
#include "profile.h"
#include "structure.h"

struct explorer_counts {
	const char *from;            /* the recording's name, for the header */
	const struct profile *p;     /* its line and branch probes */
	struct line_samples *lines;  /* per structure line (s->nlines), or NULL */
	uint64_t samples;            /* samples with the function on their stack */
};

/* c: s's lines counted in p's samples (the default view's: on-CPU, sonde's
 * own left out), from being `from`'s; c->lines malloc'd (NULL when s has no
 * lines). Free with explorer_counts_free. */
void explorer_counts_fill(struct explorer_counts *c, const struct profile *p,
			  const struct structure *s, const char *from);
void explorer_counts_free(struct explorer_counts *c);

struct explorer_options {
	bool asm_lines;                      /* each line's instructions too */
	const struct explorer_counts *counts; /* NULL: none */
};

void explorer_text(FILE *out, const struct structure *s, const struct explorer_options *o);

/* JSON: {binary, function, lo, hi, file, source, lines: [{line, sites,
 * branches, insns, refused, branch_refused, text, self, total, probes: [{name, kind, count; a branch outcome: jump, outcome, to_line}]}], blocks:
 * [{id, lo, hi, lo_line, hi_line, succ, exits, loop_head, reachable}], loops: [{head,
 * from}], scopes: [{kind, name, lo, hi, depth, call_file, call_line,
 * decl_line}], insns: [{addr, size, text, file, line, block, flow, target,
 * refused}], samples}. */
void explorer_json(FILE *out, const struct structure *s, const struct explorer_options *o);

#endif
