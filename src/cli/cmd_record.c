/* sonde record — sample stacks (and trace calls) into a recording file. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "errbuf.h"
#include "recording.h"
#include "optval.h"
#include "session_args.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sonde record [-F HZ | -c PERIOD] [-e EVENT] [-a | -p PID[,PID...]|NAME | -- CMD "
		"ARGS...]\n"
		"                    [--no-children | --exact-children] [-d SECONDS] [--trace FUNC]...\n"
		"                    [--sample-in FUNC]\n"
		"                    [--sample-slow FUNC:DURATION] [--sample-when FILE:LINE] [--all-calls]\n"
		"                    [--unwind fp|cfi|auto] [--no-python]\n"
		"                    [--off-cpu [--min-block DURATION] [--wakers]]\n"
		"                    [--threads [--threads-hz HZ]] [--ready-file FILE] -o FILE\n"
		"\n"
		"Samples user and kernel stacks of the targets, traces the calls of the functions\n"
		"given with --trace, and writes a recording (SQLite).\n"
		"  -F, --freq HZ        samples per second per CPU (default 99; cpu-clock/task-clock)\n"
		"  -c, --count PERIOD   sample every PERIOD events instead of a frequency\n"
		"  -e, --event EVENT    cpu-clock (default), task-clock, page-faults, minor-faults,\n"
		"                       major-faults, context-switches, cpu-migrations, or a\n"
		"                       tracepoint category:name (e.g. sched:sched_switch)\n"
		"  -a, --all-cpus       profile the whole system\n"
		"  -p, --pid PID,...    profile running processes: all their threads, their\n"
		"                       descendants, and the threads and processes they create\n"
		"  -p NAME, --pid-of NAME  every running process whose command name or\n"
		"                       executable is NAME (listed on stderr)\n"
		"      --no-children    only the processes given (or the command): not their\n"
		"                       descendants, nor the processes they create\n"
		"      --exact-children the probes on their files for every process, so that a\n"
		"                       process the targets create counts from its first call\n"
		"                       (else it gets its probes ~1 ms after its fork); every\n"
		"                       other process running the code then takes the trap\n"
		"  -- CMD ARGS...       start CMD and profile it from its first instruction\n"
		"  -d, --duration SEC   stop after SEC seconds of sampling (default: until Ctrl-C,\n"
		"                       or the command / all PIDs exit); sonde's set-up before it\n"
		"                       (loading its BPF programs) is not counted: the summary\n"
		"                       says how long it took\n"
		"  --trace FUNC         trace every call of FUNC (repeatable): FUNC, BINARY:FUNC,\n"
		"                       LIB:FUNC (e.g. libc:malloc), or a glob (handle_*); LIB\n"
		"                       is the library the target maps, or will load (RUNPATH,\n"
		"                       LD_LIBRARY_PATH, ld.so.cache), in every process it runs;\n"
		"                       at most 252 at once (a glob naming more is refused);\n"
		"                       an IFUNC (libc:strlen) is traced at the implementation\n"
		"                       the target uses (-v says which); the entry point,\n"
		"                       noreturn functions and symbols inside an instruction\n"
		"                       are refused (a glob leaves them out, with a note)\n"
		"  --trace FILE:LINE    count every time a source line runs (also BINARY:FILE:LINE,\n"
		"                       LIB:FILE:LINE; FILE a base name or a path suffix): at\n"
		"                       each address where the line begins a statement, once per\n"
		"                       inlined or out-of-line copy (from the DWARF line table),\n"
		"                       and in which traced calls it ran (report: line N ran in\n"
		"                       X%% of the calls of F)\n"
		"  --trace 'branch FILE:LINE[#K]', --trace 'branch FUNC+0xOFF'\n"
		"                       count each conditional jump of the line (every inlined\n"
		"                       copy; #K: only its K-th jump) or at that address, taken\n"
		"                       and not taken, exactly, in the kernel: two probes per jump\n"
		"                       (\"branch FILE:LINE taken\", \"... not-taken\"; with #K when\n"
		"                       the line has several), each a line probe (report: where\n"
		"                       each way goes, and in which calls it happened)\n"
		"  --trace 'FUNC VAR... [if EXPR]', --trace 'FILE:LINE VAR... [if EXPR]'\n"
		"                       also read variables (C paths: len, req->hdr.size, buf[3],\n"
		"                       *p, &x, globals) at each call's entry, or at each hit of\n"
		"                       the line (what is in scope there, per inlined copy);\n"
		"                       if EXPR keeps only the calls or hits where it holds,\n"
		"                       decided in the kernel at each call's entry: a function's\n"
		"                       calls, histogram, percentiles, slow calls and the samples\n"
		"                       in them are those where it held; 'entered' counts every\n"
		"                       call (report: values per variable)\n"
		"  --trace usdt:BINARY:PROVIDER:NAME\n"
		"                       count every hit of a USDT probe (a point probe, as a\n"
		"                       line; its arguments arg0, arg1, ... read as VARs);\n"
		"                       PROVIDER and NAME may be globs (gc__*): a probe each;\n"
		"                       usdt:BINARY:PROVIDER:ENTRY,RETURN traces calls, each from\n"
		"                       an ENTRY hit to the RETURN hit that closes it (the same\n"
		"                       pointer arguments: sonde probe -e BINARY --usdt lists them)\n"
		"  --trace py:MODULE.QUALNAME, --trace py:FILE.py:QUALNAME\n"
		"                       time the calls of one Python function (app.handle,\n"
		"                       app.Server.handle) as a function's: CPython 3.12+ run\n"
		"                       with -X perf (its calls go through the trampolines),\n"
		"                       or a 3.11 with USDT probes; 'py:app.handle path n'\n"
		"                       reads its arguments path and n at each call (--by)\n"
		"  --all-calls          keep a record of every traced call (for timelines: chrome,\n"
		"                       flame charts); by default calls are counted in the kernel's\n"
		"                       histograms and only those samples landed in and those\n"
		"                       over the p99 so far cross to user space (cheaper per call)\n"
		"  --unwind MODE        how user stacks are walked: auto (default: the binaries'\n"
		"                       unwind tables, in the kernel; frame pointers where a\n"
		"                       binary has none), cfi (tables only), fp (frame pointers)\n"
		"  --no-python          native stacks only: no Python frames (by default the\n"
		"                       samples of a CPython 3.10-3.13 process show its Python\n"
		"                       functions in place of the interpreter loop running them)\n"
		"  --off-cpu            also record where threads wait: an interval with the\n"
		"                       stacks, state and system call each time a target thread\n"
		"                       leaves the CPU and comes back (report/flame --off-cpu,\n"
		"                       --wall); every context switch of the machine then runs\n"
		"                       a tracepoint program\n"
		"  --min-block DURATION  with --off-cpu: intervals shorter than this are counted,\n"
		"                       not recorded (default 5us)\n"
		"  --wakers             with --off-cpu (implied): also who woke each wait (the\n"
		"                       waking thread's stacks at sched_waking: report/flame\n"
		"                       --wakers)\n"
		"  --threads            also sample every target thread's state, running or not\n"
		"                       (xcapture-style): state and since when, the system call\n"
		"                       it is in and since when, its traced call in flight; -F\n"
		"                       passes a second over all threads (table thread_samples)\n"
		"  --threads-hz HZ      with --threads: passes a second (default: -F)\n"
		"  --sample-in FUNC     take samples only while FUNC runs on the thread (in-kernel)\n"
		"  --sample-slow FUNC:DURATION  take samples only once the current call of FUNC\n"
		"                       has run longer than DURATION (e.g. 5ms; in-kernel)\n"
		"  --sample-when FILE:LINE  take samples only in calls of the traced functions\n"
		"                       during which that line has run (in-kernel; give --trace\n"
		"                       for the function too); --sample-when 'branch FILE:LINE[#K]\n"
		"                       taken' (or not-taken): during which that jump went that way\n"
		"  -o, --output FILE    the recording to write (required; a regular file, written\n"
		"                       beside FILE and renamed into place when complete); when\n"
		"                       it cannot be written (a full disk), it is saved to\n"
		"                       $TMPDIR (or /tmp, /var/tmp, $HOME) instead and the error\n"
		"                       says where\n"
		"      --buffer-mb MB   BPF ring buffer size (power of two, default 16)\n"
		"  --ready-file FILE    once every probe is attached and sampling is on, write\n"
		"                       sonde's PID to FILE (atomically; an old FILE is removed\n"
		"                       at the start): a script waits for FILE before it starts\n"
		"                       the load it wants recorded\n"
		"  -v, --verbose        show libbpf's messages\n");
}

struct record_args {
	const char *output;
	struct session_options *so;
};

enum { OPT_ALL_CALLS = 3000, OPT_THREADS, OPT_THREADS_HZ };

static int record_option(void *ctx, int c, const char *arg)
{
	struct record_args *a = ctx;
	if (c == OPT_ALL_CALLS) {
		a->so->all_calls = true;
		return 0;
	}
	if (c == OPT_THREADS) {
		a->so->threads = true;
		return 0;
	}
	if (c == OPT_THREADS_HZ) {
		uint64_t hz;
		if (optval_count("--threads-hz", arg, 1, SESSION_THREADS_HZ_MAX, &hz))
			return -1;
		a->so->threads = true;
		a->so->threads_hz = hz;
		return 0;
	}
	if (c != 'o')
		return -1;
	a->output = arg;
	return 0;
}

int cmd_record(int argc, char **argv)
{
	static const struct option own[] = {{"output", required_argument, NULL, 'o'},
					    {"all-calls", no_argument, NULL, OPT_ALL_CALLS},
					    {"threads", no_argument, NULL, OPT_THREADS},
					    {"threads-hz", required_argument, NULL, OPT_THREADS_HZ},
					    {0}};
	struct session_options so;
	session_options_init(&so);
	struct record_args args = {NULL, &so};
	struct session_command cmd = {"o:", own, record_option, usage, &args};
	int exit_code;
	if (session_args_getopt(&so, argc, argv, &cmd, &exit_code))
		return exit_code;
	if (optind < argc)
		so.cmd = &argv[optind];
	const char *output = args.output;
	if (!output) {
		errorf("record needs an output file: -o FILE");
		return 2;
	}
	char err[1024];
	if (recording_check_writable(output, err, sizeof(err))) {
		errorf("%s", err);
		return 1;
	}
	struct session *s = session_args_start(&so, argc, argv, &exit_code);
	if (!s)
		return exit_code;
	int rc = 0;
	if (session_run(s, err, sizeof(err))) {
		errorf("%s", err);
		rc = 1;
	}
	struct recording_image *img = recording_build(session_profile(s), err, sizeof(err));
	if (!img) {
		errorf("%s", err);
		rc = 1;
	} else if (recording_image_write(img, output, err, sizeof(err))) {
		/* What was recorded is not lost: it goes where there is room. */
		char saved[4096];
		if (recording_image_rescue(img, output, saved, sizeof(saved)) == 0)
			errorf("%s; the recording was saved to %s instead: move it where there is "
			       "room",
			       err, saved);
		else
			errorf("%s; no other place had room for it either ($TMPDIR or /tmp, "
			       "/var/tmp, $HOME): the recording is lost",
			       err);
		rc = 1;
	} else {
		char what[512];
		snprintf(what, sizeof(what), "recorded to %s:", output);
		session_print_summary(s, what, stderr);
	}
	recording_image_free(img);
	session_free(s);
	return rc;
}
