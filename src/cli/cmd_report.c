/* sonde report — summaries and folded stacks of a recording. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "errbuf.h"
#include "folded.h"
#include "optval.h"
#include "outfile.h"
#include "formats.h"
#include "registry.h"
#include "report.h"
#include "valuereport.h"
#include "util.h"
#include "view_args.h"
#include "viewtree.h"

static void usage(FILE *f)
{
	char readable[512];
	registry_list_readable(readable, sizeof(readable));
	fprintf(f,
		"usage: sonde report FILE [--json | --folded] [--lines] [--top N] [--pid PID]\n"
		"                         [--tid TID] [--comm NAME] [--event NAME]\n"
		"                         [--in|--slow|--fast ... [--when PROBE]]\n"
		"                         [--off-cpu | --wall | --wakers] [--by VAR]\n"
		"                         [-o OUT]\n"
		"\n"
		"Summarizes a recording (or any profile sonde reads, see FILE below): samples,\n"
		"lost samples, broken stacks (cut where a return address was not code),\n"
		"duration, the top functions by self and by total samples, samples per thread,\n"
		"and latency per traced function.\n"
		"  --json       the same as JSON (keys: samples, lost, broken_stacks, duration_s,\n"
		"               functions [{name, self, total}], threads [{pid, tid, comm,\n"
		"               samples}])\n"
		"  --folded     folded stacks (comm;outer;...;leaf COUNT), kernel frames _[k],\n"
		"               inlined frames _[i], JIT frames _[j], as FlameGraph's\n"
		"               stackcollapse-perf.pl writes\n"
		"  --lines      a row (and a folded frame) per source line, function:line\n"
		"               (a caller's line is that of its call), not per function; JSON\n"
		"               puts them under \"lines\" instead of \"functions\"\n"
		"  --top N      rows per table in the text report (default 20)\n"
		"  --pid PID    only samples of this process; --tid TID: of this thread;\n"
		"               --comm NAME: of threads named NAME (all that are given hold)\n"
		"  --event NAME of a file with samples of several events (perf script of perf\n"
		"               record -e A -e B), this event's (default: the first)\n"
		"  --in FUNC    only samples taken inside calls of traced FUNC\n"
		"  --slow FUNC[:THRESHOLD]  only samples inside calls of FUNC slower than\n"
		"               THRESHOLD: p95 (default), pNN or pNN.N, a duration (750us, 5ms,\n"
		"               1.5s) or auto (the valley between the main and the slow mode)\n"
		"  --fast FUNC[:THRESHOLD]  the complement: inside calls not slower than it\n"
		"               (a sample whose call has no record, lost or left by longjmp,\n"
		"               is in --in but in neither --slow nor --fast)\n"
		"  --when PROBE with --in/--slow/--fast: only the calls during which a line probe\n"
		"               ran or a branch outcome happened (\"x.c:12\", \"branch x.c:12 taken\")\n"
		"  --off-cpu    only the time threads spent off the CPU (record --off-cpu), in\n"
		"               ns (folded: microseconds), why on top of each stack\n"
		"               (\"[sleeping: read]\", \"[runnable]\", \"[disk: fsync]\"...)\n"
		"  --wall       wall-clock time: on-CPU samples, each worth its sampling interval\n"
		"               (\"[running]\"), plus off-CPU time; with --slow FUNC, where the\n"
		"               whole duration of its slow calls went\n"
		"  --wakers     who woke the waits (record --wakers): the waking thread's stack\n"
		"               under \"[wakes: COMM]\", weighing the wait it ended, in ns\n"
		"  --by VAR     with --in/--slow/--fast FUNC: FUNC's calls split by the value of\n"
		"               VAR, a capture of FUNC (--trace 'FUNC VAR'): per value, its calls,\n"
		"               its calls the view takes and the samples taken inside them\n"
		"  --show-overhead  keep the samples taken inside sonde's own probe machinery\n"
		"               (one frame \"[sonde]\"); left out by default\n"
		"  -o OUT       write to OUT instead of standard output\n"
		"FILE may be any profile sonde reads:\n"
		"  %s.\n",
		readable);
}

struct report_args {
	enum { TEXT, JSON, FOLDED } mode;
	struct report_options ro;
	const char *output;
	struct view_span_arg span; /* --in, --slow, --fast */
	enum view_time time;
};

/* One of report's own options (not a view option): 0, or -1 after an error
 * line (a bad value) or the usage (an unknown option). */
