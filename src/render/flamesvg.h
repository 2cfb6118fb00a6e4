/* flamesvg — a flame graph as one self-contained, interactive SVG document.
 *
 * Draws a flame tree the way flamegraph.pl users expect: one box per node,
 * x proportional to the node's `total`, the root "all" spanning the image,
 * children left to right in the order the tree holds them (call flame_sort
 * first for the usual alphabetical order), 16 px per level, the root at the
 * bottom (or at the top for an icicle graph). Colours come in a hue family
 * per frame kind (user red/orange, kernel orange, JIT green, inlined aqua,
 * C++ `::` names yellow) with the shade seeded by a hash of the function
 * name, so a function has the same colour in every graph.
 *
 * Each frame is written as
 *   <g class="f" data-name=".." data-start="S" data-total="T" data-self="N" data-depth="D">
 *     <title>name (T samples, P%)</title><rect x=.. y=.. width=.. height=.. fill=".."/>
 *     <text ..>label</text></g>
 * where data-start is the number of samples left of the frame under the root,
 * so scripts can read exact counts and positions without parsing geometry.
 *
 * The embedded script (no external resources) shows a node's details on hover,
 * zooms on click ("Reset Zoom" or a click on the root undoes it), and searches
 * by regular expression ("Search" or Ctrl-F; Escape or "Reset Search" clears),
 * showing "Matched: N%" with nested matches counted once.
 *
 * Every string (names, title, unit) is XML-escaped; invalid UTF-8 becomes
 * U+FFFD and control characters become '?', so the output is always a
 * well-formed XML document. */
#ifndef SONDE_FLAMESVG_H
#define SONDE_FLAMESVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "flame.h"

struct flamesvg_options {
	const char *title;      /* default "Flame Graph", or "Icicle Graph" when icicle */
	const char *subtitle;   /* optional second line, NULL for none */
	int width;              /* image width in px, default 1200 */
	double minwidth;        /* frames narrower than this many px are omitted, default 0.1 */
	bool icicle;            /* root at the top, growing down */
	const char *count_name; /* unit in details, default "samples" */
	/* Off-CPU colours (the convention of off-CPU flame graphs): blues for
	 * blocked time. all_blocked: every frame (an --off-cpu graph);
	 * otherwise only the state frames of time off the CPU ("[sleeping:
	 * read]"...; "[running]" keeps its colour). */
	bool all_blocked;
	/* Optional colour override for differential graphs: return true and fill
	 * rgb to colour node n yourself; false (or NULL) = normal palette. */
	bool (*color)(const struct flame_node *n, void *arg, unsigned char rgb[3]);
	void *color_arg;
	/* Optional extra text for a node's tooltip/detail line (e.g. a diff's
	 * "+3.2%"); NULL = none. Writes into buf, returns buf or NULL for nothing.
	 * Gets color_arg too: one context serves both callbacks. */
	const char *(*extra_info)(const struct flame_node *n, void *arg, char *buf, size_t size);
};

/* Fills o with the defaults above. title is left NULL, which means "Flame
 * Graph" or "Icicle Graph" depending on `icicle` at write time. */
void flamesvg_default_options(struct flamesvg_options *o);

/* The palette colour flame graphs give a function (name + kind); a NULL
 * name is the root ("all"). Other views use it so colours never drift. */
void flamesvg_color(const char *name, enum frame_kind kind, unsigned char rgb[3]);

/* The controls flamecontrols.js drives, in an SVG `width` x `height` laid
 * out as flame graphs are (flamechart's too): Reset Zoom and Search/Reset
 * Search in the title band, the hover details and the matched share on the
 * bottom line. Other views use it so every SVG has the same controls. */
void flamesvg_write_controls(FILE *out, int width, int height);

/* Writes the SVG document for t to out. o may be NULL for the defaults; a
 * width <= 0, a negative minwidth and NULL strings also fall back to defaults
 * (minwidth 0 keeps every frame with samples).
 * Returns 0, or -1 when writing to out failed (errno set). */
int flamesvg_write(FILE *out, const struct flame_tree *t, const struct flamesvg_options *o);

#endif
