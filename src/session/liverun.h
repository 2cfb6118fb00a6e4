/* liverun — a live session on its event loop: what `sonde top` runs, with
 * the UI or with -b, and what a web frontend would run.
 *
 * It puts the live state (live.h) on a started session (session.h), opens
 * the control socket (ctl.h) and has the session's loop (loop.h) drive all
 * of it: after every wake the session takes in the ring buffer and the live
 * state takes in what arrived; the control socket answers requests in
 * JSON (`status` with its data, liveview.h); the frontend's display is
 * called every interval. A frontend only draws or prints: it registers its
 * own fds (the terminal's stdin, its sockets) on liverun_loop(), runs the
 * commands it reads with liverun_exec, and quits with liverun_stop.
 *
 * The run stops at a signal, at the end of -d, or when the targets exit,
 * except with stay_after_exit: then the targets exiting ends the session
 * (its last records taken in) and the display stays on the final data,
 * refreshed at once, until a signal or liverun_stop. */
#ifndef SONDE_LIVERUN_H
#define SONDE_LIVERUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "live.h"
#include "loop.h"
#include "session.h"

struct liverun_options {
	struct live_options live;
	bool no_ctl;          /* no control socket */
	bool stay_after_exit; /* the targets exiting does not stop the run (the UI) */
};

struct liverun;

/* Wraps a started session (not owned: free it after liverun_free). Returns
 * NULL with err when the live options are inconsistent. A control socket
 * that cannot be opened is no error: the run goes on without it, and the
 * session's note callback says why. */
struct liverun *liverun_new(struct session *s, const struct liverun_options *o, char *err,
			    size_t errlen);
void liverun_free(struct liverun *r);

struct live *liverun_live(struct liverun *r);
struct loop *liverun_loop(struct liverun *r);

/* The session has ended (targets exited, -d, or a signal), its last
 * records taken in; with stay_after_exit the display stays on them. */
bool liverun_ended(const struct liverun *r);

/* The session's profile: the raw samples and calls held (for views that
 * read them, such as a flame chart of one call). */
struct profile *liverun_profile(struct liverun *r);

/* The recording a replayed session shows (session_replay), or NULL. */
const char *liverun_replay_path(const struct liverun *r);

/* The control socket's path, or NULL when there is none. */
const char *liverun_ctl_path(const struct liverun *r);

/* Runs one command line (live_exec): the answer text to out. For commands
 * given at the start and typed at a frontend's prompt. Returns 0 or -1. */
int liverun_exec(struct liverun *r, const char *line, FILE *out);

/* Runs one command line as the control socket does and returns its JSON
 * answer (ctl_answer in ctl.h: malloc'd, *len bytes, *ok when it
 * succeeded): for frontends that speak the control socket's answers, such
 * as the web server's API. NULL only when out of memory. */
char *liverun_answer(struct liverun *r, const char *line, size_t linelen, size_t *len, bool *ok);

/* The frontend's display: every interval(arg) seconds (asked again after
 * each), the session builds a snapshot of the current data
 * (live_view_build with at most `rows` rows a list) and hands it to
 * show(arg, v), which draws or prints it and owns it from then on
 * (live_view_free). While paused(arg) (NULL: never) no snapshot is built.
 * The first comes after one interval, or at once after
 * liverun_refresh_now. */
struct liverun_display {
	void (*show)(void *arg, struct live_view *v);
	double (*interval)(void *arg);
	bool (*paused)(void *arg);
	size_t rows;
	void *arg;
};
void liverun_set_display(struct liverun *r, const struct liverun_display *d);

/* Shows the display at the next step instead of at the end of the interval. */
void liverun_refresh_now(struct liverun *r);

/* Makes liverun_run return after the current step. */
void liverun_stop(struct liverun *r);

/* Says the session is ready (session_ready: a frontend is set up, its
 * start commands run, before it calls this), runs until the run stops (see above); then ends the session and
 * closes the control socket. Returns 0, or -1 with err when the ready file
 * could not be written, or reading the ring buffer or waiting failed. */
int liverun_run(struct liverun *r, char *err, size_t errlen);

#endif
