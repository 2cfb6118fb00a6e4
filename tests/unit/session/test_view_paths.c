/* One recording through the offline path (formats_load, query, view,
 * viewtree_flame: what report and flame do) and through the live session's
 * (live.c: its windows, view and filter commands, live_view_build: what top
 * and ctl show) gives identical flame trees, node for node, for every view:
 * all, in, slow and fast with percentile, auto and absolute thresholds, and
 * pid, tid and comm filters; while the session runs and after it ended,
 * with samples in calls still running and in calls whose record was lost.
 * The calls too: `by VAR` (report --by) and the latest slow calls count the
 * same calls both ways (view_takes_call), with the same filters.
 *
 * The live session runs on a stand-in for the session (below, through
 * livesource.h's interface): the recording plays the profile a running
 * session fills, and the kernel's histograms
 * are the recording's. Nothing here needs BPF. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flame.h"
#include "dwarfvar.h"
#include "engine.h"
#include "formats.h"
#include "live.h"
#include "query.h"
#include "recording.h"
#include "session.h"
#include "util.h"
#include "valuereport.h"
#include "values.h"
#include "view.h"
#include "viewtree.h"

/* ---- a session that replays a recording ------------------------------------ */

struct session {
	struct profile *p;
	struct session_options o;
	bool ended;
	double start_s;
};

static struct profile *replayed_profile(struct session *s) { return s->p; }
static const struct session_options *replayed_options(const struct session *s) { return &s->o; }
static double replayed_start_time(const struct session *s) { return s->start_s; }
static bool replayed_ended(const struct session *s) { return s->ended; }
/* It plays a running session (then an ended one), not session_replay's. */
static const char *replayed_replay_path(const struct session *s) { (void)s; return NULL; }
static double replayed_end_time(const struct session *s) { (void)s; return 0; }
static bool replayed_refuse_replay(const struct session *s, char *err, size_t errlen)
{
	(void)s, (void)err, (void)errlen;
	return false;
}
static pid_t replayed_command_pid(const struct session *s) { (void)s; return 0; }
static bool replayed_probe_attached(const struct session *s, uint32_t probe)
{
	return probe < s->p->nprobes;
}
/* A recording's probes: placed by no spec this run knows. */
static const char *replayed_probe_spec(const struct session *s, uint32_t probe)
{
	(void)s, (void)probe;
	return NULL;
}
static int replayed_keep_calls_over(struct session *s, uint32_t probe, uint64_t ns)
{
	(void)s, (void)probe, (void)ns;
	return 0;
}
static int replayed_probe_hist(struct session *s, uint32_t probe, uint64_t *buckets)
{
	memcpy(buckets, s->p->probes[probe].hist, sizeof(s->p->probes[probe].hist));
	return 0;
}
static int replayed_probe_hists(struct session *s, uint64_t (*out)[LATENCY_LOGLIN_BUCKETS])
{
	for (size_t i = 0; i < s->p->nprobes; i++)
		replayed_probe_hist(s, (uint32_t)i, out[i]);
	return 0;
}
static uint64_t replayed_probe_entered(struct session *s, uint32_t probe)
{
	return s->p->probes[probe].entered;
}
static void replayed_get_stats(struct session *s, struct engine_stats *es, struct collector_stats *cs)
{
	(void)s;
	memset(es, 0, sizeof(*es));
	memset(cs, 0, sizeof(*cs));
}
static int refuse(char *err, size_t errlen)
{
	snprintf(err, errlen, "a replayed recording gathers nothing");
	return -1;
}
static struct recording_image *replayed_recording(struct session *s, char *err, size_t errlen)
{
	(void)s;
	refuse(err, errlen);
	return NULL;
}
static int replayed_trace(struct session *s, const char *spec, int *count, char *err, size_t errlen)
{
	(void)s, (void)spec, (void)count;
	return refuse(err, errlen);
}
static int replayed_untrace(struct session *s, const char *pattern, char *err, size_t errlen)
{
	(void)s, (void)pattern;
	return refuse(err, errlen);
}
static int replayed_set_sampling(struct session *s, const char *event, uint64_t freq, uint64_t period,
			 char *err, size_t errlen)
{
	(void)s, (void)event, (void)freq, (void)period;
	return refuse(err, errlen);
}
static int replayed_set_offcpu(struct session *s, bool on, char *err, size_t errlen)
{
	(void)s, (void)on;
	return refuse(err, errlen);
}
static int replayed_set_threads(struct session *s, bool on, uint64_t hz, char *err, size_t errlen)
{
	(void)s, (void)on, (void)hz;
	return refuse(err, errlen);
}
static int replayed_set_sample_in(struct session *s, const char *func, char *err, size_t errlen)
{
	(void)s, (void)func;
	return refuse(err, errlen);
}
static int replayed_set_sample_slow(struct session *s, const char *func, uint64_t ns, char *err,
			    size_t errlen)
{
	(void)s, (void)func, (void)ns;
	return refuse(err, errlen);
}
static int replayed_set_sample_when(struct session *s, const char *line, char *err, size_t errlen)
{
	(void)s, (void)line;
	return refuse(err, errlen);
}

