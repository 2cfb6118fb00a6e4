/* sonde slow — every slow call of a function as it ends, with what its
 * samples were doing, and at the end the slow-vs-fast comparison
 * (funcslower, joined with sampling; no recording file). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callsplit.h"
#include "commands.h"
#include "errbuf.h"
#include "flamediff.h"
#include "flamesvg.h"
#include "latency.h"
#include "outfile.h"
#include "printable.h"
#include "probes.h"
#include "query.h"
#include "session_args.h"
#include "util.h"
#include "viewtree.h"

#define MIN_CALLS_FOR_PERCENTILE 20

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde slow [-p PID[,PID...]|NAME] [--no-children | --exact-children]\n"
		"                  [-F HZ] [-d SECONDS]\n"
		"                  [-o DIFF.svg] FUNC[:THRESHOLD] [-- CMD ARGS...]\n"
		"\n"
		"Traces FUNC and samples stacks (default -F 999). Prints every call slower than\n"
		"THRESHOLD as it ends: thread, duration, and the functions its samples were in.\n"
		"THRESHOLD is p95 (default), pNN, a duration (750us, 5ms, 1.5s) or auto;\n"
		"percentiles and auto are computed over the calls seen so far (from %d calls on)\n"
		"while running, and over all calls for the final summary. Only calls above the\n"
		"threshold in force are printed; a line \"-- threshold now ...\" says when it\n"
		"moves by more than 5%%. At the end: the frames whose share grew most in slow\n"
		"calls, with their shares in slow and fast calls, and how many printed calls\n"
		"are not above the final threshold. FUNC may be 'FUNC VAR... if EXPR' (record\n"
		"--help): then only the calls where EXPR held at entry are timed, printed and\n"
		"compared ('handle_request id if id %% 10 == 9:1ms').\n"
		"  -o DIFF.svg  write the differential flame graph (slow vs fast)\n"
		"  --off-cpu    also where each slow call waited: its time split into on the\n"
		"               CPU (~ samples x 1/F, at most the duration less the off-CPU\n"
		"               time: then shown as <=) and off it, by state and system call\n"
		"               ([sleeping: read] 6.0ms in wait_pipe), each with the function\n"
		"               under FUNC it waited in (--min-block DURATION: shorter waits\n"
		"               are counted only, default 5us)\n"
		"  --ready-file FILE  write sonde's PID to FILE once FUNC is traced and sampling\n"
		"               is on (see record --help)\n",
		MIN_CALLS_FOR_PERCENTILE);
}

struct slow_state {
	const char *arg;      /* FUNC[:THRESHOLD] */
	int probe;
	struct threshold threshold;
	uint64_t threshold_ns; /* current; 0 = not known yet */
	size_t slow_printed;
	uint64_t *printed_ns;  /* durations of the calls printed */
	size_t printed_cap;
	uint64_t shown_ns;     /* the threshold last announced */
	struct session *s;
	int timer;
};

/* Percentile and auto thresholds follow the calls seen so far. */
static void update_threshold(struct slow_state *st, struct profile *p)
{
	if (st->threshold.kind == THRESHOLD_ABSOLUTE) {
		st->threshold_ns = st->threshold.ns;
		return;
	}
	size_t n;
	uint64_t *d = profile_probe_durations(p, (uint32_t)st->probe, &n);
	struct latency_modes modes;
	st->threshold_ns = n >= MIN_CALLS_FOR_PERCENTILE ? threshold_resolve(&st->threshold, d, n, &modes)
							 : 0;
	free(d);
	/* A threshold that follows the calls moves: say so when it has moved
	 * by more than 5%, so every printed call can be read against the
	 * threshold it crossed. */
	if (!st->threshold_ns ||
	    (st->shown_ns && st->threshold_ns <= st->shown_ns + st->shown_ns / 20 &&
	     st->threshold_ns + st->shown_ns / 20 >= st->shown_ns))
		return;
	char a[32], b[sizeof(modes.reason) + 16];
	threshold_format(&st->threshold, b, sizeof(b));
	if (st->threshold.kind == THRESHOLD_AUTO)
		printf("-- threshold now %s (%s) over %" PRIu64 " calls\n",
		       duration_format(st->threshold_ns, a, sizeof(a)),
		       latency_auto_note(&modes, b, sizeof(b)),
		       profile_probe_calls(p, (uint32_t)st->probe));
	else
		printf("-- threshold now %s (%s over %" PRIu64 " calls)\n",
		       duration_format(st->threshold_ns, a, sizeof(a)), b,
		       profile_probe_calls(p, (uint32_t)st->probe));
	st->shown_ns = st->threshold_ns;
}

