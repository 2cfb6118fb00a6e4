/* cmdtable — the commands: for each its name, its parser (cmdargs), its
 * usage and its help text; finding one by name, the nearest name to a
 * mistyped one, and help (command_help). */
#include "cmdtable.h"

#include <string.h>

#include "cmdargs.h"
#include "cmdsuggest.h"
#include "errbuf.h"

static int parse_help(const struct command_info *ci, const struct words *w, struct command *c,
		      char *err, size_t errlen)
{
	char sb[SHOW_MAX + 4];
	if (w->n > 2)
		return too_many(ci, err, errlen);
	c->kind = CMD_HELP;
	if (w->n == 1)
		return 0;
	if (!info_find(w->w[1])) {
		const char *near = suggest_command(w->w[1]);
		if (near)
			return errbuf_set(err, errlen,
					  "no command '%s' to help with: did you mean %s? (help lists "
					  "the commands)", word_show(w->w[1], sb), near);
		return errbuf_set(err, errlen,
				  "no command '%s' to help with: help lists the commands",
				  word_show(w->w[1], sb));
	}
	return take_arg(ci, "COMMAND", w->w[1], c, err, errlen);
}

static const struct command_info commands[] = {
	{"trace", CMD_TRACE, parse_trace, "FUNC", "trace FUNC [VAR...] [if EXPR]",
	 "trace calls of FUNC (also LIB:FUNC, globs)", "FUNC",
	 "trace handle_request",
	 "Traces every call of FUNC (a uprobe and a uretprobe) while the session runs:\n"
	 "calls, durations, and which samples were taken inside each call.\n"
	 "FUNC is a function of the target's executable, BINARY:FUNC, LIB:FUNC\n"
	 "(libc:malloc), or a glob (handle_*: one probe per match). All of them or\n"
	 "none: at most 252 are traced at once, and a glob naming more is refused.\n"
	 "An IFUNC (libc:strlen) is traced at the implementation the target uses.\n"
	 "The entry point (_start), functions that never return and symbols inside\n"
	 "an instruction are refused; a glob leaves them out and says so.\n"
	 "Quote a name that has spaces: trace \"operator new(unsigned long)\".\n"
	 "VARs are read at each call's entry (C paths: len, req->hdr.size, buf[3], *p,\n"
	 "&x, globals; char arrays and char * as strings); `if EXPR` keeps only the\n"
	 "calls where it holds (comparisons, && || !, arithmetic), decided in the kernel\n"
	 "at their entry: the probe's calls, latencies, slow calls and the samples in\n"
	 "them are those calls (`status` says how many entered in all).\n"
	 "FILE:LINE (also BINARY:FILE:LINE, LIB:FILE:LINE) traces a source line:\n"
	 "its hits, at every inlined or out-of-line copy of its code, and in which\n"
	 "traced calls it ran (sonde probe -e BINARY --lines FUNC lists them); VARs\n"
	 "after a line are read at each hit, from what is in scope there (sonde probe\n"
	 "-e BINARY --vars FILE:LINE), and a hit failing `if EXPR` sends nothing.\n"
	 "e.g.  trace handle_request\n"
	 "      trace libc:malloc\n"
	 "      trace handle_request req->hdr.size req->path if req->hdr.size > 4096\n"
	 "      trace server.c:1312\n"
	 "      trace server.c:1312 len fd if len > 4096"},
	{"untrace", CMD_UNTRACE, parse_untrace, "FUNC", "untrace FUNC", "stop tracing FUNC", "FUNC",
	 "untrace handle_request",
	 "Detaches the probes of FUNC (as it was given to trace). The calls seen so far\n"
	 "stay in the data. It answers at once: the kernel removes the uprobes in the\n"
	 "background, and their places are free for new probes. untrace branch\n"
	 "FILE:LINE removes both outcome probes of a branch probe.\n"
	 "e.g.  untrace handle_request"},
	{"sample", CMD_SAMPLE_HZ, parse_sample, NULL,
	 "sample HZ|off|event E|off-cpu",
	 "rate, stop, event, off-CPU, threads",
	 "a rate in Hz, off, event EVENT, off-cpu or threads",
	 "sample 999, sample off, sample event page-faults, sample off-cpu or sample threads",
	 "sample HZ: take HZ samples per second per CPU (1 to 100000) on the current\n"
	 "  event (cpu-clock unless changed).\n"
	 "sample off: stop sampling; tracing goes on.\n"
	 "sample event EVENT: sample on EVENT: cpu-clock, task-clock, page-faults,\n"
	 "  minor-faults, major-faults, context-switches, cpu-migrations, or a\n"
	 "  tracepoint category:name (sched:sched_switch).\n"
	 "sample off-cpu: also record where threads wait (record --off-cpu): an\n"
	 "  off-CPU interval each time a target thread is switched out and back in;\n"
	 "  sample off-cpu off stops it.\n"
	 "sample threads [HZ]: also sample every target thread's state, running or\n"
	 "  not (record --threads, sonde threads): HZ passes a second over all\n"
	 "  threads (default 10, at most 1000), each thread's state, system call,\n"
	 "  traced call in flight and last stack; save keeps them (table\n"
	 "  thread_samples). sample threads off stops it.\n"
	 "e.g.  sample 999\n"
	 "      sample event sched:sched_switch"},
	{"sample-in", CMD_SAMPLE_IN, parse_sample_in, NULL, "sample-in FUNC | off",
	 "sample only while FUNC runs on the thread", "FUNC or off",
	 "sample-in handle_request or sample-in off",
	 "Samples only while FUNC runs on the thread (decided in the kernel, so\n"
	 "overhead and data shrink too). FUNC is traced for the purpose if it is not\n"
	 "already. sample-in off samples everywhere again. (A function named off:\n"
	 "sample-in \"off\".)\n"
	 "e.g.  sample-in handle_request"},
	{"sample-when", CMD_SAMPLE_WHEN, parse_sample_when, NULL,
	 "sample-when [branch] FILE:LINE",
	 "sample in calls where a line ran, a jump went",
	 "FILE:LINE, branch FILE:LINE taken|not-taken, or off",
	 "sample-when server.c:1312 or sample-when off",
	 "Samples only in calls of the traced functions during which the line\n"
	 "FILE:LINE (also BINARY:FILE:LINE) has run: a hit marks the innermost\n"
	 "traced call in flight, and the calls around it once it returns; the mark\n"
	 "ends with the call. Decided in the kernel. The line is traced for the\n"
	 "purpose if it is not already; trace the function too.\n"
	 "sample-when branch FILE:LINE[#K] taken (or not-taken): only in calls during\n"
	 "which that conditional jump of the line went that way (its branch probe is\n"
	 "traced for the purpose).\n"
	 "sample-when off samples everywhere again.\n"
	 "e.g.  sample-when server.c:1312\n"
	 "      sample-when branch server.c:1312 not-taken"},
	{"sample-slow", CMD_SAMPLE_SLOW, parse_sample_slow, NULL, "sample-slow FUNC DUR | off",
	 "sample only once a call of FUNC runs past DUR", "FUNC and a duration",
	 "sample-slow handle_request 5ms or sample-slow off",
	 "Samples only once the current call of FUNC has run longer than DUR, a\n"
	 "duration with its unit (750us, 5ms, 1.5s), decided in the kernel. FUNC is\n"
	 "traced for the purpose if it is not already. FUNC:DUR works too.\n"
	 "sample-slow off samples everywhere again.\n"
	 "e.g.  sample-slow handle_request 5ms"},
	{"in", CMD_VIEW_IN, parse_one_arg, "FUNC", "in FUNC", "view the samples taken inside calls of FUNC",
	 "FUNC", "in handle_request",
	 "Views show the samples taken while a call of FUNC was running on their\n"
	 "thread. all goes back to every sample.\n"
	 "e.g.  in handle_request"},
	{"slow", CMD_VIEW_SLOW, parse_view, NULL, "slow FUNC [THRESHOLD]",
	 "view samples in calls slower than THRESHOLD",
	 "FUNC and optionally a THRESHOLD", "slow handle_request or slow handle_request p99",
	 "Views show the samples inside calls of FUNC slower than THRESHOLD, and\n"
	 "their difference against the other calls. THRESHOLD: p95 (the default),\n"
	 "pNN or pNN.N, a duration (750us, 5ms, 1.5s), or auto (the valley between\n"
	 "the typical calls and the slow ones). It is resolved over the data in view,\n"
	 "so changing it needs no new data. FUNC:THRESHOLD works too.\n"
	 "e.g.  slow handle_request\n"
	 "      slow handle_request auto"},
	{"fast", CMD_VIEW_FAST, parse_view, NULL, "fast FUNC [THRESHOLD]",
	 "view samples in the other calls of FUNC", "FUNC and optionally a THRESHOLD",
	 "fast handle_request or fast handle_request 2ms",
	 "Views show the samples inside calls of FUNC that are not slower than\n"
	 "THRESHOLD: the complement of slow within FUNC's calls. THRESHOLD as for\n"
	 "slow (p95 by default).\n"
	 "e.g.  fast handle_request 2ms"},
	{"all", CMD_VIEW_ALL, parse_no_arg, NULL, "all", "view every sample again (undo in/slow/fast)",
	 NULL, "all", "Views show every sample again (undoes in, slow and fast; filters stay).\n"},
	{"window", CMD_WINDOW, parse_span, NULL, "window DURATION", "views cover the last DURATION",
	 "a DURATION", "window 10s",
	 "Views cover the last DURATION of data: seconds (10, 2.5), a number with\n"
	 "s, m or h (30s, 5m, 1h), or ms/us/ns; at least 1s, as samples are kept\n"
	 "in 1-second buckets.\n"
	 "e.g.  window 10s\n"
	 "      window 5m"},
	{"ewma", CMD_EWMA, parse_span, NULL, "ewma HALFLIFE",
	 "views decay all data with this half-life", "a HALFLIFE", "ewma 30s",
	 "Views show an exponentially weighted average of all the data, in which\n"
	 "data HALFLIFE old counts half. HALFLIFE as for window (at least 1s).\n"
	 "window goes back to a sliding window.\n"
	 "e.g.  ewma 30s"},
	{"filter", CMD_FILTER_TID, parse_filter, NULL, "filter pid|tid N|comm NAME|clear",
	 "one process, thread or thread name",
	 "pid N, tid N, comm NAME or clear", "filter tid 4243, filter comm nginx or filter clear",
	 "filter pid N: views show only the samples of process N.\n"
	 "filter tid N: only the samples of thread N.\n"
	 "filter comm NAME: only threads named NAME (at most 15 bytes: the kernel\n"
	 "  keeps no more of a name; quote a name with spaces).\n"
	 "filter clear: no filters. A filter replaces the one before.\n"
	 "The latest slow calls and `by` are of the filtered threads' calls too.\n"
	 "e.g.  filter tid 4243\n"
	 "      filter comm \"Web Content\""},
	{"reset", CMD_RESET, parse_no_arg, NULL, "reset", "drop the data collected so far", NULL,
	 "reset", "Drops the samples and calls collected so far; probes and settings stay.\n"},
	{"save", CMD_SAVE, parse_one_arg, "FILE", "save FILE", "write the data so far as a recording",
	 "a FILE", "save run.sonde",
	 "Writes the data collected so far to FILE, a .sonde recording (sonde report\n"
	 "and sonde flame read it). FILE is a regular file, replaced when complete;\n"
	 "devices, FIFOs and symbolic links are refused. When FILE cannot be written\n"
	 "(a full disk), the recording stays in memory and the next save writes it to\n"
	 "the FILE it names; one still unsaved when the session ends goes to $TMPDIR\n"
	 "(or /tmp).\n"
	 "e.g.  save run.sonde"},
	{"by", CMD_BY, parse_one_arg, "VAR", "by VAR", "split the view's calls by a captured value",
	 "a VAR", "by req->color",
	 "With a view on a traced function (in, slow, fast FUNC) that captures VAR\n"
	 "(trace 'FUNC VAR'): FUNC's calls over the data held, split by the value VAR\n"
	 "had at their entry: per value, its calls, its calls the view takes, and the\n"
	 "samples the view takes inside them.\n"
	 "e.g.  slow handle_request p95\n"
	 "      by req->color"},
	{"status", CMD_STATUS, parse_no_arg, NULL, "status",
	 "probes, sampling, view, window and filters", NULL, "status",
	 "Shows the probes, the sampling settings, the view, the window and the\n"
	 "filters, and how much was collected and dropped.\n"},
	{"threads", CMD_THREADS, parse_no_arg, NULL, "threads",
	 "the thread table (sample threads first)", NULL, "threads",
	 "Shows the last pass of the thread-state sampler (sample threads turns it\n"
	 "on), as sonde threads does: every target thread by state (running,\n"
	 "runnable, disk, uninterruptible, sleeping, stopped), with the time in it,\n"
	 "the system call it is in and the time in it, the traced call in flight and\n"
	 "its elapsed time, and the stack it last left the CPU with (innermost\n"
	 "first). A time that began before sonde did is a lower bound (\">1.20s\").\n"
	 "e.g.  sample threads\n"
	 "      threads"},
	{"help", CMD_HELP, parse_help, NULL, "help [COMMAND]", "list the commands, or one in detail",
	 "an optional COMMAND", "help or help slow",
	 "help lists the commands; help COMMAND shows one in detail.\n"
	 "Syntax: one command per line, words separated by spaces. Quote a word\n"
	 "that has spaces: \"operator new(unsigned long)\" (inside quotes \\\" is a quote\n"
	 "and \\\\ a backslash). # starts a comment.\n"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

const struct command_info *info_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

const char *suggest_command(const char *word)
{
	const char *names[NCOMMANDS];
	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	return suggest_name(word, names, NCOMMANDS);
}

void command_list(char *buf, size_t size)
{
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < NCOMMANDS && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? ", " : "", commands[i].name);
}

void command_help(FILE *out, const char *topic)
{
	if (!topic || !*topic) {
		int width = 0;
		for (size_t i = 0; i < NCOMMANDS; i++) {
			int n = (int)strlen(commands[i].synopsis);
			if (n > width)
				width = n;
		}
		for (size_t i = 0; i < NCOMMANDS; i++)
			fprintf(out, "%-*s  %s\n", width, commands[i].synopsis, commands[i].summary);
		return;
	}
	const struct command_info *ci = info_find(topic);
	if (!ci) {
		char sb[SHOW_MAX + 4], list[256];
		const char *near = suggest_command(topic);
		command_list(list, sizeof(list));
		if (near)
			fprintf(out, "no command '%s': did you mean %s? (commands: %s)\n", word_show(topic, sb),
				near, list);
		else
			fprintf(out, "no command '%s' (commands: %s)\n", word_show(topic, sb), list);
		return;
	}
	fprintf(out, "usage: %s\n%s", ci->synopsis, ci->detail);
	size_t n = strlen(ci->detail);
	if (n == 0 || ci->detail[n - 1] != '\n')
		fputc('\n', out);
}
