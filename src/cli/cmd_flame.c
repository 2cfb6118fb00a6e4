/* sonde flame — draw a recording as an interactive SVG flame graph, or the
 * difference of two sample sets (slow vs fast calls, or two recordings). */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "errbuf.h"
#include "flamechart.h"
#include "flamediff.h"
#include "flamesvg.h"
#include "formats.h"
#include "registry.h"
#include "heatmap.h"
#include "optval.h"
#include "outfile.h"
#include "query.h"
#include "util.h"
#include "view_args.h"
#include "viewtree.h"

static void usage(FILE *f)
{
	char readable[512];
	registry_list_readable(readable, sizeof(readable));
	fprintf(f,
		"usage: sonde flame FILE -o OUT.svg [--icicle] [--title TEXT] [--width PX]\n"
		"                        [--minwidth PX] [--pid PID] [--tid TID] [--comm NAME]\n"
		"                        [--event NAME]\n"
		"                        [--in FUNC | --slow FUNC[:T] | --fast FUNC[:T]]\n"
		"                        [--when PROBE] [--lines]\n"
		"                        [--off-cpu | --wall | --wakers]\n"
		"       sonde flame FILE --diff-slow FUNC[:THRESHOLD] -o DIFF.svg\n"
		"       sonde flame --diff A B -o DIFF.svg\n"
		"       sonde flame FILE --chart [--tid TID | --span ID] -o CHART.svg\n"
		"\n"
		"Draws a self-contained interactive SVG flame graph of a recording: hover for\n"
		"details, click to zoom, Ctrl-F / Search to highlight and sum matches.\n"
		"  -o OUT       the SVG to write (\"-\" for standard output)\n"
		"  --icicle     draw top-down (root at the top)\n"
		"  --title T    title (default \"Flame Graph\", or \"Icicle Graph\")\n"
		"  --width PX   image width (default 1200)\n"
		"  --minwidth PX  omit frames narrower than this (default 0.1)\n"
		"  --pid PID, --tid TID, --comm NAME  only samples of this process / thread /\n"
		"               thread name (all that are given hold)\n"
		"  --event NAME of a file with samples of several events, this event's\n"
		"               (default: the first)\n"
		"  --lines      a frame per source line, function:line (a caller's line is that\n"
		"               of its call), so each line of a function is its own box; with\n"
		"               any graph but --chart\n"
		"  --off-cpu    only the time threads spent off the CPU (a recording made with\n"
		"               record --off-cpu), in ns, with why on top of each stack\n"
		"               (\"[sleeping: read]\", \"[runnable]\", \"[disk: fsync]\"...); blues\n"
		"  --wall       wall-clock time: on-CPU samples (each worth its sampling\n"
		"               interval, under \"[running]\") plus off-CPU time (blue states);\n"
		"               with --slow FUNC, where the whole duration of its slow calls went\n"
		"               (also with --diff-slow: slow vs fast calls in time)\n"
		"  --wakers     who woke the waits (record --wakers): the waking thread's stack\n"
		"               under \"[wakes: COMM]\", weighing the wait it ended; blues\n"
		"  --show-overhead  keep samples taken inside sonde's own probe machinery\n"
		"               (one frame \"[sonde]\"); left out by default\n"
		"  --in FUNC    only samples inside calls of traced FUNC\n"
		"  --slow FUNC[:T], --fast FUNC[:T]  only samples inside calls of FUNC slower\n"
		"               than T / not slower; T is p95 (default), pNN, a duration\n"
		"               (750us, 5ms, 1.5s) or auto; a sample whose call has no record\n"
		"               (lost, or left by longjmp) is in --in, in neither --slow nor --fast\n"
		"  --when PROBE with --in/--slow/--fast: only the calls during which a line probe\n"
		"               ran or a branch outcome happened (\"x.c:12\", \"branch x.c:12 taken\")\n"
		"  --diff-slow FUNC[:T]  differential flame graph of the samples in slow calls\n"
		"               vs in fast calls of FUNC: red = more share in slow calls, blue =\n"
		"               less; widths show both sets, so frames only in fast calls stay\n"
		"               visible (blue)\n"
		"  --diff A B   differential flame graph of B against A (any two inputs, in any\n"
		"               format sonde reads)\n"
		"  --range START-END  only samples in this time range, in seconds from the\n"
		"               first whole second of the profile (as the heatmap's selection;\n"
		"               idle samples left out as FlameScope does)\n"
		"  --chart      a flame chart: samples in time order (x = time) for one thread\n"
		"               (--tid, default the busiest) or one traced call (--span ID):\n"
		"               its on-CPU samples\n"
		"  --diff-width union|base|cmp  what widths show in a differential graph\n"
		"               (default union: the mean of both normalized shares)\n"
		"FILE may be any profile sonde reads:\n"
		"  %s.\n",
		readable);
}

