/* sonde ctl — send one command to a running live session.
 *
 *   sonde ctl [--json] [SESSION] COMMAND [ARGS...]   SESSION: the session's PID
 *   sonde ctl [--json] [SESSION] 'COMMAND ARGS...'   the line as one argument
 *   sonde ctl --list                                 the running sessions
 *
 * The words are joined into one line of the command language (command.h),
 * quoting a word when the language needs it, and sent over the session's
 * control socket (ctl.h); a single argument holding spaces is that line
 * already (as `bpftrace -e` takes its program). The answer's text goes to
 * stdout (an error answer to stderr); with --json the answer as the session
 * sent it (one JSON object). Exit: 0 ok, 1 error answer or no session
 * reached, 2 usage. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "command.h"
#include "commands.h"
#include "ctl.h"
#include "errbuf.h"
#include "json.h"
#include "printable.h"
#include "util.h"

static void print_usage(FILE *f)
{
	fputs("usage: sonde ctl [--json] [SESSION] COMMAND [ARGS...]\n"
	      "       sonde ctl --list\n"
	      "\n"
	      "Sends one command to a running live session (sonde top) and prints its\n"
	      "answer. SESSION is the session's PID; it may be left out when exactly one\n"
	      "session is running. COMMAND and ARGS are the words of the session's command\n"
	      "language, or the whole command line as one quoted argument, e.g.\n"
	      "  sonde ctl trace handle_request\n"
	      "  sonde ctl 'trace handle_request'\n"
	      "  sonde ctl 4242 slow handle_request p99\n"
	      "  sonde ctl status\n"
	      "  sonde ctl help        (every command)\n"
	      "\n"
	      "  --json     print the answer as the session sent it: one JSON object,\n"
	      "             {\"ok\":true,\"text\":...} (with \"data\" for status) or\n"
	      "             {\"ok\":false,\"error\":...}\n"
	      "  --list     list the running sessions (PID and command line)\n"
	      "  -h, --help show this help\n"
	      "\n"
	      "Exit status: 0 when the session answered ok, 1 when it answered with an\n"
	      "error or could not be reached, 2 on a usage error.\n",
	      f);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool needs_quotes(const char *a)
{
	return !*a || strpbrk(a, " \t\"#") != NULL;
}

/* Appends one word to buf (of size), quoted as the command language reads
 * it back. Returns the new length, or size when it does not fit. */
static size_t append_word(char *buf, size_t len, size_t size, const char *a)
{
	bool q = needs_quotes(a);
#define PUT(ch)                                                                                    \
	do {                                                                                       \
		if (len + 1 >= size)                                                               \
			return size;                                                               \
		buf[len++] = (ch);                                                                 \
	} while (0)
	if (q)
		PUT('"');
	for (const char *p = a; *p; p++) {
		if (q && (*p == '"' || *p == '\\'))
			PUT('\\');
		PUT(*p);
	}
	if (q)
		PUT('"');
#undef PUT
	buf[len] = 0;
	return len;
}

static int list_sessions(void)
{
	char err[512];
	int n = ctl_list(stdout, err, sizeof(err));
	if (n < 0) {
		errorf("%s", err);
		return 1;
	}
	if (n == 0)
		errorf("no sonde session is running (start one with sonde top)");
	return 0;
}

/* Checks one argument: a command is one line. */
static bool one_line(const char *arg, int k)
{
	for (const char *p = arg; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\t') {
			errorf("ctl: argument %d holds a line break or control character; a "
			       "command is one line",
			       k);
			return false;
		}
	return true;
}

/* --json: the answer as it came, shown as text (never obeyed); exit 0 when
 * it says ok. */
static int print_json_answer(pid_t pid, const char *line)
{
	char err[512], *ans;
	size_t len;
	if (ctl_request(pid, line, &ans, &len, err, sizeof(err))) {
		errorf("%s", err);
		return 1;
	}
	struct json_value *v = json_parse(ans, len, err, sizeof(err));
	const struct json_value *ok = json_get(v, "ok");
	struct printable keep = {0};
	fputs(printable_text(&keep, ans), stdout);
	printable_free(&keep);
	fflush(stdout);
	int rc = ok && ok->type == JSON_BOOL && ok->boolean ? 0 : 1;
	if (!ok || ok->type != JSON_BOOL)
		errorf("the session sent a malformed answer (%s)", v ? "no \"ok\"" : err);
	json_free(v);
	free(ans);
	return rc;
}

/* What the command line asks of ctl. */
struct ctl_args {
	bool json;
	pid_t pid;  /* 0: the one session running */
	int first;  /* argv[first..] is the session command */
};

