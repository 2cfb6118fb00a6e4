#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calibrate.h"
#include "capture.h"
#include "drops.h"
#include "errbuf.h"
#include "outfile.h"
#include "owncost.h"
#include "hashmap.h"
#include "join.h"
#include "unwind.h"
#include "latency.h"
#include "perfmap.h"
#include "printable.h"
#include "probes.h"
#include "procmaps.h"
#include "recording.h"
#include "sonde_abi.h"
#include "symbols.h"
#include "target.h"
#include "util.h"

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
	uint64_t offcpu_cut; /* off-CPU intervals still going at the end, cut there */
	int trace_first_probe[SESSION_MAX_TRACES]; /* per --trace spec */
	int trace_probe_count[SESSION_MAX_TRACES];
	bool attached[SESSION_MAX_PROBES]; /* probe id -> its uprobes are in place */
	uint64_t probe_dev[SESSION_MAX_PROBES], probe_ino[SESSION_MAX_PROBES]; /* its file */
	char *exe_alias;  /* another name of the executable: the command as given (a
			   * symlink's name), the process's command name */
	bool cmd_running; /* the command was let go: it runs (or ran) */
	int sample_in_probe, sample_slow_probe; /* in-kernel sampling filter, -1 = off */
	int sample_when_probe; /* sample only in calls that hit this line probe, -1 = off */
	uint64_t sample_slow_ns;
	char *event_name; /* the sampled event after a live change */
	bool ended;
	bool ready; /* session_ready ran */
	/* What earlier attachments of each probe counted: detaching clears the
	 * kernel's copy. The profile's figures are these plus the kernel's. */
	struct probe_counts *counted_before; /* [SESSION_MAX_PROBES] */
	/* Which calls cross to user space (engine_span_policy): calls over
	 * keep_over_ns[p] when keep_over_set[p], else over the probe's p99 so
	 * far. */
	uint64_t keep_over_ns[SESSION_MAX_PROBES];
	bool keep_over_set[SESSION_MAX_PROBES];
	uint64_t emit_min_in_force[SESSION_MAX_PROBES];
	bool policy_sent[SESSION_MAX_PROBES]; /* for the current attachment */
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
	/* A line probe's addresses, for the processes that come later. */
	struct point_sites {
		uint64_t *offsets;
		size_t n;
		bool fetch;
	} point_sites[SESSION_MAX_PROBES];
	/* Processes given probes of their own as they appeared (follow_process),
	 * forgotten once they exit; how soon after each began its probes were
	 * in place. */
	pid_t *followed;
	size_t nfollowed, followed_cap;
	uint64_t follows, follow_failures, follow_delay_sum_ns, follow_delay_max_ns;
};

struct probe_counts {
	uint64_t hist[SONDE_HIST_BUCKETS];
	uint64_t entered, raw_ns, own_ns;
};

_Static_assert(SONDE_HIST_BUCKETS == LATENCY_LOGLIN_BUCKETS,
	       "the kernel's histogram is latency.h's log-linear one");

static void refresh_probe(struct session *s, uint32_t probe);
static void refresh_point_calls(struct session *s, uint32_t point);
static void keep_point_calls(struct session *s, uint32_t probe);
static void update_span_policy(struct session *s, uint32_t probe);

bool session_refuse_replay(const struct session *s, char *err, size_t errlen)
{
	if (!s->replay_path)
		return false;
	errbuf_set(err, errlen,
		   "%s is a recording: nothing can be traced or sampled in it (views, filters, "
		   "windows, save, status and help work; run sonde serve -p PID or -- CMD to "
		   "steer a live session)",
		   s->replay_path);
	return true;
}

