/* command: every command parses to the right struct, every error is one line
 * naming the problem and the right usage, quoting, comments, suggestions,
 * the format -> parse round trip, and help. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"

/* ---- helpers --------------------------------------------------------------- */

static struct command parse_ok(const char *line)
{
	struct command c;
	char err[512] = "unset";
	int rc = command_parse(line, &c, err, sizeof(err));
	cr_assert_eq(rc, 0, "'%s' should parse, got: %s", line, err);
	cr_assert_str_empty(err, "'%s' parsed but left an error: %s", line, err);
	return c;
}

/* Parses a line that must fail; checks the error is one non-empty line
 * holding every given substring (NULL-terminated list). */
static void parse_fails(const char *line, ...)
{
	struct command c;
	memset(&c, 0x5a, sizeof(c));
	char err[512] = "";
	int rc = command_parse(line, &c, err, sizeof(err));
	cr_assert_eq(rc, -1, "'%s' should not parse (kind %d)", line, c.kind);
	cr_assert_eq(c.kind, CMD_NONE, "'%s': failed parse leaves kind %d", line, c.kind);
	cr_assert(strlen(err) > 10, "'%s': error too short: '%s'", line, err);
	cr_assert_null(strchr(err, '\n'), "'%s': error has a newline: '%s'", line, err);
	cr_assert_null(strchr(err, '\r'), "'%s': error has a CR: '%s'", line, err);
	va_list ap;
	va_start(ap, line);
	for (const char *want; (want = va_arg(ap, const char *));)
		cr_assert(strstr(err, want), "'%s': error '%s' lacks '%s'", line, err, want);
	va_end(ap);
}

#define FAILS(line, ...) parse_fails(line, __VA_ARGS__, (const char *)NULL)

/* format -> parse gives the same command, and format is a fixed point. */
static void round_trip(const struct command *c)
{
	char text[COMMAND_FORMAT_MAX], text2[COMMAND_FORMAT_MAX], err[512];
	command_format(c, text, sizeof(text));
	struct command back;
	cr_assert_eq(command_parse(text, &back, err, sizeof(err)), 0, "'%s' does not parse back: %s",
		     text, err);
	cr_assert(command_equal(c, &back), "'%s' parses back to a different command", text);
	command_format(&back, text2, sizeof(text2));
	cr_assert_str_eq(text, text2);
}

static const char *fmt(const char *line)
{
	static char buf[COMMAND_FORMAT_MAX];
	struct command c = parse_ok(line);
	return command_format(&c, buf, sizeof(buf));
}

/* ---- every command ------------------------------------------------------------- */

Test(command, blank_and_comments)
{
	const char *lines[] = {"", "   ", "\t \t", "# a comment", "   # indented comment", "\n",
			       "\r\n", "#trace foo"};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct command c = parse_ok(lines[i]);
		cr_assert_eq(c.kind, CMD_NONE, "line %zu", i);
	}
	struct command c = parse_ok(NULL);
	cr_assert_eq(c.kind, CMD_NONE);
}

Test(command, trace_untrace_in_save)
{
	struct command c = parse_ok("trace handle_request");
	cr_assert_eq(c.kind, CMD_TRACE);
	cr_assert_str_eq(c.arg, "handle_request");
	c = parse_ok("trace libc:malloc");
	cr_assert_str_eq(c.arg, "libc:malloc");
	c = parse_ok("trace handle_*");
	cr_assert_str_eq(c.arg, "handle_*");
	c = parse_ok("untrace handle_request");
	cr_assert_eq(c.kind, CMD_UNTRACE);
	cr_assert_str_eq(c.arg, "handle_request");
	c = parse_ok("in handle_request");
	cr_assert_eq(c.kind, CMD_VIEW_IN);
	cr_assert_str_eq(c.arg, "handle_request");
	c = parse_ok("save /tmp/run.sonde");
	cr_assert_eq(c.kind, CMD_SAVE);
	cr_assert_str_eq(c.arg, "/tmp/run.sonde");
	/* whitespace around and between words, a trailing comment and newline */
	c = parse_ok("  \ttrace\t  ns::Server::handle   # hot one\n");
	cr_assert_eq(c.kind, CMD_TRACE);
	cr_assert_str_eq(c.arg, "ns::Server::handle");
}