/* The stand-in, as live_new takes a session. */
static const struct livesource_ops replayed = {
	.profile = replayed_profile,
	.options = replayed_options,
	.start_time = replayed_start_time,
	.ended = replayed_ended,
	.replay_path = replayed_replay_path,
	.end_time = replayed_end_time,
	.refuse_replay = replayed_refuse_replay,
	.command_pid = replayed_command_pid,
	.probe_attached = replayed_probe_attached,
	.probe_spec = replayed_probe_spec,
	.keep_calls_over = replayed_keep_calls_over,
	.probe_hist = replayed_probe_hist,
	.probe_hists = replayed_probe_hists,
	.probe_entered = replayed_probe_entered,
	.get_stats = replayed_get_stats,
	.recording = replayed_recording,
	.trace = replayed_trace,
	.untrace = replayed_untrace,
	.set_sampling = replayed_set_sampling,
	.set_offcpu = replayed_set_offcpu,
	.set_threads = replayed_set_threads,
	.set_sample_in = replayed_set_sample_in,
	.set_sample_slow = replayed_set_sample_slow,
	.set_sample_when = replayed_set_sample_when,
};

/* ---- the recording ---------------------------------------------------------- */

#define US 1000ull
#define MS 1000000ull
#define NCALLS 200

enum extra {
	PLAIN = 0,
	WITH_LOST = 1, /* a call whose record was lost, with samples in it */
	WITH_OPEN = 2, /* a call still running at the end, with samples in it */
};

/* Two processes: srv (pid 100: threads srv 100 and worker 101) and other
 * (pid 200). NCALLS calls of `work`, over 6 s ending ~2 s ago: every 20th a
 * slow one (12 ms, in slow_path), the others 1.0-1.45 ms (in parse,
 * spread so that a threshold's place within a histogram bucket matters); call i
 * has i % 4 samples in it (a record each: samples landed in them) and every
 * slow call has a record. Idle samples between the calls, on srv; one
 * sample in sonde's own machinery. The kernel's histogram counts every call
 * that ended. Each call captured n = i % 3 at its entry. */
