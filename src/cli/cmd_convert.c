/* sonde convert — any profile format in, any out. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "errbuf.h"
#include "formats.h"
#include "registry.h"
#include "util.h"

static void usage(FILE *f)
{
	char formats[4096];
	registry_describe(formats, sizeof(formats));
	fprintf(f,
		"usage: sonde convert IN -o OUT [--from FORMAT] [--to FORMAT]\n"
		"                     [--pid] [--tid] [--kernel] [--jit] [--all] [--addrs]\n"
		"                     [--event NAME] [--show-overhead] [--off-cpu|--wall|--wakers]\n"
		"\n"
		"Converts between profile formats. The input format is detected from the content\n"
		"(--from forces it); the output format comes from --to or OUT's name.\n"
		"%s"
		"Folded output follows stackcollapse-perf.pl's modes:\n"
		"  --pid     process name as comm-PID        --tid    comm-PID/TID\n"
		"  --kernel  kernel frames end in _[k]       --jit    JIT frames end in _[j]\n"
		"  --all     both annotations                --addrs  unknown symbols as addresses\n"
		"  --event NAME  of an input with several events, only the samples of this one\n"
		"                (default: the first; the others are counted on stderr)\n"
		"  --show-overhead  keep samples taken inside sonde's own probe machinery\n"
		"                (frame [sonde]); left out of every format but a recording\n"
		"  --off-cpu, --wall  of a recording made with --off-cpu: the off-CPU time, or\n"
		"                the wall-clock time (on-CPU samples at their interval under\n"
		"                [running], plus off-CPU time), or with --wakers who woke the\n"
		"                waits (record --wakers), counted in microseconds; by\n"
		"                default other formats get the on-CPU samples alone\n",
		formats);
}

int cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"from", required_argument, NULL, 'f'},
		{"to", required_argument, NULL, 't'},     {"pid", no_argument, NULL, 'P'},
		{"tid", no_argument, NULL, 'T'},          {"kernel", no_argument, NULL, 'k'},
		{"jit", no_argument, NULL, 'j'},          {"all", no_argument, NULL, 'A'},
		{"addrs", no_argument, NULL, 'a'},        {"event", required_argument, NULL, 'e'},
		{"show-overhead", no_argument, NULL, 'O'},
		{"off-cpu", no_argument, NULL, 'X'},      {"wall", no_argument, NULL, 'L'},
		{"wakers", no_argument, NULL, 'K'},
		{"help", no_argument, NULL, 'h'},         {0},
	};
	const char *out = NULL;
	const struct format_entry *from = NULL, *to = NULL;
	struct folded_modes m = {0};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'f':
		case 't': {
			const struct format_entry *f = registry_find(optarg);
			if (!f) {
				char names[512];
				registry_list_names(names, sizeof(names));
				errorf("unknown format '%s': use %s", optarg, names);
				return 2;
			}
			*(c == 'f' ? &from : &to) = f;
			break;
		}
		case 'P': m.pid = true; break;
		case 'T': m.tid = true; break;
		case 'k': m.kernel = true; break;
		case 'j': m.jit = true; break;
		case 'A': m.kernel = m.jit = true; break;
		case 'a': m.addrs = true; break;
		case 'e': m.event = optarg; break;
		case 'O': m.show_overhead = true; break;
		case 'X': m.time = VIEW_OFF_CPU; break;
		case 'L': m.time = VIEW_WALL; break;
		case 'K': m.time = VIEW_WAKERS; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1 || !out) {
		errorf("convert needs one input and an output: sonde convert IN -o OUT");
		return 2;
	}
	if (!to)
		to = registry_for_output(out);
	if (!to) {
		errorf("cannot tell the output format from '%s': give --to FORMAT", out);
		return 2;
	}
	if (from && !registry_can_read(from)) {
		errorf("sonde writes %s but does not read it", from->name);
		return 2;
	}
	if (!registry_can_write(to)) {
		errorf("sonde reads %s but does not write it", to->name);
		return 2;
	}
	char err[512] = "", note[512] = "";
	struct format_conversion conv = {.in = argv[optind],
					 .from = from,
					 .out = out,
					 .to = to,
					 .modes = &m,
					 .note = note,
					 .notelen = sizeof(note)};
	if (formats_convert(&conv, err, sizeof(err))) {
		errorf("%s", err);
		return 1;
	}
	if (note[0])
		errorf("%s: %s", argv[optind], note);
	return 0;
}