Test(command, sample)
{
	struct command c = parse_ok("sample 999");
	cr_assert_eq(c.kind, CMD_SAMPLE_HZ);
	cr_assert_eq(c.hz, 999);
	cr_assert_eq(parse_ok("sample 1").hz, 1);
	cr_assert_eq(parse_ok("sample 100000").hz, 100000);
	cr_assert_eq(parse_ok("sample off").kind, CMD_SAMPLE_OFF);
	c = parse_ok("sample event sched:sched_switch");
	cr_assert_eq(c.kind, CMD_SAMPLE_EVENT);
	cr_assert_str_eq(c.arg, "sched:sched_switch");
	c = parse_ok("sample event page-faults");
	cr_assert_str_eq(c.arg, "page-faults");
	c = parse_ok("sample threads");
	cr_assert_eq(c.kind, CMD_SAMPLE_THREADS);
	cr_assert_eq(c.hz, 0, "the default rate");
	c = parse_ok("sample threads 20");
	cr_assert_eq(c.kind, CMD_SAMPLE_THREADS);
	cr_assert_eq(c.hz, 20);
	cr_assert_eq(parse_ok("sample threads 1000").hz, 1000);
	cr_assert_eq(parse_ok("sample threads off").kind, CMD_SAMPLE_THREADS_OFF);
}

Test(command, sample_in)
{
	struct command c = parse_ok("sample-in handle_request");
	cr_assert_eq(c.kind, CMD_SAMPLE_IN);
	cr_assert_str_eq(c.arg, "handle_request");
	cr_assert_eq(parse_ok("sample-in off").kind, CMD_SAMPLE_IN_OFF);
	/* quoted, off is a function name */
	c = parse_ok("sample-in \"off\"");
	cr_assert_eq(c.kind, CMD_SAMPLE_IN);
	cr_assert_str_eq(c.arg, "off");
}

Test(command, sample_slow)
{
	struct command c = parse_ok("sample-slow handle_request 5ms");
	cr_assert_eq(c.kind, CMD_SAMPLE_SLOW);
	cr_assert_str_eq(c.arg, "handle_request");
	cr_assert_eq(c.ns, 5000000);
	c = parse_ok("sample-slow handle_request 1.5us");
	cr_assert_eq(c.ns, 1500);
	cr_assert_eq(parse_ok("sample-slow off").kind, CMD_SAMPLE_SLOW_OFF);
	/* the command-line form FUNC:DUR */
	c = parse_ok("sample-slow handle_request:750us");
	cr_assert_eq(c.kind, CMD_SAMPLE_SLOW);
	cr_assert_str_eq(c.arg, "handle_request");
	cr_assert_eq(c.ns, 750000);
	c = parse_ok("sample-slow libc:malloc:2ms");
	cr_assert_str_eq(c.arg, "libc:malloc");
	cr_assert_eq(c.ns, 2000000);
	/* FUNC named off, with its duration */
	c = parse_ok("sample-slow off 1ms");
	cr_assert_eq(c.kind, CMD_SAMPLE_SLOW);
	cr_assert_str_eq(c.arg, "off");
}

Test(command, slow_fast)
{
	struct command c = parse_ok("slow handle_request");
	cr_assert_eq(c.kind, CMD_VIEW_SLOW);
	cr_assert_str_eq(c.arg, "handle_request");
	cr_assert_not(c.has_threshold);
	cr_assert_eq(c.threshold.kind, THRESHOLD_PERCENTILE);
	cr_assert_float_eq(c.threshold.percentile, 95, 1e-12);

	c = parse_ok("slow handle_request p99.9");
	cr_assert(c.has_threshold);
	cr_assert_eq(c.threshold.kind, THRESHOLD_PERCENTILE);
	cr_assert_float_eq(c.threshold.percentile, 99.9, 1e-12);

	c = parse_ok("slow handle_request 5ms");
	cr_assert_eq(c.threshold.kind, THRESHOLD_ABSOLUTE);
	cr_assert_eq(c.threshold.ns, 5000000);

	c = parse_ok("fast handle_request auto");
	cr_assert_eq(c.kind, CMD_VIEW_FAST);
	cr_assert(c.has_threshold);
	cr_assert_eq(c.threshold.kind, THRESHOLD_AUTO);

	c = parse_ok("fast handle_request");
	cr_assert_eq(c.kind, CMD_VIEW_FAST);
	cr_assert_not(c.has_threshold);

	/* FUNC:THRESHOLD as on the command line */
	c = parse_ok("slow handle_request:p99");
	cr_assert_str_eq(c.arg, "handle_request");
	cr_assert(c.has_threshold);
	cr_assert_float_eq(c.threshold.percentile, 99, 1e-12);
	c = parse_ok("slow libc:malloc:auto");
	cr_assert_str_eq(c.arg, "libc:malloc");
	cr_assert_eq(c.threshold.kind, THRESHOLD_AUTO);
	/* ...but BINARY:FUNC stays whole, and so does a quoted word */
	c = parse_ok("slow libc:malloc");
	cr_assert_str_eq(c.arg, "libc:malloc");
	cr_assert_not(c.has_threshold);
	c = parse_ok("slow ns::f");
	cr_assert_str_eq(c.arg, "ns::f");
	c = parse_ok("slow \"mybin:p95\"");
	cr_assert_str_eq(c.arg, "mybin:p95");
	cr_assert_not(c.has_threshold);
}

