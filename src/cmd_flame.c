/* sonde flame — draw a recording as an interactive SVG flame graph. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "flamesvg.h"
#include "outfile.h"
#include "recording.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde flame FILE -o OUT.svg [--icicle] [--title TEXT] [--width PX]\n"
		"                        [--minwidth PX] [--pid PID] [--tid TID]\n"
		"\n"
		"Draws a self-contained interactive SVG flame graph of a recording: hover for\n"
		"details, click to zoom, Ctrl-F / Search to highlight and sum matches.\n"
		"  -o OUT       the SVG to write (\"-\" for standard output)\n"
		"  --icicle     draw top-down (root at the top)\n"
		"  --title T    title (default \"Flame Graph\", or \"Icicle Graph\")\n"
		"  --width PX   image width (default 1200)\n"
		"  --minwidth PX  omit frames narrower than this (default 0.1)\n"
		"  --pid PID, --tid TID  only samples of this process / thread\n");
}

static int parse_positive(const char *opt, const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || v < 0 || v > 1e6) {
		errorf("bad value '%s' for %s: expected a non-negative number", s, opt);
		return -1;
	}
	*out = v;
	return 0;
}

int cmd_flame(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"icicle", no_argument, NULL, 'i'},
		{"title", required_argument, NULL, 't'},  {"width", required_argument, NULL, 'w'},
		{"minwidth", required_argument, NULL, 'm'}, {"pid", required_argument, NULL, 'P'},
		{"tid", required_argument, NULL, 'T'},    {"help", no_argument, NULL, 'h'},
		{0},
	};
	struct flamesvg_options so;
	flamesvg_default_options(&so);
	struct sample_filter filter = {0};
	const char *output = NULL;
	double v;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'i':
			so.icicle = true;
			break;
		case 't':
			so.title = optarg;
			break;
		case 'w':
			if (parse_positive("--width", optarg, &v))
				return 2;
			if (v < 100) {
				errorf("--width must be at least 100 pixels");
				return 2;
			}
			so.width = (int)v;
			break;
		case 'm':
			if (parse_positive("--minwidth", optarg, &v))
				return 2;
			so.minwidth = v;
			break;
		case 'P':
			filter.pid = atoll(optarg);
			break;
		case 'T':
			filter.tid = atoll(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || !output) {
		errorf("flame needs one recording and an output: sonde flame FILE -o OUT.svg");
		return 2;
	}
	char err[512];
	struct profile *p = recording_load(argv[optind], err, sizeof(err));
	if (!p) {
		errorf("%s", err);
		return 1;
	}
	struct flame_tree *t = profile_flame(p, &filter, FLAME_ROOT_COMM);
	flame_sort(t);
	struct outfile out;
	int rc = 1;
	if (outfile_open(&out, output, err, sizeof(err))) {
		errorf("%s", err);
	} else if (flamesvg_write(out.f, t, &so)) {
		outfile_abort(&out);
		errorf("writing %s failed: %s", output, strerror(errno));
	} else if (outfile_commit(&out, err, sizeof(err))) {
		errorf("%s", err);
	} else {
		rc = 0;
	}
	flame_free(t);
	profile_free(p);
	return rc;
}
