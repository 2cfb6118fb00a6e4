/* values — what capturing probes read: each probe's captures, its hits
 * and their values (struct probe_capture, probe_hit, hit_value in
 * profile.h), and their summaries.
 *
 * A probe's captures are set when it is traced (values_set_probe); a
 * SONDE_REC_VALUES record then becomes one hit with a value per capture
 * (values_add_record). A value is kept as its number and, for strings,
 * enumerators and booleans, its text, so a recording needs no DWARF to be
 * read back. Values that could not be read keep their status (optimized
 * out, a failed read, unavailable) and are counted apart, never as
 * numbers. */
#ifndef SONDE_VALUES_H
#define SONDE_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct sonde_values; /* the kernel's record (bpf/sonde_abi.h): only values.c reads it */

/* The capture of p like `like`: found when one of the same probe, name,
 * type and kind exists, else a copy of `like` added (its strings and
 * enumerators copied). Returns its index in p->captures. */
uint32_t values_capture_intern(struct profile *p, const struct probe_capture *like);

/* What a probe's hit records hold from now on: captures[i] for slot i, and
 * its predicate (NULL: none). Returns the layout number to put in the
 * probe's fetch program (struct sonde_fetch_prog): records carrying another
 * are of an earlier program and are dropped. It is values_next_layout's:
 * a program can be written before the probe is in p (a probe not in p yet
 * gets 1 once added). */
uint32_t values_set_probe(struct profile *p, uint32_t probe, const uint32_t *captures,
			  uint32_t n, const char *predicate);
uint32_t values_next_layout(const struct profile *p, uint32_t probe);

/* Adds a hit (values n, in slot order). Returns its index. */
uint32_t values_add_hit(struct profile *p, const struct probe_hit *h, const struct hit_value *v,
			uint32_t n);

/* Adds a hit from a kernel record (thread already interned). Returns 0,
 * -1 for a record of no probe, -2 for one of an earlier program of the
 * probe (another layout: its values mean something else now). */
int values_add_record(struct profile *p, const struct sonde_values *r, uint32_t thread);

/* Kind names as recordings store them ("signed", "string", ...), and back
 * (-1 when unknown). */
const char *values_kind_name(enum capture_kind k);
int values_kind_from_name(const char *s);
const char *values_status_name(uint8_t status); /* "ok", "optimized_out", ... */
int values_status_from_name(const char *s);

/* Whether values of a kind have min, max and sum. */
bool values_kind_is_number(enum capture_kind k);

/* A value as people read it (into buf, which it returns): a number, a
 * string's text, an enumerator's name, a pointer in hex, "<optimized
 * out>"... Strings are raw bytes: escape them for a terminal. */
const char *values_format(const struct profile *p, const struct hit_value *v, char *buf,
			  size_t size);

/* A capture's figures over the hits a filter keeps (NULL: all). */
struct value_top {
	const struct hit_value *value; /* one of them */
	uint64_t count;
};
struct value_stats {
	uint64_t count;                  /* values read */
	uint64_t unread[4];              /* by status (unread[0] unused) */
	bool number;                     /* min, max and sum apply */
	int64_t min, max;                /* as signed or unsigned by kind */
	double sum;
	struct value_top *top;           /* most frequent first (ties: smaller value first) */
	size_t ntop;
};
typedef bool (*values_hit_filter)(void *arg, const struct probe_hit *h);
void values_stats(const struct profile *p, uint32_t capture, values_hit_filter keep, void *arg,
		  size_t max_top, struct value_stats *out);
void values_stats_free(struct value_stats *s);

/* The capture of a probe by its name as written, or -1. */
int values_capture_find(const struct profile *p, uint32_t probe, const char *name);

/* The value of `capture` at the entry of call `span_id`, or NULL. The
 * first call builds an index (span id -> hit) kept in `index`, which the
 * caller frees (hashmap_free) once done with the profile unchanged. */
const struct hit_value *values_of_span(const struct profile *p, struct hashmap *index,
				       uint32_t capture, uint64_t span_id);

#endif
