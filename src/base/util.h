/* util — allocation that fails loudly, hashing, counts and the clock. The
 * one-line error convention is errbuf.h. */
#ifndef SONDE_UTIL_H
#define SONDE_UTIL_H

#include <stdarg.h>
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
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Grows *arr (of *cap elements of `elem` bytes) to hold at least `need`. */
void grow_array(void **arr, size_t *cap, size_t need, size_t elem);

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);
uint64_t hash_str(const char *s, uint64_t seed);

/* The program name used in error lines ("sonde"). */
extern const char *progname;

/* "1234567" -> "1,234,567" (as flamegraph.pl prints counts), into buf,
 * which it returns. */
const char *format_count(uint64_t v, char buf[32]);

/* CLOCK_MONOTONIC in nanoseconds: the clock of every sample, call and
 * timeout (bpf_ktime_get_ns reads the same one). */
uint64_t monotonic_ns(void);

#endif
