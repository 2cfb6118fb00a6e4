/* view — which samples a view takes: the one definition that report,
 * flame, heatmap, convert (pprof), slow and the live session (top, ctl)
 * all use. How the samples taken are grouped (stacks, threads, seconds) is
 * the caller's business.
 *
 * A view takes a sample when every condition it sets holds:
 *   - time: start_ns <= time <= end_ns (has_range; CLOCK_MONOTONIC);
 *   - thread: its process id is `pid`, its thread id `tid`, its thread name
 *     exactly `comm` (each only when set; set several and all must hold);
 *   - call: taken inside the call `span_id` (when set: the sample names it
 *     among its calls in flight, whatever its probe or depth; one call's
 *     flame chart);
 *   - sonde's own cost: a sample whose leaf is the "[sonde]" frame
 *     (FRAME_OVERHEAD) is left out unless show_overhead;
 *   - `exclude` (optional) does not return true for it;
 *   - time (view_time): VIEW_ON_CPU (the default) takes on-CPU samples
 *     only, never an off-CPU interval (record --off-cpu), so on-CPU views
 *     of a recording are the same with or without --off-cpu;
 *     VIEW_OFF_CPU takes off-CPU intervals only; VIEW_WALL takes both;
 *     VIEW_WAKERS takes wakers only (no other view takes them);
 *   - the span condition on traced function `probe` (span_class):
 *       SPAN_ANY   none;
 *       SPAN_IN    taken inside a call of the probe;
 *       SPAN_SLOW  inside a call that lasted longer than threshold_ns;
 *       SPAN_FAST  inside a call that lasted threshold_ns or less;
 *       SPAN_BAND  inside a call that lasted from band_lo_ns to band_hi_ns
 *                  (both included): a band brushed on a histogram;
 *       SPAN_NOT_BAND  inside a call of the probe outside that band;
 *   - when_points (with a span condition): the call that decides it also
 *     hit one of these point probes (a line ran, a branch outcome
 *     happened: its record's points, span.points); a call with no record
 *     is in no such view (what it hit is unknown).
 *
 * Which call: a sample carries the calls in flight on its thread when it
 * was taken (outermost first); the outermost call of the probe decides
 * (recursion). Its duration comes from the call's record (span): the
 * corrected duration, and for a call still running when the profile ended
 * (an open span) the time it had run by then.
 *
 * The rule for samples whose call has no record (the record was lost in a
 * full ring buffer, or the call was left by longjmp or an exception and
 * never returned): the sample was inside the call all the same, so SPAN_IN
 * takes it; its duration is unknown, so it is in none of SPAN_SLOW,
 * SPAN_FAST, SPAN_BAND and SPAN_NOT_BAND. The report counts such samples
 * (view_count_unknown).
 *
 * Offline, a profile holds every record there will ever be (view_takes).
 * A live session decides samples while records are still on their way
 * (view_decide with a struct view_live): a sample whose call has no record
 * yet waits (VIEW_WAIT) until the record comes, or until the call surely
 * ran longer than the threshold: no record VIEW_RECORD_SLACK_NS after the
 * threshold (for a band: its upper end) has passed since the sample means
 * the call was still running then, so it is slow (beyond the band). (A live session cannot tell a lost record from a
 * call still running; once the session has ended it has every record and
 * decides as offline.) */
#ifndef SONDE_VIEW_H
#define SONDE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "latency.h"
#include "profile.h"

/* Which calls of a probe a view takes. */
enum span_class {
	SPAN_ANY = 0, /* no span condition */
	SPAN_IN,      /* inside any call of the probe */
	SPAN_SLOW,    /* inside a call longer than threshold_ns */
	SPAN_FAST,    /* inside a call not longer than threshold_ns */
	SPAN_BAND,    /* inside a call lasting band_lo_ns..band_hi_ns */
	SPAN_NOT_BAND, /* inside a call of the probe outside that band */
};

/* What time a view counts. Off-CPU and wall views count nanoseconds
 * (view_weight): an off-CPU interval its time away, an on-CPU sample (wall)
 * its sampling interval, sample_ns; and every stack ends in a FRAME_STATE
 * frame saying where the time went: "[running]" on the CPU (view_leaf_frame
 * adds it), or why the thread was away, as the collector recorded it
 * (view_state_frame): "[runnable]" (preempted: waiting for a CPU),
 * "[sleeping: read]", "[uninterruptible: fsync]", "[disk: read]" (in I/O
 * wait), "[stopped]"; the system call it was in after the colon, when in
 * one. */
enum view_time {
	VIEW_ON_CPU = 0, /* on-CPU samples, each its weight (1, or an event period) */
	VIEW_OFF_CPU,    /* off-CPU intervals */
	VIEW_WALL,       /* both, in ns: where the wall-clock time went */
	VIEW_WAKERS,     /* wakers (record --wakers): who woke the waits, in ns */
};

/* Which samples a view takes. Zero-initialised = every on-CPU sample of
 * the profile's main event (profile.h) but sonde's own cost. */
