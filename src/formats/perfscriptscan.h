/* perfscriptscan — what the rooms of perf script share (nothing outside
 * perfscript*.c includes it): the records of the one scanner
 * (perfscript_scan.c), the frame names as FlameGraph cleans them
 * (perfscript_names.c), counts with Perl's number semantics and counts by
 * key (perfscript_counts.c), and the small text helpers under them all.
 * The readers are perfscript_collapse.c (folded stacks, as
 * stackcollapse-perf.pl) and perfscript_read.c (a profile); perfscript.c
 * detects the text and holds the registry's entry.
 *
 * Perl character classes on byte strings: \s is [ \t\n\v\f\r], \d is
 * [0-9], \w is [A-Za-z0-9_]. */
#ifndef SONDE_PERFSCRIPTSCAN_H
#define SONDE_PERFSCRIPTSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "infile.h"
#include "strpool.h"
#include "util.h"

/* --- character classes and small helpers --------------------------------- */

/* perf records at most 65535 frames a stack (kernel.perf_event_max_stack):
 * a record with far more is text that never ends a record, and its frames
 * would take memory in proportion to the input. */
#define MAX_RECORD_FRAMES ((size_t)1 << 20)
#define PERFSCRIPT_TOO_DEEP "a record with more than 1048576 frames: not perf script text"

