/* sonde top — a live session: the ncurses UI, or text snapshots with -b.
 * Either way the session listens on a control socket (sonde ctl). The run
 * itself (event loop, control socket, end) is liverun's; this file parses
 * the options and prints. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "errbuf.h"
#include "live_args.h"
#include "liverun.h"
#include "optval.h"
#include "session_args.h"
#include "tui.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde top [-p PID[,PID...]|NAME | -a | -- CMD ARGS...] [OPTIONS]\n"
		"\n"
		"A live session: samples stacks and times traced calls while you steer it, and\n"
		"shows the current window as a navigable flame tree, the hottest functions and\n"
		"per-probe latency. Commands (trace, untrace, sample, in, slow, window, ewma,\n"
		"filter, save, ... see `help` at the : prompt) change it while it runs; so does\n"
		"`sonde ctl` from another terminal. `sample off-cpu` and `sample threads [HZ]`\n"
		"turn off-CPU intervals and thread states on while it runs (`... off`: off);\n"
		"`save` keeps them.\n"
		"\n"
		"Target and sampling (as sonde record):\n"
		"  -p PID[,PID...]    running processes (their threads, descendants, children)\n"
		"  -p NAME, --pid-of NAME  every process of that command name or executable\n"
		"  --no-children      only those processes (or the command): no descendants\n"
		"  --exact-children   probes on their files for every process: a new child\n"
		"                     is traced from its first instruction, not ~1 ms later\n"
		"  -a                 the whole system\n"
		"  -- CMD ARGS...     start CMD and profile it (it is stopped when top ends)\n"
		"  -F HZ              samples per second per CPU (default 99)\n"
		"  -c PERIOD          sample every PERIOD events instead\n"
		"  -e EVENT           cpu-clock (default), task-clock, page-faults, ..., or a\n"
		"                     tracepoint CATEGORY:NAME\n"
		"  --trace FUNC       trace FUNC from the start (repeatable; 'FUNC VAR... if EXPR'\n"
		"                     as record: its calls are those where EXPR held)\n"
		"  --sample-in FUNC, --sample-slow FUNC:DUR   in-kernel sampling decisions\n"
		"  -d SECONDS         end after SECONDS\n"
		"  --buffer-mb MB     BPF ring buffer size (power of two, default 16)\n"
		"  --unwind MODE      user stacks: auto (default), cfi or fp (see record --help)\n"
		"  --no-python        native stacks only: no Python frames (see record --help)\n"
		"  --ready-file FILE  write sonde's PID to FILE once it samples, every probe is\n"
		"                     attached and the --cmd commands ran (see record --help)\n"
		"  -v                 libbpf's messages (verifier log on load errors)\n"
		"\n"
		"Display:\n"
		"  -b, --batch        print a text snapshot every interval instead of the UI\n"
		"  -i, --interval S   refresh interval in seconds (default 1)\n"
		"  -n, --iterations N batch: end after N snapshots\n"
		"  --top N            batch: rows per table (default 15)\n"
		"  --cmd CMD          run a session command at the start (repeatable), e.g.\n"
		"                     --cmd 'trace handle_request' --cmd 'slow handle_request p95'\n"
		"  --window DUR       sliding window (default 10s); --ewma HALFLIFE for an EWMA\n"
		"  --keep DUR         raw samples and calls held (default 60s): `save` writes\n"
		"                     them and a changed view is rebuilt from them\n"
		"  --keep-calls N     at most N raw calls held (default 200000); calls/s,\n"
		"                     percentiles and histograms do not depend on it\n"
		"  --no-ctl           do not listen for sonde ctl\n"
		"  --off-cpu          also record where threads wait, and show it: the live views\n"
		"                     count off-CPU time, with why on top ([sleeping: read]...)\n"
		"  --wall             the same recording; the views count wall-clock time (on-CPU\n"
		"                     samples at 1/F under [running], plus off-CPU time)\n"
		"  --min-block DUR    with either: shorter waits are counted only (default 5us)\n"
		"  --show-overhead  keep samples taken inside sonde's own probe machinery\n"
		"               (one frame \"[sonde]\"); left out of every view by default\n"
		"  --target-output F  where the started command's stdout and stderr go (its\n"
		"                     stdin is then /dev/null); in the UI they default to\n"
		"                     /dev/null, since they would garble the screen\n"
		"  --source-dir DIR   the explorer pane (x) looks for source files under DIR\n"
		"                     first (as sonde explore --source-dir)\n"
		"\n"
		"Keys in the UI: arrows move/expand/collapse, / search, n/N next/previous,\n"
		"z zoom, i invert, Tab switch panel, x explore the selected function (its\n"
		"lines with live counts; l/b/w place line probes, branch probes and\n"
		"sample-when there), : command, ? help, q quit.\n"
		"\n"
		"It ends at q or Ctrl-C, after -d, or when the targets exit (the UI then\n"
		"stays on the final data until q). Its control socket is PID.sock in\n"
		"$SONDE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/sonde, else /run/sonde (root)\n"
		"or /tmp/sonde-UID (owner-only; see sonde ctl --help).\n");
}

enum { OPT_TOP = 1000 };

struct top_options {
	bool batch;
	long iterations; /* 0 = until the session ends */
	size_t top_n;
	struct live_args la;
};