struct flame_args {
	struct flamesvg_options svg;
	struct view filter;
	const char *output;
	struct view_span_arg span; /* --in, --slow or --fast */
	const char *diff_slow;
	bool diff_files;
	enum flamediff_width diff_width;
	char **files;
	int nfiles;
	bool has_range;
	double range_start, range_end; /* seconds from the profile's first whole second */
	bool chart;
	uint64_t span_id;
	bool lines; /* a frame per source line (profile_line_frame) */
	enum view_time time; /* --off-cpu, --wall */
};

static struct flame_tree *tree_of(struct profile *p, const struct view *f,
				  const struct flame_args *a)
{
	return a->lines ? viewtree_flame_lines(p, f, FLAME_ROOT_COMM)
			: viewtree_flame(p, f, FLAME_ROOT_COMM);
}

static int write_svg(const char *output, int (*draw)(FILE *, void *), void *arg)
{
	char err[512];
	struct outfile out;
	if (outfile_open(&out, output, err, sizeof(err))) {
		errorf("%s", err);
		return 1;
	}
	if (draw(out.f, arg)) {
		outfile_abort(&out);
		errorf("writing %s failed: %s", output, strerror(errno));
		return 1;
	}
	if (outfile_commit(&out, err, sizeof(err))) {
		errorf("%s", err);
		return 1;
	}
	return 0;
}

struct plain_draw {
	struct flame_tree *t;
	const struct flamesvg_options *svg;
};

static int draw_plain(FILE *f, void *arg)
{
	struct plain_draw *d = arg;
	return flamesvg_write(f, d->t, d->svg);
}

struct diff_draw {
	struct flamediff *d;
	struct flamediff_options o;
	const struct flamesvg_options *svg;
};

static int draw_diff(FILE *f, void *arg)
{
	struct diff_draw *d = arg;
	return flamediff_write_svg(f, d->d, &d->o, d->svg);
}

static struct profile *load(const char *path)
{
	char err[512];
	struct profile *p = formats_load(path, NULL, NULL, err, sizeof(err));
	if (!p)
		errorf("%s", err);
	return p;
}

/* --range: the heatmap's time axis, so a range read off the heatmap gives the
 * same samples its page shows. */
static int apply_range(struct profile *p, struct flame_args *a)
{
	struct heatmap h;
	if (heatmap_build(p, &a->filter, 50, &h)) {
		errorf("cannot lay out the profile's time axis");
		return -1;
	}
	double base = h.start_s;
	heatmap_free(&h);
	a->filter.has_range = true;
	a->filter.start_ns = (uint64_t)llround((base + a->range_start) * 1e9);
	a->filter.end_ns = (uint64_t)llround((base + a->range_end) * 1e9);
	a->filter.exclude = heatmap_sample_idle;
	return 0;
}

struct chart_draw {
	struct profile *p;
	struct flamechart_options o;
	char err[512];
};

static int draw_chart(FILE *f, void *arg)
{
	struct chart_draw *d = arg;
	return flamechart_write_svg(f, d->p, &d->o, d->err, sizeof(d->err));
}

static int flame_chart(struct flame_args *a)
{
	struct profile *p = load(a->files[0]);
	if (!p)
		return 1;
	struct chart_draw d = {.p = p};
	d.o.tid = a->filter.tid;
	d.o.show_overhead = a->filter.show_overhead;
	d.o.span_id = a->span_id;
	d.o.width = a->svg.width;
	d.o.title = a->svg.title;
	/* Check first, so a bad tid or span is reported without an output file. */
	FILE *null = fopen("/dev/null", "w");
	int bad = null ? flamechart_write_svg(null, p, &d.o, d.err, sizeof(d.err)) : 0;
	if (null)
		fclose(null);
	int rc;
	if (bad) {
		errorf("%s", d.err);
		rc = 1;
	} else {
		rc = write_svg(a->output, draw_chart, &d);
	}
	profile_free(p);
	return rc;
}

