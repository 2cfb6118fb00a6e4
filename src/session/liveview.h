/* liveview — one snapshot of a live session, as displays show it.
 *
 * The live session (live.h) builds a struct live_view on demand: the flame
 * tree of the current view over the current window, the hottest functions,
 * per-probe latency, and a status line's worth of numbers. Displays (the TUI,
 * `top -b`, the control socket's `status`) only read it. Everything in it is
 * owned by the view and freed by live_view_free(); frame ids refer to the
 * frame table of the session's profile (flame->frames), which outlives it.
 *
 * Weights are sample weights (1 per sample for time-based events). In a
 * sliding window they are exact sums over the last N seconds; in an EWMA
 * window they are decayed sums (see window.h) and so fractional: displays
 * show shares (weight / total) and rates, not raw counts, for EWMA views. */
#ifndef SONDE_LIVEVIEW_H
#define SONDE_LIVEVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "callsplit.h"
#include "flame.h"
#include "latency.h"
#include "linecalls.h"
#include "view.h"

#define LIVE_SLOW_KEEP 8 /* latest slow calls kept per probe */

/* A function in the hottest-functions table. */
struct live_hot {
	uint32_t frame; /* function frame (profile_function_frame): name + kind */
	double self;    /* weight of samples whose leaf is this function */
	double total;   /* weight of samples with this function anywhere on the stack */
};

/* The source line where a function spends most of its samples in a view. */
struct live_line {
	uint32_t frame; /* a frame of the function carrying file and line; 0: none known */
	double weight;  /* samples at that line: the function ran there, or was in
			 * the call made there (its innermost frame on each stack) */
	double total;   /* samples with the function on the stack (as live_hot) */
};

/* One slow call, as it ended. */
struct live_slow_call {
	uint64_t end_ns;      /* CLOCK_MONOTONIC */
	uint64_t duration_ns;
	uint32_t pid, tid;
	uint32_t samples;     /* samples taken inside it (0 when none reached sonde) */
	uint32_t top_frame;   /* hottest function among those samples' leaves, 0 if none */
	uint64_t span_id;     /* its record in the session's profile (a flame chart of
			       * its samples while it is held, flamechart.h) */
	/* Where its time went (with off-CPU recording on): on the CPU, about
	 * samples x the sampling interval, at most the duration less the
	 * off-CPU time (split.on_ns, call_split_bound; 0 when sampling is not
	 * by frequency), and off it by state (split.off_ns 0: no off-CPU time
	 * seen, or off-CPU recording off). */
	struct call_split split;
};

/* What every output that shows a threshold says when `auto` found no
 * second mode and the p95 is in force. */
#define LIVE_AUTO_FALLBACK LATENCY_AUTO_FALLBACK

/* Calls in one log-linear bucket of durations (16 per octave). */
struct live_bucket {
	uint64_t lo_ns, hi_ns; /* [lo_ns, hi_ns) */
	double calls;          /* in the window (decayed for EWMA) */
};

struct live_probe_view {
	const char *name;        /* as users name it (function, or BINARY:FUNC); malloc'd,
	                          * freed by live_view_free */
	bool attached;           /* false after `untrace` (its data stays); a recording's: true */
	bool line;               /* a line probe: total_calls is its hits, no latency */
	double calls;            /* calls that ended in the window (decayed for EWMA) */
	double calls_per_s;      /* rate over the window */
	uint64_t p50_ns, p90_ns, p95_ns, p99_ns, max_ns; /* over the window, from hist_fine */
	struct latency_hist hist; /* log2 counts over the window (rounded for EWMA) */
	uint64_t total_calls;    /* every call since tracing began (in-kernel count); with
				  * a predicate, every call where it held at entry */
	uint64_t entered;        /* calls that began since tracing began, every one
				  * (with a predicate, those where it failed too) */
	bool predicated;         /* a function probe with `if EXPR`: its calls, latencies
				  * and slow calls are those where EXPR held */
	uint64_t slow_threshold_ns; /* what "slow" means for this probe now (see live.h) */
	/* the view asked auto for this probe: what outputs say after the
	 * threshold (latency_auto_note: the modes it lies between, or
	 * LIVE_AUTO_FALLBACK when the p95 is in force); "" otherwise */
	char slow_threshold_note[sizeof(((struct latency_modes *)0)->reason) + 8];
	struct live_slow_call slow[LIVE_SLOW_KEEP]; /* newest first */
	size_t nslow;
	struct live_bucket *buckets; /* the window's calls by duration, ascending,
				      * buckets that hold calls only */
	size_t nbuckets;
	/* What only the JSON status shows (live_view_add_probe_details, live.h;
	 * NULL/0 until then): */
	char *spec;              /* the spec that placed it, as written (NULL: not
				  * known, a recording's); malloc'd */
	char *predicate;         /* its `if EXPR` as written (NULL: none): a line's hits
				  * are those where it held; malloc'd */
	char *values;            /* its captured values as report --json's "values"
				  * object (valuereport.h), NULL: it captures nothing;
				  * malloc'd */
	/* a line: in which calls of the function probes it ran (linecalls.h;
	 * slow: over each function's slow_threshold_ns, among the calls held) */
	struct line_in_calls *in_calls;
	size_t nin_calls;
};