Test(command, all_reset_status_help)
{
	cr_assert_eq(parse_ok("all").kind, CMD_VIEW_ALL);
	cr_assert_eq(parse_ok("reset").kind, CMD_RESET);
	cr_assert_eq(parse_ok("status").kind, CMD_STATUS);
	cr_assert_eq(parse_ok("threads").kind, CMD_THREADS);
	struct command c = parse_ok("help");
	cr_assert_eq(c.kind, CMD_HELP);
	cr_assert_str_empty(c.arg);
	c = parse_ok("help sample-slow");
	cr_assert_eq(c.kind, CMD_HELP);
	cr_assert_str_eq(c.arg, "sample-slow");
}

Test(command, window_ewma)
{
	struct command c = parse_ok("window 10s");
	cr_assert_eq(c.kind, CMD_WINDOW);
	cr_assert_eq(c.ns, 10000000000ULL);
	cr_assert_eq(parse_ok("window 10").ns, 10000000000ULL);
	cr_assert_eq(parse_ok("window 2.5").ns, 2500000000ULL);
	cr_assert_eq(parse_ok("window 5m").ns, 300000000000ULL);
	cr_assert_eq(parse_ok("window 1.5m").ns, 90000000000ULL);
	cr_assert_eq(parse_ok("window 1h").ns, 3600000000000ULL);
	cr_assert_eq(parse_ok("window 1500ms").ns, 1500000000ULL);
	cr_assert_eq(parse_ok("window 1s").ns, 1000000000ULL);
	c = parse_ok("ewma 30s");
	cr_assert_eq(c.kind, CMD_EWMA);
	cr_assert_eq(c.ns, 30000000000ULL);
	cr_assert_eq(parse_ok("ewma 2m").ns, 120000000000ULL);
	cr_assert_eq(parse_ok("ewma 45").ns, 45000000000ULL);
}

Test(command, filter)
{
	struct command c = parse_ok("filter tid 4243");
	cr_assert_eq(c.kind, CMD_FILTER_TID);
	cr_assert_eq(c.tid, 4243);
	cr_assert_eq(parse_ok("filter tid 2147483647").tid, 2147483647);
	c = parse_ok("filter pid 4242");
	cr_assert_eq(c.kind, CMD_FILTER_PID);
	cr_assert_eq(c.pid, 4242);
	cr_assert_eq(c.tid, 0);
	c = parse_ok("filter comm nginx");
	cr_assert_eq(c.kind, CMD_FILTER_COMM);
	cr_assert_str_eq(c.arg, "nginx");
	c = parse_ok("filter comm \"Web Content\"");
	cr_assert_str_eq(c.arg, "Web Content");
	c = parse_ok("filter comm 123456789012345"); /* exactly 15 bytes */
	cr_assert_str_eq(c.arg, "123456789012345");
	cr_assert_eq(parse_ok("filter clear").kind, CMD_FILTER_CLEAR);
}

/* ---- quoting and comments ------------------------------------------------------ */

Test(command, quoting)
{
	struct command c = parse_ok("trace \"operator new(unsigned long)\"");
	cr_assert_str_eq(c.arg, "operator new(unsigned long)");
	c = parse_ok("trace \"a \\\"quoted\\\" name\"");
	cr_assert_str_eq(c.arg, "a \"quoted\" name");
	c = parse_ok("trace \"back\\\\slash\"");
	cr_assert_str_eq(c.arg, "back\\slash");
	/* quoted and unquoted parts join; # inside quotes is not a comment */
	c = parse_ok("trace abc\"d e\"f");
	cr_assert_str_eq(c.arg, "abcd ef");
	c = parse_ok("trace \"#not a comment\" # but this is");
	cr_assert_str_eq(c.arg, "#not a comment");
	/* a tab inside quotes is kept */
	c = parse_ok("trace \"a\tb\"");
	cr_assert_str_eq(c.arg, "a\tb");
	/* outside quotes, a backslash is an ordinary character */
	c = parse_ok("save C:\\runs\\a.sonde");
	cr_assert_str_eq(c.arg, "C:\\runs\\a.sonde");
	/* # inside a word is not a comment */
	c = parse_ok("trace a#b");
	cr_assert_str_eq(c.arg, "a#b");
	/* the command name may be quoted */
	cr_assert_eq(parse_ok("\"trace\" f").kind, CMD_TRACE);
	/* UTF-8 is fine */
	c = parse_ok("filter comm \"caf\xc3\xa9\"");
	cr_assert_str_eq(c.arg, "caf\xc3\xa9");
}

