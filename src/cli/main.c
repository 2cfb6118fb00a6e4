/* sonde — a live profiler that joins sampling and tracing. Dispatches to the
 * subcommands in commands.h. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "errbuf.h"
#include "util.h"

#define SONDE_VERSION "0.1.0"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{"record", cmd_record, "sample stacks of processes or the system into a recording"},
	{"report", cmd_report, "summarize a recording (text, --json, --folded)"},
	{"flame", cmd_flame, "draw a recording as an interactive SVG flame graph (or a diff)"},
	{"top", cmd_top, "live session: flame tree, hot functions, probe latency; steer it as it runs"},
	{"serve", cmd_serve, "the live session, or a recording, in a browser (flame graph, latency, heatmap)"},
	{"lat", cmd_lat, "latency histograms of traced functions, live (-i for intervals)"},
	{"threads", cmd_threads,
	 "every thread's state, system call and traced call in flight, live (xcapture-style)"},
	{"slow", cmd_slow, "each slow call as it ends, with its samples; slow-vs-fast summary"},
	{"convert", cmd_convert, "convert between profile formats (perf script, folded, pprof, ...)"},
	{"heatmap", cmd_heatmap, "FlameScope subsecond-offset heatmap (SVG, or HTML with range selection)"},
	{"ctl", cmd_ctl, "send a command to a running live session (sonde ctl --list)"},
	{"probe", cmd_probe,
	 "where probes can go and what they read: a function's lines (--lines), variables "
	 "(--vars), a program's Python interpreter (--python)"},
	{"explore", cmd_explore,
	 "a function's structure: lines, blocks, loops, branches, where probes go (--counts)"},
	{"symbolize", cmd_symbolize, "resolve addresses like addr2line -f -i (or of a live PID)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: sonde COMMAND [OPTIONS]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'sonde COMMAND --help' for a command's options.\n"
		   "Example: sonde record -F 999 -o run.sonde -- ./server && "
		   "sonde flame run.sonde -o run.svg\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("sonde %s\n", SONDE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	errorf("unknown command '%s' (run 'sonde --help' for the list)", name);
	return 2;
}