struct view {
	bool has_range;
	uint64_t start_ns, end_ns; /* inclusive, CLOCK_MONOTONIC */
	int64_t pid;               /* <= 0 = any */
	int64_t tid;               /* <= 0 = any */
	const char *comm;          /* NULL or "" = any; not owned */
	uint64_t span_id;          /* nonzero: only samples inside this call */
	enum span_class span_class;
	uint32_t probe;            /* for span_class != SPAN_ANY */
	uint64_t threshold_ns;     /* for SPAN_SLOW / SPAN_FAST */
	uint64_t band_lo_ns, band_hi_ns; /* for SPAN_BAND / SPAN_NOT_BAND, inclusive */
	uint64_t when_points;      /* nonzero: only calls that hit these point bits */
	bool show_overhead;        /* keep samples of "[sonde]" */
	/* Samples for which this returns true are left out (e.g. idle samples,
	 * as FlameScope leaves them out of range views). */
	bool (*exclude)(const struct profile *p, const struct sample *s);
	enum view_time time;
	uint64_t sample_ns;        /* VIEW_WALL: what an on-CPU sample stands for
				    * (view_set_time sets it) */
	/* The on-CPU samples of one event (profile.h): `event` names it (NULL:
	 * the profile's main_event), view_set_event resolves it into
	 * event_plus1 (its index + 1; 0: main_event). */
	const char *event;
	uint32_t event_plus1;
};

/* Resolves v->event in p. Returns 0, or -1 with one line in err naming the
 * events there are. */
int view_set_event(struct view *v, const struct profile *p, char *err, size_t errlen);

/* Sets a view's time. VIEW_WALL needs the profile's samples to be taken
 * by time (a frequency): otherwise returns -1 with one line in err. */
int view_set_time(struct view *v, const struct profile *p, enum view_time t, char *err,
		  size_t errlen);

/* What a sample taken by a view counts for (its weight, in ns for off-CPU
 * and wall views). */
uint64_t view_weight(const struct view *v, const struct profile *p, const struct sample *s);

/* The frame a view puts on top of a sample's stack ("[running]" for an
 * on-CPU sample in a wall view), or 0 for none. */
uint32_t view_leaf_frame(const struct view *v, struct profile *p, const struct sample *s);

/* A thread state's name (enum thread_run_state; TSTATE_RUNNING is
 * "running"): "runnable", "sleeping", "uninterruptible", "disk",
 * "stopped"; and back (-1: not a state's name). */
const char *view_state_name(unsigned off_state);
int view_state_parse(const char *name);

/* The FRAME_STATE frame of an off-CPU interval: why the thread was away
 * (enum thread_run_state) and the system call it was in (-1: none). */
uint32_t view_state_frame(struct profile *p, unsigned off_state, long syscall);

/* Turns a profile into what a view of time t counts, for writers that know
 * no views (conversions): samples the time leaves out are removed; each
 * one kept weighs view_weight / div (rounded; at least 1) and carries its
 * view_leaf_frame on top; afterwards every view takes every sample left,
 * as on-CPU samples. Returns 0, or -1 with err (view_set_time's). */
int view_profile_rewrite(struct profile *p, enum view_time t, uint64_t div, char *err,
			 size_t errlen);

/* The FRAME_STATE frame on top of a waker's stack: "[wakes: COMM]". */
uint32_t view_waker_frame(struct profile *p, const char *woken_comm);

/* The unit of a view's weights: "samples" (on-CPU; or the event's unit)
 * or "ns". Folded output of off-CPU and wall views counts microseconds. */
bool view_counts_time(const struct view *v);

enum view_decision {
	VIEW_SKIP = 0, /* not in the view */
	VIEW_TAKE,     /* in the view */
	VIEW_WAIT,     /* live: not known yet; ask again later */
};

/* How late a call's record may reach sonde after the call ended: the BPF
 * side batches call records (it wakes the reader for them only when 1 MB
 * waits) and a live loop drains at least every 100 ms. */
#define VIEW_RECORD_SLACK_NS 500000000ull

/* What a live session knows when it decides. */
struct view_live {
	uint64_t now_ns;        /* CLOCK_MONOTONIC */
	bool threshold_unknown; /* SPAN_SLOW/FAST: no threshold yet: wait (bands
				 * need none) */
};

/* Decides a sample. `live` NULL: the profile holds every record (a
 * recording, or a session that ended): never VIEW_WAIT. A NULL view takes
 * every on-CPU sample, of every event, but sonde's own cost (writers that
 * label each sample with its event). */
enum view_decision view_decide(const struct view *v, const struct profile *p,
			       const struct sample *s, const struct view_live *live);

/* view_decide(v, p, s, NULL) == VIEW_TAKE. */
bool view_takes(const struct view *v, const struct profile *p, const struct sample *s);

/* Calls. Whether a view takes a call (a span record): the calls `report
 * --by` counts in the view, the slow calls `sonde slow` prints and the
 * latest slow calls `top` lists. It does when
 *   - its thread passes the pid, tid and comm filters, and it started
 *     within the time range (has_range) (view_takes_thread_at);
 *   - span_id, when set, is its id;
 *   - for a span class other than SPAN_ANY, it is a call of `probe` whose
 *     duration (the record's corrected duration; for a call still running
 *     at the end, the time it had run) is in the class: SPAN_IN any,
 *     SPAN_SLOW > threshold_ns, SPAN_FAST <= threshold_ns, SPAN_BAND within
 *     band_lo_ns..band_hi_ns (both included), SPAN_NOT_BAND outside it:
 *     the classes of the samples taken inside it.
 * The conditions on samples alone (view_time, show_overhead, exclude) do
 * not apply to calls. A call that has no record is not a span: no call
 * rule counts it. */
bool view_takes_call(const struct view *v, const struct profile *p, const struct span *sp);

/* The view's thread filters (pid, tid, comm) and time range alone, for
 * something of thread index `thread` at time_ns: a call at its entry (a
 * captured value's hit; view_takes_call). A NULL view takes all. */
bool view_takes_thread_at(const struct view *v, const struct profile *p, uint32_t thread,
			  uint64_t time_ns);

/* Samples the view would take but for their span condition, in calls of
 * its probe that have no record (see above: in neither slow nor fast).
 * 0 for SPAN_ANY. */
uint64_t view_count_unknown(const struct view *v, const struct profile *p);

#endif
