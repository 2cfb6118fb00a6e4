/* session_args — the command-line options every session command shares
 * (record, lat, slow, top, serve, threads): targets, sampling, probes,
 * duration, the ready file. They fill a struct session_options
 * (session.h); each command adds its own options.
 * Errors are printed here (cli/ prints; the session layer does not). */
#ifndef SONDE_SESSION_ARGS_H
#define SONDE_SESSION_ARGS_H

#include <getopt.h>
#include <stdio.h>

#include "session.h"

/* The getopt_long table entries and short-option letters of the shared
 * options, for commands to include. */
#define SESSION_SHORT_OPTS "F:c:e:ap:d:v"
enum {
	SESSION_OPT_PID_OF = 2000,
	SESSION_OPT_NO_CHILDREN,
	SESSION_OPT_EXACT_CHILDREN,
	SESSION_OPT_UNWIND,
	SESSION_OPT_OFF_CPU,
	SESSION_OPT_MIN_BLOCK,
	SESSION_OPT_WAKERS,
	SESSION_OPT_SAMPLE_WHEN,
	SESSION_OPT_READY_FILE,
	SESSION_OPT_NO_PYTHON,
};
#define SESSION_LONG_OPTS                                                                   \
	{"freq", required_argument, NULL, 'F'}, {"count", required_argument, NULL, 'c'},     \
		{"event", required_argument, NULL, 'e'},                                     \
		{"all-cpus", no_argument, NULL, 'a'}, {"pid", required_argument, NULL, 'p'}, \
		{"duration", required_argument, NULL, 'd'},                                  \
		{"buffer-mb", required_argument, NULL, 'B'},                                 \
		{"verbose", no_argument, NULL, 'v'}, {"trace", required_argument, NULL, 'T'}, \
		{"sample-in", required_argument, NULL, 'I'},                                 \
		{"sample-slow", required_argument, NULL, 'S'},                               \
		{"sample-when", required_argument, NULL, SESSION_OPT_SAMPLE_WHEN},           \
		{"pid-of", required_argument, NULL, SESSION_OPT_PID_OF},                     \
		{"no-children", no_argument, NULL, SESSION_OPT_NO_CHILDREN},                 \
		{"exact-children", no_argument, NULL, SESSION_OPT_EXACT_CHILDREN},           \
		{"unwind", required_argument, NULL, SESSION_OPT_UNWIND},                     \
		{"off-cpu", no_argument, NULL, SESSION_OPT_OFF_CPU},                         \
		{"min-block", required_argument, NULL, SESSION_OPT_MIN_BLOCK},               \
		{"wakers", no_argument, NULL, SESSION_OPT_WAKERS},                           \
		{"ready-file", required_argument, NULL, SESSION_OPT_READY_FILE},             \
		{"no-python", no_argument, NULL, SESSION_OPT_NO_PYTHON}

/* -i/--interval of every command that repeats (lat, threads, top, serve):
 * seconds from 0.05 to 3600 (optval.h: one error line for a bad value). */
int session_args_interval(const char *arg, double *seconds);
/* -n/--iterations (threads, top): a number of snapshots from 1 on. */
int session_args_iterations(const char *arg, long *n);

/* Handles one shared option `c` (getopt character) with its `arg`; returns
 * 1 when it was one of them, 0 when not, -1 on a bad value (error printed). */
int session_args_parse_option(struct session_options *o, int c, const char *arg);

/* What a session command adds to the shared options. */
struct session_command {
	const char *own_short;         /* getopt letters of its own options, e.g. "o:" */
	const struct option *own_long; /* its own long options, {0}-terminated (may be NULL) */
	/* Handles one of its own options; returns 0, or -1 after printing an error. */
	int (*own)(void *ctx, int c, const char *arg);
	void (*usage)(FILE *f);
	void *ctx;
};

/* Parses argv: the shared session options, the command's own, and
 * -h/--help. Stops at the first non-option (optind then points at it).
 * Returns 0 to go on, or 1 when the command should exit with *exit_code
 * (help printed: 0; a bad option: 2). Sets the options' note callback to
 * print notes as error lines ("sonde: ..." on stderr). */
int session_args_getopt(struct session_options *o, int argc, char **argv,
			const struct session_command *cmd, int *exit_code);

/* session_check_options, then session_start (argc/argv are the command
 * line the recording keeps). Returns the started session, or NULL with the
 * error printed and *exit_code set: 2 when the options do not go together,
 * 1 when the start failed. */
struct session *session_args_start(struct session_options *o, int argc, char **argv,
				   int *exit_code);

#endif
