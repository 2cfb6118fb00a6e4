/* sonde threads — every target thread's state, live (xcapture-style): a
 * table of the threads by state, system call, time in them and the traced
 * call in flight, from the last pass of the thread-state sampler. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "commands.h"
#include "errbuf.h"
#include "session_args.h"
#include "threadstates.h"
#include "threadtable.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde threads [-p PID[,PID...]|NAME | -a | -- CMD ARGS...] [-F HZ] [-b] [-s]\n"
		"                     [-i SECONDS] [-n N] [-d SECONDS] [--trace FUNC]...\n"
		"\n"
		"Shows every thread of the targets, running or not, as tracepoints keep its\n"
		"state (sched_switch, sched_wakeup, raw_syscalls): a table by state (running,\n"
		"runnable, disk, uninterruptible, sleeping, stopped), with the time in that\n"
		"state, the system call it is in and the time in it, the traced call in\n"
		"flight (--trace) with its elapsed time, and its stack: the user functions,\n"
		"innermost first, of the stack it last left the CPU with (a thread blocked in\n"
		"read: read < the function that called it < ...). A time that began before\n"
		"sonde did is a lower bound (\">1.20s\"). Refreshed every interval; ends at\n"
		"Ctrl-C, after -d or -n, or when the command / all PIDs exit.\n"
		"  -p, --pid PID,...    the threads of these processes (and their children)\n"
		"  -a, --all-cpus       every thread of the system\n"
		"  -- CMD ARGS...       start CMD and show its threads\n"
		"  -F, --freq HZ        passes over all threads a second (default 10)\n"
		"  -b, --batch          print a snapshot every interval (no screen clearing)\n"
		"  -s, --stacks         print each thread's whole last stack (kernel frames\n"
		"                       marked [k]) under its row\n"
		"  -i, --interval S     between snapshots, seconds (default 1)\n"
		"  -n, --iterations N   end after N snapshots\n"
		"  -d, --duration SEC   end after SEC seconds\n"
		"  --trace FUNC         trace FUNC: a thread inside a call shows it and its\n"
		"                       elapsed time (as record --trace)\n"
		"  --ready-file FILE    write sonde's PID to FILE once the states are taken and\n"
		"                       every probe is attached (see record --help)\n"
		"To keep the states: sonde record --threads (table thread_samples).\n");
}

struct threads_args {
	bool batch;
	bool stacks;
	double interval;
	long iterations;
};

static int threads_option(void *ctx, int c, const char *arg)
{
	struct threads_args *a = ctx;
	switch (c) {
	case 'b':
		a->batch = true;
		return 0;
	case 's':
		a->stacks = true;
		return 0;
	case 'i':
		return session_args_interval(arg, &a->interval);
	case 'n':
		return session_args_iterations(arg, &a->iterations);
	}
	return -1;
}

struct threads_live {
	struct session *s;
	struct threads_args *a;
	int timer;
	long shown;
	bool tty;
};

static void show(struct threads_live *tl)
{
	struct profile *p = session_profile(tl->s);
	struct threadstate_row *rows;
	uint64_t when;
	size_t n = threadstates_last_pass(p, &rows, &when);
	if (tl->tty && !tl->a->batch)
		fputs("\033[H\033[2J", stdout);
	else if (tl->shown)
		fputc('\n', stdout);
	/* On a terminal, rows as wide as it (the stack is the last column). */
	struct winsize ws;
	size_t width = tl->tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
	if (n) {
		threadtable_print(stdout, p, rows, n, when, tl->a->stacks ? 0 : width);
		for (size_t i = 0; i < n && tl->a->stacks; i++) {
			printf("stack of %u:\n", p->threads[rows[i].ts->thread].tid);
			threadtable_print_stack(stdout, p, rows[i].ts, 4);
		}
	} else
		printf("threads: no pass yet\n");
	fflush(stdout);
	free(rows);
	/* Memory stays bounded: the last pass, and the calls that ended since. */
	profile_trim(p, p->nsamples, when, 100000);
	tl->shown++;
}

static void on_timer(void *arg)
{
	struct threads_live *tl = arg;
	show(tl);
	if (tl->a->iterations && tl->shown >= tl->a->iterations) {
		loop_stop(session_loop(tl->s));
		return;
	}
	loop_timer_in(session_loop(tl->s), tl->timer, tl->a->interval);
}

int cmd_threads(int argc, char **argv)
{
	static const struct option own[] = {{"batch", no_argument, NULL, 'b'},
					    {"stacks", no_argument, NULL, 's'},
					    {"interval", required_argument, NULL, 'i'},
					    {"iterations", required_argument, NULL, 'n'},
					    {0}};
	struct session_options so;
	session_options_init(&so);
	struct threads_args a = {.interval = 1};
	struct session_command cmd = {"bsi:n:", own, threads_option, usage, &a};
	int exit_code;
	if (session_args_getopt(&so, argc, argv, &cmd, &exit_code))
		return exit_code;
	if (optind < argc)
		so.cmd = &argv[optind];
	if (so.off_cpu || so.period || so.sample_in || so.sample_slow || so.sample_when) {
		errorf("threads takes no on-CPU or off-CPU sampling options (-c, --off-cpu, "
		       "--sample-*): use sonde record --threads with them");
		return 2;
	}
	/* No on-CPU sampling: -F is the passes' rate. */
	so.threads = true;
	so.threads_hz = so.freq_given ? so.freq : 10;
	so.no_sampling = true;
	struct session *s = session_args_start(&so, argc, argv, &exit_code);
	if (!s)
		return exit_code;
	struct threads_live tl = {.s = s, .a = &a, .tty = isatty(STDOUT_FILENO)};
	tl.timer = loop_timer_new(session_loop(s), on_timer, &tl);
	loop_timer_in(session_loop(s), tl.timer, a.interval);
	int rc = 0;
	char err[1024];
	if (session_run(s, err, sizeof(err))) {
		errorf("%s", err);
		rc = 1;
	}
	session_print_summary(s, "showed", stderr);
	session_free(s);
	return rc;
}