Test(command, comments)
{
	struct command c = parse_ok("trace f # comment with \"unbalanced quote");
	cr_assert_str_eq(c.arg, "f");
	c = parse_ok("status #");
	cr_assert_eq(c.kind, CMD_STATUS);
	/* '#' only starts a comment at the start of a word */
	FAILS("status#", "unknown command 'status#'", "did you mean status?");
}

/* trace FUNC VAR... if EXPR: the words after "trace" are one spec. */
Test(command, trace_with_captures)
{
	struct command c = parse_ok("trace handle req->hdr.size  name if len > 4096");
	cr_assert_eq(c.kind, CMD_TRACE);
	cr_assert_str_eq(c.arg, "handle req->hdr.size name if len > 4096");
	round_trip(&c);
	c = parse_ok("trace \"operator new(unsigned long)\"");
	cr_assert_str_eq(c.arg, "operator new(unsigned long)");
}

/* ---- errors -------------------------------------------------------------------- */

Test(command, errors_missing_and_extra_words)
{
	FAILS("trace", "trace needs FUNC", "trace handle_request");
	FAILS("untrace", "untrace needs FUNC");
	FAILS("in", "in needs FUNC");
	FAILS("trace a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7",
	      "too many words for trace");
	FAILS("sample", "sample needs", "sample 999", "sample off", "event");
	FAILS("sample event", "sample event needs EVENT", "page-faults");
	FAILS("sample event a b", "too many words for sample event");
	FAILS("sample off now", "too many words for sample off");
	FAILS("sample threads 0", "sample threads takes nothing, passes a second (1 to 1000) or off");
	FAILS("sample threads 1001", "1 to 1000", "sample threads 20");
	FAILS("sample threads fast", "sample threads takes", "sample threads off");
	FAILS("sample threads 20 off", "sample threads takes");
	FAILS("sample threads \"off\"", "sample threads takes");
	FAILS("sample 99 99", "too many words for sample");
	FAILS("sample-in", "sample-in needs FUNC or off");
	FAILS("sample-in a b", "too many words for sample-in");
	FAILS("sample-slow", "sample-slow needs FUNC and a duration: sample-slow handle_request 5ms");
	FAILS("sample-slow handle_request",
	      "sample-slow needs FUNC and a duration: sample-slow handle_request 5ms");
	FAILS("sample-slow a 5ms x", "too many words for sample-slow");
	FAILS("slow", "slow needs FUNC");
	FAILS("fast", "fast needs FUNC");
	FAILS("slow f p95 x", "too many words for slow");
	FAILS("all now", "all takes no arguments");
	FAILS("reset everything", "reset takes no arguments");
	FAILS("status x", "status takes no arguments");
	FAILS("window", "window needs a DURATION", "window 10s");
	FAILS("window 10s 20s", "too many words for window");
	FAILS("ewma", "ewma needs a HALFLIFE", "ewma 30s");
	FAILS("filter", "filter needs pid N, tid N, comm NAME or clear");
	FAILS("filter tid", "filter tid needs a thread id", "filter tid 4243");
	FAILS("filter tid 1 2", "too many words for filter tid");
	FAILS("filter comm", "filter comm needs a thread NAME");
	FAILS("filter comm a b", "too many words for filter comm", "quote");
	FAILS("filter clear all", "too many words for filter clear");
	FAILS("save", "save needs a FILE", "save run.sonde");
	FAILS("save a b", "too many words for save");
	FAILS("help me now", "too many words for help");
}