static int top_option(void *ctx, int c, const char *arg)
{
	struct top_options *t = ctx;
	int shared = live_args_parse_option(&t->la, c, arg);
	if (shared)
		return shared < 0 ? -1 : 0;
	switch (c) {
	case 'b':
		t->batch = true;
		return 0;
	case 'n':
		return session_args_iterations(arg, &t->iterations);
	case OPT_TOP: {
		uint64_t rows;
		if (optval_count("--top", arg, 1, 10000, &rows))
			return -1;
		t->top_n = (size_t)rows;
		return 0;
	}
	}
	return -1;
}

/* -b: a text snapshot every interval, -n of them at most. */
struct batch {
	struct liverun *run;
	const struct top_options *o;
	long snapshots;
};

static void batch_show(void *arg, struct live_view *v)
{
	struct batch *b = arg;
	live_view_print(stdout, v, b->o->top_n);
	fflush(stdout);
	live_view_free(v);
	if (b->o->iterations && ++b->snapshots >= b->o->iterations)
		liverun_stop(b->run);
}

static double batch_interval(void *arg)
{
	return ((struct batch *)arg)->o->la.interval;
}

int cmd_top(int argc, char **argv)
{
	static const struct option own[] = {
		{"batch", no_argument, NULL, 'b'},
		{"iterations", required_argument, NULL, 'n'},
		{"top", required_argument, NULL, OPT_TOP},
		LIVE_ARGS_LONG_OPTS,
		{0}};
	struct session_options so;
	session_options_init(&so);
	so.live = true; /* probes come and go: calibrate sonde's own cost for them */
	struct top_options to = {.top_n = 15};
	live_args_init(&to.la);
	struct session_command cmd = {"bi:n:", own, top_option, usage, &to};
	int exit_code;
	if (session_args_getopt(&so, argc, argv, &cmd, &exit_code))
		return exit_code;
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--") != 0) {
			errorf("unexpected argument '%s': put the command to run after --", argv[optind]);
			return 2;
		}
		so.cmd = &argv[optind];
	}
	live_args_apply_time(&to.la, &so);
	so.cmd_output = to.la.target_output ? to.la.target_output : to.batch ? NULL : "/dev/null";
	if (live_args_check(&to.la))
		return 2;
	if (!to.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		errorf("the UI needs a terminal: use -b for text snapshots (sonde top -b -i 2)");
		return 2;
	}
	struct session *s = session_args_start(&so, argc, argv, &exit_code);
	if (!s)
		return exit_code;
	struct liverun *r = live_args_start_run(&to.la, s, !to.batch);
	if (!r)
		return 2;
	live_args_run_cmds(&to.la, r, to.batch ? stdout : stderr);
	struct batch batch = {.run = r, .o = &to};
	struct tui *tui = NULL;
	char err[1024];
	if (to.batch) {
		const char *path = liverun_ctl_path(r);
		fprintf(stderr, "sonde: live session %d%s%s; Ctrl-C to end\n", (int)getpid(),
			path ? ", control socket " : "", path ? path : "");
		fflush(stdout);
		liverun_set_display(r, &(struct liverun_display){batch_show, batch_interval, NULL,
								to.top_n, &batch});
	} else {
		struct tui_options tuio = {.refresh_s = to.la.interval, .source_dir = to.la.source_dir};
		tui = tui_open(&tuio, err, sizeof(err));
		if (!tui || tui_attach(tui, r, err, sizeof(err))) {
			tui_close(tui);
			errorf("%s", err);
			liverun_free(r);
			session_free(s);
			return 1;
		}
	}
	int rc = liverun_run(r, err, sizeof(err));
	tui_close(tui);
	return live_args_finish(r, s, rc, err);
}