static inline bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static inline bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_word(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

struct sv {
	const char *p;
	size_t n;
};

static inline bool sv_eq(struct sv a, const char *s)
{
	size_t n = strlen(s);
	return a.n == n && memcmp(a.p, s, n) == 0;
}

/* A growable byte buffer. */
struct buf {
	char *p;
	size_t n, cap;
};

static inline void buf_reserve(struct buf *b, size_t more)
{
	if (b->n + more > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + more)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
}

static inline void buf_add(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

static inline void buf_addc(struct buf *b, char c)
{
	buf_reserve(b, 1);
	b->p[b->n++] = c;
}

/* A number's digits as a uint32_t, saturating. */
static inline uint32_t u32_of(struct sv s)
{
	uint64_t v = 0;
	for (size_t i = 0; i < s.n; i++) {
		v = v * 10 + (unsigned)(s.p[i] - '0');
		if (v > UINT32_MAX)
			return UINT32_MAX;
	}
	return (uint32_t)v;
}

/* A number's digits as a uint64_t, saturating. */
static inline uint64_t u64_sat(struct sv s)
{
	uint64_t v = 0;
	for (size_t i = 0; i < s.n; i++) {
		unsigned d = (unsigned)(s.p[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return UINT64_MAX;
		v = v * 10 + d;
	}
	return v;
}

/* --- counts with Perl's number semantics (perfscript_counts.c) ------------ */

/* Perl adds counts as unsigned integers while they fit and as doubles
 * (printed "%.15g") once they do not. */
struct count {
	uint64_t u;
	double d;
	bool nv;
};

/* The count of n digits. */
struct count perfscript_count_of_digits(const char *p, size_t n);
void perfscript_count_add(struct count *a, struct count b);

/* --- counts by key: keys interned in a strpool, their counts by id ------- */

struct table {
	struct strpool keys;
	struct count *val; /* key id -> its count */
	size_t cap;
};

/* The count of key (added as zero when new). */
struct count *perfscript_table_get(struct table *t, const char *key, size_t len, bool *added);
void perfscript_table_free(struct table *t);

/* --- the line grammar (perfscript_scan.c) --------------------------------- */

struct header {
	struct sv comm;
	struct sv pid; /* p == NULL: "?" */
	struct sv tid;
	size_t rest; /* offset just after the PID/TID number */
	bool has_event;
	struct sv event;
	struct sv period; /* n == 0: none */
};

/* The record header: Perl's /^(\S.+?)\s+(\d+)\/STAR(\d+)*\s+/ (STAR: '*')
 * then, on the whole line, /:\s*(\d+)*\s+(\S+):\s*$/. */
bool perfscript_parse_header(const char *s, size_t n, struct header *h);

struct stackline {
	struct sv pc, func, mod;
};

/* A stack line: Perl's /^\s*(\w+)\s*(.+) \((\S*)\)/ (unanchored at the end). */
bool perfscript_parse_stackline(const char *s, size_t n, struct stackline *sl);

/* --- the records: one scanner for every reader (perfscript_scan.c) -------- */

/* A record's header, as every reader sees it. */
struct record_head {
	struct header h;
	uint32_t cpu;
	bool has_cpu, has_time;
	uint64_t time_ns;
	struct sv event;  /* n == 0: the line names none ("samples" in a profile) */
	struct sv period; /* n == 0: none (a weight of 1) */
};

/* What a reader does with the records the scanner finds: a header begins
 * one, its stack lines follow (leaf first), and it ends. Each returns 0, or
 * -1 with one line in err to stop. */
struct record_sink {
	void *arg;
	int (*begin)(void *arg, const struct record_head *rh, size_t line, char *err,
		     size_t errlen);
	int (*frame)(void *arg, const struct stackline *sl, size_t line, char *err, size_t errlen);
	int (*end)(void *arg, char *err, size_t errlen);
};

/* The one scanner of perf script text, behind report, convert and every
 * other reader, so that none can count other records than the rest: '#'
 * lines are comments, a trailing '\r' is dropped; a record begins at a
 * header and ends at a blank line or at the next header; one that the end
 * of the input cuts is left out, as stackcollapse-perf.pl leaves it
 * (counted: c->unterminated); its stack lines are those that parse as one;
 * any other line after the first header is skipped (c->skipped_lines).
 * Errors: a NUL byte, a first non-comment line that is not a header.
 * (stackcollapse-perf.pl merges a header's frames into the next record
 * when no blank line ends it, and skips what comes before the first
 * header: perf script ends every record with a blank line, and text that
 * does not begin with a header is not perf script.) */
struct scan_counts {
	uint64_t skipped_lines, unterminated; /* what input_note_format says */
};

int perfscript_scan_records(struct infile *in, const struct record_sink *k, struct scan_counts *c,
			    char *err, size_t errlen);

/* A stack line's frames: where they start in a reader's frames, how many. */
struct group {
	size_t first, n; /* frags of one stack line */
};

/* --- frame names as FlameGraph cleans them (perfscript_names.c) ----------- */

/* Perl's s/\+0x[\da-f]+$//. */
struct sv perfscript_strip_offset(struct sv f);

/* m/(^\[|vmlinux$)/ && !~ /unknown/ */
bool perfscript_mod_is_kernel(struct sv mod);

/* m:/tmp/perf-\d+\.map: */
bool perfscript_mod_is_jit(struct sv mod);

/* Perl's split /\->/: the fields between "->"s, trailing empty fields
 * removed (so "" and "->" give none). */
struct fields {
	struct sv *v;
	size_t n, cap;
};

void perfscript_split_arrows(struct sv f, struct fields *out);

/* The suffix the collapse gives one function name; idx is its place in an
 * "a->b" chain (later parts are inlined), mod the stack line's module. */
enum annotate { ANN_NONE, ANN_INLINED, ANN_KERNEL, ANN_JIT };

/* Inline, as the other small steps of a frame here: the collapse calls
 * them for every frame of every stack. */
static inline enum annotate perfscript_frame_annotation(size_t idx, struct sv mod, bool kernel,
							bool jit)
{
	if (idx > 0)
		return ANN_INLINED;
	if (kernel && perfscript_mod_is_kernel(mod))
		return ANN_KERNEL;
	if (jit && perfscript_mod_is_jit(mod))
		return ANN_JIT;
	return ANN_NONE;
}

/* The cleanups FlameGraph applies to one function name, appended to b
 * (perfscript_names.c). */
void perfscript_tidy_append(struct buf *b, struct sv f, bool java);

/* Appends the cleaned name of one field (no annotation) to b (tmp: scratch);
 * returns whether the field was "[unknown]", which becomes "[module]". */
static inline bool perfscript_clean_append(struct buf *b, struct buf *tmp, struct sv field,
					   const struct stackline *sl, bool addrs, bool java)
{
	if (!sv_eq(field, "[unknown]")) {
		perfscript_tidy_append(b, field, java);
		return false;
	}
	struct sv base = {"unknown", 7};
	if (!sv_eq(sl->mod, "[unknown]")) {
		size_t i = sl->mod.n;
		while (i > 0 && sl->mod.p[i - 1] != '/')
			i--;
		base = (struct sv){sl->mod.p + i, sl->mod.n - i};
	}
	tmp->n = 0;
	buf_addc(tmp, '[');
	buf_add(tmp, base.p, base.n);
	if (addrs) {
		buf_add(tmp, " <", 2);
		buf_add(tmp, sl->pc.p, sl->pc.n);
		buf_addc(tmp, '>');
	}
	buf_addc(tmp, ']');
	perfscript_tidy_append(b, (struct sv){tmp->p, tmp->n}, java);
	return true;
}

#endif