Test(command, errors_bad_values)
{
	FAILS("sample 0", "sampling rate 0 is out of range", "1 to 100000", "sample off");
	FAILS("sample 100001", "100001 is out of range", "1 to 100000");
	FAILS("sample 99999999999999999999999", "out of range");
	FAILS("sample 99hz", "bad sampling rate '99hz'", "sample 999");
	FAILS("sample -5", "bad sampling rate '-5'");
	FAILS("sample fast", "bad sampling rate 'fast'");
	FAILS("sample of", "did you mean off?");
	FAILS("sample evnt page-faults", "did you mean event?");
	FAILS("sample-slow f 5", "duration '5' needs a unit", "sample-slow handle_request 5ms");
	FAILS("sample-slow f 2.5", "duration '2.5' needs a unit", "2.5ms");
	FAILS("sample-slow f .", "bad duration '.'");
	FAILS("sample-slow f -5ms", "negative");
	FAILS("sample-slow f 5x", "bad duration '5x'");
	FAILS("slow f p100", "slow:", "p100", "below p100");
	FAILS("slow f p0", "above p0");
	FAILS("fast f 95", "fast:", "bad threshold '95'", "write p95 for a percentile", "95ms");
	FAILS("slow f 95x", "slow:", "bad threshold '95x'", "auto");
	FAILS("slow f p99.1234567890123", "at most 12 decimals");
	FAILS("window 0", "window '0' is too short", "at least 1s");
	FAILS("window 500ms", "too short", "1-second buckets");
	FAILS("window 10x", "bad window '10x'", "window 10s");
	FAILS("window -5", "bad window");
	FAILS("window 5.", "bad window");
	FAILS("window 99999999999999999999", "too large");
	FAILS("window 99999999999999999999s", "too large");
	FAILS("window 9999999999h", "too large");
	FAILS("ewma 0.5", "half-life '0.5' is too short");
	FAILS("ewma soon", "bad half-life 'soon'", "ewma 30s");
	FAILS("filter tid 0", "bad thread id '0'", "start at 1");
	FAILS("filter tid -1", "bad thread id '-1'", "positive");
	FAILS("filter tid 12ab", "bad thread id '12ab'");
	FAILS("filter tid 2147483648", "too large", "2147483647");
	FAILS("filter comm averyverylongname", "longer than 15 bytes", "averyverylongna");
	FAILS("filter pids 5", "unknown filter 'pids'", "did you mean pid?");
	FAILS("filter banana", "unknown filter 'banana'", "pid N, tid N, comm NAME or clear");
	FAILS("filter pid", "filter pid needs a process id", "filter pid 4242");
	FAILS("filter pid 1 2", "too many words for filter pid");
	FAILS("filter pid 0", "bad process id '0'", "start at 1");
	FAILS("filter pid x", "bad process id 'x'", "positive");
	FAILS("filter pid 2147483648", "too large", "2147483647");
	FAILS("trace \"\"", "non-empty FUNC");
	FAILS("save \"\"", "non-empty FILE");
	FAILS("sample event \"\"", "non-empty EVENT");
	FAILS("help trase", "no command 'trase'", "did you mean trace?");
	FAILS("help xyzzy", "no command 'xyzzy'");
}

Test(command, errors_too_long)
{
	char line[COMMAND_LINE_MAX + 64];
	/* a FUNC longer than arg */
	memset(line, 0, sizeof(line));
	strcpy(line, "trace ");
	memset(line + 6, 'f', 256);
	FAILS(line, "FUNC", "too long", "256 bytes", "at most 255");
	/* 255 bytes fit */
	line[6 + 255] = 0;
	struct command c = parse_ok(line);
	cr_assert_eq(strlen(c.arg), 255);
	/* a line longer than 4096 */
	memset(line, 0, sizeof(line));
	memset(line, ' ', COMMAND_LINE_MAX + 1);
	FAILS(line, "line too long", "4096");
	/* exactly 4096 (blank) is fine, and so is 4096 + a newline */
	line[COMMAND_LINE_MAX] = 0;
	cr_assert_eq(parse_ok(line).kind, CMD_NONE);
	line[COMMAND_LINE_MAX] = '\n';
	cr_assert_eq(parse_ok(line).kind, CMD_NONE);
	/* a comment makes no line longer than allowed */
	memset(line, 0, sizeof(line));
	line[0] = '#';
	memset(line + 1, 'x', COMMAND_LINE_MAX + 10);
	FAILS(line, "line too long");
}

Test(command, errors_syntax)
{
	FAILS("trace \"unterminated", "unterminated quote");
	FAILS("trace \"ends in backslash\\", "unterminated quote");
	FAILS("trace \"bad \\n escape\"", "unknown escape \\n");
	FAILS("trace \"bad \\\xc3\xa9 escape\"", "unknown escape", "0xc3");
	FAILS("trace a\nuntrace b", "more than one line");
	FAILS("trace a\rb", "more than one line");
	FAILS("trace \"a\nb\"", "more than one line");
	FAILS("trace a\x01", "control character 0x01");
	FAILS("trace \"a\x1b[31m\"", "control character 0x1b");
	FAILS("trace a\x7f", "control character 0x7f");
}