/* Percentile and auto thresholds follow the kernel's histogram of every
 * call, read this often; only the calls over the threshold in force (and
 * those samples landed in) cross to user space. */
#define SLOW_FOLLOW_S 0.25

static void follow_threshold(void *arg)
{
	struct slow_state *st = arg;
	struct session *s = st->s;
	if (st->threshold.kind != THRESHOLD_ABSOLUTE)
		session_refresh_calls(s);
	update_threshold(st, session_profile(s));
	/* Until a statistical threshold is known, every call crosses. */
	session_keep_calls_over(s, (uint32_t)st->probe, st->threshold_ns);
	loop_timer_in(session_loop(s), st->timer, SLOW_FOLLOW_S);
}

struct name_count {
	const char *name;
	size_t n;
};

static void count_name(struct name_count *c, size_t *nc, size_t max, const char *name)
{
	size_t k;
	for (k = 0; k < *nc && strcmp(c[k].name, name) != 0; k++)
		;
	if (k == *nc && *nc < max)
		c[(*nc)++] = (struct name_count){name, 0};
	if (k < *nc)
		c[k].n++;
}

/* Prints the `show` most frequent names as "a 80%, b 20%". */
static void print_top(struct name_count *c, size_t nc, size_t total, int show)
{
	for (int shown = 0; shown < show && nc; shown++) {
		size_t best = 0;
		for (size_t k = 1; k < nc; k++)
			if (c[k].n > c[best].n)
				best = k;
		char name[512];
		printf("%s%s %.0f%%", shown ? ", " : "",
		       printable_copy(name, sizeof(name), c[best].name),
		       100.0 * (double)c[best].n / (double)total);
		c[best] = c[--nc];
	}
}

/* One line per slow call: where its samples were, as the callee of the
 * traced function they went through ("in") and as the leaf they hit; with
 * --off-cpu, its time split: on the CPU (samples at their interval) and off
 * it by state and system call, each with the callee it waited in. */
static void print_slow_call(struct profile *p, const struct span *sp, const uint32_t *samples,
			    size_t nsamples, uint64_t sample_ns, bool off_cpu)
{
	char dur[32], shown[512], b[64];
	const char *fname = p->probes[sp->probe].name;
	struct name_count callees[64], leaves[64];
	size_t ncallees = 0, nleaves = 0, non = 0;
	struct call_split split = {0};
	uint32_t stack[512];
	for (size_t i = 0; i < nsamples; i++) {
		const struct sample *s = &p->samples[samples[i]];
		call_split_add(&split, p, s, fname);
		if (profile_sample_is_offcpu(p, s) || profile_sample_is_waker(p, s))
			continue;
		size_t depth = profile_stack_frames(p, s->stack, stack, 512);
		if (depth == 0 || depth > 512)
			continue;
		non++;
		uint32_t callee = call_split_callee(p, stack, depth, fname);
		count_name(callees, &ncallees, 64,
			   callee ? frames_get(p->frames, callee)->name : "(self)");
		count_name(leaves, &nleaves, 64, frames_get(p->frames, stack[depth - 1])->name);
	}
	printf("%-8u %10s  %s  ", p->threads[sp->thread].tid,
	       duration_format(sp->duration_ns, dur, sizeof(dur)),
	       printable_copy(shown, sizeof(shown), fname));
	call_split_bound(&split, sample_ns, sp->duration_ns);
	if (off_cpu)
		printf("%s ", call_split_on_text(&split, b, sizeof(b)));
	printf("[%zu samples", non);
	if (ncallees) {
		printf(" in: ");
		print_top(callees, ncallees, non, 3);
		printf("; leaf: ");
		print_top(leaves, nleaves, non, 1);
	}
	printf("]");
	if (off_cpu) {
		char text[1024];
		printf(" %s", call_split_off_text(&split, p->frames, 3, text, sizeof(text)));
	}
	printf("\n");
}

