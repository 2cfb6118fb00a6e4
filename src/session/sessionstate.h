/* sessionstate — what one session holds, shared by the files of the
 * session layer that do its jobs (run.c: start, run, end; trace.c: the
 * probes; samplefilter.c: what the sampler keeps; discovery.c: which
 * processes are the target; summary.c: the recording's metadata and the
 * closing summary; replay.c: a recording shown as a session). Nothing
 * outside src/session/ includes it: the API is session.h. */
#ifndef SONDE_SESSIONSTATE_H
#define SONDE_SESSIONSTATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "calibrate.h"
#include "collector.h"
#include "engine.h"
#include "hashmap.h"
#include "join.h"
#include "latency.h"
#include "loop.h"
#include "profile.h"
#include "session.h"
#include "symbols.h"
#include "target.h"

struct py_look;

struct probe_counts {
	uint64_t hist[LATENCY_LOGLIN_BUCKETS];
	uint64_t entered, raw_ns, own_ns;
};

/* Where a probe's uprobes go (file offsets in its binary), for the
 * processes that come later: a function's entry, or a line's addresses. */
struct point_sites {
	uint64_t *offsets;
	uint64_t *ref_ctrs; /* a USDT probe's semaphores, per offset (NULL: none) */
	size_t n;
	size_t nentries; /* a USDT span pair: offsets[0..nentries) its entry
			  * sites, the rest its return sites; 0: not one */
	size_t nholds;   /* of those, the last held only for their semaphores */
	uint16_t *branch; /* a branch outcome's conditions, per offset
			   * (engine_probe_batch.branch); NULL: none */
};

/* A batch placing probe's sites (a point probe's addresses, or a span
 * pair's entry and return sites) in binary; the caller adds the rest. */
static inline struct engine_probe_batch sites_batch(const struct point_sites *ps,
						    const uint32_t *probe, const char *binary)
{
	size_t ne = ps->nentries ? ps->nentries : ps->n;
	return (struct engine_probe_batch){
		.probes = probe,
		.file_offsets = ps->offsets,
		.ref_ctr_offsets = ps->ref_ctrs,
		.n = ne,
		.return_offsets = ps->nentries ? ps->offsets + ne : NULL,
		.return_ref_ctrs = ps->nentries && ps->ref_ctrs ? ps->ref_ctrs + ne : NULL,
		.nreturns = ps->n - ne - ps->nholds,
		.hold_offsets = ps->nholds ? ps->offsets + ps->n - ps->nholds : NULL,
		.hold_ref_ctrs = ps->nholds && ps->ref_ctrs ? ps->ref_ctrs + ps->n - ps->nholds : NULL,
		.nholds = ps->nholds,
		.branch = ps->branch,
		.binary = binary};
}

/* Which completed calls of a function probe cross to user space
 * (engine_span_policy, which the engine keeps in force): those over
 * keep_over_ns when keep_over_set (a view's threshold,
 * session_keep_calls_over), else those over the probe's p99 so far. */
struct trace_policy {
	uint64_t keep_over_ns;
	bool keep_over_set;
};

/* The probe table: the session's one record of each probe, by probe id
 * (the index of its probe_info in the profile, which holds its name, file,
 * offset and what it gathered, as a recording keeps them). Here: the spec
 * that placed it, where its uprobes are, its kernel slot and generation
 * while attached (every per-probe engine call takes them), what earlier
 * attachments counted (detaching clears the kernel's copy), and which of
 * its calls cross to user space. Records come back with probe ids: the
 * kernel writes them. */
struct trace_probe {
	char *spec;           /* the spec that placed it last, as written (with its
			       * captures and predicate); NULL: none yet */
	struct engine_probe_ref kernel; /* while its uprobes are in place ({0}: not attached) */
	uint64_t dev, ino;    /* its file: one file reached by two paths is one */
	struct point_sites sites;
	struct probe_counts counted_before; /* the profile's figures are these plus the kernel's */
	struct trace_policy policy;
};

