/* perfmap — names of JIT-compiled code from a process's perf map,
 * /tmp/perf-PID.map, the file Node (--perf-basic-prof), the JVM (with
 * perf-map-agent) and Python 3.12+ (-X perf) write for perf.
 *
 * Format: one function a line, "START SIZE NAME": START and SIZE in hex
 * (with or without "0x"), one or more blanks, then the name to the end of
 * the line (it may hold blanks). A later line overrides what earlier ones
 * said for its range: a JIT reuses memory for new code. A line that is not
 * of this form (or whose range wraps around) is counted as bad and skipped.
 *
 * The file grows while its process runs, so a map is read incrementally: it
 * keeps the file open and the offset of the first byte not yet read, and
 * perfmap_refresh() reads only what was appended since (a line still being
 * written waits for its newline). Keeping the file open means the names can
 * still be read after the process exited or removed the file. A file that
 * shrank was rewritten from the start: the map starts over.
 *
 * Opening: through /proc/PID/root (a container's own /tmp), named after
 * the process's PID in its own namespace (NSpid in /proc/PID/status), else
 * /tmp/perf-PID.map as this process sees it (the process exited, so
 * /proc/PID/root is gone). Only a regular file owned by root or by the
 * process's user is read (anyone can create files in /tmp).
 *
 * Memory: names are kept until perfmap_free() (frames point at them); at
 * most PERFMAP_MAX_BYTES of a file are read, the bytes past that are
 * counted. Not thread-safe. */
#ifndef SONDE_PERFMAP_H
#define SONDE_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PERFMAP_MAX_BYTES ((uint64_t)512 << 20)

/* One named range of JIT code: [start, end). */
struct perfmap_sym {
	uint64_t start, end;
	const char *name; /* lives until perfmap_free() */
};

struct perfmap_stats {
	uint64_t lines;     /* lines read (good ones) */
	uint64_t bad_lines; /* lines not of the form "START SIZE NAME" */
	uint64_t skipped;   /* bytes past PERFMAP_MAX_BYTES, never read */
	uint64_t restarts;  /* times the file was found rewritten from the start */
};

struct perfmap;

/* An empty map for process `pid` (0: a map fed only by perfmap_add_text). */
struct perfmap *perfmap_new(pid_t pid);
void perfmap_free(struct perfmap *m);

/* Reads what was appended to the process's perf map since the last call,
 * opening the file first if it is not open yet. `final` says the writer is
 * gone: a last line without a newline is then read too. Returns the number
 * of lines read (0: nothing new), or -1 when there is no such file (yet). */
int perfmap_refresh(struct perfmap *m, bool final);

/* Adds the lines of `text` (n bytes) in order, as if appended to the file.
 * Only complete lines are read (unless `final`); returns the number of bytes
 * consumed, the rest being an unfinished last line. */
size_t perfmap_add_text(struct perfmap *m, const char *text, size_t n, bool final);

/* The function holding addr by the newest line that covers it, or NULL. */
const struct perfmap_sym *perfmap_find(const struct perfmap *m, uint64_t addr);

/* The named ranges now in effect, sorted by start, never overlapping. */
const struct perfmap_sym *perfmap_syms(const struct perfmap *m, size_t *n);

/* Is the file open (was it found)? */
bool perfmap_is_open(const struct perfmap *m);

void perfmap_get_stats(const struct perfmap *m, struct perfmap_stats *out);

#endif