static void on_span(struct session *s, void *arg, const struct span *sp, const uint32_t *samples,
		    size_t nsamples)
{
	struct slow_state *st = arg;
	struct view slow = {.span_class = SPAN_SLOW, .probe = (uint32_t)st->probe,
			    .threshold_ns = st->threshold_ns};
	if (st->probe < 0 || !st->threshold_ns ||
	    !view_takes_call(&slow, session_profile(s), sp))
		return;
	if (st->slow_printed++ == 0)
		printf("%-8s %10s  %s\n", "TID", "DURATION",
		       "FUNCTION  [samples inside it: the callees they were in; hottest leaf]");
	grow_array((void **)&st->printed_ns, &st->printed_cap, st->slow_printed,
		   sizeof(*st->printed_ns));
	st->printed_ns[st->slow_printed - 1] = sp->duration_ns;
	const struct session_options *o = session_options(s);
	print_slow_call(session_profile(s), sp, samples, nsamples,
			o->freq && !o->period ? 1000000000ull / o->freq : 0, o->off_cpu);
	fflush(stdout);
}

static int write_diff(struct flamediff *d, const char *path, const char *title)
{
	char err[512];
	struct outfile out;
	if (outfile_open(&out, path, err, sizeof(err))) {
		errorf("%s", err);
		return 1;
	}
	struct flamesvg_options svg;
	flamesvg_default_options(&svg);
	svg.title = title;
	struct flamediff_options o = {FLAMEDIFF_WIDTH_UNION, "fast", "slow"};
	if (flamediff_write_svg(out.f, d, &o, &svg)) {
		outfile_abort(&out);
		errorf("writing %s failed", path);
		return 1;
	}
	if (outfile_commit(&out, err, sizeof(err))) {
		errorf("%s", err);
		return 1;
	}
	return 0;
}

/* The final comparison over all calls: the frames whose share grew most. */
static int summarize(struct profile *p, const char *arg, const char *svg_path)
{
	char err[512], view[512];
	struct span_query slow, fast;
	if (query_parse(p, SPAN_SLOW, arg, &slow, err, sizeof(err)) ||
	    query_parse(p, SPAN_FAST, arg, &fast, err, sizeof(err))) {
		errorf("%s", err);
		return 1;
	}
	query_describe(&slow, p, NULL, view, sizeof(view));
	struct view fs = {0}, ff = {0};
	query_apply(&slow, &fs);
	query_apply(&fast, &ff);
	struct flame_tree *ts = viewtree_flame(p, &fs, FLAME_ROOT_NONE);
	struct flame_tree *tf = viewtree_flame(p, &ff, FLAME_ROOT_NONE);
	struct printable keep = {0};
	printf("\nSummary: %s; %" PRIu64 " samples in slow calls, %" PRIu64 " in fast calls\n",
	       printable(&keep, view), ts->root->total, tf->root->total);
	struct flamediff *d = flamediff_new(tf, ts);
	struct flamediff_top top[10];
	size_t n = flamediff_top_growth(d, top, 10);
	if (n) {
		printf("Frames whose share grew most in slow calls:\n  %8s %8s %9s  %s\n", "SLOW",
		       "FAST", "DELTA", "FUNCTION");
		for (size_t i = 0; i < n; i++)
			printf("  %7.1f%% %7.1f%% %+8.1fpp  %s\n", 100 * top[i].cmp_share,
			       100 * top[i].base_share, 100 * top[i].delta,
			       printable(&keep, top[i].label));
	}
	printable_free(&keep);
	int rc = 0;
	if (svg_path) {
		char title[256];
		query_diff_title(&slow, p, title, sizeof(title));
		rc = write_diff(d, svg_path, title);
	}
	flamediff_free(d);
	flame_free(ts);
	flame_free(tf);
	return rc;
}