static inline bool trace_probe_attached(const struct trace_probe *p)
{
	return engine_ref_attached(p->kernel);
}

struct session {
	struct session_options *o;
	int argc;
	char **argv;
	struct profile *prof;
	struct symbolizer *syms;
	struct collector *col;
	struct engine *eng;
	struct target_cmd cmd;
	char *executable;
	double start_mono, start_wall, end_mono;
	double setup_mono; /* when session_start began: start_mono - it is the set-up */
	session_span_fn on_span;
	void *on_span_arg;
	struct join *join; /* the calls' samples, for on_span (NULL without it) */
	uint64_t join_forgotten; /* calls whose samples it gave up (SESSION_JOIN_HOLD_NS) */
	double next_sweep_s;
	struct trace_probe *probes; /* [SESSION_MAX_PROBES]: the probe table, by probe id */
	uint64_t offcpu_cut; /* off-CPU intervals still going at the end, cut there */
	int trace_first_probe[SESSION_MAX_TRACES]; /* per --trace spec */
	int trace_probe_count[SESSION_MAX_TRACES];
	char *exe_alias;  /* another name of the executable: the command as given (a
			   * symlink's name), the process's command name */
	bool cmd_running; /* the command was let go: it runs (or ran) */
	int sample_in_probe, sample_slow_probe; /* in-kernel sampling filter, -1 = off */
	int sample_when_probe; /* sample only in calls that hit this line probe, -1 = off */
	uint64_t sample_slow_ns;
	char *event_name; /* the sampled event after a live change */
	bool ended;
	bool ready; /* session_ready ran */
	double next_refresh_s;
	int npoints; /* line probes so far: the next one's point bit */
	/* What detached attachments counted of the calls of a function probe
	 * while a line probe was traced (and that ran the line): key
	 * point_probe << 32 | probe. */
	struct hashmap point_calls_before, point_hit_before;
	struct calibration_result calib; /* sonde's unseen own costs */
	double calib_ms;                 /* how long calibrating took */
	char calib_warning[512];         /* a failed calibration, said once probes are attached */
	/* The event loop and how a run ends in it. */
	struct loop *loop;
	int wake_timer, end_timer;
	bool signalled;
	session_end_fn on_end;
	void *on_end_arg;
	enum session_end_reason notified; /* the last reason on_end was told */
	bool ring_failed;
	char *replay_path; /* a recording shown (session_replay): no engine */
	/* Processes given probes of their own as they appeared (follow_process),
	 * forgotten once they exit; how soon after each began its probes were
	 * in place. */
	pid_t *followed;
	size_t nfollowed, followed_cap;
	uint64_t follows, follow_failures, follow_delay_sum_ns, follow_delay_max_ns;
	/* Which processes run Python (pyfollow.c): tgid -> its index in
	 * py_looks, what was found of it. */
	struct hashmap py_seen;
	struct py_look *py_looks;
	size_t npy_looks, py_looks_cap;
	pid_t *py_pids; /* those that do, while they live */
	size_t npy_pids, py_pids_cap;
	uint64_t py_processes; /* found (said in the summary) */
};


_Static_assert(LATENCY_LOGLIN_BUCKETS == ENGINE_HIST_BUCKETS,
	       "the kernel's histogram is latency.h's log-linear one");

/* The session's own helpers its files share (run.c). */
double session_now_s(clockid_t clk);
/* A note on the way (see session_options.note). */
void session_note(const struct session_options *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Whether the user asked to stop (Ctrl-C) during set-up: then err says so. */
bool session_interrupted(const struct session *s, char *err, size_t errlen);
/* Ends the session when its reason to run is gone (duration, the command,
 * the processes). */
void session_check_end(struct session *s);
void session_on_signal(void *arg);
/* --ready-file: checks it can be written before the session starts. */
int session_ready_file_prepare(const struct session_options *o, char *err, size_t errlen);

#endif