static char *write_recording(const char *dir, uint64_t base, int extra)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	uint32_t fmain = frames_intern(p->frames, "main", "/bin/t", "t.c", 10, FRAME_USER);
	uint32_t fwork = frames_intern(p->frames, "work", "/bin/t", "t.c", 20, FRAME_USER);
	uint32_t fparse = frames_intern(p->frames, "parse", "/bin/t", "t.c", 30, FRAME_USER);
	uint32_t fslow = frames_intern(p->frames, "slow_path", "/bin/t", "t.c", 40, FRAME_USER);
	uint32_t fidle = frames_intern(p->frames, "idle_loop", "/bin/t", "t.c", 50, FRAME_USER);
	uint32_t fown = frames_intern(p->frames, "[sonde]", "", "", 0, FRAME_OVERHEAD);
	uint32_t st_parse = profile_stack_intern(p, (uint32_t[]){fmain, fwork, fparse}, 3);
	uint32_t st_work = profile_stack_intern(p, (uint32_t[]){fmain, fwork}, 2);
	uint32_t st_slow = profile_stack_intern(p, (uint32_t[]){fmain, fwork, fslow}, 3);
	uint32_t st_idle = profile_stack_intern(p, (uint32_t[]){fmain, fidle}, 2);
	uint32_t st_own = profile_stack_intern(p, (uint32_t[]){fmain, fwork, fslow, fown}, 4);
	uint32_t threads[3] = {profile_thread_intern(p, 100, 100, "srv"),
			       profile_thread_intern(p, 100, 101, "worker"),
			       profile_thread_intern(p, 200, 200, "other")};
	cr_assert_eq(profile_probe_add(p, "work", "/bin/t", 0x1000), 0);
	uint32_t cap_n = values_capture_intern(p, &(struct probe_capture){.name = "n", .type = "int",
									  .kind = CAPTURE_SIGNED});
	values_set_probe(p, 0, &cap_n, 1, NULL);
	uint64_t id = 0;
	for (int i = 0; i < NCALLS + (extra ? 1 : 0); i++) {
		bool slow = i % 20 == 7;
		bool last = i == NCALLS;
		uint32_t th = threads[i < 180 ? i % 2 : 2];
		struct span sp = {.id = ++id, .start_ns = base + (uint64_t)i * 30 * MS,
				  .duration_ns = slow ? 12 * MS + (uint64_t)i * US
						      : 1 * MS + (uint64_t)(i * 7919 % 450) * US,
				  .probe = 0, .thread = th, .depth = 1};
		sp.raw_duration_ns = sp.duration_ns;
		int nsamples = last ? 3 : i % 4;
		if (last && extra == WITH_OPEN) {
			sp.open = true;
			sp.duration_ns = sp.raw_duration_ns = 20 * MS; /* elapsed at the end */
		}
		bool record = last ? extra == WITH_OPEN : slow || nsamples > 0;
		if (record)
			cr_assert_geq(profile_span_add(p, &sp), 0);
		if (!sp.open)
			p->probes[0].hist[latency_loglin_bucket(sp.duration_ns)]++;
		struct probe_hit hit = {.time_ns = sp.start_ns, .span_id = sp.id, .probe = 0,
					.thread = th};
		struct hit_value val = {.capture = cap_n, .status = CAPTURE_OK,
					.num = (uint64_t)(i % 3)};
		values_add_hit(p, &hit, &val, 1);
		struct span_link link = {sp.id, 0};
		for (int k = 0; k < nsamples; k++) {
			struct sample s = {.time_ns = sp.start_ns + (uint64_t)(k + 1) * 200 * US,
					   .weight = 1, .thread = th,
					   .stack = slow || last ? st_slow : k % 2 ? st_work : st_parse};
			cr_assert_eq(profile_add_sample(p, &s, &link, 1), 0);
		}
		if (slow && i == 47) {
			struct sample s = {.time_ns = sp.start_ns + 5 * MS, .weight = 1, .thread = th,
					   .stack = st_own};
			cr_assert_eq(profile_add_sample(p, &s, &link, 1), 0);
		}
		struct sample idle = {.time_ns = sp.start_ns + 20 * MS, .weight = 1,
				      .thread = threads[0], .stack = st_idle};
		if (i % 3 == 0)
			cr_assert_eq(profile_add_sample(p, &idle, NULL, 0), 0);
	}
	char *path = xasprintf("%s/run-%d.sonde", dir, extra);
	char err[512];
	cr_assert_eq(recording_save(p, path, err, sizeof(err)), 0, "%s", err);
	profile_free(p);
	return path;
}

