/* session_args: the options every session command shares (-i, -n and
 * session_args_parse_option), and session_args_getopt's walk of a command
 * line with a command's own options. Accepted values land in the
 * session_options; a bad one is -1 and exactly one error line on stderr.
 * Each test runs in its own process, so the stderr it checks is its own. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <getopt.h>
#include <stdint.h>
#include <string.h>

#include "session_args.h"

TestSuite(session_args, .init = cr_redirect_stderr);

static struct session_options opts(void)
{
	struct session_options o;
	session_options_init(&o);
	return o;
}

static void assert_stderr(const char *want)
{
	fflush(stderr);
	cr_assert_stderr_eq_str(want);
}

Test(session_args, interval_in_seconds)
{
	double s = 0;
	cr_assert_eq(session_args_interval("0.05", &s), 0);
	cr_assert_eq(s, 0.05);
	cr_assert_eq(session_args_interval("3600", &s), 0);
	cr_assert_eq(s, 3600.0);
	cr_assert_eq(session_args_interval("0.01", &s), -1);
	cr_assert_eq(session_args_interval("1s", &s), -1);
	cr_assert_eq(s, 3600.0);
	assert_stderr("sonde: bad value '0.01' for -i: expected seconds from 0.05 to 3600\n"
		      "sonde: bad value '1s' for -i: expected seconds from 0.05 to 3600\n");
}

Test(session_args, iterations_are_a_count)
{
	long n = 0;
	cr_assert_eq(session_args_iterations("1", &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(session_args_iterations("1000000000", &n), 0);
	cr_assert_eq(n, 1000000000L);
	cr_assert_eq(session_args_iterations("0", &n), -1);
	cr_assert_eq(session_args_iterations("2.5", &n), -1);
	cr_assert_eq(n, 1000000000L);
	assert_stderr("sonde: bad value '0' for -n: expected a whole number from 1 to 1000000000\n"
		      "sonde: bad value '2.5' for -n: expected a whole number from 1 to "
		      "1000000000\n");
}

Test(session_args, sampling_options)
{
	struct session_options o = opts();
	cr_assert_not(o.freq_given);
	cr_assert_eq(session_args_parse_option(&o, 'F', "999"), 1);
	cr_assert_eq(o.freq, 999);
	cr_assert(o.freq_given);
	cr_assert_eq(session_args_parse_option(&o, 'c', "1e6"), 1);
	cr_assert_eq(o.period, 1000000);
	cr_assert_eq(session_args_parse_option(&o, 'e', "cycles"), 1);
	cr_assert_str_eq(o.event, "cycles");
	cr_assert_eq(session_args_parse_option(&o, 'a', NULL), 1);
	cr_assert(o.system_wide);
	cr_assert_eq(session_args_parse_option(&o, 'd', "2.5"), 1);
	cr_assert_eq(o.duration, 2.5);
	cr_assert_eq(session_args_parse_option(&o, 'B', "64"), 1);
	cr_assert_eq(o.ringbuf_mb, 64);
	cr_assert_eq(session_args_parse_option(&o, 'v', NULL), 1);
	cr_assert(o.verbose);
	assert_stderr("");
}

Test(session_args, bad_sampling_values)
{
	struct session_options o = opts();
	uint64_t freq = o.freq;
	cr_assert_eq(session_args_parse_option(&o, 'F', "100001"), -1);
	cr_assert_eq(o.freq, freq);
	cr_assert_not(o.freq_given);
	cr_assert_eq(session_args_parse_option(&o, 'c', "0"), -1);
	cr_assert_eq(session_args_parse_option(&o, 'd', "0"), -1);
	cr_assert_eq(session_args_parse_option(&o, 'B', "0.5"), -1);
	cr_assert_eq(session_args_parse_option(&o, 'B', "48"), -1);
	assert_stderr("sonde: bad value '100001' for -F: expected a number from 1 to 100000\n"
		      "sonde: bad value '0' for -c: expected a number from 1 to 1000000000000\n"
		      "sonde: bad value '0' for -d: expected a number from 0.001 to 10000000\n"
		      "sonde: bad value '0.5' for --buffer-mb: expected a number from 1 to 4096\n"
		      "sonde: --buffer-mb must be a power of two (got 48)\n");
}

Test(session_args, pids_and_process_names)
{
	struct session_options o = opts();
	cr_assert_eq(session_args_parse_option(&o, 'p', "12,34"), 1);
	cr_assert_eq(o.npids, 2);
	cr_assert_eq(o.pids[0], 12);
	cr_assert_eq(o.pids[1], 34);
	cr_assert_null(o.pid_of);
	/* A word that does not start with a digit is a process name. */
	cr_assert_eq(session_args_parse_option(&o, 'p', "nginx"), 1);
	cr_assert_str_eq(o.pid_of, "nginx");
	cr_assert_eq(o.npids, 0);
	/* ... and a PID list again forgets the name. */
	cr_assert_eq(session_args_parse_option(&o, 'p', "7"), 1);
	cr_assert_null(o.pid_of);
	cr_assert_eq(o.npids, 1);
	cr_assert_eq(o.pids[0], 7);
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_PID_OF, "9lives"), 1);
	cr_assert_str_eq(o.pid_of, "9lives");
	cr_assert_eq(o.npids, 0);
	assert_stderr("");
}

