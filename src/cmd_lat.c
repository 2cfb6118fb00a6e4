/* sonde lat — latency histograms and percentiles of traced functions, live
 * (funclatency, without a recording file). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "latency.h"
#include "printable.h"
#include "session.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde lat [-p PID[,PID...]|NAME | -a] [--no-children] [-i SECONDS] [-d SECONDS]\n"
		"                 FUNC... [-- CMD ARGS...]\n"
		"\n"
		"Traces every call of each FUNC (FUNC, BINARY:FUNC, LIB:FUNC or a glob) and prints\n"
		"calls, mean, p50/p90/p95/p99/p99.9/max and a log2 histogram per function: at the\n"
		"end, and every SECONDS with -i (counts of that interval). Ends at Ctrl-C, after\n"
		"-d, or when the command / all PIDs exit. -p takes the processes' descendants\n"
		"and the processes they create too (--no-children: not), -p NAME every process\n"
		"of that name; a LIB:FUNC probe counts the calls of each of them.\n");
}

struct lat_state {
	size_t printed_spans; /* spans already shown in an interval */
	bool interval;
};

static void print_probe(const struct profile *p, uint32_t probe, size_t from)
{
	uint64_t *d = xmalloc((p->nspans - from + 1) * sizeof(*d));
	size_t n = 0;
	for (size_t i = from; i < p->nspans; i++)
		if (p->spans[i].probe == probe)
			d[n++] = p->spans[i].duration_ns;
	struct latency_stats st;
	latency_compute(d, n, &st);
	struct latency_hist h = {0};
	for (size_t i = 0; i < n; i++)
		latency_hist_add(&h, d[i], 1);
	free(d);
	char b[7][32], name[512];
	printf("%s: %" PRIu64 " calls", printable_copy(name, sizeof(name), p->probes[probe].name),
	       st.count);
	if (st.count)
		printf(", mean %s  p50 %s  p90 %s  p95 %s  p99 %s  p99.9 %s  max %s",
		       duration_format((uint64_t)st.mean_ns, b[0], 32),
		       duration_format(st.p50_ns, b[1], 32), duration_format(st.p90_ns, b[2], 32),
		       duration_format(st.p95_ns, b[3], 32), duration_format(st.p99_ns, b[4], 32),
		       duration_format(st.p999_ns, b[5], 32), duration_format(st.max_ns, b[6], 32));
	printf("\n");
	latency_hist_print(stdout, &h, 40);
}

static void print_interval(struct profile *p, struct lat_state *ls)
{
	time_t now = time(NULL);
	char when[32];
	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	printf("\n[%s]\n", when);
	for (size_t i = 0; i < p->nprobes; i++)
		print_probe(p, (uint32_t)i, ls->printed_spans);
	ls->printed_spans = p->nspans;
}

static int on_tick(struct session *s, void *arg, bool final)
{
	struct lat_state *ls = arg;
	struct profile *p = session_profile(s);
	/* With -i, the calls since the last interval form one more interval, so
	 * the intervals always add up to the totals. */
	if (ls->interval)
		print_interval(p, ls);
	if (final) {
		printf("\n%s:\n", ls->interval ? "All calls" : "Calls");
		for (size_t i = 0; i < p->nprobes; i++)
			print_probe(p, (uint32_t)i, 0);
	}
	fflush(stdout);
	return 0;
}

static int lat_option(void *ctx, int c, const char *arg)
{
	double *interval = ctx;
	if (c != 'i')
		return -1;
	*interval = atof(arg);
	if (*interval <= 0) {
		errorf("bad interval '%s': expected seconds > 0", arg);
		return -1;
	}
	return 0;
}

int cmd_lat(int argc, char **argv)
{
	static const struct option own[] = {{"interval", required_argument, NULL, 'i'}, {0}};
	struct session_options so;
	session_options_init(&so);
	so.no_sampling = true;
	double interval = 0;
	struct session_command cmd = {"i:", own, lat_option, usage, &interval};
	int exit_code;
	if (session_getopt(&so, argc, argv, &cmd, &exit_code))
		return exit_code;
	/* FUNC... then, after "--", the command. */
	bool dashdash_eaten = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
	for (int i = optind; i < argc; i++) {
		if (!dashdash_eaten && strcmp(argv[i], "--") == 0) {
			so.cmd = i + 1 < argc ? &argv[i + 1] : NULL;
			break;
		}
		if (dashdash_eaten) {
			so.cmd = &argv[i];
			break;
		}
		if (session_parse_option(&so, 'T', argv[i]) < 0)
			return 2;
	}
	if (so.ntraces == 0) {
		errorf("name at least one function to trace: sonde lat FUNC... [-- CMD]");
		return 2;
	}
	if (session_check_options(&so))
		return 2;
	struct session *s = session_start(&so, argc, argv);
	if (!s)
		return 1;
	fprintf(stderr, "sonde: tracing %zu function(s); Ctrl-C to end\n",
		session_profile(s)->nprobes);
	struct lat_state ls = {.interval = interval > 0};
	int rc = session_run(s, on_tick, interval, &ls);
	session_print_summary(s, "traced");
	session_free(s);
	return rc;
}