static struct profile *load(const char *path)
{
	char err[512];
	struct profile *p = formats_load(path, NULL, NULL, err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	return p;
}

/* ---- comparing trees -------------------------------------------------------------- */

struct lines {
	char **line;
	size_t n, cap;
	const struct flame_tree *t;
	char *path[64];
};

static int add_line(const struct flame_node *n, int depth, void *arg)
{
	struct lines *l = arg;
	cr_assert_lt(depth, 64);
	const struct frame *f = frames_get(l->t->frames, n->frame);
	free(l->path[depth]);
	l->path[depth] = depth == 0 ? xstrdup("")
				    : xasprintf("%s;%s/%d", l->path[depth - 1], f->name, (int)f->kind);
	grow_array((void **)&l->line, &l->cap, l->n + 1, sizeof(*l->line));
	l->line[l->n++] = xasprintf("%s %llu %llu", l->path[depth], (unsigned long long)n->total,
				    (unsigned long long)n->self);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every node as "path total self", sorted: equal lists are equal trees. */
static char *tree_text(const struct flame_tree *t)
{
	struct lines l = {.t = t};
	flame_walk(t, add_line, &l);
	qsort(l.line, l.n, sizeof(*l.line), cmp_str);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	for (size_t i = 0; i < l.n; i++) {
		fprintf(f, "%s\n", l.line[i]);
		free(l.line[i]);
	}
	fclose(f);
	for (int d = 0; d < 64; d++)
		free(l.path[d]);
	free(l.line);
	return text;
}

/* ---- the two paths ----------------------------------------------------------------- */

struct paths {
	char dir[64];
	char *file;
	struct profile *offline;
	struct session live_session;
	struct live *live;
};

static void paths_open(struct paths *x, int extra, bool ended)
{
	memset(x, 0, sizeof(*x));
	strcpy(x->dir, "/tmp/sonde-view-paths-XXXXXX");
	cr_assert_not_null(mkdtemp(x->dir));
	/* Live windows take samples of the last --keep seconds: the recording
	 * ends two seconds ago. */
	uint64_t base = monotonic_ns() - 8000 * MS;
	x->file = write_recording(x->dir, base, extra);
	x->offline = load(x->file);
	struct session *s = &x->live_session;
	s->p = load(x->file);
	s->o.event = "cpu-clock";
	s->o.freq = 99;
	s->o.pids[0] = 100;
	s->o.pids[1] = 200;
	s->o.npids = 2; /* two processes: live roots stacks at their names */
	s->ended = ended;
	s->start_s = (double)base / 1e9;
	struct live_options o;
	live_options_init(&o);
	o.keep_s = o.window_s = 60;
	char err[256];
	x->live = live_new(s, &replayed, &o, err, sizeof(err));
	cr_assert_not_null(x->live, "%s", err);
	live_update(x->live);
}

static void paths_close(struct paths *x)
{
	live_free(x->live);
	profile_free(x->live_session.p);
	profile_free(x->offline);
	unlink(x->file);
	free(x->file);
	rmdir(x->dir);
}

static void live_command(struct paths *x, const char *line)
{
	char *answer = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&answer, &len);
	int rc = live_exec(x->live, line, out);
	fclose(out);
	cr_assert_eq(rc, 0, "%s: %s", line, answer);
	free(answer);
}

/* The live tree of a view: the filter and view commands as typed at the
 * prompt. `filter` and `query` are NULL for none. */
static char *live_tree(struct paths *x, const char *filter, const char *view)
{
	char line[128];
	snprintf(line, sizeof(line), "filter %s", filter ? filter : "clear");
	live_command(x, line);
	live_command(x, "all"); /* a view given again rebuilds from scratch */
	if (view)
		live_command(x, view);
	struct live_view *v = live_view_build(x->live, 0);
	cr_assert_not_null(v->flame);
	char *text = tree_text(v->flame);
	live_view_free(v);
	return text;
}

/* The offline tree: as report and flame build it (report --folded, flame
 * FILE) from the same words. */
static char *offline_tree(struct paths *x, const struct view *filter, enum span_class cls,
			  const char *query, uint64_t *total)
{
	struct view v = filter ? *filter : (struct view){0};
	if (query) {
		struct span_query q;
		char err[512];
		cr_assert_eq(query_parse(x->offline, cls, query, &q, err, sizeof(err)), 0, "%s", err);
		query_apply(&q, &v);
	}
	struct flame_tree *t = viewtree_flame(x->offline, &v, FLAME_ROOT_COMM);
	*total = t->root->total;
	char *text = tree_text(t);
	flame_free(t);
	return text;
}

/* Samples in calls: call i has i % 4, 50 * (0 + 1 + 2 + 3); in slow calls
 * (i = 7, 27, ..., 187: i % 4 = 3): 30; idle ones (i = 0, 3, ..., 198): 67. */
#define IN_CALLS 300
#define IN_SLOW_CALLS 30
#define IDLE 67
#define NONZERO UINT64_MAX /* a total not known in advance, but some */

struct case_ {
	const char *live_filter, *live_view; /* as typed in the live session */
	struct view filter;                  /* the same, offline */
	enum span_class cls;
	const char *query;
	uint64_t want; /* the offline tree's total (NONZERO: some) */
};

/* Each case: the same tree both ways, with the total it should have. */
static void same_trees(struct paths *x, const struct case_ *cases, size_t n)
{
	for (const struct case_ *c = cases; c < cases + n; c++) {
		uint64_t total;
		char *off = offline_tree(x, &c->filter, c->cls, c->query, &total);
		char *live = live_tree(x, c->live_filter, c->live_view);
		const char *f = c->live_filter ? c->live_filter : "-";
		const char *v = c->live_view ? c->live_view : "all";
		cr_assert_str_eq(live, off, "filter %s, view %s:\nlive:\n%s\noffline:\n%s", f, v, live,
				 off);
		if (c->want == NONZERO)
			cr_assert_gt(total, 0, "filter %s, view %s", f, v);
		else
			cr_assert_eq(total, c->want, "filter %s, view %s", f, v);
		free(off);
		free(live);
	}
}

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))

