/* command — the one small command language of a live sonde session: what
 * the TUI prompt, `--cmd` flags, the control socket and the web UI all send.
 * This module parses a line into a struct command, writes a command back as
 * canonical text, and prints help. Executing commands is the session's job.
 *
 * Syntax: one command per line; words are separated by spaces or tabs.
 *   - A double-quoted part of a word may hold spaces, tabs and '#'; inside
 *     quotes \" is a quote and \\ a backslash (no other escapes). Quoted and
 *     unquoted parts join into one word as in a shell: abc"d e" is "abcd e".
 *     Outside quotes a backslash is an ordinary character.
 *   - '#' at the start of a word (outside quotes) starts a comment.
 *   - A blank or comment-only line is no command (CMD_NONE).
 *   - One final "\n" or "\r\n" is ignored; any other line break or control
 *     character (other than tab) is an error. Lines are at most
 *     COMMAND_LINE_MAX bytes.
 *
 * Commands (FUNC, EVENT, NAME, FILE: at most COMMAND_ARG_MAX - 1 bytes):
 *   trace FUNC               untrace FUNC
 *   sample HZ                HZ 1..COMMAND_HZ_MAX samples per second per CPU
 *   sample off               sample event EVENT
 *   sample off-cpu           sample off-cpu off
 *   sample threads [HZ]      sample threads off       HZ 1..SESSION_THREADS_HZ_MAX (session.h)
 *   sample-in FUNC           sample-in off
 *   sample-slow FUNC DUR     sample-slow off          DUR: duration_parse (with a unit)
 *   in FUNC                  all
 *   slow FUNC [THRESHOLD]    fast FUNC [THRESHOLD]    THRESHOLD: threshold_parse
 *   window DURATION          ewma HALFLIFE
 *   filter pid N             filter tid N             filter comm NAME
 *   filter clear
 *   reset    save FILE    status    help [COMMAND]
 *
 * Details:
 *   - FUNC is any non-empty word (BINARY:FUNC, LIB:FUNC, globs are resolved
 *     by the session). `off` is a keyword for sample-in/sample-slow only
 *     when unquoted: sample-in "off" traces a function named off.
 *   - slow/fast/sample-slow also take the command-line form FUNC:THRESHOLD
 *     (FUNC:DUR) as one unquoted word when the part after the last single
 *     colon is a valid threshold (duration): slow handle_request:p99 is
 *     slow handle_request p99. Quote the word to keep it whole.
 *   - Percentile thresholds take at most 12 decimals (p99.999999999999), so
 *     that every value prints back exactly.
 *   - window and ewma take a DURATION as duration_parse reads it (750ms,
 *     10s), plain seconds (10, 2.5), or minutes and hours (5m, 1.5h); at
 *     least 1s, since samples are kept in 1-second buckets.
 *   - filter pid, filter tid: a process / thread id 1..INT32_MAX (a
 *     positive pid_t).
 *   - filter comm: a thread name of at most COMMAND_COMM_MAX bytes (the
 *     kernel keeps no more; a longer name could never match).
 *   - help takes a command name (help sample-slow); `help` alone lists all.
 */
#ifndef SONDE_COMMAND_H
#define SONDE_COMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "latency.h"

#define COMMAND_LINE_MAX 4096   /* bytes in a line, without its final newline */
#define COMMAND_ARG_MAX 256     /* size of struct command.arg (with its NUL) */
#define COMMAND_HZ_MAX 100000
#define COMMAND_COMM_MAX 15     /* TASK_COMM_LEN - 1 */
#define COMMAND_FORMAT_MAX 1024 /* a buffer this large always holds command_format's text */

/* The commands from CMD_TRACE to CMD_SAMPLE_SLOW_OFF change what the kernel
 * side gathers (command_changes_gathering): keep them together. */
