/* tuiexplore — the explorer pane of `sonde top` (x on a function of the
 * call tree or the hottest list): the function's structure
 * (symbols/structure.h) as source lines, each with the addresses a line
 * probe uses and its conditional jumps (the marks `sonde explore` prints),
 * its samples in the live session (sampled: model/linesamples.h, over the
 * samples the session holds) and, where a line or branch probe is placed,
 * its exact counts. Keys place probes on the line under the cursor through
 * the live command language (the same as `:` and `sonde ctl`):
 *   l  trace the line              b  trace its branches
 *   w  sample-when the line (a branch line: its jump taken; of several
 *      jumps, the first)   W  not taken
 *   c  a capture: `:trace LINE ` to complete with variables
 *   u  untrace the line's probes   a  the line's instructions on/off
 *   Enter  a callee called on the line   p  the caller (the tree's parent)
 *   Backspace  back to the function explored before   x Esc q  close
 * The pane replaces the panels between the status lines and the message
 * line; drawn by tuidraw. */
#ifndef SONDE_TUIEXPLORE_H
#define SONDE_TUIEXPLORE_H

#include <stdbool.h>
#include <stddef.h>

#include "linesamples.h"
#include "structure.h"
#include "tuistate.h"

/* A function explored: its name and binary. */
struct tuiexplore_fn {
	char *func, *module;
};

struct tuiexplore {
	struct structure s;
	bool built;
	char err[512];               /* why the function could not be explored */
	struct tuiexplore_fn at;     /* the function shown */
	int cursor, top;             /* in rows (tuiexplore_nrows) */
	bool asm_lines;
	struct tuiexplore_fn *back;  /* explored before (Backspace), last on top */
	size_t nback;
	struct tuiexplore_fn *callers; /* its callers in the tree, nearest first (p) */
	size_t ncallers;
	struct line_samples *counts; /* per structure line, from the live samples */
	uint64_t samples;            /* samples with the function on the stack */
};

/* One row of the pane: a source line, or one of its instructions. */
struct tuiexplore_row {
	int line;   /* index into s.lines */
	int insn;   /* index into s.insns, or -1: the line itself */
};

/* Opens the pane on the function of the tree's selection (or the hottest
 * list's, by focus); says why on the message line when there is none. */
void tuiexplore_open_selected(struct tui *t);
void tuiexplore_close(struct tui *t);

/* Recounts the live samples per line (before each draw). */
void tuiexplore_refresh(struct tui *t);

/* A key while the pane is open: true when it took it. */
bool tuiexplore_key(struct tui *t, int ch);

/* The rows shown, and row i of them. */
size_t tuiexplore_nrows(const struct tuiexplore *e);
bool tuiexplore_row(const struct tuiexplore *e, size_t i, struct tuiexplore_row *out);

/* What the live session's probes on a line counted, for its row ("" when
 * none): "line 3333", "T 87.5% N 12.5% of 30000" (a branch's first jump
 * taken and not taken, "+2" when it has more). */
void tuiexplore_line_probes(const struct tui *t, unsigned line, char *buf, size_t size);

#endif