static int slow_option(void *ctx, int c, const char *arg)
{
	if (c != 'o')
		return -1;
	*(const char **)ctx = arg;
	return 0;
}

int cmd_slow(int argc, char **argv)
{
	static const struct option own[] = {{"output", required_argument, NULL, 'o'}, {0}};
	struct session_options so;
	session_options_init(&so);
	so.freq = 999;
	const char *svg = NULL;
	struct session_command cmd = {"o:", own, slow_option, usage, &svg};
	int exit_code;
	if (session_args_getopt(&so, argc, argv, &cmd, &exit_code))
		return exit_code;
	if (optind >= argc || strcmp(argv[optind], "--") == 0) {
		errorf("name the function: sonde slow FUNC[:THRESHOLD] [-- CMD]");
		return 2;
	}
	struct slow_state st = {.arg = argv[optind++]};
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind < argc)
		so.cmd = &argv[optind];
	/* FUNC[:THRESHOLD]: the function is traced, the threshold checked now. */
	char err[1024];
	char *func = xstrdup(st.arg);
	int colon = probes_split(st.arg);
	const char *thr = NULL;
	if (colon > 0) {
		struct threshold t;
		if (threshold_parse(st.arg + colon + 1, &t, err, sizeof(err)) == 0) {
			func[colon] = 0;
			thr = st.arg + colon + 1;
		}
	}
	if (threshold_parse(thr, &st.threshold, err, sizeof(err))) {
		errorf("%s", err);
		free(func);
		return 2;
	}
	if (so.ntraces == SESSION_MAX_TRACES) {
		errorf("too many --trace options (at most %d with the function)", SESSION_MAX_TRACES - 1);
		free(func);
		return 2;
	}
	int func_trace = so.ntraces;
	so.traces[so.ntraces++] = func;
	struct session *s = session_args_start(&so, argc, argv, &exit_code);
	if (!s) {
		free(func);
		return exit_code;
	}
	int nfuncs = 0;
	st.probe = session_trace_probes(s, func_trace, &nfuncs);
	if (nfuncs != 1) {
		errorf("'%s' matches %d functions: name exactly one", func, nfuncs);
		session_free(s);
		free(func);
		return 2;
	}
	st.s = s;
	st.timer = loop_timer_new(session_loop(s), follow_threshold, &st);
	follow_threshold(&st);
	session_on_span(s, on_span, &st);
	char shown[512];
	fprintf(stderr, "sonde: tracing %s; slow calls are printed as they end; Ctrl-C to end\n",
		printable_copy(shown, sizeof(shown), func));
	int rc = 0;
	if (session_run(s, err, sizeof(err))) {
		errorf("%s", err);
		rc = 1;
	}
	session_print_summary(s, "gathered", stderr);
	/* Calls printed early against a threshold that later rose: say how
	 * many the final threshold would not call slow. */
	if (st.threshold.kind != THRESHOLD_ABSOLUTE && st.slow_printed) {
		update_threshold(&st, session_profile(s));
		size_t below = 0;
		for (size_t i = 0; i < st.slow_printed; i++)
			below += st.printed_ns[i] <= st.threshold_ns;
		char a[32];
		if (below)
			printf("%zu of the %zu calls printed were slow against an earlier threshold "
			       "but are not above the final one (%s)\n",
			       below, st.slow_printed, duration_format(st.threshold_ns, a, sizeof(a)));
	}
	free(st.printed_ns);
	/* The summary re-resolves FUNC:THRESHOLD over all calls, by probe name. */
	const char *pname = session_profile(s)->probes[st.probe].name;
	char *query = thr ? xasprintf("%s:%s", pname, thr) : xstrdup(pname);
	if (summarize(session_profile(s), query, svg))
		rc = 1;
	free(query);
	session_free(s);
	free(func);
	return rc;
}