enum command_kind {
	CMD_NONE,
	CMD_TRACE,
	CMD_UNTRACE,
	CMD_SAMPLE_HZ,
	CMD_SAMPLE_OFF,
	CMD_SAMPLE_EVENT,
	CMD_SAMPLE_OFFCPU,     /* sample off-cpu: record off-CPU intervals too */
	CMD_SAMPLE_OFFCPU_OFF, /* sample off-cpu off */
	CMD_SAMPLE_THREADS,    /* sample threads [HZ]: thread states too (hz; 0: the default) */
	CMD_SAMPLE_THREADS_OFF, /* sample threads off */
	CMD_SAMPLE_IN,
	CMD_SAMPLE_IN_OFF,
	CMD_SAMPLE_WHEN,     /* arg: a line probe (FILE:LINE) */
	CMD_SAMPLE_WHEN_OFF,
	CMD_SAMPLE_SLOW,
	CMD_SAMPLE_SLOW_OFF,
	CMD_VIEW_IN,
	CMD_VIEW_SLOW,
	CMD_VIEW_FAST,
	CMD_VIEW_ALL,
	CMD_WINDOW,
	CMD_EWMA,
	CMD_FILTER_PID,
	CMD_FILTER_TID,
	CMD_FILTER_COMM,
	CMD_FILTER_CLEAR,
	CMD_RESET,
	CMD_SAVE,
	CMD_STATUS,
	CMD_THREADS,
	CMD_BY,
	CMD_HELP
};

/* Fields a command does not use are zero (threshold: see has_threshold). */
struct command {
	enum command_kind kind;
	char arg[COMMAND_ARG_MAX]; /* FUNC, EVENT, NAME, FILE, help topic ("" for all) */
	uint64_t hz;               /* CMD_SAMPLE_HZ, CMD_SAMPLE_THREADS (0: default) */
	uint64_t ns;               /* sample-slow DUR, window, ewma half-life */
	int64_t pid;               /* CMD_FILTER_PID */
	int64_t tid;               /* CMD_FILTER_TID */
	struct threshold threshold; /* slow/fast: as given, or p95 when !has_threshold */
	bool has_threshold;         /* slow/fast: a THRESHOLD was given */
};

/* Parses one line (NULL counts as blank). Returns 0 with *cmd filled
 * (cmd->kind is CMD_NONE for a blank or comment line), or -1 with ONE line in
 * err (when err && errlen; no newline) that says what is wrong and shows the
 * right usage, e.g. "sample-slow needs FUNC and a duration: sample-slow
 * handle_request 5ms or sample-slow off". An unknown command gets the nearest
 * command name suggested ("did you mean trace?"). On error *cmd is CMD_NONE.
 * Never reads past the line's NUL and accepts any bytes. */
int command_parse(const char *line, struct command *cmd, char *err, size_t errlen);

/* Writes the canonical text of a command into buf (truncated to size, always
 * NUL-terminated when size > 0) and returns buf: command_parse reads it back
 * to a command equal to c (command_equal) for every c command_parse gives.
 * Words are quoted only when needed. CMD_NONE gives "". */
const char *command_format(const struct command *c, char *buf, size_t size);

/* Parses a span of time as window and ewma take it (10, 2.5, 30s, 5m, 1h,
 * 750ms): 0 with *ns, or -1. For options that mirror those commands. */
int command_parse_span(const char *s, uint64_t *ns);

/* True when a and b are the same command (the fields their kind uses). */
bool command_equal(const struct command *a, const struct command *b);

/* Whether a command changes what the kernel side gathers (trace, untrace,
 * sample ...): a session replaying a recording, or whose targets exited,
 * refuses these. */
bool command_changes_gathering(enum command_kind kind);

/* The name of the command a kind belongs to ("sample-slow" for
 * CMD_SAMPLE_SLOW_OFF, "filter" for CMD_FILTER_TID); "" for CMD_NONE. */
const char *command_name(enum command_kind kind);

/* Help. topic NULL or "": every command, one line each (synopsis and what it
 * does). A command name: that command in detail (its forms, arguments and
 * examples). Anything else: one line saying there is no such command, with
 * the nearest name. */
void command_help(FILE *out, const char *topic);

#endif
