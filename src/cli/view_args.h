/* view_args — the options of the offline commands that choose which
 * samples a view takes and what they weigh: --pid, --tid, --comm and
 * --event (report, flame, heatmap; --event is resolved by view_set_event
 * once the profile is loaded), --show-overhead, --off-cpu, --wall and
 * --wakers (report, flame), and --in/--slow/--fast FUNC[:THRESHOLD]
 * (report, flame: resolved by view_args_apply_span once the profile is
 * loaded). They fill a struct view (view.h) and the time the command passes
 * to view_set_time; errors are printed here. */
#ifndef SONDE_VIEW_ARGS_H
#define SONDE_VIEW_ARGS_H

#include <getopt.h>

#include <stddef.h>

#include "profile.h"
#include "view.h"

/* getopt_long entries: the filters, then the time options. */
#define VIEW_ARGS_FILTER_OPTS                                                                 \
	{"pid", required_argument, NULL, 'P'}, {"tid", required_argument, NULL, 'T'},        \
		{"comm", required_argument, NULL, 'C'}, {"event", required_argument, NULL, 'E'}
#define VIEW_ARGS_TIME_OPTS                                                                   \
	{"show-overhead", no_argument, NULL, 'O'}, {"off-cpu", no_argument, NULL, 'X'},      \
		{"wall", no_argument, NULL, 'L'}, {"wakers", no_argument, NULL, 'K'}

/* getopt_long entries of --in, --slow and --fast. */
enum { VIEW_ARGS_OPT_IN = 3000, VIEW_ARGS_OPT_SLOW, VIEW_ARGS_OPT_FAST, VIEW_ARGS_OPT_WHEN };
#define VIEW_ARGS_SPAN_OPTS                                                                   \
	{"in", required_argument, NULL, VIEW_ARGS_OPT_IN},                                    \
		{"slow", required_argument, NULL, VIEW_ARGS_OPT_SLOW},                        \
		{"fast", required_argument, NULL, VIEW_ARGS_OPT_FAST},                        \
		{"when", required_argument, NULL, VIEW_ARGS_OPT_WHEN}

/* Handles one of them (getopt character c, its arg) into v and *time
 * (time may be NULL for a command without the time options). Returns 1 when
 * it was one, 0 when not, -1 on a bad value (error printed). */
int view_args_parse_option(struct view *v, enum view_time *time, int c, const char *arg);

/* The one --in, --slow or --fast given: FUNC[:THRESHOLD] and its class
 * (arg NULL when none was); and --when PROBE (NULL: none), a line or branch
 * outcome probe the calls must have hit ("x.c:12", "branch x.c:12
 * taken"). */
struct view_span_arg {
	const char *arg;
	enum span_class cls;
	const char *when;
};

/* Handles --in, --slow, --fast or --when into s: 1 when c was one of them, 0 when
 * not, -1 when one of them was already given (error printed). */
int view_args_parse_span(struct view_span_arg *s, int c, const char *arg);

/* Resolves s (s->arg set) against p and applies it to v, describing the
 * calls it takes in desc ("samples in slow calls of ..."). Returns 0, or -1
 * after one error line (unknown function, bad threshold, --when without
 * one of the others, or naming no line or branch outcome probe). */
int view_args_apply_span(const struct view_span_arg *s, struct profile *p, struct view *v,
			 char *desc, size_t desclen);

/* -1 after one error line when --when came without --in, --slow or
 * --fast; else 0. */
int view_args_check_when(const struct view_span_arg *s);

#endif