static int report_option(struct report_args *a, int c, const char *arg)
{
	uint64_t top;
	switch (c) {
	case 'j':
		a->mode = JSON;
		return 0;
	case 'f':
		a->mode = FOLDED;
		return 0;
	case 't':
		if (optval_count("--top", arg, 1, 1000000, &top))
			return -1;
		a->ro.top = (int)top;
		return 0;
	case 'l':
		a->ro.lines = true;
		return 0;
	case 'o':
		a->output = arg;
		return 0;
	case 'B':
		a->ro.by = arg;
		return 0;
	default:
		usage(stderr);
		return -1;
	}
}

/* Parses argv into a. Returns 0 to go on, or 1 when the command ends with
 * *exit_code (help: 0; a bad option or operand: 2). */
static int parse_args(int argc, char **argv, struct report_args *a, int *exit_code)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'}, {"folded", no_argument, NULL, 'f'},
		{"top", required_argument, NULL, 't'}, VIEW_ARGS_FILTER_OPTS,
		{"output", required_argument, NULL, 'o'},
		VIEW_ARGS_SPAN_OPTS, {"lines", no_argument, NULL, 'l'},
		VIEW_ARGS_TIME_OPTS,
		{"by", required_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'}, {0},
	};
	memset(a, 0, sizeof(*a));
	a->output = "-";
	a->time = VIEW_ON_CPU;
	*exit_code = 2;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		int r = view_args_parse_option(&a->ro.filter, &a->time, c, optarg);
		if (r == 0)
			r = view_args_parse_span(&a->span, c, optarg);
		if (r < 0)
			return 1;
		if (r > 0)
			continue;
		if (c == 'h') {
			usage(stdout);
			*exit_code = 0;
			return 1;
		}
		if (report_option(a, c, optarg))
			return 1;
	}
	if (optind != argc - 1) {
		errorf("report needs exactly one recording file (see sonde report --help)");
		return 1;
	}
	return 0;
}

/* The samples the report takes: --off-cpu/--wall/--wakers, --event,
 * --in/--slow/--fast (described in view) and --by's check. Returns 0, or -1
 * after an error line. */
static int choose_view(struct report_args *a, struct profile *p, char *view, size_t viewlen)
{
	char err[512];
	if (view_set_time(&a->ro.filter, p, a->time, err, sizeof(err)) ||
	    view_set_event(&a->ro.filter, p, err, sizeof(err))) {
		errorf("%s", err);
		return -1;
	}
	if (view_args_check_when(&a->span))
		return -1;
	if (a->span.arg) {
		if (view_args_apply_span(&a->span, p, &a->ro.filter, view, viewlen))
			return -1;
		a->ro.view = view;
	}
	if (a->ro.by && valuereport_by_check(p, &a->ro.filter, a->ro.by, err, sizeof(err))) {
		errorf("%s", err);
		return -1;
	}
	return 0;
}

/* The report in its mode (text, JSON, folded) to f; nonzero when writing failed. */
static int write_report(FILE *f, struct profile *p, const struct report_args *a)
{
	if (a->mode == JSON)
		return report_write_json(f, p, &a->ro);
	if (a->mode == FOLDED) {
		const struct view *v = &a->ro.filter;
		struct flame_tree *t = a->ro.lines ? viewtree_flame_lines(p, v, FLAME_ROOT_COMM)
						   : viewtree_flame(p, v, FLAME_ROOT_COMM);
		int rc = folded_write_view(f, t, true, v);
		flame_free(t);
		return rc;
	}
	return report_write_text(f, p, &a->ro);
}

int cmd_report(int argc, char **argv)
{
	struct report_args a;
	int exit_code;
	if (parse_args(argc, argv, &a, &exit_code))
		return exit_code;
	const char *path = argv[optind];
	char err[512];
	struct profile *p = formats_load(path, NULL, NULL, err, sizeof(err));
	if (!p) {
		errorf("%s", err);
		return 1;
	}
	a.ro.source = path;
	char view[512];
	if (choose_view(&a, p, view, sizeof(view))) {
		profile_free(p);
		return 1;
	}
	struct outfile out;
	if (outfile_open(&out, a.output, err, sizeof(err))) {
		errorf("%s", err);
		profile_free(p);
		return 1;
	}
	int rc = write_report(out.f, p, &a);
	profile_free(p);
	if (rc) {
		outfile_abort(&out);
		errorf("writing the report failed");
		return 1;
	}
	if (outfile_commit(&out, err, sizeof(err))) {
		errorf("%s", err);
		return 1;
	}
	return 0;
}