Test(view_paths, running_session)
{
	struct paths x;
	paths_open(&x, PLAIN, false);
	/* Every view takes some samples, so equal trees are not two empty
	 * ones; a percentile's threshold falls among the fast calls (p95 of
	 * 200 calls, 10 slow), so those totals are not given here. */
	struct case_ cases[] = {
		{NULL, NULL, {0}, SPAN_ANY, NULL, IN_CALLS + IDLE},
		{NULL, "in work", {0}, SPAN_IN, "work", IN_CALLS},
		{NULL, "slow work p95", {0}, SPAN_SLOW, "work:p95", NONZERO},
		{NULL, "fast work p95", {0}, SPAN_FAST, "work:p95", NONZERO},
		{NULL, "slow work p90", {0}, SPAN_SLOW, "work:p90", NONZERO},
		{NULL, "slow work auto", {0}, SPAN_SLOW, "work:auto", IN_SLOW_CALLS},
		{NULL, "fast work 1.2ms", {0}, SPAN_FAST, "work:1.2ms", NONZERO},
		{NULL, "fast work p70", {0}, SPAN_FAST, "work:p70", NONZERO},
		{"pid 100", "slow work p95", {.pid = 100}, SPAN_SLOW, "work:p95", NONZERO},
		{"pid 200", "in work", {.pid = 200}, SPAN_IN, "work", 30},
		{"tid 101", "fast work p95", {.tid = 101}, SPAN_FAST, "work:p95", NONZERO},
		{"comm srv", NULL, {.comm = "srv"}, SPAN_ANY, NULL, NONZERO},
		{"comm worker", "slow work auto", {.comm = "worker"}, SPAN_SLOW, "work:auto", NONZERO},
	};
	same_trees(&x, cases, NCASES(cases));
	paths_close(&x);
}

Test(view_paths, ended_session_with_a_lost_record)
{
	/* The last call's record was lost: its 3 samples are in `in`, in
	 * neither slow nor fast, both ways. */
	struct paths x;
	paths_open(&x, WITH_LOST, true);
	struct case_ cases[] = {
		{NULL, "in work", {0}, SPAN_IN, "work", IN_CALLS + 3},
		{NULL, "slow work 5ms", {0}, SPAN_SLOW, "work:5ms", IN_SLOW_CALLS},
		{NULL, "fast work 5ms", {0}, SPAN_FAST, "work:5ms", IN_CALLS - IN_SLOW_CALLS},
		{"pid 200", "slow work p95", {.pid = 200}, SPAN_SLOW, "work:p95", NONZERO},
	};
	same_trees(&x, cases, NCASES(cases));
	paths_close(&x);
}

Test(view_paths, ended_session_with_a_call_still_running)
{
	/* The last call was still running at the end (20 ms so far): slow. */
	struct paths x;
	paths_open(&x, WITH_OPEN, true);
	struct case_ cases[] = {
		{NULL, "in work", {0}, SPAN_IN, "work", IN_CALLS + 3},
		{NULL, "slow work 5ms", {0}, SPAN_SLOW, "work:5ms", IN_SLOW_CALLS + 3},
		{NULL, "fast work 5ms", {0}, SPAN_FAST, "work:5ms", IN_CALLS - IN_SLOW_CALLS},
		{"comm other", "slow work 5ms", {.comm = "other"}, SPAN_SLOW, "work:5ms", 3 + 3},
	};
	same_trees(&x, cases, NCASES(cases));
	paths_close(&x);
}

