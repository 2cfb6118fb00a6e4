/* sonde serve — the live session in a browser: the same session as `sonde
 * top` (liverun), with the HTTP server (web/) as its frontend. This file
 * parses the options and prints the URL. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <math.h>

#include "commands.h"
#include "errbuf.h"
#include "formats.h"
#include "http.h"
#include "live_args.h"
#include "liverun.h"
#include "page.h"
#include "session_args.h"
#include "util.h"
#include "webapi.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: sonde serve [-p PID[,PID...]|NAME | -a | -- CMD ARGS...] "
		   "[OPTIONS]\n"
		   "       sonde serve [OPTIONS] FILE\n"
		   "\n"
		   "The live session of `sonde top`, in a browser: a flame graph that "
		   "updates in\n"
		   "place, the hottest functions, per-probe latency, and the command "
		   "language to\n"
		   "steer it. The first line printed is the URL to open; it holds the "
		   "session's\n"
		   "token, without which the server answers nothing.\n"
		   "\n"
		   "Target and sampling (as sonde record):\n"
		   "  -p PID[,PID...]    running processes (their threads, descendants, "
		   "children)\n"
		   "  -p NAME, --pid-of NAME  every process of that command name or "
		   "executable\n"
		   "  --no-children      only those processes (or the command): no "
		   "descendants\n"
		   "  --exact-children   probes on their files for every process: a new "
		   "child\n"
		   "                     is traced from its first instruction, not ~1 ms "
		   "later\n"
		   "  -a                 the whole system\n"
		   "  -- CMD ARGS...     start CMD and profile it (it is stopped when serve "
		   "ends)\n"
		   "  -F HZ, -c PERIOD, -e EVENT, --trace FUNC, --sample-in FUNC,\n"
		   "  --sample-slow FUNC:DUR, -d SECONDS, --buffer-mb MB, -v   as sonde "
		   "record\n"
		   "  --off-cpu, --wall  record off-CPU intervals; the views count off-CPU or\n"
		   "                     wall-clock time (as sonde top)\n"
		   "  --ready-file FILE  write sonde's PID to FILE once it samples, every probe\n"
		   "                     is attached, the --cmd commands ran and the server\n"
		   "                     listens (see record --help)\n"
		   "\n"
		   "Server:\n"
		   "  --port N           TCP port (default 0: any free port; the URL says "
		   "which)\n"
		   "  --listen ADDR      address to listen on (default 127.0.0.1). Another "
		   "address\n"
		   "                     lets other machines reach the session: anyone with "
		   "the\n"
		   "                     URL can then steer it (a warning says so)\n"
		   "  -i, --interval S   seconds between updates of the page (default 1)\n"
		   "\n"
		   "Live session (as sonde top):\n"
		   "  --cmd CMD          run a session command at the start (repeatable)\n"
		   "  --window DUR, --ewma HALFLIFE, --keep DUR, --keep-calls N, "
		   "--show-overhead\n"
		   "  --no-ctl           do not listen for sonde ctl\n"
		   "  --target-output F  where the started command's stdout and stderr go\n"
		   "  --source-dir DIR   the page's explorer looks for source files under DIR\n"
		   "                     first (as sonde explore --source-dir)\n"
		   "\n"
		   "It ends at Ctrl-C or after -d. When the targets exit the page stays on "
		   "the\n"
		   "final data until Ctrl-C. The HTTP API is in docs/http-api.md.\n"
		   "\n"
		   "FILE: a recording (sonde record -o FILE.sonde, or any profile sonde "
		   "reads),\n"
		   "browsed offline: views, search, histograms, bands, windows and save work;\n"
		   "trace, untrace, sample and reset answer an error. The window covers the "
		   "whole\n"
		   "recording unless --window or --ewma says otherwise.\n");
}

enum { OPT_PORT = 1000, OPT_LISTEN };

struct serve_options {
	struct live_args la;
	long port;
	const char *listen;
};

static int serve_option(void *ctx, int c, const char *arg)
{
	struct serve_options *o = ctx;
	int shared = live_args_parse_option(&o->la, c, arg);
	if (shared)
		return shared < 0 ? -1 : 0;
	char *end;
	switch (c) {
	case OPT_PORT:
		o->port = strtol(arg, &end, 10);
		if (*end || o->port < 0 || o->port > 65535) {
			errorf("bad --port '%s': a TCP port from 0 (any free one) to 65535", arg);
			return -1;
		}
		return 0;
	case OPT_LISTEN:
		o->listen = arg;
		return 0;
	}
	return -1;
}

static bool is_loopback(const char *addr)
{
	return !addr || strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0;
}

/* A recording as a session: its window and what is held cover all of it
 * (unless --window/--ewma asked otherwise). */
