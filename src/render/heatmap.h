/* heatmap — FlameScope's subsecond-offset heat map, and a page that turns a
 * selected time range of it into a flame graph.
 *
 * Columns are seconds, rows are offsets within the second. With ts the sample
 * time in seconds (time_ns / 1e9, as a double: the arithmetic is FlameScope's,
 * so cells match what FlameScope shows for the same perf timestamps) and
 * start / end the first and last sample times:
 *   cols = ceil(end) - floor(start)        (one more when end is a whole second)
 *   col  = floor(ts - floor(start))
 *   row  = rows - floor(rows * frac(ts)) - 1
 * so row 0 — drawn at the top — is the END of the second (offsets
 * (rows-1)/rows .. 1 s) and time runs up each column, then to the next one.
 * Every non-idle sample adds 1 to its cell (sample counts, not weights).
 * Idle samples are dropped: the thread's comm starts with "swapper" and a
 * frame's name contains cpuidle, cpu_idle, cpu_bringup_and_idle,
 * native_safe_halt, xen_hypercall_sched_op or xen_hypercall_vcpu_op. Start and
 * end are taken over every sample the filter takes, idle ones included (as
 * FlameScope does).
 *
 * A selection from cell A to cell B (either order) is the time range
 *   start = floor(start) + colA + (rows - 1 - rowA) / rows     (A's beginning)
 *   end   = floor(start) + colB + (rows - rowB) / rows         (B's end)
 * and holds the samples with start <= ts <= end (FlameScope's convention: both
 * ends inclusive). */
#ifndef SONDE_HEATMAP_H
#define SONDE_HEATMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"
#include "view.h"

#define HEATMAP_DEFAULT_ROWS 50
#define HEATMAP_MAX_ROWS 10000
#define HEATMAP_MAX_CELLS 100000000ULL /* cols * rows; beyond: E2BIG */
#define HEATMAP_HTML_MAX_SAMPLES 2000000

struct heatmap {
	int rows, cols;
	double start_s;  /* floor of the first sample time, seconds */
	uint64_t *cells; /* cols * rows, cell(col, row) = cells[col * rows + row] */
	uint64_t max;    /* largest cell */
	uint64_t idle_dropped;
	/* Also filled by heatmap_build: */
	uint64_t total;      /* samples counted in cells */
	uint64_t first_ns, last_ns; /* first and last sample time (0, 0 when none) */
	struct view filter; /* the filter the map was built with (copy) */
};

/* Builds the map of the samples filter f takes (NULL = all) with `rows` rows
 * (<= 0 = 50). A profile without samples gives cols = 0. Returns 0, or -1
 * with errno EINVAL (rows > HEATMAP_MAX_ROWS) or E2BIG (more than
 * HEATMAP_MAX_CELLS cells: a time span of years). Free with heatmap_free. */
int heatmap_build(const struct profile *p, const struct view *f, int rows,
		  struct heatmap *out);
void heatmap_free(struct heatmap *h);

static inline uint64_t heatmap_cell(const struct heatmap *h, int col, int row)
{
	return h->cells[(size_t)col * (size_t)h->rows + (size_t)row];
}

/* Whether the heat map drops this sample as idle (the rule above). For views
 * of a selected range that should hold what FlameScope's do: its flame
 * graphs leave idle samples out too. */
bool heatmap_sample_idle(const struct profile *p, const struct sample *s);

/* The time range [t0, t1) of a cell in seconds, in the profile's clock. */
void heatmap_cell_range(const struct heatmap *h, int col, int row, double *t0, double *t1);

/* Turns a selection from (col0, row0) to (col1, row1) — in either time
 * order — into f's time range (has_range, start_ns, end_ns: the inclusive
 * range above, in whole ns: start rounded up, end down). f's other fields are
 * left alone. Returns 0, or -1 (errno EINVAL) for a cell outside the map. */
int heatmap_range_filter(const struct heatmap *h, int col0, int row0, int col1, int row1,
			 struct view *f);

/* Writes the map as a standalone SVG: a grid with x = seconds, y = offset
 * within the second (row 0, the end of the second, at the top), white to red
 * by count / max, axes, legend, and a <title> per cell ("second S, offset
 * X–Y ms: N samples"; empty cells only when the grid has at most 100,000
 * cells). title NULL = "Subsecond Offset Heat Map". Returns 0 or -1 (write
 * failed, errno set). */
int heatmap_write_svg(FILE *out, const struct heatmap *h, const char *title);

/* Writes a self-contained HTML page (no external resources): the map, where
 * clicking a start cell and an end cell (or dragging from one to the other)
 * selects a time range, and the flame graph of exactly that range's samples
 * below it (click to zoom, hover for details, search). The page embeds the
 * non-idle samples the map counts (at most HEATMAP_HTML_MAX_SAMPLES, the
 * earliest ones, with a note on the page when there are more) with their
 * stacks. The URL hash "#range=A-B" (seconds from the map's first second)
 * preselects a range, and selecting sets it, so links can be shared.
 * p must be the profile h was built from. Returns 0 or -1 (errno set). */
int heatmap_write_html(FILE *out, const struct profile *p, const struct heatmap *h,
		       const char *title);

/* heatmap_write_html with another sample cap (tests). */
int heatmap_write_html_capped(FILE *out, const struct profile *p, const struct heatmap *h,
			      const char *title, size_t max_samples);

#endif