Test(view_paths, a_running_session_waits_for_a_missing_record)
{
	/* While the session runs, a sample whose call has no record yet is
	 * not in slow or fast until the record comes or the call has surely
	 * run past the threshold: here the samples of the lost call are ~2 s
	 * old, past a 5 ms threshold and the 0.5 s slack, so the live view
	 * takes them as slow (it cannot tell a lost record from a call still
	 * running); once the session ended they are in neither (above). */
	struct paths x;
	paths_open(&x, WITH_LOST, false);
	uint64_t total;
	struct case_ c = {NULL, "slow work 5ms", {0}, SPAN_SLOW, "work:5ms", 0};
	char *off = offline_tree(&x, &c.filter, c.cls, c.query, &total);
	char *live = live_tree(&x, NULL, "slow work 5ms");
	cr_assert_str_neq(live, off);
	struct live_view *v = live_view_build(x.live, 0);
	cr_assert_eq(v->flame->root->total, total + 3);
	live_view_free(v);
	free(off);
	free(live);
	paths_close(&x);
}

/* ---- the calls ---------------------------------------------------------------------- */

/* `by n` both ways, and the latest slow calls of work: the live list holds
 * the newest LIVE_SLOW_KEEP calls that work's slow view (the live filter,
 * above the list's threshold) takes, as view_takes_call takes them offline.
 * Returns the calls counted under CALLS for n = 0 (offline). */
static unsigned long long same_calls(struct paths *x, const char *live_filter,
				     const char *live_view, const struct view *filter,
				     enum span_class cls, const char *query)
{
	char line[128];
	snprintf(line, sizeof(line), "filter %s", live_filter ? live_filter : "clear");
	live_command(x, line);
	live_command(x, live_view);
	char *answer = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&answer, &len);
	cr_assert_eq(live_exec(x->live, "by n", out), 0);
	fclose(out);

	struct view v = *filter;
	struct span_query q;
	char err[512];
	cr_assert_eq(query_parse(x->offline, cls, query, &q, err, sizeof(err)), 0, "%s", err);
	query_apply(&q, &v);
	char *offline = NULL;
	out = open_memstream(&offline, &len);
	struct printable keep = {0};
	struct valuereport_by by = {.p = x->offline, .v = &v, .var = "n"};
	cr_assert_eq(valuereport_by_text(out, &by, &keep, err, sizeof(err)), 0, "%s", err);
	printable_free(&keep);
	fclose(out);
	const char *table = strstr(answer, "\nCalls of");
	cr_assert_not_null(table, "%s", answer);
	cr_assert_str_eq(table, offline, "filter %s, view %s:\nlive:\n%s\noffline:\n%s",
			 live_filter, live_view, table, offline);
	unsigned long long calls0 = 0;
	const char *row0 = strstr(offline, "\n  0 ");
	cr_assert_not_null(row0, "%s", offline);
	cr_assert_eq(sscanf(row0, " 0 %llu", &calls0), 1);
	free(answer);
	free(offline);

	/* The latest slow calls. */
	struct live_view *lv = live_view_build(x->live, 0);
	cr_assert_geq(lv->nprobes, 1);
	const struct live_probe_view *pv = &lv->probes[0];
	struct view slow = *filter;
	slow.span_class = SPAN_SLOW;
	slow.probe = 0;
	slow.threshold_ns = pv->slow_threshold_ns;
	size_t k = 0;
	for (size_t i = x->offline->nspans; i-- > 0 && k < LIVE_SLOW_KEEP;) {
		const struct span *sp = &x->offline->spans[i];
		if (sp->open || !view_takes_call(&slow, x->offline, sp))
			continue;
		cr_assert_lt(k, pv->nslow, "filter %s, view %s: live lists %zu slow calls, offline more",
			     live_filter, live_view, pv->nslow);
		cr_assert_eq(pv->slow[k].span_id, sp->id, "filter %s, view %s: slow call %zu",
			     live_filter, live_view, k);
		uint32_t inside = 0;
		for (size_t j = 0; j < x->offline->nsamples; j++) {
			const struct sample *s = &x->offline->samples[j];
			for (uint32_t l = 0; l < s->nlinks; l++)
				inside += x->offline->span_links[s->links + l].span_id == sp->id;
		}
		cr_assert_eq(pv->slow[k].samples, inside, "span %llu",
			     (unsigned long long)sp->id);
		k++;
	}
	cr_assert_eq(pv->nslow, k, "filter %s, view %s", live_filter, live_view);
	cr_assert_gt(k, 0, "filter %s, view %s: no slow call to compare", live_filter, live_view);
	live_view_free(lv);
	return calls0;
}

