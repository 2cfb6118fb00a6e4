/* sonde lat — latency histograms and percentiles of traced functions, live
 * (funclatency, without a recording file). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "errbuf.h"
#include "latency.h"
#include "printable.h"
#include "session_args.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde lat [-p PID[,PID...]|NAME | -a] [--no-children | --exact-children]\n"
		"                 [-i SECONDS] [-d SECONDS]\n"
		"                 FUNC... [-- CMD ARGS...]\n"
		"\n"
		"Traces every call of each FUNC (FUNC, BINARY:FUNC, LIB:FUNC or a glob) and prints\n"
		"calls, mean, p50/p90/p95/p99/p99.9/max and a log2 histogram per function: at the\n"
		"end, and every SECONDS with -i (0.05 to 3600; counts of that interval). Ends at\n"
		"Ctrl-C, after -d, or when the command / all PIDs exit. -p takes the processes'\n"
		"descendants and the processes they create too (--no-children: not; a new one\n"
		"gets its probes ~1 ms after its fork, --exact-children: from its first\n"
		"instruction, with the probes on the file for every process), -p NAME\n"
		"every process of that name; a LIB:FUNC probe counts the calls of each of them.\n"
		"A 'FUNC VAR... if EXPR' (record --help) times only the calls where EXPR held at\n"
		"their entry: its line says how many of how many entered.\n"
		"  --ready-file FILE  write sonde's PID to FILE once every FUNC is traced (see\n"
		"                     record --help)\n");
}

struct lat_state {
	uint64_t (*shown)[LATENCY_LOGLIN_BUCKETS]; /* per probe: counts already shown in an
						    * interval */
	uint64_t *shown_entered; /* per probe: calls entered already shown */
	size_t nshown;
	double interval;      /* -i seconds; 0 = none */
	struct session *s;
	int timer;
	uint64_t next_ns;     /* when the next interval ends */
};

/* Prints the calls a probe's histogram counts (the kernel's, of every call;
 * with a predicate, of every call where it held, out of `entered`). */
static void print_probe(const struct profile *p, uint32_t probe, const uint64_t *counts,
			uint64_t entered)
{
	size_t n;
	uint64_t total;
	uint64_t *d = latency_loglin_durations(counts, 1u << 20, &n, &total);
	struct latency_stats st;
	latency_compute(d, n, &st);
	free(d);
	struct latency_hist h = {0};
	for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++) {
		uint64_t lo, hi;
		latency_loglin_bounds(b, &lo, &hi);
		if (counts[b])
			latency_hist_add(&h, lo, counts[b]);
	}
	char b[7][32], name[512];
	printf("%s", printable_copy(name, sizeof(name), p->probes[probe].name));
	if (p->probes[probe].predicate)
		printf(" where %s: %" PRIu64 " calls of %" PRIu64 " entered",
		       printable_copy(name, sizeof(name), p->probes[probe].predicate), total,
		       entered);
	else
		printf(": %" PRIu64 " calls", total);
	if (total)
		printf(", mean %s  p50 %s  p90 %s  p95 %s  p99 %s  p99.9 %s  max %s",
		       duration_format((uint64_t)st.mean_ns, b[0], 32),
		       duration_format(st.p50_ns, b[1], 32), duration_format(st.p90_ns, b[2], 32),
		       duration_format(st.p95_ns, b[3], 32), duration_format(st.p99_ns, b[4], 32),
		       duration_format(st.p999_ns, b[5], 32), duration_format(st.max_ns, b[6], 32));
	printf("\n");
	latency_hist_print(stdout, &h, 40);
}