Test(session_args, bad_pids_and_process_names)
{
	struct session_options o = opts();
	cr_assert_eq(session_args_parse_option(&o, 'p', "12x"), -1);
	cr_assert_eq(session_args_parse_option(&o, 'p', "0"), -1);
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_PID_OF, ""), -1);
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_PID_OF, "/usr/bin/x"), -1);
	cr_assert_null(o.pid_of);
	assert_stderr("sonde: bad PID list '12x': expected PID[,PID...]\n"
		      "sonde: bad PID list '0': expected PID[,PID...]\n"
		      "sonde: bad process name '' for --pid-of: expected a command name such as "
		      "nginx\n"
		      "sonde: bad process name '/usr/bin/x' for --pid-of: expected a command name "
		      "such as nginx\n");
}

Test(session_args, children_unwind_and_off_cpu)
{
	struct session_options o = opts();
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_NO_CHILDREN, NULL), 1);
	cr_assert(o.no_children);
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_EXACT_CHILDREN, NULL), 1);
	cr_assert(o.exact_children);
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_UNWIND, "cfi"), 1);
	cr_assert_str_eq(session_unwind_name(o.unwind), "cfi");
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_UNWIND, "fp"), 1);
	cr_assert_str_eq(session_unwind_name(o.unwind), "fp");
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_OFF_CPU, NULL), 1);
	cr_assert(o.off_cpu);
	cr_assert_not(o.wakers);
	struct session_options w = opts();
	cr_assert_eq(session_args_parse_option(&w, SESSION_OPT_WAKERS, NULL), 1);
	cr_assert(w.wakers);
	cr_assert(w.off_cpu, "--wakers implies --off-cpu");
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_MIN_BLOCK, "750us"), 1);
	cr_assert_eq(o.min_block_ns, 750000);
	assert_stderr("");
}

Test(session_args, bad_unwind_and_min_block)
{
	struct session_options o = opts();
	enum session_unwind before = o.unwind;
	uint64_t min_block = o.min_block_ns;
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_UNWIND, "dwarf"), -1);
	cr_assert_eq(o.unwind, before);
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_MIN_BLOCK, "5x"), -1);
	cr_assert_eq(o.min_block_ns, min_block);
	assert_stderr("sonde: bad value 'dwarf' for --unwind: expected fp, cfi or auto\n"
		      "sonde: bad value '5x' for --min-block: bad duration '5x': use a number "
		      "with ns, us, ms or s, e.g. 750us\n");
}

Test(session_args, traces_and_sampling_conditions)
{
	struct session_options o = opts();
	cr_assert_eq(session_args_parse_option(&o, 'T', "libc:malloc"), 1);
	cr_assert_eq(session_args_parse_option(&o, 'T', "main"), 1);
	cr_assert_eq(o.ntraces, 2);
	cr_assert_str_eq(o.traces[0], "libc:malloc");
	cr_assert_str_eq(o.traces[1], "main");
	cr_assert_eq(session_args_parse_option(&o, 'I', "handle"), 1);
	cr_assert_str_eq(o.sample_in, "handle");
	cr_assert_eq(session_args_parse_option(&o, 'S', "handle:5ms"), 1);
	cr_assert_str_eq(o.sample_slow, "handle:5ms");
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_SAMPLE_WHEN, "x.c:10"), 1);
	cr_assert_str_eq(o.sample_when, "x.c:10");
	cr_assert_eq(session_args_parse_option(&o, SESSION_OPT_READY_FILE, "/tmp/r"), 1);
	cr_assert_str_eq(o.ready_file, "/tmp/r");
	assert_stderr("");
}

Test(session_args, too_many_traces)
{
	struct session_options o = opts();
	for (int i = 0; i < SESSION_MAX_TRACES; i++)
		cr_assert_eq(session_args_parse_option(&o, 'T', "f"), 1);
	cr_assert_eq(session_args_parse_option(&o, 'T', "one_more"), -1);
	cr_assert_eq(o.ntraces, SESSION_MAX_TRACES);
	assert_stderr("sonde: too many --trace options (at most 64)\n");
}