static double now_s(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void session_options_init(struct session_options *o)
{
	memset(o, 0, sizeof(*o));
	o->event = "cpu-clock";
	o->freq = 99;
	o->ringbuf_mb = 16;
	o->unwind = SONDE_UNWIND_AUTO;
	o->min_block_ns = SESSION_MIN_BLOCK_NS;
}

static const char *const unwind_names[] = {
	[SONDE_UNWIND_FP] = "fp", [SONDE_UNWIND_CFI] = "cfi", [SONDE_UNWIND_AUTO] = "auto"};

const char *session_unwind_name(enum sonde_unwind_mode m)
{
	return (unsigned)m < 3 ? unwind_names[m] : "?";
}

int session_unwind_parse(const char *name, enum sonde_unwind_mode *out)
{
	for (int m = 0; m < 3; m++)
		if (strcmp(name, unwind_names[m]) == 0) {
			*out = (enum sonde_unwind_mode)m;
			return 0;
		}
	return -1;
}

/* A note on the way (see session_options.note). */
static void notef(const struct session_options *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void notef(const struct session_options *o, const char *fmt, ...)
{
	if (!o->note)
		return;
	char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	o->note(o->note_arg, msg);
	free(msg);
}

int session_check_options(const struct session_options *o, char *err, size_t errlen)
{
	int modes = (o->system_wide ? 1 : 0) + (o->npids > 0 || o->pid_of ? 1 : 0) +
		    (o->cmd ? 1 : 0);
	if (modes != 1) {
		errbuf_set(err, errlen,
			   "say what to profile: exactly one of -a, -p PID, -p NAME, or -- CMD ARGS...");
		return -1;
	}
	if (o->no_children && o->system_wide) {
		errbuf_set(err, errlen,
			   "--no-children goes with -p or a command, not -a (which profiles every "
			   "process)");
		return -1;
	}
	if (o->exact_children && (o->no_children || o->system_wide)) {
		errbuf_set(err, errlen,
			   "--exact-children goes with -p or a command that sonde follows the "
			   "children of: not with %s",
			   o->system_wide ? "-a (whose probes are on every process already)"
					  : "--no-children");
		return -1;
	}
	if (o->period && o->freq_given) {
		errbuf_set(err, errlen, "-F and -c exclude each other: sample by frequency or by period");
		return -1;
	}
	return 0;
}

/* --- the span <-> sample join for session_on_span consumers ------------- */

/* The calls' samples are held until each call's record comes (model/join):
 * past this many, samples are not noted and the drop is counted. */
#define SESSION_JOIN_LINKS (1u << 20)

/* Notes what a record added: its samples in the calls they were taken in,
 * and a call that ended with the samples noted in it. */
static void join_added(struct session *s, const struct collector_added *a)
{
	for (size_t i = 0; i < a->nsamples; i++)
		join_add_sample(s->join, s->prof, a->first_sample + i, NULL);
	for (size_t i = 0; i < a->nspans; i++) {
		const struct span *sp = &s->prof->spans[a->first_span + i];
		size_t n;
		const uint32_t *samples = join_take(s->join, sp->id, &n);
		s->on_span(s, s->on_span_arg, sp, samples, n);
	}
}

static void session_maps_free(struct session *s)
{
	join_free(s->join);
	hashmap_free(&s->point_calls_before);
	hashmap_free(&s->point_hit_before);
}

/* Gives process pid, new in the target, the uprobes of every probe
 * attached now (probe_pids says why it needs its own). born_ns: when it
 * was created (CLOCK_MONOTONIC), for the delay. */
static void follow_process(struct session *s, pid_t pid, uint64_t born_ns)
{
	const struct profile *p = s->prof;
	size_t n = p->nprobes;
	uint32_t *ids = xcalloc(n + 1, sizeof(*ids));
	uint64_t *offs = xcalloc(n + 1, sizeof(*offs));
	bool *done = xcalloc(n + 1, sizeof(*done));
	char why[512];
	bool any = false, failed = false;
	for (size_t i = 0; i < n && i < SESSION_MAX_PROBES; i++) {
		if (!s->attached[i] || done[i])
			continue;
		any = true;
		if (p->probes[i].point >= 0) {
			const struct point_sites *ps = &s->point_sites[i];
			failed |= ps->n && engine_attach_point(s->eng, (uint32_t)i,
							       (uint32_t)p->probes[i].point,
							       p->probes[i].binary, ps->offsets, ps->n,
							       ps->fetch, pid, why, sizeof(why));
			done[i] = true;
			continue;
		}
		size_t k = 0; /* this binary's function probes: one batch */
		for (size_t j = i; j < n && j < SESSION_MAX_PROBES; j++)
			if (s->attached[j] && !done[j] && p->probes[j].point < 0 &&
			    strcmp(p->probes[j].binary, p->probes[i].binary) == 0) {
				ids[k] = (uint32_t)j;
				offs[k++] = p->probes[j].offset;
				done[j] = true;
			}
		/* Attached already: each keeps its fetch program. */
		struct engine_span_batch b = {ids, offs, NULL, k, p->probes[i].binary, pid};
		failed |= engine_attach_spans(s->eng, &b, why, sizeof(why)) != 0;
	}
	free(ids);
	free(offs);
	free(done);
	if (!any)
		return;
	if (failed) /* it exited meanwhile, most often */
		s->follow_failures++;
	grow_array((void **)&s->followed, &s->followed_cap, s->nfollowed + 1, sizeof(*s->followed));
	s->followed[s->nfollowed++] = pid;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	uint64_t delay = now > born_ns ? now - born_ns : 0;
	s->follows++;
	s->follow_delay_sum_ns += delay;
	if (delay > s->follow_delay_max_ns)
		s->follow_delay_max_ns = delay;
}

/* The uprobes of followed processes that exited go. */
static void forget_exited(struct session *s)
{
	size_t kept = 0;
	for (size_t i = 0; i < s->nfollowed; i++) {
		if (target_pid_alive(s->followed[i]))
			s->followed[kept++] = s->followed[i];
		else
			engine_forget_process(s->eng, s->followed[i]);
	}
	s->nfollowed = kept;
}

/* A fork record of a new process of the target: its probes now, unless
 * they are on every process already. */
static void follow_forks(struct session *s, const void *data, size_t size)
{
	const struct sonde_task_event *t = data;
	if (!s->eng || s->o->system_wide || s->o->no_children || s->o->exact_children ||
	    size < sizeof(*t) || t->hdr.kind != SONDE_REC_FORK)
		return;
	bool any = false;
	for (size_t i = 0; i < s->prof->nprobes && i < SESSION_MAX_PROBES && !any; i++)
		any = s->attached[i];
	pid_t child = (pid_t)t->child_pid;
	if (!any || procmaps_tgid(child) != child) /* a thread: its process has them */
		return;
	follow_process(s, child, t->hdr.time_ns);
}

static int handle_record(void *arg, const void *data, size_t size)
{
	struct session *s = arg;
	follow_forks(s, data, size);
	struct collector_added added;
	collector_handle(s->col, data, size, &added);
	if (s->join)
		join_added(s, &added);
	return 0;
}

void session_on_span(struct session *s, session_span_fn fn, void *arg)
{
	s->on_span = fn;
	s->on_span_arg = arg;
	if (fn && !s->join)
		s->join = join_new(SESSION_JOIN_LINKS);
}

/* --- probes ------------------------------------------------------------- */

static char *target_executable(const struct session_options *o)
{
	if (o->cmd)
		return probes_which(o->cmd[0]);
	if (o->npids > 0) {
		char path[PATH_MAX];
		if (procmaps_exe(o->pids[0], path, sizeof(path)))
			return NULL;
		/* Through /proc/PID/root when a containerized target's file is
		 * only there. */
		return procmaps_root_path(o->pids[0], path);
	}
	return NULL;
}

/* The name the executable goes by when it is not its file's: the command
 * as typed (redis-server, a symlink to redis-check-rdb), or the running
 * process's command name. */
static char *target_exe_alias(const struct session_options *o)
{
	if (o->cmd)
		return xstrdup(o->cmd[0]);
	char comm[64];
	if (o->npids > 0 && procmaps_comm(o->pids[0], comm, sizeof(comm)) == 0)
		return xstrdup(comm);
	return NULL;
}

/* The processes of the target that run now, whose maps a probe's library
 * is looked up in: the -p processes or the command once it runs, and their
 * descendants (found again: they change while a live session runs). None
 * before the command runs, and none system-wide. */
static int running_targets(struct session *s, pid_t **out)
{
	const struct session_options *o = s->o;
	*out = NULL;
	pid_t roots[SESSION_MAX_PIDS];
	int nroots = 0;
	if (o->cmd && s->cmd_running && !target_cmd_exited(&s->cmd))
		roots[nroots++] = s->cmd.pid;
	for (int i = 0; i < o->npids; i++)
		if (target_pid_alive(o->pids[i]))
			roots[nroots++] = o->pids[i];
	if (nroots == 0)
		return 0;
	pid_t *desc = NULL;
	int nd = o->no_children ? 0 : target_descendants(roots, nroots, &desc);
	pid_t *all = xmalloc((size_t)(nroots + nd) * sizeof(*all));
	memcpy(all, roots, (size_t)nroots * sizeof(*all));
	if (nd)
		memcpy(all + nroots, desc, (size_t)nd * sizeof(*all));
	free(desc);
	*out = all;
	return nroots + nd;
}

/* A probe is named by its function, or BINARY:FUNC when the name is taken. */
static char *probe_display_name(const struct profile *p, const struct probe_target *t)
{
	if (profile_probe_find(p, t->function) < 0)
		return xstrdup(t->function);
	const char *base = strrchr(t->binary, '/');
	return xasprintf("%s:%s", base ? base + 1 : t->binary, t->function);
}

/* The probe already on this function, or -1: two specs naming one function
 * (libc:getppid and getppid, or a glob and a name) share one probe, since
 * two uprobe pairs on one function would garble the thread's span stack. */
static int probe_at(const struct session *s, const struct probe_target *t)
{
	const struct profile *p = s->prof;
	for (size_t i = 0; i < p->nprobes && i < SESSION_MAX_PROBES; i++)
		if (p->probes[i].offset == t->offset && s->probe_dev[i] == t->dev &&
		    s->probe_ino[i] == t->ino)
			return (int)i;
	return -1;
}

/* True (with err) when a signal came while probes were being attached: the
 * session then ends without attaching more. */
static bool interrupted(const struct session *s, char *err, size_t errlen)
{
	if (!loop_signal_pending(s->loop))
		return false;
	errbuf_set(err, errlen, "interrupted by a signal while attaching probes");
	return true;
}

/* The processes a probe's uprobes go on (*pids, malloc'd; -1 alone:
 * every process). Returns how many, or -1 with err. */
static int probe_pids(struct session *s, pid_t **pids, char *err, size_t errlen)
{
	/* Where the uprobes go. The kernel-side target filter decides what is
	 * counted; the attachment decides which processes take the trap. A
	 * session's breakpoints are in its own processes only: one attachment
	 * per target process running now (with its descendants, unless
	 * --no-children); a process the targets create later gets its own
	 * when its fork record arrives (follow_process), and its calls before
	 * that are not seen (follows_* say how soon that was). The kernel
	 * cannot do better: a uprobe_multi link's PID filter takes one
	 * process, and perf events inherited by children drop their BPF
	 * program from the tracepoint when a child exits (Linux 6.18). -a and
	 * --exact-children put them on the file for every process: each that
	 * runs the code takes the trap, and a child counts from its first
	 * instruction. */
	*pids = NULL;
	if (s->o->system_wide || s->o->exact_children) {
		*pids = xmalloc(sizeof(**pids));
		(*pids)[0] = -1;
		return 1;
	}
	const struct session_options *o = s->o;
	pid_t roots[SESSION_MAX_PIDS + 1];
	int nroots = 0;
	if (o->cmd && !target_cmd_exited(&s->cmd)) /* also while held before its exec */
		roots[nroots++] = s->cmd.pid;
	for (int i = 0; i < o->npids; i++)
		if (target_pid_alive(o->pids[i]))
			roots[nroots++] = o->pids[i];
	if (nroots == 0) {
		errbuf_set(err, errlen, "every process of the target has exited");
		return -1;
	}
	pid_t *desc = NULL;
	int nd = o->no_children ? 0 : target_descendants(roots, nroots, &desc);
	*pids = xmalloc((size_t)(nroots + nd) * sizeof(**pids));
	memcpy(*pids, roots, (size_t)nroots * sizeof(**pids));
	if (nd)
		memcpy(*pids + nroots, desc, (size_t)nd * sizeof(**pids));
	free(desc);
	return nroots + nd;
}

/* Puts the uprobes of a batch of probes (its pid aside) on every process
 * probe_pids names: all or none, but for a process that exits meanwhile
 * (a target that runs once traced can be done before its second probe is
 * placed: the kernel then refuses it with "No such process"), which is
 * passed over as long as another process takes them. Returns 0, or -1 with
 * err and nothing of these probes left attached. */
static int attach_uprobes(struct session *s, const struct engine_span_batch *batch, char *err,
			  size_t errlen)
{
	pid_t *pids;
	int npids = probe_pids(s, &pids, err, errlen);
	if (npids < 0)
		return -1;
	int r = 0, placed = 0;
	for (int i = 0; i < npids && !r; i++) {
		struct engine_span_batch b = *batch;
		b.pid = pids[i];
		if (!engine_attach_spans(s->eng, &b, err, errlen))
			placed++;
		else if (target_pid_alive(pids[i]))
			r = -1;
	}
	if (!r && !placed) {
		errbuf_set(err, errlen, "every process of the target has exited");
		r = -1;
	}
	if (r)
		for (size_t k = 0; k < batch->n; k++)
			engine_discard_span(s->eng, batch->probes[k]);
	free(pids);
	return r;
}

/* A line probe (spec [BINARY:]FILE:LINE, written as `full` with its
 * captures): one probe, named by the spec, with a uprobe at each of its n
 * addresses, all or none, and with captures (plan, capture_prepare'd for
 * these addresses) a fetch program at each. Takes t. Returns its probe id,
 * or -1 with err. */
static int attach_line_spec(struct session *s, const char *full, const char *spec,
			    const struct capture_plan *plan, struct probe_target *t, int n,
			    int *count, char *err, size_t errlen)
{
	char why[512];
	int id = profile_probe_find(s->prof, spec);
	int r = -1;
	if (id >= 0 && s->prof->probes[id].point < 0) {
		errbuf_set(err, errlen, "trace %s: a function probe has that name", spec);
		goto out;
	}
	if (id >= 0 && s->attached[id] && plan->builds) {
		errbuf_set(err, errlen,
			   "trace %s: %s is traced already: untrace it first to change what it "
			   "captures",
			   full, spec);
		goto out;
	}
	if (id >= 0 && s->attached[id]) { /* traced already */
		r = id;
		goto done;
	}
	if (id < 0 && s->npoints >= SONDE_MAX_POINTS) {
		errbuf_set(err, errlen, "trace %s: a session traces at most %d lines", spec,
			   SONDE_MAX_POINTS);
		goto out;
	}
	if (id < 0 && s->prof->nprobes >= SESSION_MAX_PROBES) {
		errbuf_set(err, errlen, "trace %s: a session traces at most %d different probes",
			   spec, SESSION_MAX_PROBES);
		goto out;
	}
	uint32_t probe = id >= 0 ? (uint32_t)id : (uint32_t)s->prof->nprobes;
	int point = id >= 0 ? s->prof->probes[id].point : s->npoints;
	uint64_t *offs = xmalloc((size_t)n * sizeof(*offs));
	for (int i = 0; i < n; i++)
		offs[i] = t[i].offset;
	pid_t *pids;
	int npids = probe_pids(s, &pids, why, sizeof(why));
	int ok = npids > 0 && !interrupted(s, why, sizeof(why));
	for (int i = 0; ok && i < npids; i++)
		ok = engine_attach_point(s->eng, probe, (uint32_t)point, t[0].binary, offs,
					 (size_t)n, plan->n > 0, pids[i], why, sizeof(why)) == 0;
	free(pids);
	free(offs);
	if (!ok) {
		engine_discard_span(s->eng, probe);
		errbuf_set(err, errlen, "trace %s: %s", spec, why);
		goto out;
	}
	if (id < 0) {
		id = (int)profile_probe_add(s->prof, spec, t[0].binary, t[0].offset);
		s->prof->probes[id].point = s->npoints++;
		s->probe_dev[id] = t[0].dev;
		s->probe_ino[id] = t[0].ino;
	}
	s->attached[id] = true;
	struct point_sites *ps = &s->point_sites[id];
	free(ps->offsets);
	ps->offsets = xmalloc((size_t)n * sizeof(*ps->offsets));
	for (int i = 0; i < n; i++)
		ps->offsets[i] = t[i].offset;
	ps->n = (size_t)n;
	ps->fetch = plan->n > 0;
	r = id;
	if (capture_apply_points(plan, s->eng, s->prof, probe, why, sizeof(why)))
		notef(s->o, "trace %s: %s", spec, why);
	for (int i = 0; i < n && s->o->verbose; i++)
		notef(s->o, "%s: file offset 0x%llx in %s%s", spec, (unsigned long long)t[i].offset,
		      t[i].function, t[i].inlined ? " (inlined)" : "");
done:
	if (count)
		*count = n;
	err[0] = 0;
out:
	probes_free(t, n);
	return r;
}

/* Traces every function a spec names, all or none. Returns the probe id of
 * the first one (and their number in *count), with a note in err ("" if
 * none: functions a glob named that a probe would break), or -1 with err.
 * A function
 * already traced keeps its probe; one traced before and untraced gets its
 * probe id back; new ones get the next ids. */
/* A --trace/trace spec resolved: its probe targets and what they capture,
 * before anything is attached. */
struct resolved_spec {
	struct probe_target *t;
	int n;
	bool line;               /* a line probe: attach_line_spec */
	char *location;          /* the spec's location part */
	struct capture_plan plan; /* what each target captures (a line: each address) */
	bool planned;            /* plan holds something to free */
	char note[768];          /* what the spec named but left out */
};

static void resolved_spec_free(struct resolved_spec *r)
{
	if (r->t)
		probes_free(r->t, r->n);
	if (r->planned)
		capture_plan_free(&r->plan);
	free(r->location);
	memset(r, 0, sizeof(*r));
}

/* Resolves spec against the target as it is now. Returns 0, or -1 with err
 * ("trace SPEC: why") and nothing to free. */
static int resolve_spec(struct session *s, const char *spec, struct resolved_spec *r, char *err,
			size_t errlen)
{
	char why[512];
	memset(r, 0, sizeof(*r));
	pid_t *running;
	int nrunning = running_targets(s, &running);
	const char *names[1] = {s->exe_alias};
	/* A command not started yet gets sonde's environment: its loader reads
	 * LD_LIBRARY_PATH and LD_PRELOAD from there. */
	struct ldso_env env = {getenv("LD_LIBRARY_PATH"), getenv("LD_PRELOAD")};
	struct probe_scope scope = {.executable = s->executable,
				    .exe_names = names,
				    .nexe_names = s->exe_alias ? 1 : 0,
				    .pids = running,
				    .npids = nrunning,
				    .env = &env};
	/* "LOCATION [VAR...] [if EXPR]": the location names the probes; the
	 * rest, what they capture and when (capture.h). */
	const char *tail;
	r->location = xasprintf("%.*s", (int)capexpr_split_spec(spec, &tail), spec);
	r->n = probes_resolve(r->location, &scope, &r->t, r->note, sizeof(r->note), why, sizeof(why));
	free(running);
	if (r->n < 0) {
		errbuf_set(err, errlen, "trace %s: %s", spec, why);
		r->t = NULL;
		resolved_spec_free(r);
		return -1;
	}
	/* A line's addresses are one probe: their captures must agree. */
	r->line = r->n > 0 && r->t[0].line;
	if (capture_prepare(tail, r->t, r->n, r->line, &r->plan, why, sizeof(why))) {
		errbuf_set(err, errlen, "trace %s: %s", spec, why);
		resolved_spec_free(r);
		return -1;
	}
	r->planned = true;
	return 0;
}

/* A function spec's targets t[0..n-1] as probes: ids[i] is t[i]'s, fresh[i]
 * when it is not attached now, fetch[i] its program (NULL: none). */
struct spec_functions {
	const struct probe_target *t;
	int n;
	const int *ids;
	const bool *fresh;
	const struct sonde_fetch_prog *const *fetch;
};

/* The calls a probe counts are those of one predicate: a spec with
 * captures naming a function traced now is refused (a second program would
 * change mid-run which calls count), and so is one that traces again, with
 * another predicate, a function traced before (its counts go on). Returns
 * 0, or -1 with err. */
static int refuse_other_predicate(struct session *s, const char *spec,
				  const struct capture_plan *plan, const struct spec_functions *f,
				  char *err, size_t errlen)
{
	const char *want = plan->spec.pred_text;
	for (int i = 0; i < f->n; i++) {
		if (f->ids[i] >= (int)s->prof->nprobes)
			continue; /* new */
		const struct probe_info *pi = &s->prof->probes[f->ids[i]];
		if (!f->fresh[i] && plan->builds) {
			errbuf_set(err, errlen,
				   "trace %s: %s is traced already: untrace it first to change what it "
				   "captures",
				   spec, pi->name);
			return -1;
		}
		const char *had = pi->predicate;
		if (f->fresh[i] && (want || had) && (!want || !had || strcmp(want, had) != 0)) {
			if (had)
				errbuf_set(err, errlen,
					   "trace %s: %s was traced with 'if %s' in this session and "
					   "its counts go on: trace it with that predicate again",
					   spec, pi->name, had);
			else
				errbuf_set(err, errlen,
					   "trace %s: %s was traced without a predicate in this "
					   "session and its counts go on: trace it without one again",
					   spec, pi->name);
			return -1;
		}
	}
	return 0;
}

/* Attaches the fresh probes of f, a binary at a time: each binary's are
 * one batch (engine_attach_spans: one uprobe_multi link for all). Returns
 * 0, or -1 with err and none of them left attached. */
static int attach_functions(struct session *s, const char *spec, const struct spec_functions *f,
			    char *err, size_t errlen)
{
	char why[512];
	int n = f->n, attached = 0;
	uint32_t *batch = xcalloc((size_t)n + 1, sizeof(*batch));
	uint64_t *offsets = xcalloc((size_t)n + 1, sizeof(*offsets));
	const struct sonde_fetch_prog **fetch = xcalloc((size_t)n + 1, sizeof(*fetch));
	bool *done = xcalloc((size_t)n + 1, sizeof(*done));
	for (int i = 0; i < n; i++)
		done[i] = !f->fresh[i];
	for (; attached < n; attached++) {
		if (done[attached])
			continue;
		if (interrupted(s, why, sizeof(why))) {
			errbuf_set(err, errlen, "trace %s: %s", spec, why);
			break;
		}
		/* One link a uprobe: a function at a time, so that a signal
		 * stops the attach between two of them. */
		size_t k = 0, most = engine_uprobe_multi(s->eng) ? (size_t)n : 1;
		const char *binary = f->t[attached].binary;
		for (int j = attached; j < n && k < most; j++) {
			if (!done[j] && strcmp(f->t[j].binary, binary) == 0) {
				batch[k] = (uint32_t)f->ids[j];
				fetch[k] = f->fetch[j];
				offsets[k++] = f->t[j].offset;
				done[j] = true; /* a failed batch is taken back whole */
			}
		}
		struct engine_span_batch b = {batch, offsets, fetch, k, binary, -1};
		if (attach_uprobes(s, &b, why, sizeof(why))) {
			errbuf_set(err, errlen, "trace %s: %s", spec, why);
			break;
		}
	}
	if (attached < n) /* take back what this spec attached */
		for (int i = 0; i < n; i++)
			if (f->fresh[i] && done[i])
				engine_discard_span(s->eng, (uint32_t)f->ids[i]);
	free(batch);
	free(offsets);
	free(fetch);
	free(done);
	return attached < n ? -1 : 0;
}

/* Attaches a resolved spec (taking what r holds). Returns the first probe
 * id, or -1 with err (and nothing of the spec attached); on success err
 * holds the spec's note, if any. */
static int attach_resolved(struct session *s, const char *spec, struct resolved_spec *r,
			   int *count, char *err, size_t errlen)
{
	if (r->line) {
		int id = attach_line_spec(s, spec, r->location, &r->plan, r->t, r->n, count, err,
					  errlen);
		r->t = NULL; /* taken */
		resolved_spec_free(r);
		return id;
	}
	struct probe_target *t = r->t;
	int n = r->n;
	struct capture_plan plan = r->plan;
	char note[768];
	snprintf(note, sizeof(note), "%s", r->note);
	free(r->location);
	memset(r, 0, sizeof(*r));
	/* Each function's probe id, and which of them need attaching: counted
	 * before anything is attached, so a pattern naming more functions than
	 * the kernel has room for is refused at once. */
	int *ids = xmalloc((size_t)n * sizeof(*ids));
	bool *fresh = xcalloc((size_t)n, sizeof(*fresh));
	int need = 0, nnew = 0;
	for (int i = 0; i < n; i++) {
		ids[i] = probe_at(s, &t[i]);
		if (ids[i] < 0)
			ids[i] = (int)s->prof->nprobes + nnew++;
		fresh[i] = ids[i] >= (int)s->prof->nprobes || !s->attached[ids[i]];
		need += fresh[i];
	}
	int avail = engine_probes_available(s->eng);
	int first = -1;
	if (need > avail) {
		errbuf_set(err, errlen,
			   "trace %s: names %d function%s to add, more than sonde can trace at once "
			   "(%d at most, %d traced now): narrow the pattern or untrace some",
			   spec, need, need == 1 ? "" : "s", ENGINE_USER_PROBES,
			   ENGINE_USER_PROBES - avail);
		goto out;
	}
	if (s->prof->nprobes + (size_t)nnew > SESSION_MAX_PROBES) {
		errbuf_set(err, errlen,
			   "trace %s: names %d new function%s, but a session traces at most %d "
			   "different functions (%zu so far)",
			   spec, nnew, nnew == 1 ? "" : "s", SESSION_MAX_PROBES, s->prof->nprobes);
		goto out;
	}
	struct spec_functions fns = {t, n, ids, fresh, NULL};
	if (refuse_other_predicate(s, spec, &plan, &fns, err, errlen))
		goto out;
	/* Each new probe's program goes in with it. */
	struct sonde_fetch_prog *progs = xcalloc((size_t)n + 1, sizeof(*progs));
	const struct sonde_fetch_prog **fetch = xcalloc((size_t)n + 1, sizeof(*fetch));
	for (int i = 0; i < n; i++)
		if (fresh[i] && capture_program(&plan, i, s->prof, (uint32_t)ids[i], &progs[i]))
			fetch[i] = &progs[i];
	fns.fetch = fetch;
	int rc = attach_functions(s, spec, &fns, err, errlen);
	free(progs);
	free(fetch);
	if (rc)
		goto out;
	for (int i = 0; i < n; i++) {
		if (ids[i] >= (int)s->prof->nprobes) { /* new: in id order */
			char *name = probe_display_name(s->prof, &t[i]);
			profile_probe_add(s->prof, name, t[i].binary, t[i].offset);
			free(name);
			s->probe_dev[ids[i]] = t[i].dev;
			s->probe_ino[ids[i]] = t[i].ino;
		}
		s->attached[ids[i]] = true;
		if (fresh[i]) { /* its captures named; its kernel slot starts with no policy */
			capture_name(&plan, i, s->prof, (uint32_t)ids[i]);
			s->policy_sent[ids[i]] = false;
			s->prof->probes[ids[i]].all_calls = s->o->all_calls;
			update_span_policy(s, (uint32_t)ids[i]);
		}
	}
	int nmoved = 0;
	for (int i = 0; i < n; i++)
		nmoved += t[i].moved != NULL;
	for (int i = 0; i < n && (nmoved == 1 || s->o->verbose); i++)
		if (t[i].moved)
			notef(s->o, "trace %s: the entry probe of %s is %s", spec, t[i].function,
			      t[i].moved);
	if (nmoved > 1 && !s->o->verbose)
		notef(s->o,
		      "trace %s: the entry probes of %d functions are placed past first "
		      "instructions the kernel's uprobes cannot step (AVX code; -v says which)",
		      spec, nmoved);
	for (int i = 0; i < n && s->o->verbose; i++) {
		if (!t[i].ifunc_impl)
			continue;
		char who[64] = "sonde's own process (the same file, CPU and environment)";
		if (t[i].ifunc_asked)
			snprintf(who, sizeof(who), "PID %d", (int)t[i].ifunc_asked);
		notef(s->o, "%s is an IFUNC in %s: tracing %s, the implementation %s uses",
		      t[i].function, t[i].binary, t[i].ifunc_impl, who);
	}
	first = ids[0];
	if (count)
		*count = n;
	errbuf_set(err, errlen, "%s", note); /* what the spec named but left out */
out:
	free(ids);
	free(fresh);
	capture_plan_free(&plan);
	probes_free(t, n);
	return first;
}

static int attach_probe_spec(struct session *s, const char *spec, int *count, char *err,
			     size_t errlen)
{
	struct resolved_spec r;
	if (resolve_spec(s, spec, &r, err, errlen))
		return -1;
	return attach_resolved(s, spec, &r, count, err, errlen);
}

int session_trace(struct session *s, const char *spec, int *count, char *err, size_t errlen)
{
	if (session_refuse_replay(s, err, errlen))
		return -1;
	return attach_probe_spec(s, spec, count, err, errlen);
}

/* Probes a name selects: a probe's display name, or its function name,
 * matched exactly or as a glob. */
static bool probe_selected(const struct probe_info *pi, const char *pattern)
{
	const char *func = pi->name;
	int colon = probes_split(pi->name);
	if (colon >= 0)
		func = pi->name + colon + 1;
	return fnmatch(pattern, pi->name, 0) == 0 || fnmatch(pattern, func, 0) == 0;
}

int session_untrace(struct session *s, const char *pattern, char *err, size_t errlen)
{
	if (session_refuse_replay(s, err, errlen))
		return -1;
	int n = 0;
	for (size_t i = 0; i < s->prof->nprobes; i++) {
		if (!s->attached[i] || !probe_selected(&s->prof->probes[i], pattern))
			continue;
		if ((int)i == s->sample_in_probe || (int)i == s->sample_slow_probe ||
		    (int)i == s->sample_when_probe) {
			errbuf_set(err, errlen,
				   "%s drives the in-kernel sampling filter: run sample-in off, "
				   "sample-slow off or sample-when off first",
				   s->prof->probes[i].name);
			return -1;
		}
	}
	for (size_t i = 0; i < s->prof->nprobes; i++) {
		if (!s->attached[i] || !probe_selected(&s->prof->probes[i], pattern))
			continue;
		/* Keep what it counted: detaching clears the kernel's copy. */
		refresh_probe(s, (uint32_t)i);
		struct probe_counts *c = &s->counted_before[i];
		memcpy(c->hist, s->prof->probes[i].hist, sizeof(c->hist));
		c->entered = s->prof->probes[i].entered;
		c->raw_ns = s->prof->probes[i].raw_ns;
		c->own_ns = s->prof->probes[i].own_ns;
		keep_point_calls(s, (uint32_t)i);
		engine_detach_span(s->eng, (uint32_t)i);
		s->attached[i] = false;
		n++;
	}
	if (n == 0) {
		char list[256] = "";
		size_t off = 0;
		for (size_t i = 0; i < s->prof->nprobes && off < sizeof(list) - 1; i++)
			if (s->attached[i])
				off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
							off ? ", " : "", s->prof->probes[i].name);
		errbuf_set(err, errlen, "no traced function matches '%s' (traced: %s)", pattern,
			   off ? list : "none");
		return -1;
	}
	return n;
}

bool session_probe_attached(const struct session *s, uint32_t probe)
{
	return probe < SESSION_MAX_PROBES && s->attached[probe];
}

/* The profile's figures of a probe: what earlier attachments counted plus
 * the kernel's counts of the current one. */
static void refresh_probe(struct session *s, uint32_t probe)
{
	if (probe >= s->prof->nprobes)
		return;
	struct probe_info *pi = &s->prof->probes[probe];
	const struct probe_counts *c = &s->counted_before[probe];
	uint64_t live[SONDE_HIST_BUCKETS] = {0};
	struct sonde_probe_stats st = {0};
	if (s->attached[probe] &&
	    (engine_read_hist(s->eng, probe, live) || engine_read_probe_stats(s->eng, probe, &st)))
		return; /* keep the last figures read */
	for (unsigned b = 0; b < SONDE_HIST_BUCKETS; b++)
		pi->hist[b] = c->hist[b] + live[b];
	pi->entered = c->entered + st.entered;
	pi->raw_ns = c->raw_ns + st.raw_ns;
	pi->own_ns = c->own_ns + st.own_ns;
	if (pi->point >= 0)
		refresh_point_calls(s, probe);
}

/* The calls of each function probe that hit line probe `point`: what
 * earlier attachments of the pair counted plus the kernel's count. */
static void refresh_point_calls(struct session *s, uint32_t point)
{
	for (size_t f = 0; f < s->prof->nprobes; f++) {
		if (s->prof->probes[f].point >= 0)
			continue;
		uint64_t key = (uint64_t)point << 32 | f, calls = 0, hit = 0;
		struct sonde_point_calls live = {0};
		hashmap_get(&s->point_calls_before, key, &calls);
		hashmap_get(&s->point_hit_before, key, &hit);
		if (s->attached[point] && s->attached[f] &&
		    engine_read_point_calls(s->eng, (uint32_t)f, point, &live))
			continue; /* keep the last figure read */
		if (calls + live.calls)
			profile_point_calls_set(s->prof, point, (uint32_t)f, calls + live.calls,
						hit + live.hit);
	}
}

/* Before a probe is detached (the kernel forgets its pairs): keeps what
 * its pairs with line probes counted. */
static void keep_point_calls(struct session *s, uint32_t probe)
{
	for (size_t i = 0; i < s->prof->nprobes; i++)
		if (s->prof->probes[i].point >= 0)
			refresh_point_calls(s, (uint32_t)i);
	for (size_t i = 0; i < s->prof->npoint_calls; i++) {
		const struct point_calls *pc = &s->prof->point_calls[i];
		if (pc->point_probe == probe || pc->probe == probe) {
			uint64_t key = (uint64_t)pc->point_probe << 32 | pc->probe;
			hashmap_set(&s->point_calls_before, key, pc->calls);
			hashmap_set(&s->point_hit_before, key, pc->hit);
		}
	}
}

/* Calls that need no record stay in the kernel (counted in its histogram):
 * only those a sample landed in and those over the keep threshold cross.
 * The automatic threshold is the p99 so far, once 1000 calls gave one. */
#define KEEP_AUTO_MIN_CALLS 1000
#define KEEP_AUTO_PERCENTILE 99.0

static void update_span_policy(struct session *s, uint32_t probe)
{
	if (probe >= s->prof->nprobes || !s->attached[probe])
		return;
	struct engine_span_policy pol = {.emit_all = s->o->all_calls};
	if (s->keep_over_set[probe]) {
		pol.emit_min_ns = s->keep_over_ns[probe];
	} else {
		size_t n;
		uint64_t *d = latency_loglin_durations(s->prof->probes[probe].hist, 1u << 16, &n, NULL);
		pol.emit_min_ns = n >= KEEP_AUTO_MIN_CALLS
					  ? latency_percentile(d, n, KEEP_AUTO_PERCENTILE)
					  : UINT64_MAX;
		free(d);
	}
	if (s->policy_sent[probe] && pol.emit_min_ns == s->emit_min_in_force[probe])
		return;
	if (engine_set_span_policy(s->eng, probe, &pol) == 0) {
		s->emit_min_in_force[probe] = pol.emit_min_ns;
		s->policy_sent[probe] = true;
	}
}

int session_keep_calls_over(struct session *s, uint32_t probe, uint64_t ns)
{
	if (probe >= SESSION_MAX_PROBES)
		return -1;
	s->keep_over_ns[probe] = ns;
	s->keep_over_set[probe] = true;
	update_span_policy(s, probe);
	return 0;
}

void session_refresh_calls(struct session *s)
{
	for (size_t i = 0; i < s->prof->nprobes; i++) {
		refresh_probe(s, (uint32_t)i);
		update_span_policy(s, (uint32_t)i);
	}
}

int session_probe_hist(struct session *s, uint32_t probe, uint64_t *buckets)
{
	if (probe >= s->prof->nprobes)
		return -1;
	refresh_probe(s, probe);
	memcpy(buckets, s->prof->probes[probe].hist, sizeof(s->prof->probes[probe].hist));
	return 0;
}

uint64_t session_probe_entered(struct session *s, uint32_t probe)
{
	if (probe >= s->prof->nprobes)
		return 0;
	refresh_probe(s, probe);
	return s->prof->probes[probe].entered;
}

int session_probe_hists(struct session *s, uint64_t (*out)[SONDE_HIST_BUCKETS])
{
	size_t n = s->prof->nprobes;
	if (!s->eng) /* a replay: the recording's counts */
		memset(out, 0, n * sizeof(*out));
	else if (engine_read_hists(s->eng, (uint32_t)n, out))
		return -1;
	/* Detached probes: the kernel's slots are cleared; what they counted
	 * before is kept. */
	for (size_t i = 0; i < n; i++)
		for (unsigned b = 0; b < SONDE_HIST_BUCKETS; b++)
			out[i][b] = (s->attached[i] ? out[i][b] : 0) + s->counted_before[i].hist[b];
	return 0;
}

/* The probe a sample-in / sample-slow names (one function), traced now if it
 * is not yet. */
static int probe_for_function(struct session *s, const char *func, char *err, size_t errlen)
{
	int n = 0;
	int id = attach_probe_spec(s, func, &n, err, errlen);
	if (id >= 0 && n != 1) {
		errbuf_set(err, errlen, "'%s' names %d functions: the in-kernel sampling filter takes one",
			   func, n);
		return -1;
	}
	return id;
}

static int push_sampler_filter(struct session *s, char *err, size_t errlen)
{
	if (engine_set_sampler_filter(s->eng, s->sample_in_probe, s->sample_slow_probe,
				      s->sample_slow_ns)) {
		errbuf_set(err, errlen, "cannot set the in-kernel sampling filter: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int session_set_sample_in(struct session *s, const char *func, char *err, size_t errlen)
{
	if (session_refuse_replay(s, err, errlen))
		return -1;
	int probe = -1;
	if (func && (probe = probe_for_function(s, func, err, errlen)) < 0)
		return -1;
	int old = s->sample_in_probe;
	s->sample_in_probe = probe;
	if (push_sampler_filter(s, err, errlen)) {
		s->sample_in_probe = old;
		return -1;
	}
	return 0;
}

int session_set_sample_slow(struct session *s, const char *func, uint64_t ns, char *err,
			    size_t errlen)
{
	if (session_refuse_replay(s, err, errlen))
		return -1;
	int probe = -1;
	if (func && (probe = probe_for_function(s, func, err, errlen)) < 0)
		return -1;
	int old = s->sample_slow_probe;
	uint64_t old_ns = s->sample_slow_ns;
	s->sample_slow_probe = probe;
	s->sample_slow_ns = func ? ns : 0;
	if (push_sampler_filter(s, err, errlen)) {
		s->sample_slow_probe = old;
		s->sample_slow_ns = old_ns;
		return -1;
	}
	return 0;
}

int session_set_sample_when(struct session *s, const char *line, char *err, size_t errlen)
{
	int probe = -1;
	if (line) {
		int n = 0;
		char why[512];
		probe = attach_probe_spec(s, line, &n, why, sizeof(why));
		if (probe < 0) {
			errbuf_set(err, errlen, "%s", why);
			return -1;
		}
		if (s->prof->probes[probe].point < 0) {
			errbuf_set(err, errlen,
				   "%s is a function: sample-when takes a line (FILE:LINE); for "
				   "samples inside a function's calls use sample-in",
				   line);
			return -1;
		}
	}
	if (engine_set_sample_when(s->eng, probe)) {
		errbuf_set(err, errlen, "cannot set the in-kernel sampling filter: %s", strerror(errno));
		return -1;
	}
	s->sample_when_probe = probe;
	return 0;
}

static int setup_sampling_decisions(struct session *s, char *err, size_t errlen)
{
	char why[512];
	if (s->o->sample_when && session_set_sample_when(s, s->o->sample_when, why, sizeof(why))) {
		errbuf_set(err, errlen, "--sample-when: %s", why);
		return -1;
	}
	if (s->o->sample_in && session_set_sample_in(s, s->o->sample_in, why, sizeof(why))) {
		errbuf_set(err, errlen, "--sample-in: %s", why);
		return -1;
	}
	if (s->o->sample_slow) {
		int colon = probes_split(s->o->sample_slow);
		if (colon <= 0) {
			errbuf_set(err, errlen, "--sample-slow needs FUNC:DURATION (e.g. handle_request:5ms)");
			return -1;
		}
		uint64_t ns;
		char *func = strndup(s->o->sample_slow, (size_t)colon);
		if (duration_parse(s->o->sample_slow + colon + 1, &ns, why, sizeof(why))) {
			errbuf_set(err, errlen, "--sample-slow %s: %s", s->o->sample_slow, why);
			free(func);
			return -1;
		}
		int r = session_set_sample_slow(s, func, ns, why, sizeof(why));
		free(func);
		if (r) {
			errbuf_set(err, errlen, "--sample-slow: %s", why);
			return -1;
		}
	}
	return 0;
}

int session_set_offcpu(struct session *s, bool on, char *err, size_t errlen)
{
	if (engine_set_offcpu(s->eng, on, s->o->min_block_ns, err, errlen))
		return -1;
	if (on)
		collector_set_event(s->col, ENGINE_EVENT_OFFCPU, PROFILE_EVENT_OFFCPU, 1);
	s->o->off_cpu = on || s->o->off_cpu; /* the recording holds intervals */
	return 0;
}

int session_set_threads(struct session *s, bool on, uint64_t hz, char *err, size_t errlen)
{
	if (on && !hz)
		hz = SESSION_THREADS_HZ;
	if (engine_set_threads(s->eng, on ? hz : 0, err, errlen))
		return -1;
	collector_keep_last_stacks(s->col, on);
	if (on) { /* the recording holds thread states (and says at what rate) */
		s->o->threads = true;
		s->o->threads_hz = hz;
	}
	return 0;
}

int session_set_sampling(struct session *s, const char *event, uint64_t freq, uint64_t period,
			 char *err, size_t errlen)
{
	if (session_refuse_replay(s, err, errlen))
		return -1;
	struct event_spec ev;
	if (event && events_parse(event, &ev, err, errlen))
		return -1;
	if (event && !ev.time_based && !period && !freq)
		period = 1;
	/* Samples of the old event still in the ring buffer keep its label. */
	while (engine_poll(s->eng, 0) > 0)
		;
	if (engine_set_sampling(s->eng, event ? &ev : NULL, period ? 0 : freq, period, err,
				errlen))
		return -1;
	if (!event) {
		s->o->no_sampling = true;
		return 0;
	}
	collector_set_event(s->col, 0, ev.name, 1);
	free(s->event_name);
	s->event_name = xstrdup(event);
	s->o->event = s->event_name;
	s->o->freq = period ? s->o->freq : freq;
	s->o->period = period;
	s->o->no_sampling = false;
	return 0;
}

/* --- start, run, finish ---------------------------------------------------- */

/* Whether the session traces calls (now, or later: a live one), whose
 * durations the calibration corrects. */
static bool traces_calls(const struct session_options *o)
{
	return o->ntraces > 0 || o->sample_in || o->sample_slow || o->live;
}

/* Whether the calibration measures what a sample costs too. */
static bool calibrates_samples(const struct session_options *o)
{
	return !o->no_sampling || o->live;
}

/* Measures what sonde's probes and samples cost that BPF cannot time, so
 * call durations are corrected for it (see calibrate.h). Only needed where
 * calls are traced; a failure leaves the correction to what BPF timed. */
static void calibrate_session(struct session *s)
{
	const struct session_options *o = s->o;
	if (!traces_calls(o))
		return;
	char err[256];
	uint64_t t0 = monotonic_ns();
	/* Said once the probes are attached: a command that fails on a bad
	 * probe says only why. */
	if (calibrate_run(s->eng, calibrates_samples(o), &s->calib, err, sizeof(err)))
		snprintf(s->calib_warning, sizeof(s->calib_warning),
			 "warning: cannot calibrate sonde's own cost (%s): call durations are "
			 "corrected only by what its BPF programs timed",
			 err);
	s->calib_ms = (double)(monotonic_ns() - t0) / 1e6;
	if (o->verbose) {
		char line[1024];
		size_t off = (size_t)snprintf(line, sizeof(line),
					      "calibrated in %.0f ms: a sample costs %.0f ns (%.0f ns timed)",
					      s->calib_ms, s->calib.sample_full_ns,
					      s->calib.sample_handler_ns);
		for (int c = 0; c < INSN_CLASSES && off < sizeof(line); c++)
			off += (size_t)snprintf(line + off, sizeof(line) - off,
						"; a call probed at a %s instruction %.0f ns (%.0f timed, %llu inside)",
						engine_insn_class_name((enum engine_insn_class)c),
						s->calib.class_full_ns[c], s->calib.class_handler_ns[c],
						(unsigned long long)s->calib.classes[c].self_unseen_ns);
		notef(o, "%s", line);
	}
}

/* -p NAME: every process of that name becomes a -p PID, listed in a note. */
static int find_named_processes(struct session_options *o, char *err, size_t errlen)
{
	if (!o->pid_of)
		return 0;
	pid_t *found;
	int n = target_find_by_name(o->pid_of, &found);
	if (n == 0) {
		errbuf_set(err, errlen,
			   "no process named %s (no running process has that command name or "
			   "executable)",
			   o->pid_of);
		return -1;
	}
	if (n > SESSION_MAX_PIDS) {
		errbuf_set(err, errlen,
			   "%d processes are named %s, more than sonde attaches to at once (%d): give "
			   "their PIDs or a parent's with -p",
			   n, o->pid_of, SESSION_MAX_PIDS);
		free(found);
		return -1;
	}
	memcpy(o->pids, found, (size_t)n * sizeof(*found));
	o->npids = n;
	char list[1024];
	size_t off = 0;
	list[0] = 0;
	for (int i = 0; i < n && off < sizeof(list); i++) {
		int w = snprintf(list + off, sizeof(list) - off, " %d", (int)found[i]);
		off = w < 0 ? sizeof(list) : off + (size_t)w;
	}
	notef(o, "attaching to %d process%s named %s:%s", n, n == 1 ? "" : "es", o->pid_of, list);
	free(found);
	return 0;
}

/* -p: the processes' existing descendants are targets too (the ones they
 * create from now on are followed in the kernel). Walked again until no new
 * one appears, so a child forked by a descendant while it was being added
 * is not missed. Descendants past SESSION_MAX_PIDS are targets but do not
 * count for "all -p processes have exited". */
static int add_descendants(struct session *s, char *err, size_t errlen)
{
	struct session_options *o = s->o;
	o->nroot_pids = o->npids;
	if (o->no_children || o->npids == 0)
		return 0;
	pid_t *added = NULL;
	size_t nadded = 0, cap = 0;
	for (bool again = true; again;) {
		again = false;
		pid_t *d;
		int n = target_descendants(o->pids, o->nroot_pids, &d);
		for (int i = 0; i < n; i++) {
			bool seen = false;
			for (size_t k = 0; k < nadded && !seen; k++)
				seen = added[k] == d[i];
			if (seen)
				continue;
			if (engine_add_pid(s->eng, d[i], err, errlen)) {
				free(d);
				free(added);
				return -1;
			}
			symbols_note_process(s->syms, d[i]);
			grow_array((void **)&added, &cap, nadded + 1, sizeof(*added));
			added[nadded++] = d[i];
			if (o->npids < SESSION_MAX_PIDS)
				o->pids[o->npids++] = d[i];
			again = true;
		}
		free(d);
	}
	free(added);
	return 0;
}

/* --- the event loop ---------------------------------------------------------- */

/* Tells on_end (or stops the loop) when there is a new reason to end. */
static void check_end(struct session *s)
{
	enum session_end_reason why = session_end_reason(s);
	if (why == SESSION_RUNNING || why == s->notified || (s->ended && why != SESSION_SIGNALLED))
		return;
	s->notified = why;
	if (s->on_end)
		s->on_end(s, s->on_end_arg, why);
	else
		loop_stop(s->loop);
}

/* Every wake: take in what waits in the ring buffer, then see whether the
 * run should end. */
static void on_wake(void *arg)
{
	struct session *s = arg;
	if (!s->ended && !s->ring_failed && engine_poll(s->eng, 0) < 0) {
		s->ring_failed = true;
		loop_fail(s->loop, "reading the BPF ring buffer failed: %s", strerror(errno));
		return;
	}
	check_end(s);
}

/* The BPF side wakes the reader only for samples and bursts of calls: wake
 * at least 10 times a second to take calls in. */
static void on_wake_timer(void *arg)
{
	struct session *s = arg;
	if (!s->ended)
		loop_timer_in(s->loop, s->wake_timer, 0.1);
}

static void on_end_timer(void *arg)
{
	check_end(arg);
}

static void on_signal(void *arg)
{
	struct session *s = arg;
	s->signalled = true;
	check_end(s);
}

static int setup_loop(struct session *s, char *err, size_t errlen)
{
	if (loop_add_fd(s->loop, engine_ring_fd(s->eng), NULL, NULL, err, errlen))
		return -1;
	loop_on_wake(s->loop, on_wake, s);
	s->wake_timer = loop_timer_new(s->loop, on_wake_timer, s);
	loop_timer_in(s->loop, s->wake_timer, 0.1);
	s->end_timer = -1;
	if (s->o->duration > 0) {
		s->end_timer = loop_timer_new(s->loop, on_end_timer, s);
		/* A microsecond late, so that session_end_reason (in seconds, a
		 * double) agrees the time is up. */
		loop_timer_at(s->loop, s->end_timer,
			      (uint64_t)((s->start_mono + s->o->duration) * 1e9) + 1000);
	}
	return 0;
}

struct loop *session_loop(struct session *s)
{
	return s->loop;
}

void session_on_end(struct session *s, session_end_fn fn, void *arg)
{
	s->on_end = fn;
	s->on_end_arg = arg;
}

/* --- start ----------------------------------------------------------------------- */

/* --ready-file: an old file is removed first, before anything can fail (a
 * script must not take one left by an earlier run for this one's), and the
 * place is checked now, so a run does not fail only once it is set up. */
static int ready_file_prepare(const struct session_options *o, char *err, size_t errlen)
{
	if (!o->ready_file)
		return 0;
	char why[1024];
	if (outfile_check_regular(o->ready_file, "the ready file", why, sizeof(why))) {
		errbuf_set(err, errlen, "--ready-file: %s", why);
		return -1;
	}
	if (unlink(o->ready_file) && errno != ENOENT) {
		errbuf_set(err, errlen, "--ready-file %s: cannot remove the old file: %s",
			   o->ready_file, strerror(errno));
		return -1;
	}
	return 0;
}

int session_ready(struct session *s, char *err, size_t errlen)
{
	if (s->ready)
		return 0;
	s->ready = true;
	if (!s->o->ready_file)
		return 0;
	char pid[32], why[1024];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (outfile_write_regular(s->o->ready_file, "the ready file", pid, (size_t)n, why,
				  sizeof(why))) {
		errbuf_set(err, errlen, "--ready-file: %s", why);
		return -1;
	}
	return 0;
}

struct session *session_start(struct session_options *o, int argc, char **argv, char *err,
			      size_t errlen)
{
	char why[1024];
	struct engine_options eo = {0};
	struct resolved_spec resolved[SESSION_MAX_TRACES];
	int nresolved = 0;
	double setup_mono = now_s(CLOCK_MONOTONIC);
	if (ready_file_prepare(o, err, errlen) || events_parse(o->event, &eo.event, err, errlen))
		return NULL;
	if (!eo.event.time_based && !o->period && !o->freq_given)
		o->period = 1; /* count events, not time: every occurrence by default */
	if (find_named_processes(o, err, errlen))
		return NULL;
	for (int i = 0; i < o->npids; i++) {
		if (!target_pid_alive(o->pids[i])) {
			errbuf_set(err, errlen, "no process with PID %d (it does not exist or has exited)",
				   (int)o->pids[i]);
			return NULL;
		}
	}
	struct session *s = xcalloc(1, sizeof(*s));
	s->counted_before = xcalloc(SESSION_MAX_PROBES, sizeof(*s->counted_before));
	s->o = o;
	s->setup_mono = setup_mono;
	s->sample_in_probe = s->sample_slow_probe = s->sample_when_probe = -1;
	s->argc = argc;
	s->argv = argv;
	s->prof = profile_new();
	s->syms = symbols_new();
	s->col = collector_new(s->prof, s->syms);
	collector_keep_last_stacks(s->col, o->threads);
	collector_set_event(s->col, 0, eo.event.name, 1);
	if (o->off_cpu)
		collector_set_event(s->col, ENGINE_EVENT_OFFCPU, PROFILE_EVENT_OFFCPU, 1);
	if (o->wakers)
		collector_set_event(s->col, ENGINE_EVENT_WAKER, PROFILE_EVENT_WAKER, 1);
	s->executable = target_executable(o);
	s->exe_alias = target_exe_alias(o);
	eo.freq = o->period ? 0 : o->freq;
	eo.period = o->period;
	eo.system_wide = o->system_wide;
	eo.no_sampler = o->no_sampling;
	eo.fixed = !o->live;
	eo.calibrate_samples = calibrates_samples(o);
	eo.no_spans = !traces_calls(o) && !o->sample_when; /* a line probe's program too */
	eo.ringbuf_bytes = o->ringbuf_mb << 20;
	eo.verbose = o->verbose;
	eo.no_children = o->no_children;
	eo.unwind = o->unwind;
	eo.off_cpu = o->off_cpu || o->wakers;
	eo.wakers = o->wakers;
	eo.offcpu_min_ns = o->min_block_ns;
	eo.tstate_freq = o->threads ? (o->threads_hz ? o->threads_hz : o->freq) : 0;
	/* A pass walks every slot of the map: room for the targets' threads,
	 * or for a whole machine's. */
	eo.tstate_threads = o->system_wide ? SESSION_THREADS_ALL : SESSION_THREADS_TARGETS;
	eo.on_record = handle_record;
	eo.arg = s;

	if (o->cmd && !s->executable) {
		errbuf_set(err, errlen, "%s: command not found (check the name and PATH)", o->cmd[0]);
		goto fail;
	}
	if (o->cmd && target_spawn(o->cmd, o->cmd_output, &s->cmd, err, errlen))
		goto fail;
	/* Every --trace is resolved before the BPF programs are loaded and
	 * calibrated: a bad spec is said at once, not after seconds of start. */
	for (int i = 0; i < o->ntraces; i++) {
		if (resolve_spec(s, o->traces[i], &resolved[i], why, sizeof(why))) {
			errbuf_set(err, errlen, "--%s", why); /* "--trace SPEC: why" */
			goto fail;
		}
		nresolved = i + 1;
	}
	/* A line probe's program only where a line is traced. */
	eo.no_points = !o->sample_when;
	for (int i = 0; i < nresolved; i++)
		eo.no_points = eo.no_points && !resolved[i].line;
	/* Signals are caught from before the first probe is attached until the
	 * last is removed (session_free): one whose default action ends the
	 * process, arriving while the kernel attaches or removes a uprobe,
	 * leaves it half-done (engine/uprobes.h). One that comes while probes
	 * are attached stops the attaching. */
	s->loop = loop_new(err, errlen);
	if (!s->loop || loop_catch_signals(s->loop, on_signal, s, err, errlen))
		goto fail;
	s->eng = engine_open(&eo, err, errlen);
	if (!s->eng)
		goto fail;
	if (o->cmd && engine_add_pid(s->eng, s->cmd.pid, err, errlen))
		goto fail;
	if (o->cmd)
		engine_unwind_preload(s->eng, s->executable);
	for (int i = 0; i < o->npids; i++) {
		if (engine_add_pid(s->eng, o->pids[i], err, errlen))
			goto fail;
		symbols_note_process(s->syms, o->pids[i]);
	}
	if (add_descendants(s, err, errlen))
		goto fail;
	if (!interrupted(s, err, errlen))
		calibrate_session(s);
	for (int i = 0; i < o->ntraces; i++) {
		int n = 0;
		s->trace_first_probe[i] = attach_resolved(s, o->traces[i], &resolved[i], &n, why,
							  sizeof(why));
		if (s->trace_first_probe[i] < 0) {
			/* "--trace FUNC: why", as the option was given */
			errbuf_set(err, errlen, "--%s", why);
			goto fail;
		}
		s->trace_probe_count[i] = n;
		if (*why)
			notef(o, "--trace %s: %s", o->traces[i], why);
	}
	if (interrupted(s, err, errlen) || setup_sampling_decisions(s, err, errlen))
		goto fail;
	if (s->calib_warning[0])
		notef(o, "%s", s->calib_warning);
	if (engine_start(s->eng, err, errlen))
		goto fail;
	s->start_mono = now_s(CLOCK_MONOTONIC);
	s->start_wall = now_s(CLOCK_REALTIME);
	if (setup_loop(s, err, errlen))
		goto fail;
	if (!o->hold_cmd && session_release_cmd(s, err, errlen))
		goto fail;
	return s;
fail:
	for (int i = 0; i < nresolved; i++)
		resolved_spec_free(&resolved[i]);
	session_free(s);
	return NULL;
}

int session_release_cmd(struct session *s, char *err, size_t errlen)
{
	if (!s->o->cmd || s->cmd_running)
		return 0;
	char why[512];
	if (target_release(&s->cmd, why, sizeof(why)))
		return errbuf_set(err, errlen, "%s: %s", s->o->cmd[0], why);
	s->cmd_running = true;
	symbols_note_process(s->syms, s->cmd.pid);
	return 0;
}

static bool any_pid_alive(const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		if (target_pid_alive(pids[i]))
			return true;
	return false;
}

enum session_end_reason session_end_reason(struct session *s)
{
	if (s->signalled)
		return SESSION_SIGNALLED;
	if (s->o->duration > 0 && now_s(CLOCK_MONOTONIC) - s->start_mono >= s->o->duration)
		return SESSION_DURATION;
	if (s->o->cmd && target_cmd_exited(&s->cmd))
		return SESSION_TARGETS_EXITED;
	if (s->o->npids && !any_pid_alive(s->o->pids, s->o->npids))
		return SESSION_TARGETS_EXITED;
	return SESSION_RUNNING;
}

bool session_ended(const struct session *s)
{
	return s->ended;
}

struct open_span_ctx {
	struct collector *col;
	uint64_t end_ns;
};

static void add_open_span(void *arg, uint32_t tid, uint32_t probe, uint64_t span_id,
			  uint64_t parent_id, uint64_t start_ns, uint32_t depth, uint64_t own_ns)
{
	struct open_span_ctx *c = arg;
	collector_add_open_span(c->col, tid, probe, span_id, parent_id, start_ns, depth, c->end_ns,
				own_ns);
}

static void set_meta_u64(struct profile *p, const char *key, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	profile_meta_set(p, key, buf);
}

static void set_meta_double(struct profile *p, const char *key, double v)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%.6f", v);
	profile_meta_set(p, key, buf);
}

static void add_metadata(struct session *s, double end_mono)
{
	struct profile *p = s->prof;
	const struct session_options *o = s->o;
	char buf[4096];
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < s->argc && off < sizeof(buf) - 1; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? " " : "", s->argv[i]);
	profile_meta_set(p, "command_line", buf);
	profile_meta_set(p, "event", o->no_sampling ? "none" : o->event);
	set_meta_u64(p, "frequency_hz", o->no_sampling || o->period ? 0 : o->freq);
	set_meta_u64(p, "period", o->period);
	struct utsname u;
	if (uname(&u) == 0) {
		snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
		profile_meta_set(p, "kernel", buf);
		profile_meta_set(p, "hostname", u.nodename);
	}
	set_meta_u64(p, "start_ns", (uint64_t)(s->start_mono * 1e9));
	set_meta_u64(p, "end_ns", (uint64_t)(end_mono * 1e9));
	set_meta_double(p, "duration_s", end_mono - s->start_mono);
	set_meta_double(p, "setup_s", s->start_mono - s->setup_mono);
	set_meta_double(p, "start_unix_s", s->start_wall);
	struct engine_stats es;
	struct collector_stats cs;
	engine_get_stats(s->eng, &es);
	collector_get_stats(s->col, &cs);
	for (int k = 0; k < SONDE_CNT_NUM; k++)
		set_meta_u64(p, drops_key((enum sonde_counter)k), es.count[k]);
	profile_meta_set(p, "unwind", session_unwind_name(o->unwind));
	/* Earlier recordings timed every call of a probe with a predicate. */
	set_meta_u64(p, "predicates_select_calls", 1);
	set_meta_u64(p, "off_cpu", engine_offcpu_on(s->eng) || o->off_cpu);
	if (engine_offcpu_on(s->eng) || o->off_cpu) {
		set_meta_u64(p, "min_block_ns", o->min_block_ns);
		set_meta_u64(p, "offcpu_cut_at_end", s->offcpu_cut);
	}
	set_meta_u64(p, "records_after_end", cs.after_end);
	set_meta_u64(p, "wakers", o->wakers);
	if (o->threads) {
		set_meta_u64(p, "thread_states_hz", o->threads_hz ? o->threads_hz : o->freq);
		set_meta_u64(p, "thread_state_passes", cs.thread_passes);
		set_meta_u64(p, "thread_state_samples", cs.thread_samples);
		set_meta_u64(p, "thread_state_pass_ns", cs.thread_pass_ns);
		set_meta_u64(p, "thread_stacks", cs.thread_stacks);
		set_meta_u64(p, "thread_stacks_missing", cs.thread_stacks_missing);
	}
	struct unwind_stats us;
	engine_unwind_stats(s->eng, &us);
	set_meta_u64(p, "unwind_tables_loaded", us.tables_loaded);
	set_meta_u64(p, "unwind_over_budget", us.over_budget);
	set_meta_u64(p, "unwind_miss_reloads", us.miss_reloads);
	set_meta_u64(p, "sample_bytes", cs.sample_bytes);
	set_meta_u64(p, "stack_errors", cs.stack_errors);
	set_meta_u64(p, "broken_stacks", cs.broken_stacks);
	set_meta_u64(p, "broken_stack_frames", cs.broken_stack_frames);
	struct symbols_stats ss;
	symbols_get_stats(s->syms, &ss);
	set_meta_u64(p, "jit_frames", ss.jit_frames);
	set_meta_u64(p, "jit_map_lines", ss.jit_map_lines);
	set_meta_u64(p, "jit_map_bad_lines", ss.jit_map_bad_lines);
	set_meta_u64(p, "jit_map_skipped_bytes", ss.jit_map_skipped_bytes);
	set_meta_u64(p, "pending_dropped", s->join ? join_dropped(s->join) : 0);
	set_meta_u64(p, "followed_processes", s->follows);
	set_meta_u64(p, "follow_failures", s->follow_failures);
	set_meta_u64(p, "follow_delay_max_ns", s->follow_delay_max_ns);
	set_meta_u64(p, "follow_delay_mean_ns", s->follows ? s->follow_delay_sum_ns / s->follows : 0);
	set_meta_u64(p, "exact_children", o->exact_children);
	/* sonde's own cost: what calibration found BPF cannot time, and the
	 * samples that landed in sonde's own machinery. */
	set_meta_u64(p, "calib_call_unseen_ns", s->calib.classes[INSN_PUSH].call_unseen_ns);
	set_meta_u64(p, "calib_self_unseen_ns", s->calib.classes[INSN_PUSH].self_unseen_ns);
	set_meta_u64(p, "calib_sstep_self_unseen_ns", s->calib.classes[INSN_SSTEP].self_unseen_ns);
	set_meta_double(p, "calib_sstep_full_ns", s->calib.class_full_ns[INSN_SSTEP]);
	set_meta_u64(p, "calib_sample_unseen_ns", s->calib.calib.sample_unseen_ns);
	set_meta_u64(p, "calib_sample_late_cap_ns", s->calib.calib.late_cap_ns);
	set_meta_double(p, "calib_sample_late_ns", s->calib.sample_late_ns);
	set_meta_double(p, "calib_sample_exit_ns", s->calib.sample_exit_ns);
	set_meta_u64(p, "calib_sample_exit_cap_ns", s->calib.calib.exit_cap_ns);
	/* What the run's samples were charged, measured as they were taken
	 * (beside the calibration's figures: bench/README.md compares them). */
	struct engine_sample_charges ch;
	engine_sample_charges(s->eng, &ch);
	set_meta_u64(p, "sample_charges", ch.samples);
	set_meta_double(p, "sample_charged_late_ns", ch.samples ? (double)ch.late_ns / (double)ch.samples : 0);
	set_meta_double(p, "sample_charged_run_ns", ch.samples ? (double)ch.run_ns / (double)ch.samples : 0);
	set_meta_u64(p, "sample_exits_charged", ch.exits);
	set_meta_double(p, "sample_charged_exit_ns", ch.exits ? (double)ch.exit_ns / (double)ch.exits : 0);
	set_meta_double(p, "calib_call_full_ns", s->calib.call_full_ns);
	set_meta_double(p, "calib_sample_full_ns", s->calib.sample_full_ns);
	set_meta_double(p, "calib_ms", s->calib_ms);
	set_meta_u64(p, "overhead_samples", cs.overhead_samples);
	profile_meta_set(p, "target",
			 o->system_wide ? "system-wide" : o->cmd ? "command" : "pids");
	if (o->sample_in)
		profile_meta_set(p, "sample_in", o->sample_in);
	if (o->sample_slow)
		profile_meta_set(p, "sample_slow", o->sample_slow);
}

void session_end(struct session *s)
{
	if (s->ended)
		return;
	s->ended = true;
	s->end_mono = now_s(CLOCK_MONOTONIC);
	/* The end, as the metadata says it: off-CPU intervals stop there at
	 * once (threads still away would send theirs as long as they sleep
	 * on), and nothing taken after it counts. */
	uint64_t end_ns = (uint64_t)(s->end_mono * 1e9);
	engine_end_offcpu(s->eng, end_ns);
	collector_set_end(s->col, end_ns);
	/* What still arrives is drained below, not by the loop. */
	if (s->loop) {
		loop_remove_fd(s->loop, engine_ring_fd(s->eng));
		loop_timer_cancel(s->loop, s->wake_timer);
		loop_timer_cancel(s->loop, s->end_timer);
	}
	engine_stop(s->eng);
	engine_pause_spans(s->eng);
	/* Drain until the buffer stays empty: handlers that began before the
	 * pause may still be submitting. Only then are the counts final. */
	for (int quiet = 0; quiet < 2;) {
		if (engine_poll(s->eng, 0) > 0) {
			quiet = 0;
			continue;
		}
		quiet++;
		usleep(2000);
	}
	s->offcpu_cut = engine_cut_offcpu(s->eng);
	struct open_span_ctx ctx = {s->col, end_ns};
	engine_for_each_open_span(s->eng, add_open_span, &ctx);
	for (size_t i = 0; i < s->prof->nprobes; i++)
		refresh_probe(s, (uint32_t)i);
	/* Every call is in: what samples cost the calls beyond what was
	 * measured, read from the calls without one (owncost.h). */
	owncost_correct_all(s->prof);
	add_metadata(s, s->end_mono);
}

struct recording_image *session_recording(struct session *s, char *err, size_t errlen)
{
	struct profile *p = s->prof;
	if (s->replay_path) /* as it was read, metadata included */
		return recording_build(p, err, errlen);
	if (!s->ended) /* what already reached the ring buffer belongs in it */
		while (engine_poll(s->eng, 0) > 0)
			;
	/* The recording holds every call counted so far: the kernel's live
	 * histograms plus what untraced probes gathered before. */
	if (!s->ended)
		for (size_t i = 0; i < p->nprobes; i++)
			refresh_probe(s, (uint32_t)i);
	add_metadata(s, s->ended ? s->end_mono : now_s(CLOCK_MONOTONIC));
	/* Say in the file how many of the calls the kernel counted have no
	 * record in it: those that did not need one (no sample, not slow),
	 * and those a live session no longer holds. */
	uint64_t counted = 0, kept_calls = 0;
	for (size_t i = 0; i < p->nprobes; i++)
		for (unsigned b = 0; b < SONDE_HIST_BUCKETS; b++)
			counted += p->probes[i].hist[b];
	for (size_t i = 0; i < p->nspans; i++)
		kept_calls += !p->spans[i].open;
	set_meta_u64(p, "calls_not_kept", counted > kept_calls ? counted - kept_calls : 0);
	return recording_build(p, err, errlen);
}

double session_start_time(const struct session *s)
{
	return s->start_mono;
}

double session_end_time(const struct session *s)
{
	return s->ended ? s->end_mono : 0;
}

const char *session_replay_path(const struct session *s)
{
	return s->replay_path;
}

static void on_replay_wake(void *arg)
{
	check_end(arg); /* a signal ends the run */
}

/* A recording's time: its metadata, else its samples' span; the end is
 * never before its last sample or call. */
static void replay_times(const struct profile *p, double *start_s, double *end_s)
{
	const char *a = profile_meta_get(p, "start_ns"), *b = profile_meta_get(p, "end_ns");
	uint64_t lo = a ? strtoull(a, NULL, 10) : UINT64_MAX, hi = b ? strtoull(b, NULL, 10) : 0;
	for (size_t i = 0; i < p->nsamples && (!a || !b); i++) {
		uint64_t t = p->samples[i].time_ns;
		if (!a && t < lo)
			lo = t;
		if (!b && t > hi)
			hi = t;
	}
	/* Records drained after the end was taken may end a little later. */
	for (size_t i = 0; i < p->nsamples; i++)
		if (p->samples[i].time_ns > hi)
			hi = p->samples[i].time_ns;
	for (size_t i = 0; i < p->nspans; i++)
		if (!p->spans[i].open && span_end_ns(&p->spans[i]) > hi)
			hi = span_end_ns(&p->spans[i]);
	if (lo == UINT64_MAX)
		lo = hi;
	*start_s = (double)lo / 1e9;
	*end_s = (double)(hi > lo ? hi : lo) / 1e9;
}

struct session *session_replay(struct profile *p, const char *path, struct session_options *o,
			       char *err, size_t errlen)
{
	if (ready_file_prepare(o, err, errlen))
		return NULL;
	struct session *s = xcalloc(1, sizeof(*s));
	s->counted_before = xcalloc(SESSION_MAX_PROBES, sizeof(*s->counted_before));
	s->o = o;
	s->prof = p;
	s->replay_path = xstrdup(path);
	s->sample_in_probe = s->sample_slow_probe = -1;
	s->wake_timer = s->end_timer = -1;
	s->loop = loop_new(err, errlen);
	if (!s->loop || loop_catch_signals(s->loop, on_signal, s, err, errlen)) {
		s->prof = NULL; /* the caller keeps it on failure */
		session_free(s);
		return NULL;
	}
	loop_on_wake(s->loop, on_replay_wake, s);
	for (size_t i = 0; i < p->nprobes && i < SESSION_MAX_PROBES; i++) {
		struct probe_counts *c = &s->counted_before[i];
		memcpy(c->hist, p->probes[i].hist, sizeof(c->hist));
		c->entered = p->probes[i].entered;
		c->raw_ns = p->probes[i].raw_ns;
		c->own_ns = p->probes[i].own_ns;
	}
	replay_times(p, &s->start_mono, &s->end_mono);
	s->ended = true;
	return s;
}

const struct session_options *session_options(const struct session *s)
{
	return s->o;
}

pid_t session_command_pid(const struct session *s)
{
	return s->o->cmd ? s->cmd.pid : 0;
}

void session_get_stats(struct session *s, struct engine_stats *es, struct collector_stats *cs)
{
	if (s->replay_path) {
		/* A replay: the drops the recording's metadata counted. */
		memset(es, 0, sizeof(*es));
		memset(cs, 0, sizeof(*cs));
		for (int k = 0; k < SONDE_CNT_NUM; k++) {
			const char *v = profile_meta_get(s->prof, drops_key((enum sonde_counter)k));
			es->count[k] = v ? strtoull(v, NULL, 10) : 0;
		}
		cs->samples = s->prof->nsamples;
		return;
	}
	engine_get_stats(s->eng, es);
	collector_get_stats(s->col, cs);
}

/* Once a second (more often until every probe has its p99): the kernel's
 * counts into the profile, and the keep thresholds they give. */
static void session_tick(void *arg)
{
	struct session *s = arg;
	double now = now_s(CLOCK_MONOTONIC);
	if (now < s->next_refresh_s)
		return;
	forget_exited(s);
	session_refresh_calls(s);
	/* Until every probe has its p99, every call crosses: look again soon. */
	bool settled = true;
	for (size_t i = 0; i < s->prof->nprobes; i++)
		if (s->attached[i] && !s->keep_over_set[i] && !s->o->all_calls &&
		    s->emit_min_in_force[i] == UINT64_MAX)
			settled = false;
	s->next_refresh_s = now + (settled ? 1.0 : 0.05);
}

int session_run(struct session *s, char *err, size_t errlen)
{
	loop_on_wake(s->loop, session_tick, s);
	int rc = session_ready(s, err, errlen);
	if (rc == 0)
		rc = loop_run(s->loop, err, errlen);
	session_end(s);
	return rc;
}

int session_trace_probes(const struct session *s, int i, int *count)
{
	if (i < 0 || i >= s->o->ntraces)
		return -1;
	*count = s->trace_probe_count[i];
	return s->trace_first_probe[i];
}

struct profile *session_profile(struct session *s)
{
	return s->prof;
}

void session_print_summary(struct session *s, const char *what, FILE *out)
{
	if (s->replay_path) {
		char shown[1024];
		(void)what; /* nothing was gathered: it was read */
		fprintf(out, "sonde: served %zu samples, %zu traced calls with a record (from %s)\n",
			s->prof->nsamples, s->prof->nspans,
			printable_copy(shown, sizeof(shown), s->replay_path));
		return;
	}
	struct engine_stats es;
	struct collector_stats cs;
	engine_get_stats(s->eng, &es);
	collector_get_stats(s->col, &cs);
	char shown[1024]; /* `what` names the output file */
	fprintf(out, "sonde: %s %llu samples", printable_copy(shown, sizeof(shown), what),
		(unsigned long long)(cs.samples - cs.offcpu_intervals - cs.wakers));
	if (s->prof->nprobes) {
		uint64_t calls = 0;
		for (size_t i = 0; i < s->prof->nprobes; i++)
			calls += profile_probe_calls(s->prof, (uint32_t)i);
		fprintf(out, ", %llu traced calls (%llu still running at the end; %llu kept with a record)",
			(unsigned long long)calls, (unsigned long long)cs.open_spans,
			(unsigned long long)cs.spans);
	}
	/* -d counts from when sampling is on: say what came before it. */
	fprintf(out, " in %.2f s (after %.2f s of set-up)", s->end_mono - s->start_mono,
		s->start_mono - s->setup_mono);
	char list[512];
	if (drops_sum(&es, DROPS_LOST, false))
		fprintf(out, "; lost %s (ring buffer full: try --buffer-mb or a lower -F)",
			drops_list(&es, DROPS_LOST, list, sizeof(list)));
	if (s->o->all_calls && s->prof->nprobes) {
		/* Every completed call sends a record: records received plus
		 * records lost must be the kernel's count. Say so if not. */
		uint64_t completed = 0, received = 0;
		for (size_t i = 0; i < s->prof->nprobes; i++)
			for (unsigned b = 0; b < SONDE_HIST_BUCKETS; b++)
				completed += s->prof->probes[i].hist[b];
		for (size_t i = 0; i < s->prof->nspans; i++)
			received += !s->prof->spans[i].open;
		if (completed != received + es.lost_spans)
			fprintf(out, "; the kernel counted %llu completed calls but %llu records "
					"arrived and %llu were lost",
				(unsigned long long)completed, (unsigned long long)received,
				(unsigned long long)es.lost_spans);
	}
	if (drops_sum(&es, DROPS_CHILDREN, false))
		fprintf(out, "; %s", drops_list(&es, DROPS_CHILDREN, list, sizeof(list)));
	if (s->follows)
		fprintf(out,
			"; %llu new process%s got probes %.2f ms after starting (mean; at most %.2f "
			"ms%s): calls before then not counted (--exact-children counts them)",
			(unsigned long long)s->follows, s->follows == 1 ? "" : "es",
			(double)s->follow_delay_sum_ns / (double)s->follows / 1e6,
			(double)s->follow_delay_max_ns / 1e6,
			s->follow_failures ? ", some had exited" : "");
	if (s->o->off_cpu || drops_sum(&es, DROPS_OFFCPU, false)) {
		char wakers[64] = "";
		if (s->o->wakers)
			snprintf(wakers, sizeof(wakers), " (%llu with their waker)",
				 (unsigned long long)cs.wakers);
		fprintf(out,
			"; off-CPU intervals: %llu kept%s, %llu of them still going at the end "
			"(cut there), %s",
			(unsigned long long)cs.offcpu_intervals, wakers,
			(unsigned long long)s->offcpu_cut,
			drops_list(&es, DROPS_OFFCPU, list, sizeof(list)));
	}
	if (s->o->threads)
		fprintf(out, "; thread states: %llu in %llu passes (%.1f us a pass), %llu stacks%s",
			(unsigned long long)cs.thread_samples, (unsigned long long)cs.thread_passes,
			cs.thread_passes ? (double)cs.thread_pass_ns / (double)cs.thread_passes / 1e3 : 0.0,
			(unsigned long long)cs.thread_stacks,
			cs.thread_stacks_missing ? " (some rows' stacks lost: see lost thread states)"
						 : "");
	uint64_t join_drops = s->join ? join_dropped(s->join) : 0;
	if (drops_sum(&es, DROPS_UNTIMED, false) || join_drops)
		fprintf(out, "; untimed: %s; %llu samples not joined live",
			drops_list(&es, DROPS_UNTIMED, list, sizeof(list)),
			(unsigned long long)join_drops);
	if (drops_sum(&es, DROPS_VALUES, false))
		fprintf(out, "; %s (shown as read errors)",
			drops_list(&es, DROPS_VALUES, list, sizeof(list)));
	struct symbols_stats ss;
	symbols_get_stats(s->syms, &ss);
	if (ss.jit_map_bad_lines)
		fprintf(out, "; perf maps: %llu bad lines skipped (not START SIZE NAME)",
			(unsigned long long)ss.jit_map_bad_lines);
	if (ss.jit_map_skipped_bytes)
		fprintf(out, "; perf maps: %llu bytes past the first %llu MiB not read",
			(unsigned long long)ss.jit_map_skipped_bytes,
			(unsigned long long)(PERFMAP_MAX_BYTES >> 20));
	fputc('\n', out);
	if (s->o->cmd && target_cmd_exited(&s->cmd) && WIFEXITED(s->cmd.wait_status) &&
	    WEXITSTATUS(s->cmd.wait_status) != 0)
		fprintf(out, "sonde: note: the command exited with status %d\n",
			WEXITSTATUS(s->cmd.wait_status));
}

void session_free(struct session *s)
{
	if (!s)
		return;
	/* sonde started it and the run ended first (-d, Ctrl-C or an error):
	 * stop it rather than leave it running unobserved. */
	if (s->o->cmd && s->cmd.pid > 0 && !s->cmd.exited)
		target_cmd_kill(&s->cmd);
	/* The probes go while signals are still caught (see session_start). */
	engine_close(s->eng);
	loop_free(s->loop);
	collector_free(s->col);
	symbols_free(s->syms);
	profile_free(s->prof);
	session_maps_free(s);
	free(s->executable);
	free(s->exe_alias);
	free(s->counted_before);
	free(s->event_name);
	free(s->replay_path);
	for (size_t i = 0; i < SESSION_MAX_PROBES; i++)
		free(s->point_sites[i].offsets);
	free(s->followed);
	free(s);
}
