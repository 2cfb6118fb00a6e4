/* session — one profiling run: starts or attaches to the targets, loads the
 * BPF engine, attaches the sampler and the span probes, drains records into
 * a profile until the run ends, and finishes it (drain, spans still open,
 * in-kernel histograms, metadata).
 *
 * `record`, `lat` and `slow` are all sessions; they differ in what they do
 * with the profile (save it, print histograms, print slow calls); `top`
 * steers one while it runs (live.h, liverun.h). A run ends at Ctrl-C
 * (SIGINT/SIGTERM/SIGHUP), when its duration expires, when the command it
 * started exits, or when all of its PIDs have exited.
 *
 * Every session waits in one event loop (loop.h), which it owns: the ring
 * buffer, a wake 10 times a second (the BPF side does not wake the reader
 * for every call), the end of -d and the signals are registered there;
 * frontends add their own fds and timers to session_loop().
 *
 * Nothing here prints: failures are -1 (or NULL) with one line in err, and
 * what a run has to say on the way (warnings, the processes -p NAME found,
 * -v details) goes to the options' note callback. */
#ifndef SONDE_SESSION_H
#define SONDE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "collector.h"
#include "loop.h"
#include "profile.h"
#include "recording.h"

#define SESSION_MAX_PIDS 256
#define SESSION_MAX_TRACES 64
/* Thread-state passes a second: at most this (--threads-hz, sample
 * threads HZ); sample threads without HZ takes SESSION_THREADS_HZ. */
#define SESSION_THREADS_HZ_MAX 1000
#define SESSION_THREADS_HZ 10
/* Different functions one session traces over its life (probe ids
 * 0..SESSION_MAX_PROBES-1); at most ENGINE_USER_PROBES at once. */
#define SESSION_MAX_PROBES 1024

/* How user stacks are walked (--unwind): the frame-pointer walk, the
 * binaries' unwind tables only, or tables with frame pointers where a
 * binary has none. */
enum session_unwind {
	SESSION_UNWIND_FP,
	SESSION_UNWIND_CFI,
	SESSION_UNWIND_AUTO,
};

struct engine_stats;

struct session_options {
	const char *event;   /* default "cpu-clock" */
	uint64_t freq;       /* default 99 */
	uint64_t period;     /* 0 = by frequency */
	bool freq_given;
	bool no_sampling;    /* trace only: no sampling event */
	bool system_wide;
	pid_t pids[SESSION_MAX_PIDS]; /* -p: the named processes, then (at start) their
				       * existing descendants */
	int npids;
	int nroot_pids;      /* how many of pids were named (set at start) */
	const char *pid_of;  /* -p NAME / --pid-of NAME: every process of that name */
	bool no_children;    /* only the named processes or the command: not their
			      * descendants, nor the processes they create later */
	bool no_python;      /* native stacks only: no Python frames (pyfollow.h) */
	bool exact_children; /* probes on their files for every process (-1), so
			      * that a process the target creates is traced from
			      * its first instruction: every process on the
			      * machine running that code takes the trap. Else a
			      * new process gets its probes once sonde hears of
			      * it (a fork record), ~0.1-1 ms later */
	char **cmd;          /* NULL-terminated, or NULL */
	const char *cmd_output; /* the command's stdout/stderr go here (stdin:
				 * /dev/null); NULL = sonde's own */
	bool hold_cmd;       /* session_start leaves the command held before its
			      * exec, until session_release_cmd: for a frontend
			      * that must print something before the command
			      * can (serve's URL comes first) */
	double duration;     /* seconds; 0 = until the targets end or a signal */
	size_t ringbuf_mb;   /* default 16 */
	enum session_unwind unwind; /* --unwind: how user stacks are walked (default auto) */
	bool verbose;
	const char *traces[SESSION_MAX_TRACES]; /* probe specs (--trace) */
	int ntraces;
	const char *sample_in;   /* --sample-in FUNC */
	const char *sample_slow; /* --sample-slow FUNC:DURATION */
	const char *sample_when; /* --sample-when FILE:LINE */
	bool off_cpu;        /* record off-CPU intervals (--off-cpu; engine_set_offcpu) */
	uint64_t min_block_ns; /* --min-block: shorter intervals are counted only */
	bool wakers;         /* --wakers: who woke each wait, too (implies off_cpu) */
	/* Thread states (record --threads, sonde threads): every target
	 * thread's state, system call and traced call in flight, taken
	 * threads_hz times a second over all threads (engine tstate_freq). */
	bool threads;
	uint64_t threads_hz; /* 0: -F; at most SESSION_THREADS_HZ_MAX */
	/* (threads kept at once: SESSION_THREADS_TARGETS, or SESSION_THREADS_ALL
	 * system-wide; beyond, counted as thread_states_full) */
	bool live;           /* probes may be added later (calibrate for them) */
	/* --ready-file: once the run is ready (session_ready), this file
	 * holds sonde's PID; removed at the start if it exists. NULL: none. */
	const char *ready_file;
	bool all_calls;      /* every traced call crosses to user space (a span
			      * each), not only those samples landed in and
			      * the slow ones (record --all-calls) */
	/* Notes on the way (one line each, no newline; NULL drops them):
	 * warnings, what -p NAME found, what a --trace pattern left out. */
	void (*note)(void *arg, const char *line);
	void *note_arg;
	/* With verbose, libbpf's messages as it writes them (pieces of
	 * lines, newlines included; engine_options.log). NULL drops them. */
	void (*log)(void *arg, const char *text);
	void *log_arg;
};

