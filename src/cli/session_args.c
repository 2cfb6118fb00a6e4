/* session_args — the options every session command shares. The contract is
 * in session_args.h. */
#include "session_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "latency.h"
#include "optval.h"
#include "target.h"
#include "util.h"

int session_args_interval(const char *arg, double *seconds)
{
	return optval_number("-i", arg, "seconds", 0.05, 3600, seconds);
}

int session_args_iterations(const char *arg, long *n)
{
	uint64_t v;
	if (optval_count("-n", arg, 1, 1000000000, &v))
		return -1;
	*n = (long)v;
	return 0;
}

int session_args_parse_option(struct session_options *o, int c, const char *arg)
{
	char err[256];
	double v;
	switch (c) {
	case 'F':
		if (optval_number("-F", arg, "a number", 1, 100000, &v))
			return -1;
		o->freq = (uint64_t)v;
		o->freq_given = true;
		return 1;
	case 'c':
		if (optval_number("-c", arg, "a number", 1, 1e12, &v))
			return -1;
		o->period = (uint64_t)v;
		return 1;
	case 'e':
		o->event = arg;
		return 1;
	case 'a':
		o->system_wide = true;
		return 1;
	case 'p':
		if (*arg && !target_is_pid_list(arg)) {
			o->pid_of = arg; /* a process name (--pid-of for one that starts with a digit) */
			o->npids = 0;
			return 1;
		}
		o->pid_of = NULL;
		o->npids = target_parse_pids(arg, o->pids, SESSION_MAX_PIDS, err, sizeof(err));
		if (o->npids < 0) {
			errorf("%s", err);
			return -1;
		}
		return 1;
	case SESSION_OPT_PID_OF:
		if (!*arg || strchr(arg, '/')) {
			errorf("bad process name '%s' for --pid-of: expected a command name such as "
			       "nginx",
			       arg);
			return -1;
		}
		o->pid_of = arg;
		o->npids = 0;
		return 1;
	case SESSION_OPT_NO_CHILDREN:
		o->no_children = true;
		return 1;
	case SESSION_OPT_EXACT_CHILDREN:
		o->exact_children = true;
		return 1;
	case SESSION_OPT_NO_PYTHON:
		o->no_python = true;
		return 1;
	case SESSION_OPT_UNWIND:
		if (session_unwind_parse(arg, &o->unwind) != 0) {
			errorf("bad value '%s' for --unwind: expected fp, cfi or auto", arg);
			return -1;
		}
		return 1;
	case SESSION_OPT_OFF_CPU:
		o->off_cpu = true;
		return 1;
	case SESSION_OPT_WAKERS:
		o->wakers = o->off_cpu = true;
		return 1;
	case SESSION_OPT_MIN_BLOCK:
		if (duration_parse(arg, &o->min_block_ns, err, sizeof(err))) {
			errorf("bad value '%s' for --min-block: %s", arg, err);
			return -1;
		}
		return 1;
	case 'd':
		return optval_number("-d", arg, "a number", 0.001, 1e7, &o->duration) ? -1 : 1;
	case 'B':
		if (optval_number("--buffer-mb", arg, "a number", 1, 4096, &v))
			return -1;
		o->ringbuf_mb = (size_t)v;
		if (o->ringbuf_mb & (o->ringbuf_mb - 1)) {
			errorf("--buffer-mb must be a power of two (got %s)", arg);
			return -1;
		}
		return 1;
	case 'v':
		o->verbose = true;
		return 1;
	case 'T':
		if (o->ntraces == SESSION_MAX_TRACES) {
			errorf("too many --trace options (at most %d)", SESSION_MAX_TRACES);
			return -1;
		}
		o->traces[o->ntraces++] = arg;
		return 1;
	case 'I':
		o->sample_in = arg;
		return 1;
	case 'S':
		o->sample_slow = arg;
		return 1;
	case SESSION_OPT_SAMPLE_WHEN:
		o->sample_when = arg;
		return 1;
	case SESSION_OPT_READY_FILE:
		o->ready_file = arg;
		return 1;
	}
	return 0;
}

/* Notes of a session: one error line each, as every message of sonde. */
static void print_note(void *arg, const char *line)
{
	(void)arg;
	errorf("%s", line);
}

/* libbpf's messages (-v), as they come. */
static void print_log(void *arg, const char *text)
{
	(void)arg;
	fputs(text, stderr);
}

int session_args_getopt(struct session_options *o, int argc, char **argv,
			const struct session_command *cmd, int *exit_code)
{
	static const struct option shared[] = {SESSION_LONG_OPTS};
	struct option all[64];
	size_t n = 0;
	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
		all[n++] = shared[i];
	for (const struct option *x = cmd->own_long; x && x->name && n < 62; x++)
		all[n++] = *x;
	all[n++] = (struct option){"help", no_argument, NULL, 'h'};
	all[n] = (struct option){0};
	char shortopts[128];
	snprintf(shortopts, sizeof(shortopts), "+%s%sh", SESSION_SHORT_OPTS,
		 cmd->own_short ? cmd->own_short : "");
	o->note = print_note;
	o->log = print_log;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, all, NULL)) != -1) {
		int r = session_args_parse_option(o, c, optarg);
		if (r > 0)
			continue;
		if (r == 0 && c == 'h') {
			cmd->usage(stdout);
			*exit_code = 0;
			return 1;
		}
		if (r == 0 && c != '?' && cmd->own && cmd->own(cmd->ctx, c, optarg) == 0)
			continue;
		if (r == 0 && c == '?')
			cmd->usage(stderr);
		*exit_code = 2;
		return 1;
	}
	return 0;
}

struct session *session_args_start(struct session_options *o, int argc, char **argv,
				   int *exit_code)
{
	char err[1024];
	if (session_check_options(o, err, sizeof(err))) {
		errorf("%s", err);
		*exit_code = 2;
		return NULL;
	}
	struct session *s = session_start(o, argc, argv, err, sizeof(err));
	if (!s) {
		errorf("%s", err);
		*exit_code = 1;
	}
	return s;
}
