/* livestate — what a live session holds, shared by its rooms (liveintake.c:
 * taking in what arrived, windows, thresholds, trimming; liveexec.c: the
 * commands; livesnap.c: the snapshot displays read). Nothing outside
 * src/session/ includes it: the API is live.h. */
#ifndef SONDE_LIVESTATE_H
#define SONDE_LIVESTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"
#include "join.h"
#include "latency.h"
#include "live.h"
#include "recording.h"
#include "view.h"
#include "window.h"

/* Call durations go in log-linear buckets: 16 per power of two. */
#define FINE_BITS 10 /* buckets per probe: < 1024 */
#define RATE_SECONDS 8
#define RATE_SPAN 5 /* samples/s and calls/s: over the last 5 whole seconds */
#define JOIN_MAX_FRAMES 4

/* What a slow call's list entry says of its samples (from the samples
 * model/join held for it). */
struct call_samples {
	uint32_t nsamples;    /* on-CPU samples */
	struct call_split split; /* on-CPU samples and off-CPU intervals by state */
	uint32_t frame[JOIN_MAX_FRAMES]; /* leaf functions seen, with counts */
	uint32_t count[JOIN_MAX_FRAMES];
};

struct probe_state {
	struct live_slow_call slow[LIVE_SLOW_KEEP]; /* ring, newest at slow_head - 1 */
	size_t nslow, slow_head;
	uint64_t slow_threshold_ns; /* cached, re-resolved every second */
	uint64_t calls_base;        /* in-kernel count at the last reset */
	uint64_t entered_base;      /* calls entered at the last reset */
};

struct rate_ring {
	uint64_t second[RATE_SECONDS];
	uint64_t count[RATE_SECONDS];
};

struct live {
	struct session *s;
	const struct livesource_ops *src; /* how it reaches s */
	struct profile *p;
	struct live_options o;
	struct window *samples; /* the view's samples: stack -> weight */
	struct window *calls;   /* (probe << FINE_BITS | bucket) -> calls */
	/* Which samples the view takes (view.h); its threshold_ns is resolved
	 * from view_threshold over the window (UINT64_MAX until known), and its
	 * comm points at filter_comm. */
	struct view view;
	struct threshold view_threshold;
	char filter_comm[COMMAND_COMM_MAX + 1];
	bool threshold_known;
	struct latency_modes view_modes; /* auto: what it found (found false: the p95) */
	size_t cursor;       /* next raw sample to take in */
	size_t span_cursor;  /* next raw call to take in */
	uint32_t *pending;   /* raw sample indexes waiting for their call to end,
			      * ascending (liveintake.c says when they are decided) */
	size_t npending, pending_cap;
	size_t pending_done; /* entries of pending decided, not swept out yet */
	uint64_t undecided;  /* samples whose call never ended while held */
	uint64_t calls_trimmed; /* call records dropped: older than --keep, beyond --keep-calls */
	struct join *join; /* the samples of calls not ended yet (model/join) */
	struct probe_state probes[SESSION_MAX_PROBES];
	struct rate_ring sample_rate, call_rate;
	uint64_t *sec_id, *sec_weight; /* every sample's weight per second, ring of keep_s */
	size_t nsec;
	/* Several processes (-a, -p A,B): stacks get their process name as the
	 * root, so the tree splits by process as FlameGraph's does. */
	bool by_process;
	uint32_t *thread_root;          /* thread index -> process-name frame (0: not yet) */
	size_t nthread_root;
	struct hashmap rooted; /* root frame << 32 | stack -> node */
	uint64_t nsamples, ncalls; /* received / counted since the start (or reset) */
	/* The kernel's counts of every call, as last put in the calls window:
	 * the window takes what they grew by. */
	uint64_t (*calls_fed)[LATENCY_LOGLIN_BUCKETS]; /* [SESSION_MAX_PROBES] */
	uint64_t calls_fed_ns;
	uint64_t last_second;      /* when the once-a-second work last ran */
	uint64_t start_ns;
	uint64_t held_from_ns;     /* raw data before this was dropped */
	uint64_t frozen_ns;        /* when the session ended: views stay at that time */
	/* Scratch for views, kept across calls so a warm session allocates
	 * little. */
	struct stack_weights sw;
	double *fn_self, *fn_total;
	uint32_t *fn_seen, *fn_mark; /* generation marks, see next_gen */
	size_t fn_cap;
	uint32_t view_gen, stack_gen;
	/* A save that could not be written (a full disk): its recording stays
	 * here until a `save` to another path writes it, or the end rescues
	 * it. */
	struct unsaved {
		struct recording_image *img;
		char *path;          /* where it could not be written */
		double at_s;         /* when it was taken, seconds into the session */
		size_t samples, calls;
		double held_s;
	} unsaved;
};

/* What the rooms share (defined in liveintake.c, liveexec.c). */
/* Calls are counted by probe and log-linear bucket (latency.h), the
 * kernel's histogram layout. */
void live_fine_bounds(uint32_t b, uint64_t *lo, uint64_t *hi);
uint64_t live_fine_mid(uint32_t b);
/* Refills the samples window from the raw samples held, after the view
 * changed. */
void live_rebuild(struct live *l);
double live_held_seconds(const struct live *l);
/* Per second over the RATE_SPAN whole seconds before now's (or fewer at the
 * start of the run). */
double live_rate_get(const struct rate_ring *r, uint64_t now_second, double elapsed_s);
struct window *live_new_window(const struct live *l);
/* Views are read at this time: now, or the end of a session that ended. */
uint64_t live_view_time(const struct live *l);
double live_read_calls(struct live *l, uint64_t now, struct stack_weights *out);
/* The probe-p slice of a calls-window read (keys sorted ascending). */
void live_probe_slice(const struct stack_weights *cw, uint32_t probe, size_t *from, size_t *to);
/* A probe's log-linear counts in the window (a slice of a calls-window
 * read), in whole calls; malloc'd. Every figure of the window's durations
 * is read on them, as a recording's on its histogram. */
uint64_t *live_window_counts(const struct stack_weights *cw, size_t from, size_t to);
/* The sample's stack under its process name (interned once per pair). */
uint32_t live_rooted_stack(struct live *l, const struct sample *s);
void live_describe_window(const struct live *l, char *buf, size_t size);
void live_describe_view(const struct live *l, char *buf, size_t size);
void live_describe_filter(const struct live *l, char *buf, size_t size);

#endif