static void print_interval(struct session *s, struct lat_state *ls)
{
	struct profile *p = session_profile(s);
	time_t now = time(NULL);
	char when[32];
	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	printf("\n[%s]\n", when);
	session_refresh_calls(s);
	if (ls->nshown < p->nprobes) {
		ls->shown = xrealloc(ls->shown, p->nprobes * sizeof(*ls->shown));
		memset(ls->shown + ls->nshown, 0, (p->nprobes - ls->nshown) * sizeof(*ls->shown));
		ls->shown_entered =
			xrealloc(ls->shown_entered, p->nprobes * sizeof(*ls->shown_entered));
		memset(ls->shown_entered + ls->nshown, 0,
		       (p->nprobes - ls->nshown) * sizeof(*ls->shown_entered));
		ls->nshown = p->nprobes;
	}
	uint64_t delta[LATENCY_LOGLIN_BUCKETS];
	for (size_t i = 0; i < p->nprobes; i++) {
		for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++) {
			uint64_t now_b = p->probes[i].hist[b];
			delta[b] = now_b > ls->shown[i][b] ? now_b - ls->shown[i][b] : 0;
			ls->shown[i][b] = now_b;
		}
		uint64_t entered = p->probes[i].entered;
		print_probe(p, (uint32_t)i, delta,
			    entered > ls->shown_entered[i] ? entered - ls->shown_entered[i] : 0);
		ls->shown_entered[i] = entered;
	}
}

/* Intervals end every -i seconds from the start, on the session's loop. */
static void arm_interval(struct lat_state *ls)
{
	ls->next_ns += (uint64_t)(ls->interval * 1e9);
	loop_timer_at(session_loop(ls->s), ls->timer, ls->next_ns);
}

static void on_interval(void *arg)
{
	struct lat_state *ls = arg;
	print_interval(ls->s, ls);
	fflush(stdout);
	arm_interval(ls);
}

static void print_final(struct lat_state *ls)
{
	struct profile *p = session_profile(ls->s);
	/* With -i, the calls since the last interval form one more interval, so
	 * the intervals always add up to the totals. */
	if (ls->interval > 0)
		print_interval(ls->s, ls);
	printf("\n%s:\n", ls->interval > 0 ? "All calls" : "Calls");
	for (size_t i = 0; i < p->nprobes; i++)
		print_probe(p, (uint32_t)i, p->probes[i].hist, p->probes[i].entered);
	fflush(stdout);
}

static int lat_option(void *ctx, int c, const char *arg)
{
	if (c != 'i')
		return -1;
	return session_args_interval(arg, ctx);
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
	if (session_args_getopt(&so, argc, argv, &cmd, &exit_code))
		return exit_code;
	if (so.off_cpu) {
		errorf("lat times calls and shows no stacks: --off-cpu works with record, top, "
		       "serve and slow");
		return 2;
	}
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
		if (session_args_parse_option(&so, 'T', argv[i]) < 0)
			return 2;
	}
	if (so.ntraces == 0) {
		errorf("name at least one function to trace: sonde lat FUNC... [-- CMD]");
		return 2;
	}
	struct session *s = session_args_start(&so, argc, argv, &exit_code);
	if (!s)
		return exit_code;
	/* Every figure comes from the kernel's histograms: no call needs a
	 * record. */
	for (size_t i = 0; i < session_profile(s)->nprobes; i++)
		session_keep_calls_over(s, (uint32_t)i, UINT64_MAX);
	fprintf(stderr, "sonde: tracing %zu function(s); Ctrl-C to end\n",
		session_profile(s)->nprobes);
	struct lat_state ls = {.interval = interval, .s = s};
	if (interval > 0) {
		ls.timer = loop_timer_new(session_loop(s), on_interval, &ls);
		ls.next_ns = (uint64_t)(session_start_time(s) * 1e9);
		arm_interval(&ls);
	}
	int rc = 0;
	char err[1024];
	if (session_run(s, err, sizeof(err))) {
		errorf("%s", err);
		rc = 1;
	}
	print_final(&ls);
	session_print_summary(s, "traced", stderr);
	free(ls.shown);
	free(ls.shown_entered);
	session_free(s);
	return rc;
}
