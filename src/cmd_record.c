/* sonde record — sample stacks into a recording file. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "commands.h"
#include "engine.h"
#include "profile.h"
#include "recording.h"
#include "symbols.h"
#include "target.h"
#include "util.h"

#define MAX_PIDS 256

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde record [-F HZ | -c PERIOD] [-e EVENT] [-a | -p PID[,PID...] | -- CMD "
		"ARGS...]\n"
		"                    [-d SECONDS] -o FILE\n"
		"\n"
		"Samples user and kernel stacks of the targets and writes a recording (SQLite).\n"
		"  -F, --freq HZ        samples per second per CPU (default 99; cpu-clock/task-clock)\n"
		"  -c, --count PERIOD   sample every PERIOD events instead of a frequency\n"
		"  -e, --event EVENT    cpu-clock (default), task-clock, page-faults, minor-faults,\n"
		"                       major-faults, context-switches, cpu-migrations, or a\n"
		"                       tracepoint category:name (e.g. sched:sched_switch)\n"
		"  -a, --all-cpus       profile the whole system\n"
		"  -p, --pid PID,...    profile running processes (all threads, and new ones)\n"
		"  -- CMD ARGS...       start CMD and profile it from its first instruction\n"
		"  -d, --duration SEC   stop after SEC seconds (default: until Ctrl-C, or the\n"
		"                       command / all PIDs exit)\n"
		"  -o, --output FILE    the recording to write (required)\n"
		"      --buffer-mb MB   BPF ring buffer size (power of two, default 16)\n"
		"  -v, --verbose        show libbpf's messages\n");
}

struct record_args {
	const char *event;
	uint64_t freq, period;
	bool freq_given;
	bool system_wide;
	pid_t pids[MAX_PIDS];
	int npids;
	double duration;
	const char *output;
	size_t ringbuf_mb;
	bool verbose;
	char **cmd;
};

static int parse_number(const char *opt, const char *s, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || v < min || v > max) {
		errorf("bad value '%s' for %s: expected a number from %g to %g", s, opt, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct record_args *a)
{
	static const struct option opts[] = {
		{"freq", required_argument, NULL, 'F'},
		{"count", required_argument, NULL, 'c'},
		{"event", required_argument, NULL, 'e'},
		{"all-cpus", no_argument, NULL, 'a'},
		{"pid", required_argument, NULL, 'p'},
		{"duration", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"buffer-mb", required_argument, NULL, 'B'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	memset(a, 0, sizeof(*a));
	a->event = "cpu-clock";
	a->freq = 99;
	a->ringbuf_mb = 16;
	char err[256];
	double v;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+F:c:e:ap:d:o:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (parse_number("-F", optarg, 1, 100000, &v))
				return -1;
			a->freq = (uint64_t)v;
			a->freq_given = true;
			break;
		case 'c':
			if (parse_number("-c", optarg, 1, 1e12, &v))
				return -1;
			a->period = (uint64_t)v;
			break;
		case 'e':
			a->event = optarg;
			break;
		case 'a':
			a->system_wide = true;
			break;
		case 'p':
			a->npids = target_parse_pids(optarg, a->pids, MAX_PIDS, err, sizeof(err));
			if (a->npids < 0) {
				errorf("%s", err);
				return -1;
			}
			break;
		case 'd':
			if (parse_number("-d", optarg, 0.001, 1e7, &a->duration))
				return -1;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'B':
			if (parse_number("--buffer-mb", optarg, 1, 4096, &v))
				return -1;
			a->ringbuf_mb = (size_t)v;
			if (a->ringbuf_mb & (a->ringbuf_mb - 1)) {
				errorf("--buffer-mb must be a power of two (got %s)", optarg);
				return -1;
			}
			break;
		case 'v':
			a->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc)
		a->cmd = &argv[optind];
	if (!a->output) {
		errorf("record needs an output file: -o FILE");
		return -1;
	}
	int modes = (a->system_wide ? 1 : 0) + (a->npids > 0 ? 1 : 0) + (a->cmd ? 1 : 0);
	if (modes != 1) {
		errorf("say what to profile: exactly one of -a, -p PID, or -- CMD ARGS...");
		return -1;
	}
	if (a->period && a->freq_given) {
		errorf("-F and -c exclude each other: sample by frequency or by period");
		return -1;
	}
	return 0;
}

static double now_s(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void add_metadata(struct profile *p, const struct record_args *a, int argc, char **argv,
			 double start_mono, double end_mono, double start_wall,
			 const struct engine_stats *es, const struct collector_stats *cs)
{
	char buf[4096];
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < argc && off < sizeof(buf) - 1; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? " " : "", argv[i]);
	profile_meta_set(p, "command_line", buf);
	profile_meta_set(p, "event", a->event);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(a->period ? 0 : a->freq));
	profile_meta_set(p, "frequency_hz", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)a->period);
	profile_meta_set(p, "period", buf);
	struct utsname u;
	if (uname(&u) == 0) {
		snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
		profile_meta_set(p, "kernel", buf);
		profile_meta_set(p, "hostname", u.nodename);
	}
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(start_mono * 1e9));
	profile_meta_set(p, "start_ns", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(end_mono * 1e9));
	profile_meta_set(p, "end_ns", buf);
	snprintf(buf, sizeof(buf), "%.6f", end_mono - start_mono);
	profile_meta_set(p, "duration_s", buf);
	snprintf(buf, sizeof(buf), "%.6f", start_wall);
	profile_meta_set(p, "start_unix_s", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)es->lost_samples);
	profile_meta_set(p, "lost_samples", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)es->lost_task);
	profile_meta_set(p, "lost_task_events", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)cs->stack_errors);
	profile_meta_set(p, "stack_errors", buf);
	profile_meta_set(p, "target", a->system_wide ? "system-wide" : a->cmd ? "command" : "pids");
}

static bool any_pid_alive(const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		if (target_pid_alive(pids[i]))
			return true;
	return false;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a;
	if (parse_args(argc, argv, &a))
		return 2;

	char err[512];
	struct engine_options eo = {0};
	if (events_parse(a.event, &eo.event, err, sizeof(err))) {
		errorf("%s", err);
		return 2;
	}
	if (!eo.event.time_based && !a.period && !a.freq_given)
		a.period = 1; /* count events, not time: every occurrence by default */
	eo.freq = a.period ? 0 : a.freq;
	eo.period = a.period;
	eo.system_wide = a.system_wide;
	eo.ringbuf_bytes = a.ringbuf_mb << 20;
	eo.verbose = a.verbose;

	for (int i = 0; i < a.npids; i++) {
		if (!target_pid_alive(a.pids[i])) {
			errorf("no process with PID %d (it does not exist or has exited)",
			       (int)a.pids[i]);
			return 1;
		}
	}
	if (recording_check_writable(a.output, err, sizeof(err))) {
		errorf("%s", err);
		return 1;
	}

	struct profile *prof = profile_new();
	struct symbolizer *syms = symbols_new();
	struct collector *col = collector_new(prof, syms);
	collector_set_event(col, 0, eo.event.name, 1);
	eo.on_record = collector_handle;
	eo.arg = col;

	struct target_cmd cmd = {0};
	struct engine *eng = NULL;
	int rc = 1;
	if (a.cmd && target_spawn(a.cmd, &cmd, err, sizeof(err))) {
		errorf("%s", err);
		goto out;
	}
	eng = engine_open(&eo, err, sizeof(err));
	if (!eng) {
		errorf("%s", err);
		goto out;
	}
	if (a.cmd && engine_add_pid(eng, cmd.pid, err, sizeof(err))) {
		errorf("%s", err);
		goto out;
	}
	for (int i = 0; i < a.npids; i++) {
		if (engine_add_pid(eng, a.pids[i], err, sizeof(err))) {
			errorf("%s", err);
			goto out;
		}
		symbols_note_process(syms, a.pids[i]);
	}
	if (engine_start(eng, err, sizeof(err))) {
		errorf("%s", err);
		goto out;
	}

	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	double start_mono = now_s(CLOCK_MONOTONIC), start_wall = now_s(CLOCK_REALTIME);
	if (a.cmd) {
		if (target_release(&cmd, err, sizeof(err))) {
			errorf("%s: %s", a.cmd[0], err);
			goto out;
		}
		symbols_note_process(syms, cmd.pid);
	}

	while (!stop_requested) {
		if (engine_poll(eng, 100) < 0) {
			errorf("reading the BPF ring buffer failed: %s", strerror(errno));
			break;
		}
		if (a.duration > 0 && now_s(CLOCK_MONOTONIC) - start_mono >= a.duration)
			break;
		if (a.cmd && target_cmd_exited(&cmd))
			break;
		if (a.npids && !any_pid_alive(a.pids, a.npids))
			break;
	}
	double end_mono = now_s(CLOCK_MONOTONIC);
	engine_stop(eng);
	while (engine_poll(eng, 0) > 0) /* drain what was sampled before the stop */
		;

	struct engine_stats es;
	struct collector_stats cs;
	engine_get_stats(eng, &es);
	collector_get_stats(col, &cs);
	add_metadata(prof, &a, argc, argv, start_mono, end_mono, start_wall, &es, &cs);

	if (recording_save(prof, a.output, err, sizeof(err))) {
		errorf("%s", err);
		goto out;
	}
	fprintf(stderr, "sonde: recorded %llu samples in %.2f s to %s", (unsigned long long)cs.samples,
		end_mono - start_mono, a.output);
	if (es.lost_samples || es.lost_task)
		fprintf(stderr, " (lost %llu samples, %llu process events: ring buffer full; "
				"try --buffer-mb or a lower -F)",
			(unsigned long long)es.lost_samples, (unsigned long long)es.lost_task);
	fputc('\n', stderr);
	rc = 0;
	if (a.cmd && target_cmd_exited(&cmd) && WIFEXITED(cmd.wait_status) &&
	    WEXITSTATUS(cmd.wait_status) != 0)
		fprintf(stderr, "sonde: note: the command exited with status %d\n",
			WEXITSTATUS(cmd.wait_status));
out:
	if (a.cmd && cmd.pid > 0 && !cmd.exited) {
		/* sonde started it and the recording ended first (-d, Ctrl-C or an
		 * error): stop it rather than leave it running unobserved. */
		target_cmd_kill(&cmd);
	}
	engine_close(eng);
	collector_free(col);
	symbols_free(syms);
	profile_free(prof);
	return rc;
}
