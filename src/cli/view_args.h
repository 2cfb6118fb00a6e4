/* view_args — the options of the offline commands that choose which
 * samples a view takes and what they weigh: --pid, --tid, --comm and
 * --event (report, flame, heatmap; --event is resolved by view_set_event
 * once the profile is loaded), --show-overhead, --off-cpu, --wall and
 * --wakers (report, flame). They fill a struct view (view.h) and the time
 * the command passes to view_set_time; errors are printed here. */
#ifndef SONDE_VIEW_ARGS_H
#define SONDE_VIEW_ARGS_H

#include <getopt.h>

#include "view.h"

/* getopt_long entries: the filters, then the time options. */
#define VIEW_ARGS_FILTER_OPTS                                                                 \
	{"pid", required_argument, NULL, 'P'}, {"tid", required_argument, NULL, 'T'},        \
		{"comm", required_argument, NULL, 'C'}, {"event", required_argument, NULL, 'E'}
#define VIEW_ARGS_TIME_OPTS                                                                   \
	{"show-overhead", no_argument, NULL, 'O'}, {"off-cpu", no_argument, NULL, 'X'},      \
		{"wall", no_argument, NULL, 'L'}, {"wakers", no_argument, NULL, 'K'}

/* Handles one of them (getopt character c, its arg) into v and *time
 * (time may be NULL for a command without the time options). Returns 1 when
 * it was one, 0 when not, -1 on a bad value (error printed). */
int view_args_parse_option(struct view *v, enum view_time *time, int c, const char *arg);

#endif