Test(view_paths, the_same_calls_both_ways)
{
	struct paths x;
	paths_open(&x, PLAIN, false);
	/* Calls with n = 0 (i % 3 == 0): 67 of 200; of tid 101 (odd i < 180):
	 * 30; of comm other (i >= 180): 7; of pid 100: 60. */
	cr_assert_eq(same_calls(&x, NULL, "in work", &(struct view){0}, SPAN_IN, "work"), 67);
	cr_assert_eq(same_calls(&x, "tid 101", "in work", &(struct view){.tid = 101}, SPAN_IN,
				"work"),
		     30);
	cr_assert_eq(same_calls(&x, "comm other", "fast work 5ms", &(struct view){.comm = "other"},
				SPAN_FAST, "work:5ms"),
		     7);
	cr_assert_eq(same_calls(&x, "pid 100", "slow work p95", &(struct view){.pid = 100},
				SPAN_SLOW, "work:p95"),
		     60);
	cr_assert_eq(same_calls(&x, "tid 101", "slow work auto", &(struct view){.tid = 101},
				SPAN_SLOW, "work:auto"),
		     30);
	paths_close(&x);
}

/* ---- the figures ------------------------------------------------------------------ */

/* A percentile is one figure everywhere: the live probe row's p50..p99 and
 * max are the recording's (report), and the view line's p99 threshold is
 * the row's p99 and `report --slow work:p99`'s (regression: top showed
 * "p99 (15.3us)" in its view line and 14.8us in its probe row, one read at
 * a bucket's middle, the other on the durations spread in the bucket). */
