/* query — the span conditions users put on views: --in FUNC,
 * --slow FUNC[:THRESHOLD], --fast FUNC[:THRESHOLD].
 *
 * The threshold (p95 by default, pNN, an absolute duration, or auto) is
 * resolved at query time over the durations of FUNC's calls in the same
 * profile, so changing it never needs a new recording. A sample belongs to a
 * call of FUNC when it was taken while that call was in flight on its
 * thread (for recursion, the outermost call counts). */
#ifndef SONDE_QUERY_H
#define SONDE_QUERY_H

#include <stddef.h>

#include "latency.h"
#include "profile.h"
#include "view.h"

struct span_query {
	enum span_class cls;
	int probe;              /* index into the profile's probes */
	struct threshold threshold;
	uint64_t threshold_ns;  /* resolved */
	struct latency_modes modes; /* for auto: the analysis */
	size_t calls;           /* calls of the probe */
	size_t slow_calls;      /* calls slower than threshold_ns (profile_probe_calls_over) */
};

/* The function probe of p a user's spec names, or -1: its name as reports
 * show it (FUNC, or BASE:FUNC when two binaries have a FUNC), or any
 * spelling --trace accepted for it: FUNC (the first probe of that
 * function), BINARY:FUNC (its file's name, or that of the file a symlink
 * names), LIB:FUNC (a library name as the dynamic loader matches it:
 * libsqlite3 for libsqlite3.so.0) or PATH:FUNC (the path it was traced at,
 * or one to the same file). A line probe is named by its name only. */
int query_probe(const struct profile *p, const char *spec);

/* Parses "FUNC" or "FUNC:THRESHOLD" for class cls and resolves it against p
 * (FUNC any spelling query_probe takes). Returns 0, or -1 with one line in
 * err (unknown function: lists the traced ones; bad threshold). */
int query_parse(struct profile *p, enum span_class cls, const char *arg, struct span_query *q,
		char *err, size_t errlen);

/* Applies the query to a view (its span condition; the rest stays). */
void query_apply(const struct span_query *q, struct view *v);

/* One line describing the query, e.g. "samples in slow calls of
 * handle_request (> 2.05ms, p95: 20 of 400 calls)". For slow and fast,
 * samples in calls that have no record (view.h: in neither) are counted
 * when there are any: "...; 3 samples in calls with no record are in
 * neither slow nor fast". `v` is the view the query was applied to (NULL:
 * no other condition). */
void query_describe(const struct span_query *q, const struct profile *p, const struct view *v,
		    char *buf, size_t size);

/* The title of a slow-vs-fast comparison, e.g. "Slow vs fast calls of
 * handle_request (threshold 2.05ms, p95)"; auto without a valley says
 * "auto: no second mode; using p95" (as query_describe does). */
void query_diff_title(const struct span_query *q, const struct profile *p, char *buf, size_t size);

#endif