/* Reads the options and the session PID. Returns -1 to go on, else the
 * exit code (--help, --list, a bad argument). */
static int parse_ctl_options(int argc, char **argv, struct ctl_args *a)
{
	int i = 1;
	while (i < argc) {
		const char *o = argv[i];
		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			print_usage(stdout);
			return 0;
		}
		if (!strcmp(o, "--list") || !strcmp(o, "-l")) {
			if (argc > 2) {
				errorf("ctl: --list takes no arguments (see sonde ctl --help)");
				return 2;
			}
			return list_sessions();
		}
		if (!strcmp(o, "--json")) {
			a->json = true;
			i++;
			continue;
		}
		if (!strcmp(o, "--")) {
			i++;
		} else if (o[0] == '-' && o[1]) {
			errorf("ctl: unknown option '%s' (see sonde ctl --help)", o);
			return 2;
		}
		break;
	}
	if (i < argc && all_digits(argv[i])) {
		char *end;
		long v = strtol(argv[i], &end, 10);
		if (v <= 0 || v > INT_MAX || strlen(argv[i]) > 10) {
			errorf("ctl: bad session PID '%s': expected a positive number "
			       "(sonde ctl --list shows the running sessions)",
			       argv[i]);
			return 2;
		}
		if (i + 1 >= argc) {
			errorf("ctl: '%s' looks like a session PID but no COMMAND follows "
			       "(e.g. sonde ctl %s status)",
			       argv[i], argv[i]);
			return 2;
		}
		a->pid = (pid_t)v;
		i++;
	}
	if (i >= argc) {
		errorf("ctl: a COMMAND is needed, e.g. sonde ctl status (sonde ctl help lists "
		       "the commands)");
		return 2;
	}
	a->first = i;
	return -1;
}

/* The session command line from argv[first..] into line (size bytes):
 * one argument with spaces is the line itself, split by the session as
 * the command language does; else the words, quoted where needed.
 * Returns 0, or -1 after one error line. */
static int join_command_line(int argc, char **argv, int first, char *line, size_t size)
{
	size_t len = 0;
	line[0] = 0;
	bool whole = argc - first == 1 && strpbrk(argv[first], " \t") != NULL;
	for (int k = first; k < argc; k++) {
		if (!one_line(argv[k], k - first + 1))
			return -1;
		if (whole) {
			len = (size_t)snprintf(line, size, "%s", argv[k]);
			if (len >= size) {
				errorf("ctl: command too long: at most %d bytes", COMMAND_LINE_MAX);
				return -1;
			}
			break;
		}
		if (k > first) {
			if (len + 1 >= size)
				len = size;
			else
				line[len++] = ' ';
		}
		if (len < size)
			len = append_word(line, len, size, argv[k]);
		if (len >= size) {
			errorf("ctl: command too long: at most %d bytes", COMMAND_LINE_MAX);
			return -1;
		}
	}
	return 0;
}

/* Sends line and shows the answer: a text answer on stdout (another
 * process's text: shown, never obeyed), an error answer as error lines.
 * Returns the exit code. */
static int print_text_answer(pid_t pid, const char *line)
{
	char *text = NULL;
	size_t tlen = 0;
	FILE *out = open_memstream(&text, &tlen);
	if (!out) {
		errorf("ctl: out of memory");
		return 1;
	}
	char err[512];
	int rc = ctl_send(pid, line, out, err, sizeof(err));
	fclose(out);
	if (rc < 0) {
		errorf("%s", err);
		free(text);
		return 1;
	}
	if (rc == 0) {
		struct printable keep = {0};
		fputs(printable_text(&keep, text), stdout);
		printable_free(&keep);
		fflush(stdout);
	} else {
		/* Each line of an error answer (one, normally) as an error line. */
		char *p = text;
		while (p && *p) {
			char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			errorf("%.*s", (int)n, p);
			p = nl ? nl + 1 : NULL;
		}
		if (!tlen)
			errorf("the session answered with an error");
	}
	free(text);
	return rc == 0 ? 0 : 1;
}

int cmd_ctl(int argc, char **argv)
{
	struct ctl_args a = {0};
	int rc = parse_ctl_options(argc, argv, &a);
	if (rc >= 0)
		return rc;
	char line[COMMAND_LINE_MAX + 1];
	if (join_command_line(argc, argv, a.first, line, sizeof(line)))
		return 2;
	return a.json ? print_json_answer(a.pid, line) : print_text_answer(a.pid, line);
}