Test(view_paths, percentiles_are_one_figure_everywhere)
{
	struct paths x;
	paths_open(&x, PLAIN, false);
	live_command(&x, "slow work p99");
	struct live_view *v = live_view_build(x.live, 0);
	cr_assert_geq(v->nprobes, 1);
	const struct live_probe_view *pv = &v->probes[0];

	size_t n;
	uint64_t *d = profile_probe_durations(x.offline, 0, &n);
	struct latency_stats st;
	latency_compute(d, n, &st);
	free(d);
	cr_assert_eq(pv->p50_ns, st.p50_ns);
	cr_assert_eq(pv->p90_ns, st.p90_ns);
	cr_assert_eq(pv->p95_ns, st.p95_ns);
	cr_assert_eq(pv->p99_ns, st.p99_ns);
	cr_assert_eq(pv->max_ns, st.max_ns);

	struct span_query q;
	char err[512], want[64], p99[32];
	cr_assert_eq(query_parse(x.offline, SPAN_SLOW, "work:p99", &q, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(q.threshold_ns, pv->p99_ns);
	cr_assert_eq(pv->slow_threshold_ns, pv->p99_ns);
	snprintf(want, sizeof(want), "> p99 (%s)", duration_format(pv->p99_ns, p99, sizeof(p99)));
	cr_assert(strstr(v->status.view, want), "view line '%s', row p99 %s", v->status.view, p99);
	/* a bucket's middle would be another number here */
	cr_assert_neq(pv->p99_ns, latency_loglin_mid(latency_loglin_bucket(pv->p99_ns)));
	live_view_free(v);
	paths_close(&x);
}

/* An auto threshold is said alike: the live probe row's note (top's probe
 * line, ctl status, serve's threshold line) is what `report` finds over
 * the same calls, modes as it lists them. */
Test(view_paths, auto_is_said_as_the_report_says_it)
{
	struct paths x;
	paths_open(&x, PLAIN, false);
	live_command(&x, "slow work auto");
	struct live_view *v = live_view_build(x.live, 0);
	const struct live_probe_view *pv = &v->probes[0];
	struct span_query q;
	char err[512], note[256];
	cr_assert_eq(query_parse(x.offline, SPAN_SLOW, "work:auto", &q, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert(q.modes.found, "%s", q.modes.reason);
	cr_assert_eq(pv->slow_threshold_ns, q.threshold_ns);
	cr_assert_str_eq(pv->slow_threshold_note, latency_auto_note(&q.modes, note, sizeof(note)));
	cr_assert(strncmp(pv->slow_threshold_note, "auto: between the main mode at ", 31) == 0, "%s",
		  pv->slow_threshold_note);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	live_view_print(out, v, 5);
	fclose(out);
	cr_assert(strstr(text, note), "top -b does not say '%s':\n%s", note, text);
	free(text);
	live_view_free(v);
	paths_close(&x);
}

/* ---- samples waiting for their call's record ---------------------------------- */

/* A running session gets a call's samples before its record. Three calls
 * of work, each with 4 samples taken in the last 50 ms: C whose record
 * never comes, then A slow (12 ms) and B fast (1 ms). With `slow work
 * 5ms`, nothing of them is in the view until something decides them: A's
 * record brings its samples in, B's leaves them out, though C's, older,
 * still wait; C's are taken once they are older than the threshold and
 * the records' slack (the call has surely run past 5 ms), not before. */
Test(view_paths, waiting_samples_are_decided_when_their_record_comes)
{
	struct session s = {0};
	s.p = profile_new();
	struct profile *p = s.p;
	profile_event_intern(p, "cpu-clock");
	uint32_t fmain = frames_intern(p->frames, "main", "/bin/t", "t.c", 10, FRAME_USER);
	uint32_t fwork = frames_intern(p->frames, "work", "/bin/t", "t.c", 20, FRAME_USER);
	uint32_t st = profile_stack_intern(p, (uint32_t[]){fmain, fwork}, 2);
	uint32_t th = profile_thread_intern(p, 100, 100, "srv");
	cr_assert_eq(profile_probe_add(p, "work", "/bin/t", 0x1000), 0);
	s.o.event = "cpu-clock";
	s.o.freq = 99;
	s.o.pids[0] = 100;
	s.o.npids = 1;
	uint64_t now = monotonic_ns();
	s.start_s = (double)(now - 1000 * MS) / 1e9;
	struct live_options o;
	live_options_init(&o);
	o.keep_s = o.window_s = 60;
	char err[256];
	struct live *l = live_new(&s, &replayed, &o, err, sizeof(err));
	cr_assert_not_null(l, "%s", err);
	struct paths x = {.live = l};
	live_command(&x, "slow work 5ms");

	struct span calls[3];
	for (int c = 0; c < 3; c++) {
		calls[c] = (struct span){.id = (uint64_t)c + 1, .start_ns = now - 50 * MS,
					 .duration_ns = c == 2 ? 1 * MS : 12 * MS, .probe = 0,
					 .thread = th, .depth = 1};
		calls[c].raw_duration_ns = calls[c].duration_ns;
		struct span_link link = {calls[c].id, 0};
		for (int k = 0; k < 4; k++) {
			struct sample smp = {.time_ns = now - 50 * MS + (uint64_t)(k + 1) * 100 * US,
					     .weight = 1, .thread = th, .stack = st};
			cr_assert_eq(profile_add_sample(p, &smp, &link, 1), 0);
		}
	}
	live_update(l);
	struct live_view *v = live_view_build(l, 0);
	cr_assert_eq(v->flame->root->total, 0, "samples taken before their calls ended");
	live_view_free(v);

	cr_assert_geq(profile_span_add(p, &calls[1]), 0); /* A */
	cr_assert_geq(profile_span_add(p, &calls[2]), 0); /* B */
	live_update(l);
	v = live_view_build(l, 0);
	cr_assert_eq(v->flame->root->total, 4, "the slow call's 4 samples, not the fast one's");
	live_view_free(v);

	/* C's samples: still waiting until 5 ms + the slack after they were
	 * taken (the last was taken 49.6 ms before `now`). */
	uint64_t due = now - 50 * MS + 4 * 100 * US + 5 * MS + VIEW_RECORD_SLACK_NS;
	if (monotonic_ns() < due - 100 * MS) {
		live_update(l);
		v = live_view_build(l, 0);
		cr_assert_eq(v->flame->root->total, 4, "the lost call's samples before their wait ran out");
		live_view_free(v);
	}
	while (monotonic_ns() <= due + 10 * MS)
		usleep(20000);
	live_update(l);
	v = live_view_build(l, 0);
	cr_assert_eq(v->flame->root->total, 8, "the lost call's 4 samples once their wait ran out");
	live_view_free(v);
	live_free(l);
	profile_free(p);
}
