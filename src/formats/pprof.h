/* pprof — google/pprof's profile.proto, written (gzipped) and read.
 *
 * Writing: one pprof Sample per sonde sample by default, so per-sample
 * labels survive: "thread" (comm), "pid", "tid", "timestamp_ns" (the
 * sample's CLOCK_MONOTONIC time), and for every traced call in flight a
 * "span_id" (decimal) and "span_name" (the probe) — the convention of
 * Pyroscope's span profiles; "event" when the profile has several events.
 * With `aggregate`, samples of one (stack, thread, event) merge into one
 * Sample with summed values and only the thread labels.
 * Values: "samples"/"count" (the sample weight) and, when the profile was
 * sampled by frequency, "cpu"/"nanoseconds" (weight x 1e9 / frequency_hz).
 * A run of inlined frames and the frame they were inlined into become one
 * Location with several Lines, innermost first. One Mapping per module;
 * locations carry no addresses (every frame is already symbolized).
 *
 * Reading: one sonde sample per pprof Sample (samples whose chosen value is
 * 0 are dropped), weighted by the value of the sample type named "samples",
 * else of default_sample_type, else of the first. Labels written above come
 * back as thread, pid, tid, time and event. Input is validated strictly
 * (string indices, ids, value counts, sizes): any inconsistency is one line
 * of error, never a crash. */
#ifndef SONDE_PPROF_H
#define SONDE_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"
#include "view.h"

struct pprof_options {
	bool aggregate;			    /* merge samples of one stack and thread */
	const struct view *filter; /* which samples (NULL = all) */
};

/* Writes the profile as gzipped profile.proto. `o` may be NULL (defaults).
 * Returns 0, or -1 when writing failed, or (errno EOVERFLOW, nothing
 * written) when the cpu values would not fit (profile_weight_ns_fits). */
int pprof_write(FILE *out, struct profile *p, const struct pprof_options *o);

/* Reads a profile.proto message (already gunzipped, see filebuf). Returns a
 * new profile (meta source_format "pprof"), or NULL with one line in err. */
struct profile *pprof_read(const uint8_t *data, size_t len, char *err, size_t errlen);

/* Do the (gunzipped) bytes parse as a Profile message: only fields 1..15
 * with their wire types, and a string table whose first entry is ""? */
bool pprof_detect(const uint8_t *data, size_t len);

/* Could data be the first len bytes of a pprof profile? (nothing in them
 * contradicts it; a field may run past their end): whether a file too big
 * to detect from its head is worth reading whole. */
bool pprof_detect_head(const uint8_t *data, size_t len);

/* Refusal limits of the reader. */
#define PPROF_MAX_SAMPLES 50000000u   /* pprof Samples */
#define PPROF_MAX_DEPTH 16384u	      /* frames in one stack, inlined included */
#define PPROF_MAX_EXPANDED 200000000u /* frames expanded over all distinct stacks */

/* The entry of the formats registry (registry.h). */
struct format_entry;
extern const struct format_entry format_pprof;

#endif
