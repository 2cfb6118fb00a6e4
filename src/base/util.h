/* util — allocation that fails loudly, hashing, and the one-line error
 * convention every command uses. */
#ifndef SONDE_UTIL_H
#define SONDE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Allocation: on out-of-memory print one line and exit(1). A profiler that
 * cannot allocate a few bytes cannot do anything useful; a NULL check at
 * every call site would only hide the real work. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grows *arr (of *cap elements of `elem` bytes) to hold at least `need`. */
void grow_array(void **arr, size_t *cap, size_t need, size_t elem);

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);
uint64_t hash_str(const char *s, uint64_t seed);

/* The program name used in error lines ("sonde"). */
extern const char *progname;

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

/* "1234567" -> "1,234,567" (as flamegraph.pl prints counts), into buf,
 * which it returns. */
const char *format_count(uint64_t v, char buf[32]);

/* CLOCK_MONOTONIC in nanoseconds: the clock of every sample, call and
 * timeout (bpf_ktime_get_ns reads the same one). */
uint64_t monotonic_ns(void);

#endif