Test(command, errors_unknown_command_suggestions)
{
	FAILS("trase foo", "unknown command 'trase'", "did you mean trace?");
	FAILS("tarce foo", "did you mean trace?");
	FAILS("untrase foo", "did you mean untrace?");
	FAILS("sampel 99", "did you mean sample?");
	FAILS("sample_in f", "did you mean sample-in?");
	FAILS("sampleslow f 1ms", "did you mean sample-slow?");
	FAILS("slwo f", "did you mean slow?");
	FAILS("windwo 10s", "did you mean window?");
	FAILS("TRACE foo", "did you mean trace?");
	FAILS("stat", "did you mean status?");
	FAILS("filtre tid 5", "did you mean filter?");
	FAILS("hlep", "did you mean help?");
	FAILS("ewm 10s", "did you mean ewma?");
	FAILS("sav x", "did you mean save?");
	FAILS("xyzzy", "unknown command 'xyzzy'", "commands:", "trace", "sample-slow", "help");
}

Test(command, error_messages_are_bounded)
{
	/* a very long unknown word is abbreviated in the message */
	char line[600];
	memset(line, 'z', 500);
	line[500] = 0;
	struct command c;
	char err[1024];
	cr_assert_eq(command_parse(line, &c, err, sizeof(err)), -1);
	cr_assert(strlen(err) < 300, "error not abbreviated: %zu bytes", strlen(err));
	cr_assert(strstr(err, "..."));
	/* a small err buffer is truncated but terminated */
	char small[8];
	cr_assert_eq(command_parse("trase x", &c, small, sizeof(small)), -1);
	cr_assert_eq(strlen(small), sizeof(small) - 1);
	/* no err buffer at all */
	cr_assert_eq(command_parse("trase x", &c, NULL, 0), -1);
}

/* ---- format and round trip ------------------------------------------------------- */

Test(command, format_canonical)
{
	cr_assert_str_eq(fmt("  trace   handle_request  # x"), "trace handle_request");
	cr_assert_str_eq(fmt("trace \"operator new(unsigned long)\""),
			 "trace \"operator new(unsigned long)\"");
	cr_assert_str_eq(fmt("trace ab\"c\"d"), "trace abcd");
	cr_assert_str_eq(fmt("trace \"a\\\"b\\\\c d\""), "trace \"a\\\"b\\\\c d\"");
	cr_assert_str_eq(fmt("trace \"#x\""), "trace \"#x\"");
	cr_assert_str_eq(fmt("trace a#b"), "trace a#b");
	cr_assert_str_eq(fmt("sample 999"), "sample 999");
	cr_assert_str_eq(fmt("sample off"), "sample off");
	cr_assert_str_eq(fmt("sample threads"), "sample threads");
	cr_assert_str_eq(fmt("sample threads 20"), "sample threads 20");
	cr_assert_str_eq(fmt("sample threads off"), "sample threads off");
	cr_assert_str_eq(fmt("sample event sched:sched_switch"), "sample event sched:sched_switch");
	cr_assert_str_eq(fmt("sample-in f"), "sample-in f");
	cr_assert_str_eq(fmt("sample-in \"off\""), "sample-in \"off\"");
	cr_assert_str_eq(fmt("sample-in off"), "sample-in off");
	cr_assert_str_eq(fmt("sample-slow f 1500us"), "sample-slow f 1.5ms");
	cr_assert_str_eq(fmt("sample-slow f:2ms"), "sample-slow f 2ms");
	cr_assert_str_eq(fmt("sample-slow off 2ms"), "sample-slow \"off\" 2ms");
	cr_assert_str_eq(fmt("sample-slow \"a:5ms\" 1ms"), "sample-slow \"a:5ms\" 1ms");
	cr_assert_str_eq(fmt("sample-slow off"), "sample-slow off");
	cr_assert_str_eq(fmt("slow f"), "slow f");
	cr_assert_str_eq(fmt("slow f p99.90"), "slow f p99.9");
	cr_assert_str_eq(fmt("slow f p0.00001"), "slow f p0.00001");
	cr_assert_str_eq(fmt("slow f:auto"), "slow f auto");
	cr_assert_str_eq(fmt("fast f 0.5ms"), "fast f 500us");
	cr_assert_str_eq(fmt("slow \"bin:p95\""), "slow \"bin:p95\"");
	cr_assert_str_eq(fmt("slow libc:malloc"), "slow libc:malloc");
	cr_assert_str_eq(fmt("in f"), "in f");
	cr_assert_str_eq(fmt("all"), "all");
	cr_assert_str_eq(fmt("window 10"), "window 10s");
	cr_assert_str_eq(fmt("window 1.5m"), "window 90s");
	cr_assert_str_eq(fmt("ewma 2500ms"), "ewma 2.5s");
	cr_assert_str_eq(fmt("filter tid 007"), "filter tid 7");
	cr_assert_str_eq(fmt("filter pid 042"), "filter pid 42");
	cr_assert_str_eq(fmt("filter comm \"Web Content\""), "filter comm \"Web Content\"");
	cr_assert_str_eq(fmt("filter clear"), "filter clear");
	cr_assert_str_eq(fmt("reset"), "reset");
	cr_assert_str_eq(fmt("save \"my run.sonde\""), "save \"my run.sonde\"");
	cr_assert_str_eq(fmt("status"), "status");
	cr_assert_str_eq(fmt("help"), "help");
	cr_assert_str_eq(fmt("help window"), "help window");
	cr_assert_str_eq(fmt("# nothing"), "");
}