/* Threads whose state is kept at once (--threads). */
#define SESSION_THREADS_TARGETS 4096u
#define SESSION_THREADS_ALL 32768u

/* --min-block's default: the cost of an interval (two stack walks'
 * worth of record) stays small against the time it stands for. */
#define SESSION_MIN_BLOCK_NS 5000u

void session_options_init(struct session_options *o);

/* --unwind's names: "fp", "cfi", "auto" (what a recording's meta says). */
const char *session_unwind_name(enum session_unwind m);
int session_unwind_parse(const char *name, enum session_unwind *out);

/* Checks the options as a whole (exactly one target, -F/-c, ...). Returns
 * 0, or -1 with err. (The command-line options that fill them are parsed in
 * cli/, session_args.h.) */
int session_check_options(const struct session_options *o, char *err, size_t errlen);

struct session;

/* Sets everything up and starts the targets (a command stays held with
 * hold_cmd). Returns NULL with one line in err. argc/argv are stored as
 * the command line. From here on SIGINT, SIGTERM and SIGHUP end the run
 * (they are caught by the session's loop). */
struct session *session_start(struct session_options *o, int argc, char **argv, char *err,
			      size_t errlen);

/* Lets the command held by hold_cmd exec (nothing without one, or once it
 * was let go). Returns 0, or -1 with err when its exec failed. */
int session_release_cmd(struct session *s, char *err, size_t errlen);

/* A session over a recording (`sonde serve FILE`): the profile loaded from
 * it (taken over: freed with the session) as if it had just been gathered.
 * It has no targets and no engine, and has ended from the start: its views,
 * windows and filters work, nothing can be traced or sampled (session_trace
 * and the other changes fail with one line naming the recording). Its time
 * runs from the recording's start_ns to its end_ns (meta), or from its
 * first to its last sample; the probes' counts are the recording's. The
 * loop catches signals, so Ctrl-C ends the run. Returns NULL with err. */
struct session *session_replay(struct profile *p, const char *path, struct session_options *o,
			       char *err, size_t errlen);

/* The recording a replayed session shows, or NULL for a live one. */
const char *session_replay_path(const struct session *s);

/* A replayed session gathers nothing: true with one line in err (what
 * still works, and how to steer a live session) for a replay. */
bool session_refuse_replay(const struct session *s, char *err, size_t errlen);

/* When the session ended (CLOCK_MONOTONIC seconds; for a replay, the
 * recording's end); 0 while it runs. */
double session_end_time(const struct session *s);

/* The session's event loop, for frontends' fds and timers (loop.h). After
 * every wake the session first takes in what waits in the ring buffer. */
