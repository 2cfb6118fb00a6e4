/* sonde heatmap — FlameScope's subsecond-offset heatmap of a profile. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "errbuf.h"
#include "formats.h"
#include "heatmap.h"
#include "optval.h"
#include "outfile.h"
#include "util.h"
#include "view_args.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde heatmap FILE -o OUT.svg|OUT.html [--rows N] [--title TEXT]\n"
		"                          [--pid PID] [--tid TID] [--comm NAME] [--event NAME]\n"
		"\n"
		"Draws FlameScope's subsecond-offset heatmap: one column per second, rows are the\n"
		"offset within the second (--rows, default 50: 20 ms each), colour = samples in\n"
		"the cell (idle samples left out). The HTML page is interactive: select a range\n"
		"(click a start cell and an end cell, or drag) and it shows the flame graph of\n"
		"exactly that range; #range=START-END in its URL preselects one. The same range\n"
		"from the command line: sonde flame FILE --range START-END -o range.svg.\n"
		"--pid, --tid and --comm keep the samples of one process, thread or thread name;\n"
		"--event NAME those of one event (default: the first) of a file with several.\n"
		"FILE may be a recording or perf script (with timestamps), pprof or nflxprofile.\n");
}

struct heatmap_draw {
	struct profile *p;
	struct heatmap h;
	const char *title;
	bool html;
};

static int draw(FILE *f, struct heatmap_draw *d)
{
	return d->html ? heatmap_write_html(f, d->p, &d->h, d->title)
		       : heatmap_write_svg(f, &d->h, d->title);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int cmd_heatmap(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"rows", required_argument, NULL, 'r'},
		{"title", required_argument, NULL, 't'},  VIEW_ARGS_FILTER_OPTS,
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *output = NULL;
	struct heatmap_draw d = {.title = "Subsecond Offset Heatmap"};
	struct view filter = {0};
	int rows = 50, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		int r = view_args_parse_option(&filter, NULL, c, optarg);
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		switch (c) {
		case 'o': output = optarg; break;
		case 'r': {
			uint64_t n;
			if (optval_count("--rows", optarg, 1, 10000, &n))
				return 2;
			rows = (int)n;
			break;
		}
		case 't': d.title = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1 || !output) {
		errorf("heatmap needs one input and an output: sonde heatmap FILE -o OUT.html");
		return 2;
	}
	d.html = ends_with(output, ".html") || ends_with(output, ".htm");
	if (!d.html && !ends_with(output, ".svg") && strcmp(output, "-") != 0) {
		errorf("heatmap writes .svg or .html (got %s)", output);
		return 2;
	}
	char err[512];
	d.p = formats_load(argv[optind], NULL, NULL, err, sizeof(err));
	if (!d.p) {
		errorf("%s", err);
		return 1;
	}
	if (view_set_event(&filter, d.p, err, sizeof(err))) {
		errorf("%s", err);
		profile_free(d.p);
		return 1;
	}
	int rc = 1;
	struct outfile out;
	if (heatmap_build(d.p, &filter, rows, &d.h)) {
		errorf("cannot build the heatmap of %s (too many seconds or rows?)", argv[optind]);
	} else {
		if (outfile_open(&out, output, err, sizeof(err)))
			errorf("%s", err);
		else if (draw(out.f, &d)) {
			outfile_abort(&out);
			errorf("writing %s failed", output);
		} else if (outfile_commit(&out, err, sizeof(err)))
			errorf("%s", err);
		else
			rc = 0;
		heatmap_free(&d.h);
	}
	profile_free(d.p);
	return rc;
}
