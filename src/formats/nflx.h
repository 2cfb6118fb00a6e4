/* nflx — Netflix's nflxprofile (the protobuf FlameScope reads), out and in.
 *
 * The file is a proto2 `Profile` (see FORMATS.md "nflxprofile"): a call tree
 * in `nodes` (map<uint32, Node>, root id 0 "root") whose first level is the
 * process name (as in folded stacks: root -> comm -> frames outermost first),
 * one node id per sample in `samples` (the node of the sample's leaf), and
 * the sample times as `start_time` (seconds) plus running sums of
 * `time_deltas`. Per-sample pid, tid and cpu go in samples_pid/tid/cpu, the
 * sample weights in samples_value when any is not 1, and the feature flags
 * (has_parent, has_samples_*, hasValues) in `params`, next to the profile's
 * metadata as "sonde.KEY" params. */
#ifndef SONDE_NFLX_H
#define SONDE_NFLX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

/* Writes the profile as an nflxprofile, samples sorted by time. Times are
 * absolute seconds: start_unix_s + (time_ns - start_ns) / 1e9 when the
 * profile's metadata has start_unix_s, else time_ns / 1e9. Frames merge by
 * function (name and kind) as in flame graphs. Returns 0, or -1 when writing
 * failed. */
int nflx_write(FILE *out, struct profile *p);

/* Reads an nflxprofile: each sample's stack is its node's ancestors below
 * the process level (parents from Node.parent with has_parent, else from the
 * children lists; a Node.stack with has_node_stack), the first level under
 * the root is the thread's comm, pid/tid/cpu from samples_pid/tid/cpu (else
 * Node.pid/tid), weights from samples_value. time_ns is the absolute time in
 * ns (start_time + deltas, x 1e9); metadata start_ns/end_ns/start_unix_s are
 * set to match. Malformed or inconsistent input (truncation, missing node ids,
 * parent cycles, count mismatches, absurd sizes or times) returns NULL with
 * one line in err. */
struct profile *nflx_read(const uint8_t *data, size_t len, char *err, size_t errlen);

/* Does the data look like an nflxprofile? (top-level fields 1..13 with their
 * wire types, a start_time, and a nodes entry whose value parses as a Node) */
bool nflx_detect(const uint8_t *data, size_t len);

/* Could data be the first len bytes of an nflxprofile? (nothing in them
 * contradicts it; a field may run past their end): whether a file too big
 * to detect from its head is worth reading whole. */
bool nflx_detect_head(const uint8_t *data, size_t len);

/* The entry of the formats registry (registry.h). */
struct format_entry;
extern const struct format_entry format_nflx;

#endif