Test(command, round_trip_every_command)
{
	const char *lines[] = {
		"trace handle_request", "trace \"operator new(unsigned long)\"", "trace \"\\\"\\\\\"",
		"trace \"a\tb\"", "untrace libc:malloc", "sample 1", "sample 100000", "sample off",
		"sample event page-faults", "sample event \"off\"", "sample-in f", "sample-in \"off\"",
		"sample-in off", "sample-slow f 1ns", "sample-slow f 18446744073.709551615s",
		"sample-slow f 0ns", "sample-slow x:y:5ms", "sample-slow \"x:5ms\" 1us",
		"sample-slow off", "sample-slow off 3ms", "in f", "slow f", "slow f p95",
		"slow f p99.999", "slow f p0.000000000001", "slow f p99.999999999999", "slow f p50.5",
		"slow f p1", "slow f 1.234567ms", "slow f auto", "slow a:b:p95", "slow \"a:p95\"",
		"slow \"a:p95\" p99", "fast f", "fast f 7.5us", "fast \"#f\" auto", "all",
		"window 1", "window 1.000000001", "window 9999999999", "window 0.001h",
		"window 307445734m", "window 1.0000000000000000001h", "ewma 1s", "ewma 2h", "filter tid 1",
		"filter tid 2147483647", "filter pid 1", "filter pid 2147483647", "filter comm \"a b\"", "filter comm \"\\\"\"", "filter clear",
		"reset", "save run.sonde", "save \"\"x", "status", "help", "help sample-in",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct command c;
		char err[512];
		int rc = command_parse(lines[i], &c, err, sizeof(err));
		cr_assert_eq(rc, 0, "'%s' should parse: %s", lines[i], err);
		round_trip(&c);
	}
}

Test(command, round_trip_built_commands)
{
	/* commands built by hand, not only by the parser */
	struct command c = {.kind = CMD_VIEW_SLOW, .has_threshold = true};
	strcpy(c.arg, "handle_request");
	double pcts[] = {95, 99, 99.9, 99.99, 50, 0.1, 1e-5, 12.345678901234, 99.999999999999};
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		c.threshold = (struct threshold){.kind = THRESHOLD_PERCENTILE, .percentile = pcts[i]};
		round_trip(&c);
	}
	uint64_t ns[] = {0, 1, 999, 1000, 1001, 1500000, 1000000000, 1234567891, UINT64_MAX};
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		c.threshold = (struct threshold){.kind = THRESHOLD_ABSOLUTE, .ns = ns[i]};
		round_trip(&c);
		struct command s = {.kind = CMD_SAMPLE_SLOW, .ns = ns[i]};
		strcpy(s.arg, "f");
		round_trip(&s);
		if (ns[i] >= 1000000000) {
			struct command w = {.kind = CMD_WINDOW, .ns = ns[i]};
			round_trip(&w);
			w.kind = CMD_EWMA;
			round_trip(&w);
		}
	}
	/* every kind at least once */
	struct command k = {.kind = CMD_NONE};
	round_trip(&k);
	enum command_kind plain[] = {CMD_SAMPLE_OFF, CMD_SAMPLE_IN_OFF, CMD_SAMPLE_SLOW_OFF,
				     CMD_VIEW_ALL, CMD_FILTER_CLEAR, CMD_RESET, CMD_STATUS, CMD_THREADS,
				     CMD_HELP};
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		k = (struct command){.kind = plain[i]};
		round_trip(&k);
	}
	enum command_kind with_arg[] = {CMD_TRACE,     CMD_UNTRACE,   CMD_SAMPLE_EVENT, CMD_SAMPLE_IN,
					CMD_VIEW_IN,   CMD_VIEW_FAST, CMD_FILTER_COMM,  CMD_SAVE};
	const char *args[] = {"f", "off", "a b", "#x", "\"", "\\", "x:p95", "x:5ms", "event", "tid"};
	for (size_t i = 0; i < sizeof(with_arg) / sizeof(with_arg[0]); i++)
		for (size_t j = 0; j < sizeof(args) / sizeof(args[0]); j++) {
			k = (struct command){.kind = with_arg[i]};
			strcpy(k.arg, args[j]);
			round_trip(&k);
		}
	k = (struct command){.kind = CMD_SAMPLE_HZ, .hz = 4999};
	round_trip(&k);
	k = (struct command){.kind = CMD_FILTER_TID, .tid = 77};
	round_trip(&k);
	k = (struct command){.kind = CMD_FILTER_PID, .pid = 78};
	round_trip(&k);
}

