/* recording_loader — the state of one recording_load, shared by the
 * reader (recording_read.c) and the check of the file's tables
 * (recording_schema.c, which sets the flags of the columns a file has), and
 * its refusals: one line, "PATH is not a readable sonde recording (WHY)".
 * Private to formats. */
#ifndef SONDE_RECORDING_LOADER_H
#define SONDE_RECORDING_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* sqlite3.h stays private to formats' sources. */
struct sqlite3;

struct loader {
	struct sqlite3 *db;
	long long steps_left; /* SQLite steps still allowed (LOAD_STEPS_PER_BYTE) */
	size_t max_id;        /* frame and stack ids are dense: at most one per byte */
	bool probe_totals;    /* probes has entered, raw_ns, own_ns */
	bool probe_all_calls; /* probes has all_calls (log-linear histograms) */
	bool span_raw;        /* spans has raw_duration_ns */
	bool frame_system_names; /* frames has system_name */
	bool probe_kind;      /* probes has kind and point (line probes) */
	bool span_points;     /* spans has points */
	bool has_point_calls; /* the point_calls table exists */
	bool has_branches;    /* the branches table exists */
	bool has_thread_samples; /* the thread_samples table exists */
	bool thread_stacks;   /* thread_samples has stack, stack_ns, stack_from */
	struct profile *p;
	uint32_t *frame_map; /* file frame id -> profile frame id */
	size_t nframe_map;
	uint32_t *stack_map; /* file stack id -> profile node id */
	size_t nstack_map;
	const char *path;
	char *err;
	size_t errlen;
};

/* Puts "PATH is not a readable sonde recording (WHAT)" in l->err; -1. */
int recording_load_fail(struct loader *l, const char *what);
/* A failed step: SQLite's reason, or the step budget's when it ran out; -1. */
int recording_load_fail_sqlite(struct loader *l);

#endif