Test(session_args, other_options_are_left_to_the_command)
{
	struct session_options o = opts();
	cr_assert_eq(session_args_parse_option(&o, 'o', "out"), 0);
	cr_assert_eq(session_args_parse_option(&o, 'h', NULL), 0);
	assert_stderr("");
}

/* ---- session_args_getopt: a command line with a command's own options -- */

struct own {
	const char *output;
	int calls;
	int fail; /* the own handler refuses (returns -1) */
};

static int own_option(void *ctx, int c, const char *arg)
{
	struct own *w = ctx;
	w->calls++;
	if (w->fail || c != 'o')
		return -1;
	w->output = arg;
	return 0;
}

static void own_usage(FILE *f)
{
	fprintf(f, "usage: test\n");
}

static const struct option own_long[] = {{"output", required_argument, NULL, 'o'}, {0}};

static int run(struct session_options *o, struct own *w, char **argv, int *exit_code)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	struct session_command cmd = {"o:", own_long, own_option, own_usage, w};
	opterr = 0; /* getopt's own message is not what this checks */
	return session_args_getopt(o, argc, argv, &cmd, exit_code);
}

Test(session_args, getopt_takes_shared_and_own_options_and_stops_at_the_command)
{
	struct session_options o = opts();
	struct own w = {0};
	char *argv[] = {"test", "-F", "49", "--output", "x.sonde", "--off-cpu", "-p", "5",
			"--", "./prog", "-F", "1", NULL};
	int code = -1;
	cr_assert_eq(run(&o, &w, argv, &code), 0);
	cr_assert_eq(code, -1, "exit_code is only set when the command is to end");
	cr_assert_eq(o.freq, 49);
	cr_assert(o.off_cpu);
	cr_assert_eq(o.npids, 1);
	cr_assert_eq(o.pids[0], 5);
	cr_assert_str_eq(w.output, "x.sonde");
	cr_assert_eq(w.calls, 1);
	cr_assert_str_eq(argv[optind], "./prog");
	cr_assert_not_null(o.note);
	assert_stderr("");
}

Test(session_args, getopt_stops_at_the_first_word)
{
	struct session_options o = opts();
	struct own w = {0};
	char *argv[] = {"test", "-a", "./prog", "-F", "1", NULL};
	int code = -1;
	cr_assert_eq(run(&o, &w, argv, &code), 0);
	cr_assert(o.system_wide);
	cr_assert_not(o.freq_given, "-F after the command is the command's");
	cr_assert_str_eq(argv[optind], "./prog");
}

Test(session_args, getopt_help_ends_with_0)
{
	cr_redirect_stdout();
	struct session_options o = opts();
	struct own w = {0};
	char *argv[] = {"test", "--help", NULL};
	int code = -1;
	cr_assert_eq(run(&o, &w, argv, &code), 1);
	cr_assert_eq(code, 0);
	fflush(stdout);
	cr_assert_stdout_eq_str("usage: test\n");
	assert_stderr("");
}

Test(session_args, getopt_bad_shared_value_ends_with_2)
{
	struct session_options o = opts();
	struct own w = {0};
	char *argv[] = {"test", "-F", "0", "-o", "x", NULL};
	int code = -1;
	cr_assert_eq(run(&o, &w, argv, &code), 1);
	cr_assert_eq(code, 2);
	cr_assert_eq(w.calls, 0, "parsing stops at the bad value");
	assert_stderr("sonde: bad value '0' for -F: expected a number from 1 to 100000\n");
}

Test(session_args, getopt_unknown_option_prints_usage_and_ends_with_2)
{
	struct session_options o = opts();
	struct own w = {0};
	char *argv[] = {"test", "--no-such", NULL};
	int code = -1;
	cr_assert_eq(run(&o, &w, argv, &code), 1);
	cr_assert_eq(code, 2);
	cr_assert_eq(w.calls, 0, "'?' never reaches the command's handler");
	assert_stderr("usage: test\n");
}

Test(session_args, getopt_own_refusal_ends_with_2)
{
	struct session_options o = opts();
	struct own w = {.fail = 1};
	char *argv[] = {"test", "-o", "x", NULL};
	int code = -1;
	cr_assert_eq(run(&o, &w, argv, &code), 1);
	cr_assert_eq(code, 2);
	cr_assert_eq(w.calls, 1);
	assert_stderr("");
}
