/* live_args — the options of the live frontends (`sonde top`, `sonde
 * serve`): refresh interval, start commands, window, keep, the control
 * socket. Each frontend adds its own display options; errors are printed
 * here (cli/ prints). */
#ifndef SONDE_LIVE_ARGS_H
#define SONDE_LIVE_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "liverun.h"

#define LIVE_ARGS_MAX_CMDS 64

enum {
	LIVE_OPT_CMD = 3000,
	LIVE_OPT_WINDOW,
	LIVE_OPT_EWMA,
	LIVE_OPT_KEEP,
	LIVE_OPT_KEEP_CALLS,
	LIVE_OPT_NO_CTL,
	LIVE_OPT_TARGET_OUTPUT,
	LIVE_OPT_SHOW_OVERHEAD,
	LIVE_OPT_WALL,
	LIVE_OPT_SOURCE_DIR,
};

/* getopt_long entries of the shared live options (-i takes the letter 'i'). */
#define LIVE_ARGS_LONG_OPTS                                                                        \
	{"interval", required_argument, NULL, 'i'},                                                \
		{"cmd", required_argument, NULL, LIVE_OPT_CMD},                                    \
		{"window", required_argument, NULL, LIVE_OPT_WINDOW},                              \
		{"ewma", required_argument, NULL, LIVE_OPT_EWMA},                                  \
		{"keep", required_argument, NULL, LIVE_OPT_KEEP},                                  \
		{"keep-calls", required_argument, NULL, LIVE_OPT_KEEP_CALLS},                      \
		{"no-ctl", no_argument, NULL, LIVE_OPT_NO_CTL},                                    \
		{"target-output", required_argument, NULL, LIVE_OPT_TARGET_OUTPUT},                \
		{"wall", no_argument, NULL, LIVE_OPT_WALL},                                        \
		{"source-dir", required_argument, NULL, LIVE_OPT_SOURCE_DIR},                      \
	{                                                                                          \
		"show-overhead", no_argument, NULL, LIVE_OPT_SHOW_OVERHEAD                         \
	}

struct live_args {
	double interval;		      /* seconds between refreshes (default 1) */
	const char *cmds[LIVE_ARGS_MAX_CMDS]; /* --cmd, checked, in order */
	int ncmds;
	struct live_options live;
	bool window_given; /* --window or --ewma */
	bool no_ctl;
	const char *target_output;
	const char *source_dir; /* where the explorer looks for source first */
};

/* What time the live views count: --off-cpu (a session option: off-CPU
 * intervals are recorded) shows where threads wait; --wall records them
 * and shows wall-clock time (view.h). Call after parsing, before
 * session_start. */
void live_args_apply_time(struct live_args *a, struct session_options *so);


void live_args_init(struct live_args *a);

/* Handles one shared live option: 1 when it was one, 0 when not, -1 on a
 * bad value (error printed). */
int live_args_parse_option(struct live_args *a, int c, const char *arg);

/* Checks the options together (window within keep). Returns 0, or -1 with
 * the error printed. */
int live_args_check(const struct live_args *a);

/* The live run of the started session s (liverun_new with these options;
 * stay_after_exit: the targets exiting does not end it). Returns NULL with
 * the error printed and s freed: the command then exits with 2. */
struct liverun *live_args_start_run(const struct live_args *a, struct session *s,
				    bool stay_after_exit);

/* Runs the --cmd commands on the run, each echoed as "> CMD" with its answer
 * to out. A failing one is reported and the session goes on, as at a
 * prompt. */
void live_args_run_cmds(const struct live_args *a, struct liverun *r, FILE *out);

/* The end of a live frontend's run, after liverun_run returned rc (0, or
 * -1 with err): prints its error, the session's summary and what became of
 * an unsaved `save` (live_rescue_unsaved), frees the run and the session.
 * Returns the exit code (0, or 1 for a failed run or a lost recording). */
int live_args_finish(struct liverun *r, struct session *s, int rc, const char *err);

#endif
