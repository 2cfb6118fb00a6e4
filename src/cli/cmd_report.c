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
#include "query.h"
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
		"                         [--in|--slow|--fast ...]\n"
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

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'}, {"folded", no_argument, NULL, 'f'},
		{"top", required_argument, NULL, 't'}, VIEW_ARGS_FILTER_OPTS,
		{"output", required_argument, NULL, 'o'},
		{"in", required_argument, NULL, 'i'}, {"slow", required_argument, NULL, 's'},
		{"fast", required_argument, NULL, 'F'}, {"lines", no_argument, NULL, 'l'},
		VIEW_ARGS_TIME_OPTS,
		{"by", required_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'}, {0},
	};
	enum { TEXT, JSON, FOLDED } mode = TEXT;
	struct report_options ro = {0};
	const char *output = "-";
	const char *span_arg = NULL;
	enum span_class span_cls = SPAN_ANY;
	enum view_time time = VIEW_ON_CPU;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		int r = view_args_parse_option(&ro.filter, &time, c, optarg);
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		switch (c) {
		case 'j':
			mode = JSON;
			break;
		case 'f':
			mode = FOLDED;
			break;
		case 't': {
			uint64_t top;
			if (optval_count("--top", optarg, 1, 1000000, &top))
				return 2;
			ro.top = (int)top;
			break;
		}
		case 'l':
			ro.lines = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'i':
		case 's':
		case 'F':
			if (span_arg) {
				errorf("give one of --in, --slow, --fast");
				return 2;
			}
			span_arg = optarg;
			span_cls = c == 'i' ? SPAN_IN : c == 's' ? SPAN_SLOW : SPAN_FAST;
			break;
		case 'B':
			ro.by = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		errorf("report needs exactly one recording file (see sonde report --help)");
		return 2;
	}
	const char *path = argv[optind];
	char err[512];
	struct profile *p = formats_load(path, NULL, NULL, err, sizeof(err));
	if (!p) {
		errorf("%s", err);
		return 1;
	}
	ro.source = path;
	if (view_set_time(&ro.filter, p, time, err, sizeof(err)) ||
	    view_set_event(&ro.filter, p, err, sizeof(err))) {
		errorf("%s", err);
		profile_free(p);
		return 1;
	}
	char view[512];
	if (span_arg) {
		struct span_query q;
		if (query_parse(p, span_cls, span_arg, &q, err, sizeof(err))) {
			errorf("%s", err);
			profile_free(p);
			return 1;
		}
		query_apply(&q, &ro.filter);
		query_describe(&q, p, &ro.filter, view, sizeof(view));
		ro.view = view;
	}
	if (ro.by && valuereport_by_check(p, &ro.filter, ro.by, err, sizeof(err))) {
		errorf("%s", err);
		profile_free(p);
		return 1;
	}
	struct outfile out;
	if (outfile_open(&out, output, err, sizeof(err))) {
		errorf("%s", err);
		profile_free(p);
		return 1;
	}
	int rc;
	if (mode == JSON) {
		rc = report_write_json(out.f, p, &ro);
	} else if (mode == FOLDED) {
		struct flame_tree *t = ro.lines ? viewtree_flame_lines(p, &ro.filter, FLAME_ROOT_COMM)
					        : viewtree_flame(p, &ro.filter, FLAME_ROOT_COMM);
		rc = folded_write_view(out.f, t, true, &ro.filter);
		flame_free(t);
	} else {
		rc = report_write_text(out.f, p, &ro);
	}
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