Test(command, equal_and_names)
{
	struct command a = parse_ok("slow f"), b = parse_ok("slow f p95");
	cr_assert_not(command_equal(&a, &b), "an explicit p95 differs from the default");
	b = parse_ok("slow f");
	cr_assert(command_equal(&a, &b));
	a = parse_ok("trace f");
	b = parse_ok("untrace f");
	cr_assert_not(command_equal(&a, &b));
	cr_assert_str_eq(command_name(CMD_SAMPLE_SLOW_OFF), "sample-slow");
	cr_assert_str_eq(command_name(CMD_FILTER_TID), "filter");
	cr_assert_str_eq(command_name(CMD_VIEW_IN), "in");
	cr_assert_str_eq(command_name(CMD_NONE), "");
}

/* The commands that change the kernel side are exactly trace, untrace and
 * the sample family, whatever the order of the enum. */
Test(command, changes_gathering)
{
	for (int k = CMD_NONE; k <= CMD_HELP; k++) {
		const char *name = command_name((enum command_kind)k);
		bool kernel = strcmp(name, "trace") == 0 || strcmp(name, "untrace") == 0 ||
			      strncmp(name, "sample", 6) == 0;
		cr_assert_eq(command_changes_gathering((enum command_kind)k), kernel, "%s (%d)",
			     name, k);
	}
}

/* ---- help ---------------------------------------------------------------------- */

static char *help_text(const char *topic)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	command_help(f, topic);
	fclose(f);
	return text;
}

static const char *const NAMES[] = {"trace", "untrace", "sample", "sample-in", "sample-when", "sample-slow",
				    "in", "slow", "fast", "all", "window", "ewma", "filter",
				    "reset", "save", "by", "threads", "status", "help"};
#define NNAMES (sizeof(NAMES) / sizeof(NAMES[0]))

Test(command, help_lists_every_command)
{
	char *text = help_text(NULL);
	size_t lines = 0;
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	cr_assert_eq(lines, NNAMES, "one line per command:\n%s", text);
	for (size_t i = 0; i < NNAMES; i++) {
		/* the command's name starts a line and is followed by a space */
		char want[32];
		snprintf(want, sizeof(want), "\n%s ", NAMES[i]);
		bool found = strncmp(text, want + 1, strlen(want + 1)) == 0 || strstr(text, want);
		cr_assert(found, "help lacks a line for %s:\n%s", NAMES[i], text);
	}
	cr_assert(strstr(text, "sample-slow FUNC DUR"));
	cr_assert(strstr(text, "slow FUNC [THRESHOLD]"));
	cr_assert(strstr(text, "filter pid|tid N|comm NAME|clear"));
	for (char *line = text; *line;) {
		char *end = strchr(line, '\n');
		cr_assert(end - line <= 80, "help line too long: %.*s", (int)(end - line), line);
		line = end + 1;
	}
	char *same = help_text("");
	cr_assert_str_eq(same, text);
	free(same);
	free(text);
}

Test(command, help_topics)
{
	for (size_t i = 0; i < NNAMES; i++) {
		char *text = help_text(NAMES[i]);
		char want[64];
		snprintf(want, sizeof(want), "usage: %s", NAMES[i]);
		cr_assert(strncmp(text, want, strlen(want)) == 0, "help %s:\n%s", NAMES[i], text);
		cr_assert(strlen(text) > 40, "help %s is too short:\n%s", NAMES[i], text);
		cr_assert_eq(text[strlen(text) - 1], '\n');
		/* the topic is accepted by the parser too */
		char line[64];
		snprintf(line, sizeof(line), "help %s", NAMES[i]);
		struct command c = parse_ok(line);
		cr_assert_str_eq(c.arg, NAMES[i]);
		free(text);
	}
	char *text = help_text("sample-slow");
	cr_assert(strstr(text, "sample-slow handle_request 5ms"));
	cr_assert(strstr(text, "off"));
	free(text);
	text = help_text("slow");
	cr_assert(strstr(text, "p95"));
	cr_assert(strstr(text, "auto"));
	free(text);
	text = help_text("trase");
	cr_assert(strstr(text, "no command 'trase'"));
	cr_assert(strstr(text, "did you mean trace?"));
	cr_assert_eq(strchr(text, '\n'), text + strlen(text) - 1, "one line: %s", text);
	free(text);
}
