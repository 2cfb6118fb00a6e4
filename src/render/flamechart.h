/* flamechart — one thread's (or one traced call's) samples in time order, as
 * an interactive SVG flame chart.
 *
 * Which samples: the thread's (or the call's) on-CPU samples, as the view
 * engine takes them (view.h: a view with that tid, or that span_id): never
 * off-CPU intervals or wakers, and sonde's own cost only with
 * show_overhead.
 *
 * x is time: each sample occupies [its time, the next sample's time), cut at
 * the sampling interval (1e9 / meta "frequency_hz" when known, else the
 * median gap between the drawn samples) so a thread that was off CPU leaves a
 * gap. Stacks hang from the top (the root row is the thread or the span), and
 * consecutive samples that share a stack prefix share one box per level:
 * 3 samples a;b then 2 samples a;c give a box "a" 5 samples wide with "b"
 * (3) and "c" (2) under it. A gap breaks every box. Frames merge by function
 * (name and kind, as in flame graphs) and are coloured exactly as flamesvg
 * colours them.
 *
 * Each box is written as
 *   <g class="f" data-name=".." data-start="S" data-dur="D" data-depth="L"
 *      data-samples="N"><title>..</title><rect/><text>..</text></g>
 * with S and D in ns from the left edge of the chart (the first drawn
 * sample's time, or the span's start), so scripts get exact times. The
 * embedded script shows a box's details on hover, zooms the time axis to a
 * box on click ("Reset Zoom" or a click on the root row undoes it) and
 * searches by regular expression ("Search" or Ctrl-F). The time axis is
 * labelled in ms from the left edge and relabelled on zoom. */
#ifndef SONDE_FLAMECHART_H
#define SONDE_FLAMECHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "frames.h"
#include "hashmap.h"
#include "profile.h"
#include "strpool.h"

struct flamechart_options {
	int64_t tid;      /* thread to draw; 0 (or negative) = the one with most samples */
	uint64_t span_id; /* nonzero: only the samples linked to this span, x = its
			   * start .. start + duration (the span's thread is drawn) */
	bool show_overhead; /* keep samples of sonde's own cost ("[sonde]") */
	int width;        /* image width in px; <= 0 = 1200 */
	const char *title; /* NULL = "Flame Chart" */
};

/* Writes the chart. Returns 0; -1 with a one-line message in err (no
 * "sonde:" prefix) for an unknown tid or span, a tid that is not the span's
 * thread, a profile without samples (when no thread is named) or a failed
 * write. err may be NULL. */
int flamechart_write_svg(FILE *out, const struct profile *p, const struct flamechart_options *o,
			 char *err, size_t errlen);

/* ---- the chart as boxes, for frontends that draw it themselves (the web
 * page): the same layout the SVG draws ---- */

struct flamechart_box {
	uint64_t start, end; /* ns from the chart's left edge */
	uint32_t fn;         /* function index (flamechart_funcs); UINT32_MAX: the root row */
	uint32_t depth;      /* 0 = root row */
	uint32_t samples;
};

struct flamechart_layout {
	struct flamechart_box *boxes; /* boxes[0] is the root row */
	size_t nboxes;
	uint32_t maxdepth;
	uint64_t dur_ns;      /* what the x axis spans */
	uint64_t sampled_ns;  /* what the samples cover */
	size_t nsamples;
	char *root_label;     /* "handle_request (span 42)" or "comm (tid N)" */
	char *subtitle;       /* what the SVG's subtitle says */
	struct flamechart_funcs *ff; /* names and colours (colorized) */
};

/* Lays the chart out as flamechart_write_svg would draw it. Returns 0, or
 * -1 with err as flamechart_write_svg. Free it with flamechart_layout_free. */
int flamechart_layout(const struct profile *p, const struct flamechart_options *o,
		      struct flamechart_layout *out, char *err, size_t errlen);
void flamechart_layout_free(struct flamechart_layout *l);

/* ---- shared with heatmap.c: how flame views name and colour frames ---- */

/* The functions a set of frames stands for: frames with the same name and
 * kind are one function (as profile_function_frame merges them), drawn with
 * its name plus kind suffix ("_[k]"...) and flamesvg's colour for it. */
struct flamechart_funcs {
	const struct frame_table *frames;
	size_t n, cap;
	const char **name;       /* in `names` */
	enum frame_kind *kind;
	unsigned char (*rgb)[3]; /* valid after flamechart_funcs_colorize */
	unsigned char root_rgb[3]; /* flamesvg's colour of the root ("all") */
	uint32_t *of_frame;      /* frame id -> function index + 1 (0 = not yet) */
	size_t nof_frame;
	struct strpool names;
	struct hashmap index;    /* name id << 32 | kind -> function index */
};

void flamechart_funcs_init(struct flamechart_funcs *ff, const struct frame_table *frames);
void flamechart_funcs_free(struct flamechart_funcs *ff);
/* The function index of a frame id (added when new). */
uint32_t flamechart_funcs_of_frame(struct flamechart_funcs *ff, uint32_t frame);
/* The function index of a (name, kind) pair, e.g. a FRAME_PROCESS root. */
uint32_t flamechart_funcs_intern(struct flamechart_funcs *ff, const char *name,
				 enum frame_kind kind);
/* Fills rgb for every function so far and root_rgb with flamesvg_color. */
void flamechart_funcs_colorize(struct flamechart_funcs *ff);
/* "name" plus the kind's suffix; malloc'd. */
char *flamechart_funcs_label(const struct flamechart_funcs *ff, uint32_t fn);


#endif