struct live_status {
	char target[128];     /* "PID 1234 (server)", "command ./x (PID 1234)", "system-wide" */
	char sampling[96];    /* "cpu-clock @ 999 Hz", "page-faults every 1", "off" */
	char window[48];      /* "last 10s" or "EWMA half-life 10s" */
	char view[192];        /* "all", "in handle_request", "slow handle_request > p95 (1.20ms)" */
	char filter[64];      /* "none", "tid 1234", "comm worker" */
	enum view_time time;  /* what the view counts: samples, or ns (off-CPU, wall) */
	double elapsed_s;     /* since the session started */
	double samples_per_s; /* samples received per second, last 5 s */
	double calls_per_s;   /* traced calls received per second, last 5 s */
	uint64_t samples;     /* received since the start (all views) */
	uint64_t calls;       /* traced calls received since the start */
	uint64_t drops;       /* everything lost: ring buffer full, maps full, ... */
	char drops_detail[160]; /* "" or what the drops were */
	double held_s;        /* seconds of raw samples held (for `save` and view changes) */
	double window_weight; /* every sample's weight in a sliding window, whatever the
			       * view and filter (0: not known, e.g. for EWMA) */
	size_t memory_bytes;  /* what the session's windows and raw store hold */
};

struct live_view {
	struct flame_tree *flame;  /* the view's samples over the window, root = all */
	double total;              /* their total weight (the root's share base) */
	bool fractional;           /* EWMA: weights are decayed sums */
	struct live_hot *hot;      /* sorted by self, descending (ties: total, name) */
	size_t nhot;
	struct live_line *lines;   /* indexed by function frame id (< nlines): the
				    * hottest line of every function in the view */
	size_t nlines;
	struct live_probe_view *probes; /* in probe id order */
	size_t nprobes;
	struct live_status status;
	uint64_t now_ns;           /* when the view was built (CLOCK_MONOTONIC) */
};

/* A slow call's time split as text, "on-CPU ~1.00ms off-CPU 10.8ms:
 * [runnable] 10.8ms in put, ..." (the 3 largest states), or "" when it
 * had no off-CPU time (off-CPU recording off). Returns buf. */
const char *live_slow_call_split(const struct live_view *v, const struct live_slow_call *c,
				 char *buf, size_t size);

/* Frees the view and everything in it (the flame tree, hot rows, probe
 * names). NULL is allowed. */
void live_view_free(struct live_view *v);

/* Writes a text snapshot (the `top -b` format): a first line
 * "--- sonde top at <elapsed>s ---" (so a stream of snapshots splits there),
 * a header of status lines, the `top_n` hottest functions (self and total
 * shares of v->total, one decimal), the `top_n` hottest stacks (flame-tree
 * paths by self weight, root first, the leaf-most 8 functions shown, "...;"
 * in front when cut), then one block per probe (calls, rate, percentiles,
 * slow threshold, latest slow calls). top_n 0 means no limit. With v->total
 * 0 the two tables are replaced by "no samples in this window". Fractional
 * (EWMA) views show shares and rates, no window counts. Ties are ordered by
 * label, then frame id, so equal views print equal text. */
void live_view_print(FILE *out, const struct live_view *v, size_t top_n);

/* Writes the view's status and probes as one JSON object (the "data" of the
 * control socket's `status` answer, ctl.h):
 *   {"target":S,"sampling":S,"window":S,"view":S,"filter":S,"time":S,"elapsed_s":N,
 *    "samples":N,"samples_per_s":N,"calls":N,"calls_per_s":N,"drops":N,
 *    "drops_detail":S,"held_s":N,"memory_bytes":N,
 *    "probes":[{"name":S,"attached":B,"calls_in_window":N,"calls_per_s":N,
 *               "p50_ns":N,"p90_ns":N,"p95_ns":N,"p99_ns":N,"max_ns":N,
 *               "total_calls":N,"entered":N,"slow_threshold_ns":N|null,
 *               "slow_threshold_note":S|null,
 *               "buckets":[[LO_NS,HI_NS,CALLS],...],"predicate":S|null,"values":{...},
 *               "in_calls":[{"probe":S,"calls":N,"hit":N,"share":N,"slow_ns":N|null,
 *                            "slow_recorded":N,"slow_hit":N,"slow_share":N},...],
 *               "slow":[{"span_id":N,"duration_ns":N,"ago_ns":N,"pid":N,"tid":N,
 *                        "samples":N,"on_cpu_ns":N,"off_cpu_ns":N,"top":S|null,
 *                        "off_cpu":[{"state":S,"ns":N,"in":S|null},...],
 *                        "split":S},
 *                       ...]}, ...]}
 * Strings are as the status shows them; N are plain numbers (durations in
 * ns; calls_in_window decayed for EWMA windows); slow_threshold_ns is null
 * while no threshold is known; slow_threshold_note is "auto: no second mode;
 * using p95" when that is what the threshold is, else null; buckets are the
 * probe's live_bucket list; slow its latest slow calls, newest first (ago_ns:
 * how long before the view they ended; top: the function most of their
 * samples were in; off_cpu: its off-CPU time by state frame, largest
 * first, each with the function under the traced one it waited in, null:
 * in the traced function itself (call_split_order); split: the TUI's text
 * of it, live_slow_call_split, "" without off-CPU time). time says what the
 * view's weights are: "on-cpu" (samples), "off-cpu" or "wall" (ns).
 * in_calls: a line probe's in_calls (function probes: []), shares as
 * fractions (report --json's names); predicate and values as report
 * --json has them (values: {} for a probe that captures nothing). */
void live_view_write_json(FILE *out, const struct live_view *v);

#endif
