/* errbuf — the one error style: "-1 with one line in err" for functions,
 * "sonde: <message>" on stderr for commands. Every message is one line:
 * line breaks a quoted message may carry become spaces, and what goes to a
 * terminal is escaped (printable.h). */
#ifndef SONDE_ERRBUF_H
#define SONDE_ERRBUF_H

#include <stdbool.h>
#include <stddef.h>

/* Prints "sonde: <message>" on stderr (one line, newline added; control
 * characters in the message escaped, see printable.h). */
void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes an error message into a caller's buffer (nothing when err is NULL
 * or errlen 0) and returns -1: the one error style of functions that report
 * "-1 with one line in err" (`return errbuf_set(err, errlen, ...);`). Line
 * breaks, which a quoted message of another module may carry, become spaces. */
int errbuf_set(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* An error buffer that keeps the first message: for code that goes on
 * after a failure (a parser unwinding its recursion, a translator finishing
 * its walk) and must report the failure that caused the others, not the
 * last of them. */
struct errbuf {
	char *err; /* the caller's buffer (NULL: no message, only `failed`) */
	size_t errlen;
	bool failed; /* a failure was reported */
};

/* errbuf_set into e, unless e has failed already; returns -1. */
int errbuf_first(struct errbuf *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Puts `prefix` (e.g. "pprof: ") in front of the message in err, cutting
 * the end when there is no room: a module names itself once, where its
 * errors leave it, rather than in every message. */
void errbuf_prefix(char *err, size_t errlen, const char *prefix);

#endif