struct loop *session_loop(struct session *s);

/* Called for every completed traced call as it arrives (after it is in the
 * profile), with the indexes of the samples taken inside it. */
typedef void (*session_span_fn)(struct session *s, void *arg, const struct span *sp,
				const uint32_t *samples, size_t nsamples);

void session_on_span(struct session *s, session_span_fn fn, void *arg);

/* Why a run ends. */
enum session_end_reason {
	SESSION_RUNNING,
	SESSION_SIGNALLED,      /* Ctrl-C, SIGTERM, SIGHUP */
	SESSION_DURATION,       /* -d elapsed */
	SESSION_TARGETS_EXITED, /* the command, or every PID, is gone */
};

/* What happens when the run should end: fn is called (in the loop) once
 * for each new reason; once the session has ended (session_end) only a
 * signal counts. Without fn (the default) the loop stops. */
typedef void (*session_end_fn)(struct session *s, void *arg, enum session_end_reason why);
void session_on_end(struct session *s, session_end_fn fn, void *arg);

/* The run is ready: every probe asked for at the start is attached
 * (--trace, and a frontend's start commands), sampling is on and the
 * frontend is set up, so whatever the targets do from now on is sampled
 * and traced. With --ready-file, writes sonde's PID and a newline to that
 * file, atomically (a temporary file beside it, renamed into place): a
 * script waits for the file to exist. Called once the setup is done, as
 * the loop starts (session_run and liverun_run do it); later calls do
 * nothing. Returns 0, or -1 with err when the file cannot be written (a
 * script waiting for it would wait forever: the run should end). */
int session_ready(struct session *s, char *err, size_t errlen);

/* Says the run is ready (session_ready), then runs the loop until it
 * stops (by default: when the session should end; a frontend may stop it
 * earlier), reading the kernel's call counts once a second
 * (session_refresh_calls); then finishes the run (session_end). Returns 0,
 * or -1 with err when the ready file or the ring buffer could not be
 * written or read. */
int session_run(struct session *s, char *err, size_t errlen);

/* --- what crosses to user space ------------------------------------------
 * Every call is counted in the kernel (histogram, totals); a call sends a
 * record (a span in the profile) only when a sample landed in it, when it
 * is over the probe's keep threshold, or with --all-calls. The keep
 * threshold is the probe's p99 so far (from the time 1000 calls gave one;
 * before that only calls samples landed in cross), unless set below. The profile's probe figures (hist, entered, raw/own
 * time) are the kernel's as of the last refresh. */

/* Keeps every call of the probe longer than ns from now on (e.g. the
 * threshold a view or `slow` uses). Returns 0 or -1. */
int session_keep_calls_over(struct session *s, uint32_t probe, uint64_t ns);

/* Reads the kernel's counts into the profile and follows the p99 keep
 * thresholds (session_run does it once a second). Returns false while a
 * probe still waits for its p99 (only calls samples landed in cross). */
bool session_refresh_calls(struct session *s);

/* Why the run should end now (SESSION_RUNNING while it should not). */
enum session_end_reason session_end_reason(struct session *s);

/* True once session_end ran. */
bool session_ended(const struct session *s);

/* Finishes the run: stops sampling, drains, records the calls still in
 * flight, reads the in-kernel histograms, sets the metadata. Idempotent;
 * session_run does it itself. */
void session_end(struct session *s);

/* The profile as it stands as a recording, built in memory (metadata as of
 * now, every probe's calls counted so far; calls still in flight are not
 * included before session_end), to be written with recording_image_write.
 * Returns NULL with err. */
struct recording_image *session_recording(struct session *s, char *err, size_t errlen);

double session_start_time(const struct session *s); /* CLOCK_MONOTONIC seconds */
const struct session_options *session_options(const struct session *s);
pid_t session_command_pid(const struct session *s); /* the -- CMD's PID, or 0 */
void session_get_stats(struct session *s, struct engine_stats *es, struct collector_stats *cs);

/* --- changing a running session (errors: one line in err, nothing changed) */