static struct session *open_recording(const char *file, struct session_options *so,
				      struct live_args *la, char *err, size_t errlen)
{
	char why[1024];
	struct profile *p = formats_load(file, NULL, NULL, why, sizeof(why));
	if (!p) {
		errbuf_set(err, errlen, "%s", why);
		return NULL;
	}
	struct session *s = session_replay(p, file, so, err, errlen);
	if (!s) {
		profile_free(p);
		return NULL;
	}
	double span = ceil(session_end_time(s) - session_start_time(s)) + 1;
	if (la->live.keep_s < span)
		la->live.keep_s = span;
	if (!la->window_given)
		la->live.window_s = la->live.keep_s;
	if (la->live.max_spans < p->nspans + 1)
		la->live.max_spans = p->nspans + 1;
	return s;
}

int cmd_serve(int argc, char **argv)
{
	static const struct option own[] = {{"port", required_argument, NULL, OPT_PORT},
					    {"listen", required_argument, NULL, OPT_LISTEN},
					    LIVE_ARGS_LONG_OPTS,
					    {0}};
	struct session_options so;
	session_options_init(&so);
	so.live = true;
	struct serve_options o = {0};
	live_args_init(&o.la);
	struct session_command cmd = {"i:", own, serve_option, usage, &o};
	int exit_code;
	if (session_args_getopt(&so, argc, argv, &cmd, &exit_code))
		return exit_code;
	const char *file = NULL;
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--") == 0) {
			so.cmd = &argv[optind];
		} else if (optind + 1 < argc) {
			errorf("unexpected argument '%s': serve one recording, options before it "
			       "(sonde serve [OPTIONS] FILE), or put the command to run after --",
			       argv[optind + 1]);
			return 2;
		} else {
			file = argv[optind];
		}
	}
	if (file && (so.npids || so.pid_of || so.system_wide)) {
		errorf("both a recording (%s) and a target to profile: serve one of them", file);
		return 2;
	}
	if (file && (so.ntraces || so.freq_given || so.period || so.sample_in || so.sample_slow ||
		     so.duration > 0)) {
		errorf("%s is a recording: tracing and sampling options (--trace, -F, -c, "
		       "--sample-in, --sample-slow, -d) apply to live sessions only",
		       file);
		return 2;
	}
	live_args_apply_time(&o.la, &so);
	if (live_args_check(&o.la))
		return 2;
	so.cmd_output = o.la.target_output;
	/* The URL is the first line of output: a command sharing our stdout
	 * runs only once it is printed (and the server listens). */
	so.hold_cmd = true;
	char err[1024];
	char token[HTTP_TOKEN_HEX + 1];
	if (http_token_new(token, sizeof(token), err, sizeof(err))) {
		errorf("%s", err);
		return 1;
	}
	struct session *s = file ? open_recording(file, &so, &o.la, err, sizeof(err))
				 : session_args_start(&so, argc, argv, &exit_code);
	if (!s && file) {
		errorf("%s", err);
		return 1;
	}
	if (!s)
		return exit_code;
	struct liverun *r = live_args_start_run(&o.la, s, true);
	if (!r)
		return 2;
	struct http_options ho = {.listen = o.listen, .port = (uint16_t)o.port, .token = token};
	struct http_server *http = http_server_open(liverun_loop(r), &ho, err, sizeof(err));
	if (!http) {
		errorf("%s", err);
		liverun_free(r);
		session_free(s);
		return 1;
	}
	struct webapi *api = webapi_new(r, http, o.la.interval);
	webapi_set_source_dir(api, o.la.source_dir);
	page_routes(http);
	const char *host = o.listen ? o.listen : "127.0.0.1";
	bool v6 = strchr(host, ':') != NULL;
	printf("http://%s%s%s:%u/?token=%s\n", v6 ? "[" : "", host, v6 ? "]" : "",
	       (unsigned)http_server_port(http), token);
	fflush(stdout);
	if (session_release_cmd(s, err, sizeof(err))) {
		errorf("%s", err);
		http_server_close(http);
		webapi_free(api);
		liverun_free(r);
		session_free(s);
		return 1;
	}
	if (!is_loopback(o.listen))
		errorf("warning: listening on %s: anyone who can reach it and has the URL can "
		       "steer this session",
		       o.listen);
	live_args_run_cmds(&o.la, r, stderr);
	const char *path = liverun_ctl_path(r);
	if (file)
		fprintf(stderr, "sonde: serving the recording %s%s%s; Ctrl-C to end\n", file,
			path ? ", control socket " : "", path ? path : "");
	else
		fprintf(stderr, "sonde: live session %d%s%s; Ctrl-C to end\n", (int)getpid(),
			path ? ", control socket " : "", path ? path : "");
	int rc = liverun_run(r, err, sizeof(err));
	http_server_close(http);
	webapi_free(api);
	return live_args_finish(r, s, rc, err);
}