static int flame_single(struct flame_args *a)
{
	struct profile *p = load(a->files[0]);
	if (!p)
		return 1;
	char err[512], view[512];
	if (a->has_range && apply_range(p, a)) {
		profile_free(p);
		return 1;
	}
	if (view_set_time(&a->filter, p, a->time, err, sizeof(err)) ||
	    view_set_event(&a->filter, p, err, sizeof(err))) {
		errorf("%s", err);
		profile_free(p);
		return 1;
	}
	if (view_args_check_when(&a->span)) {
		profile_free(p);
		return 1;
	}
	if (a->span.arg) {
		if (view_args_apply_span(&a->span, p, &a->filter, view, sizeof(view))) {
			profile_free(p);
			return 1;
		}
		if (!a->svg.subtitle)
			a->svg.subtitle = view;
	}
	if (view_counts_time(&a->filter)) {
		a->svg.count_name = "ns";
		a->svg.all_blocked = a->time != VIEW_WALL;
		if (!a->svg.title)
			a->svg.title = a->time == VIEW_OFF_CPU ? "Off-CPU Time Flame Graph"
				       : a->time == VIEW_WAKERS ? "Wakeup Flame Graph"
								: "Wall-Clock Time Flame Graph";
	}
	struct flame_tree *t = tree_of(p, &a->filter, a);
	flame_sort(t);
	struct plain_draw d = {t, &a->svg};
	int rc = write_svg(a->output, draw_plain, &d);
	flame_free(t);
	profile_free(p);
	return rc;
}

static int flame_diff_slow(struct flame_args *a)
{
	struct profile *p = load(a->files[0]);
	if (!p)
		return 1;
	char err[512];
	if (a->has_range && apply_range(p, a)) {
		profile_free(p);
		return 1;
	}
	struct span_query slow, fast;
	if (view_set_time(&a->filter, p, a->time, err, sizeof(err)) ||
	    view_set_event(&a->filter, p, err, sizeof(err)) ||
	    query_parse(p, SPAN_SLOW, a->diff_slow, &slow, err, sizeof(err)) ||
	    query_parse(p, SPAN_FAST, a->diff_slow, &fast, err, sizeof(err))) {
		errorf("%s", err);
		profile_free(p);
		return 1;
	}
	struct view fs = a->filter, ff = a->filter;
	query_apply(&slow, &fs);
	query_apply(&fast, &ff);
	struct flame_tree *ts = tree_of(p, &fs, a);
	struct flame_tree *tf = tree_of(p, &ff, a);
	char title[256];
	if (!a->svg.title) {
		query_diff_title(&slow, p, title, sizeof(title));
		a->svg.title = title;
	}
	struct diff_draw d = {flamediff_new(tf, ts), {a->diff_width, "fast", "slow"}, &a->svg};
	int rc = write_svg(a->output, draw_diff, &d);
	flamediff_free(d.d);
	flame_free(ts);
	flame_free(tf);
	profile_free(p);
	return rc;
}

static int flame_diff_files(struct flame_args *a)
{
	struct profile *pa = load(a->files[0]);
	struct profile *pb = pa ? load(a->files[1]) : NULL;
	if (!pb) {
		profile_free(pa);
		return 1;
	}
	/* The event is each file's own (its index differs from file to file). */
	struct view fa = a->filter, fb = a->filter;
	char err[512];
	if (view_set_event(&fa, pa, err, sizeof(err)) || view_set_event(&fb, pb, err, sizeof(err))) {
		errorf("%s", err);
		profile_free(pa);
		profile_free(pb);
		return 1;
	}
	struct flame_tree *ta = tree_of(pa, &fa, a);
	struct flame_tree *tb = tree_of(pb, &fb, a);
	struct diff_draw d = {flamediff_new(ta, tb), {a->diff_width, a->files[0], a->files[1]},
			      &a->svg};
	int rc = write_svg(a->output, draw_diff, &d);
	flamediff_free(d.d);
	flame_free(ta);
	flame_free(tb);
	profile_free(pa);
	profile_free(pb);
	return rc;
}

