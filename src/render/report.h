/* report — summaries of a profile: totals, functions by self and total
 * samples, threads. As text for people and as JSON for scripts.
 *
 * A "function" is a frame's display name with its kind suffix (kernel
 * functions end in _[k], inlined ones in _[i]): all frames with that name are
 * one function. Self = samples whose leaf is the function; total = samples
 * with the function anywhere in the stack (counted once per sample, so
 * recursion does not inflate it). With `lines`, a row is a line of a
 * function instead ("name:line", see profile_line_frame).
 *
 * Stacks the collector cut where a frame-pointer walk left the code start
 * with a "[broken stack: WHERE]" frame (see symbols_user_not_code); the text
 * report counts them under "broken:" and the JSON as "broken_stacks". */
#ifndef SONDE_REPORT_H
#define SONDE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "profile.h"
#include "view.h"

struct report_options {
	const char *source;      /* file name shown in the header */
	int top;                 /* rows per table in text output (<= 0: 20) */
	struct view filter;
	const char *view;        /* what the filter selects, in words (NULL: all) */
	bool lines;              /* rows per source line, "function:line"
				  * (profile_line_frame), not per function */
	const char *by;          /* split the filter's probe's calls by this capture
				  * (valuereport.h; check it first with
				  * valuereport_by_check), or NULL */
};

/* Per traced function: calls, mean, p50/p90/p95/p99/p99.9/max, a log2
 * histogram, and the modes of the duration distribution with the `auto`
 * threshold between the main and the slow one. */

int report_write_text(FILE *out, struct profile *p, const struct report_options *o);
int report_write_json(FILE *out, struct profile *p, const struct report_options *o);

#endif
