/* live_args — the live frontends' shared options. The contract is in
 * live_args.h. */
#include "live_args.h"

#include <stdlib.h>

#include "command.h"
#include "errbuf.h"
#include "optval.h"
#include "session_args.h"
#include "util.h"

void live_args_init(struct live_args *a)
{
	*a = (struct live_args){.interval = 1};
	live_options_init(&a->live);
}

static int span_option(const char *opt, const char *arg, double *seconds)
{
	uint64_t ns;
	if (command_parse_span(arg, &ns) || ns < 1000000000ull) {
		errorf("bad %s '%s': use seconds (10), or 30s, 5m, 1h (at least 1s)", opt, arg);
		return -1;
	}
	*seconds = (double)ns / 1e9;
	return 0;
}

int live_args_parse_option(struct live_args *a, int c, const char *arg)
{
	switch (c) {
	case 'i':
		return session_args_interval(arg, &a->interval) ? -1 : 1;
	case LIVE_OPT_CMD: {
		struct command cmd;
		char err[512];
		if (a->ncmds == LIVE_ARGS_MAX_CMDS) {
			errorf("too many --cmd options (at most %d)", LIVE_ARGS_MAX_CMDS);
			return -1;
		}
		if (command_parse(arg, &cmd, err, sizeof(err))) {
			errorf("--cmd '%s': %s", arg, err);
			return -1;
		}
		a->cmds[a->ncmds++] = arg;
		return 1;
	}
	case LIVE_OPT_WINDOW:
		a->window_given = true;
		a->live.ewma = false;
		return span_option("--window", arg, &a->live.window_s) ? -1 : 1;
	case LIVE_OPT_EWMA:
		a->window_given = true;
		a->live.ewma = true;
		return span_option("--ewma", arg, &a->live.halflife_s) ? -1 : 1;
	case LIVE_OPT_KEEP:
		return span_option("--keep", arg, &a->live.keep_s) ? -1 : 1;
	case LIVE_OPT_KEEP_CALLS: {
		uint64_t n;
		if (optval_count("--keep-calls", arg, 1000, 100000000, &n))
			return -1;
		a->live.max_spans = (size_t)n;
		return 1;
	}
	case LIVE_OPT_TARGET_OUTPUT:
		a->target_output = arg;
		return 1;
	case LIVE_OPT_SOURCE_DIR:
		a->source_dir = arg;
		return 1;
	case LIVE_OPT_NO_CTL:
		a->no_ctl = true;
		return 1;
	case LIVE_OPT_SHOW_OVERHEAD:
		a->live.show_overhead = true;
		return 1;
	case LIVE_OPT_WALL:
		a->live.time = VIEW_WALL;
		return 1;
	}
	return 0;
}

void live_args_apply_time(struct live_args *a, struct session_options *so)
{
	if (a->live.time == VIEW_WALL)
		so->off_cpu = true;
	else if (so->off_cpu)
		a->live.time = VIEW_OFF_CPU;
}

int live_args_check(const struct live_args *a)
{
	if (a->live.window_s > a->live.keep_s) {
		errorf("--window %gs is longer than --keep %gs: keep at least as much as "
		       "the window",
		       a->live.window_s, a->live.keep_s);
		return -1;
	}
	return 0;
}

struct liverun *live_args_start_run(const struct live_args *a, struct session *s,
				    bool stay_after_exit)
{
	struct liverun_options ro = {
		.live = a->live, .no_ctl = a->no_ctl, .stay_after_exit = stay_after_exit};
	char err[1024];
	struct liverun *r = liverun_new(s, &ro, err, sizeof(err));
	if (!r) {
		errorf("%s", err);
		session_free(s);
	}
	return r;
}

void live_args_run_cmds(const struct live_args *a, struct liverun *r, FILE *out)
{
	for (int i = 0; i < a->ncmds; i++) {
		fprintf(out, "> %s\n", a->cmds[i]);
		liverun_exec(r, a->cmds[i], out);
	}
	fflush(out);
}

int live_args_finish(struct liverun *r, struct session *s, int rc, const char *err)
{
	if (rc) {
		errorf("%s", err);
		rc = 1;
	}
	session_print_summary(s, "gathered", stderr);
	char msg[8192];
	int rescued = live_rescue_unsaved(liverun_live(r), msg, sizeof(msg));
	if (rescued)
		errorf("%s", msg);
	if (rescued < 0)
		rc = 1;
	liverun_free(r);
	session_free(s);
	return rc;
}