static int parse_args(int argc, char **argv, struct flame_args *a)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"icicle", no_argument, NULL, 'i'},
		{"title", required_argument, NULL, 't'},  {"width", required_argument, NULL, 'w'},
		{"minwidth", required_argument, NULL, 'm'}, VIEW_ARGS_FILTER_OPTS,
		VIEW_ARGS_SPAN_OPTS,
		{"diff-slow", required_argument, NULL, 'D'}, {"diff", no_argument, NULL, 'd'},
		{"diff-width", required_argument, NULL, 'W'}, {"help", no_argument, NULL, 'h'},
		{"range", required_argument, NULL, 'r'},  {"chart", no_argument, NULL, 'c'},
		{"span", required_argument, NULL, 'S'},   {"lines", no_argument, NULL, 'l'},
		VIEW_ARGS_TIME_OPTS,
		{0},
	};
	memset(a, 0, sizeof(*a));
	flamesvg_default_options(&a->svg);
	double v;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		int r = view_args_parse_option(&a->filter, &a->time, c, optarg);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		r = view_args_parse_span(&a->span, c, optarg);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		switch (c) {
		case 'o': a->output = optarg; break;
		case 'i': a->svg.icicle = true; break;
		case 't': a->svg.title = optarg; break;
		case 'w':
			if (optval_number("--width", optarg, "pixels", 100, 1e6, &v))
				return -1;
			a->svg.width = (int)v;
			break;
		case 'm':
			if (optval_number("--minwidth", optarg, "pixels", 0, 1e6, &v))
				return -1;
			a->svg.minwidth = v;
			break;
		case 'D': a->diff_slow = optarg; break;
		case 'd': a->diff_files = true; break;
		case 'W':
			if (!strcmp(optarg, "union"))
				a->diff_width = FLAMEDIFF_WIDTH_UNION;
			else if (!strcmp(optarg, "base"))
				a->diff_width = FLAMEDIFF_WIDTH_BASE;
			else if (!strcmp(optarg, "cmp"))
				a->diff_width = FLAMEDIFF_WIDTH_CMP;
			else {
				errorf("bad --diff-width '%s': use union, base or cmp", optarg);
				return -1;
			}
			break;
		case 'r': {
			char *end;
			a->range_start = strtod(optarg, &end);
			if (end == optarg || *end != '-' ||
			    (a->range_end = strtod(end + 1, &end), *end) ||
			    !(a->range_end > a->range_start) || a->range_start < 0) {
				errorf("bad --range '%s': expected START-END in seconds, e.g. 2.5-3.1",
				       optarg);
				return -1;
			}
			a->has_range = true;
			break;
		}
		case 'c': a->chart = true; break;
		case 'l': a->lines = true; break;
		case 'S': {
			char *end;
			a->span_id = strtoull(optarg, &end, 10);
			if (end == optarg || *end || !a->span_id) {
				errorf("bad --span '%s': expected a span id (see the recording's spans "
				       "table)",
				       optarg);
				return -1;
			}
			a->chart = true;
			break;
		}
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	a->files = argv + optind;
	a->nfiles = argc - optind;
	int want = a->diff_files ? 2 : 1;
	if (a->nfiles != want || !a->output) {
		errorf(a->diff_files ? "--diff needs two recordings and an output: sonde flame --diff A "
				       "B -o DIFF.svg"
				     : "flame needs one recording and an output: sonde flame FILE -o "
				       "OUT.svg");
		return -1;
	}
	if ((a->diff_slow != NULL) + a->diff_files + (a->span.arg != NULL) + a->chart > 1) {
		errorf("--diff-slow, --diff, --chart and --in/--slow/--fast exclude each other");
		return -1;
	}
	if (a->time != VIEW_ON_CPU && (a->chart || a->diff_files)) {
		errorf("--off-cpu, --wall and --wakers work with flame graphs and --diff-slow, not with "
		       "--chart, --span or --diff");
		return -1;
	}
	if (a->lines && a->chart) {
		errorf("--lines works with flame graphs, not with --chart or --span");
		return -1;
	}
	if (a->has_range && (a->diff_files || a->chart)) {
		errorf("--range works with plain flame graphs and --diff-slow, not with --diff or --chart");
		return -1;
	}
	return 0;
}

int cmd_flame(int argc, char **argv)
{
	struct flame_args a;
	if (parse_args(argc, argv, &a))
		return 2;
	if (a.diff_slow)
		return flame_diff_slow(&a);
	if (a.diff_files)
		return flame_diff_files(&a);
	if (a.chart)
		return flame_chart(&a);
	return flame_single(&a);
}
