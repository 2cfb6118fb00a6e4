/* live — a session steered while it runs: `sonde top`, its control socket
 * and its batch mode all drive one of these.
 *
 * It sits on a running struct session (session.h) and turns the samples and
 * calls arriving in the session's profile into bounded streaming state:
 *
 *   - a window (window.h) of the current view's samples: per-second stack
 *     weights, read as the last N seconds (sliding) or as an EWMA of all
 *     time with a half-life;
 *   - a window of call durations per probe (log-linear buckets, 16 per
 *     octave), for calls/s, percentiles (latency_hist_percentile: those
 *     a recording and the thresholds give over the same calls) and
 *     histograms over the same window;
 *   - the latest slow calls of every probe, with the samples taken inside
 *     them (joined by span id as samples and calls arrive);
 *   - the raw samples and calls of the last `keep` seconds (at most
 *     `max_spans` calls), which `save` writes and from which a changed view
 *     is rebuilt. Older raw data is dropped (profile_trim), so memory is
 *     bounded whatever the run length.
 *
 * The view selects samples as every other view does (view.h, the one
 * definition): all, those inside calls of a probe (`in`), or inside its
 * calls slower / not slower than a threshold (`slow`, `fast`); plus one
 * filter (pid, tid or comm). A sample in a call still running is decided as
 * soon as it can be (view_decide with what is known now): when the call's
 * record arrives, or once no record has come for the threshold plus the
 * records' delivery slack (the call then surely ran longer than the
 * threshold); once the session has ended, as a recording's samples are. A
 * percentile or `auto` threshold is re-resolved every second over the
 * calls in the window, as `report` resolves one over a recording's
 * (latency_hist_durations, threshold_resolve). A probe's "slow" calls (its
 * latest-slow list) are those above the view's threshold when the view is
 * on that probe, else above its p95 over the window, of the threads the
 * filter takes (view_takes_call).
 *
 * Changing the view or the filter rebuilds the window from the raw samples
 * held (the EWMA's older history cannot be re-filtered: it restarts from
 * what is held), and the latest-slow lists from the calls held. Changing window/ewma only changes how the window is read.
 *
 * Not thread-safe: one loop (the session's, driven by liverun.h) calls
 * live_update, live_exec and live_view_build. */
#ifndef SONDE_LIVE_H
#define SONDE_LIVE_H

#include <stdio.h>

#include "command.h"
#include "liveview.h"
#include "livesource.h"
#include "session.h"

#define LIVE_DEFAULT_WINDOW_S 10
#define LIVE_DEFAULT_KEEP_S 60
#define LIVE_DEFAULT_MAX_SPANS 200000

struct live_options {
	double window_s;    /* sliding window (seconds, whole, 1..keep_s); default 10 */
	double halflife_s;  /* EWMA half-life; default 10 */
	bool ewma;          /* read the window as an EWMA instead of sliding */
	double keep_s;      /* raw data held and the ring's capacity; default 60 */
	size_t max_spans;   /* raw calls held at most; default 200,000 */
	bool show_overhead; /* keep samples of sonde's own machinery ("[sonde]") */
	enum view_time time; /* on-CPU (default), off-CPU or wall-clock views (view.h) */
};

void live_options_init(struct live_options *o);

struct live;

/* Wraps a started session (not owned: the caller frees it after
 * live_free), reached through src (livesource.h: live_session_source for
 * a real one). Returns NULL with err when the options are inconsistent. */
struct live *live_new(struct session *s, const struct livesource_ops *src,
		      const struct live_options *o, char *err, size_t errlen);
void live_free(struct live *l);

/* Takes in what arrived in the session's profile since the last call (call
 * it after every wake of the session's loop, as liverun does): feeds the
 * windows, decides waiting samples, and about once a second re-resolves
 * thresholds and drops old raw data. */
void live_update(struct live *l);

/* Runs one command line of the command language (command.h). Writes the
 * answer to out: one or more lines for success, exactly one line for an
 * error. Returns 0, or -1 on error; the session keeps running either way. */
int live_exec(struct live *l, const char *line, FILE *out);

/* The same, and for a command with structured results (`status`: the
 * status and probes, live_view_write_json) their JSON to data (NULL: not
 * wanted), from the same snapshot as the text. The control socket's answers
 * (ctl.h) carry it as "data". */
int live_exec_data(struct live *l, const char *line, FILE *out, FILE *data);

/* A `save` that could not be written keeps its recording in memory (the
 * next `save` writes it); at the end of the session this writes it where
 * there is room (recording_image_rescue). Returns 0 when there was none, 1
 * when it was rescued, -1 when it could not be: *msg says which. */
int live_rescue_unsaved(struct live *l, char *msg, size_t msglen);
int live_exec_command(struct live *l, const struct command *c, FILE *out);

/* The samples inside calls of one probe whose duration lies in a band (a
 * range brushed on its histogram), and those inside its other calls: two
 * flame trees, for a diff. The samples are the raw ones held in the window
 * (the last window_s seconds; all that is held for an EWMA window, not
 * decayed), with the view's filters; a sample whose call has not reported
 * its end yet is counted as waiting (view.h decides it as soon as it can). */
struct live_band {
	struct flame_tree *in, *out; /* frames: the session's profile's */
	double calls_in, calls_out;  /* the window's calls in and outside the band,
				      * by the histogram's buckets (16 per octave) */
	uint64_t samples_waiting;
};

/* probe: a traced function, as `slow` names it. Returns NULL with err when
 * the probe is not traced or the band is empty. */
struct live_band *live_band_build(struct live *l, const char *probe, uint64_t lo_ns,
				  uint64_t hi_ns, char *err, size_t errlen);
void live_band_free(struct live_band *b);

/* A snapshot of the current view (hot functions: at most hot_max). */
struct live_view *live_view_build(struct live *l, size_t hot_max);

/* Whether the session's views keep sonde's own samples (--show-overhead):
 * for views drawn outside the live session (the web's flame chart). */
bool live_shows_overhead(const struct live *l);

/* Adds to a snapshot what only the JSON status shows (liveview.h), which
 * costs a pass over the hits or calls held: each probe's predicate and
 * captured values, and a line's in_calls. For the control socket's and
 * the web's status, not for every frame of the TUI. */
void live_view_add_probe_details(struct live *l, struct live_view *v);

#endif