/* Traces every function `spec` names (as --trace), all or none: a spec
 * naming more functions than can be attached now is refused before any is
 * attached, and one that fails part-way takes back what it attached.
 * Returns the first probe id (their number in *count), or -1. A function
 * traced before and untraced gets its probe id (and its data) back; new
 * functions get consecutive new ids. A line spec ([BINARY:]FILE:LINE, see
 * probes.h) is one probe (profile point >= 0) named by the spec, and *count
 * is its number of addresses. The spec is LOCATION alone: a tail after it
 * (captures, a predicate) is refused. */
int session_trace(struct session *s, const char *spec, int *count, char *err, size_t errlen);

/* Removes the probes whose name or function matches `pattern` (a name or a
 * glob); what they gathered stays. Returns at once (the kernel removes the
 * uprobes in the background; their places are reused after). Returns how
 * many, or -1 (none matched, or one drives the in-kernel sampling filter). */
int session_untrace(struct session *s, const char *pattern, char *err, size_t errlen);

bool session_probe_attached(const struct session *s, uint32_t probe);
/* The spec that placed a probe last, as written (with its captures and
 * predicate), or NULL (a replayed recording's probes, or none such). */
const char *session_probe_spec(const struct session *s, uint32_t probe);

/* A probe's log-linear histogram (latency.h) of every call counted since it
 * was first traced (in-kernel counts, kept across untrace); the profile's
 * copy is brought up to date too. Returns 0 or -1. */
int session_probe_hist(struct session *s, uint32_t probe, uint64_t *buckets);

/* The same for every probe at once: out[i] for probe i < the profile's
 * probe count (one batched read of the kernel's maps). Returns 0 or -1. */
int session_probe_hists(struct session *s, uint64_t (*out)[LATENCY_LOGLIN_BUCKETS]);

/* The calls of a probe that began since it was first traced: every one,
 * those its predicate left out too (the kernel's count at entry, kept
 * across untrace); the profile's figures are brought up to date too. */
uint64_t session_probe_entered(struct session *s, uint32_t probe);

/* Changes the sampled event and rate (freq samples/s, or every `period`
 * events when period > 0); event NULL turns sampling off. */
int session_set_sampling(struct session *s, const char *event, uint64_t freq, uint64_t period,
			 char *err, size_t errlen);

/* Off-CPU intervals on or off (engine_set_offcpu; --min-block as given).
 * Returns 0, or -1 with one line in err (nothing changed). */
int session_set_offcpu(struct session *s, bool on, char *err, size_t errlen);

/* Thread states on at hz passes a second (0: SESSION_THREADS_HZ), or off
 * (engine_set_threads). Returns 0, or -1 with one line in err. */
int session_set_threads(struct session *s, bool on, uint64_t hz, char *err, size_t errlen);

/* The in-kernel sampling decisions: sample only inside calls of func / only
 * inside its calls that have already run longer than ns. func NULL = off.
 * The function is traced if it is not yet. */
int session_set_sample_in(struct session *s, const char *func, char *err, size_t errlen);
int session_set_sample_slow(struct session *s, const char *func, uint64_t ns, char *err,
			    size_t errlen);

/* Samples only in calls where line probe `line` ([BINARY:]FILE:LINE,
 * traced now if it is not yet) has been hit during the current call of the
 * innermost traced function around it (the mark is the call's: its
 * return clears it for the next call; callers keep it). In the kernel.
 * line NULL = off. Returns 0 or -1 with err. */
int session_set_sample_when(struct session *s, const char *line, char *err, size_t errlen);

/* The probes the i-th --trace spec attached: the first id (-1 if none) and
 * how many functions it named (in *count). */
int session_trace_probes(const struct session *s, int i, int *count);

struct profile *session_profile(struct session *s);

/* Writes the one-line summary of what was gathered and dropped ("sonde:
 * WHAT N samples ...", and a second line when the command exited with an
 * error status) to out. */
void session_print_summary(struct session *s, const char *what, FILE *out);

/* Ends everything: a command sonde started and that still runs is killed. */
void session_free(struct session *s);

#endif
