/* chrometrace — a profile as Chrome Trace Event JSON, the format Perfetto
 * (ui.perfetto.dev), Firefox Profiler and chrome://tracing open.
 *
 * {"traceEvents":[...],"displayTimeUnit":"ns"} with, in this order:
 *  - "M" metadata: process_name per pid (the comm of its main thread, tid ==
 *    pid, else of its first thread) and thread_name per thread (its comm);
 *    threads sharing a pid/tid (a comm change) are one thread;
 *  - traced calls (spans) as "X" complete events: name = probe name,
 *    cat "sonde", ts/dur in µs with ns precision, args {span_id, parent
 *    (0 = none), open: true for calls still running at the end}. Per thread
 *    they are sorted by ts, longer first, and properly nested (a call that
 *    would overlap its enclosing call's end is cut there);
 *  - samples V8-style, because Perfetto ignores top-level samples and
 *    stackFrames: per thread one "P" event named "Profile" (id "0x<n>",
 *    args.data.startTime) then "ProfileChunk" events with the same id, pid
 *    and tid, at most 10000 samples each, carrying args.data.cpuProfile.nodes
 *    (the call-tree nodes not sent before, parents first; node 1 of each
 *    thread's tree is "(root)"), args.data.cpuProfile.samples (node ids) and
 *    args.data.timeDeltas. A node is a function (name and source file, else
 *    module: speedscope_frame_groups) under its parent: sonde's frames carry
 *    the sampled line, which would split a function into many nodes (and
 *    into many functions in Firefox Profiler, which keys them by line).
 *    Node ids are unique in the whole file and dense
 *    (Firefox Profiler indexes one frame table by them). startTime and
 *    timeDeltas are whole µs (Perfetto reads them as integers): deltas of
 *    the rounded sample times, so no error accumulates. callFrame:
 *    functionName = function name, url = source file or else module,
 *    lineNumber 0-based (-1 unknown or differing between the group's
 *    frames), columnNumber -1. Each sample is one V8 sample whatever its
 *    weight; samples without times are spread at the sampling interval
 *    (1e9 / meta frequency_hz, else 1e9 / 99).
 * Times are relative to the profile start (meta start_ns, or the earliest
 * sample or span when earlier or unknown), so ts starts near 0. */
#ifndef SONDE_CHROMETRACE_H
#define SONDE_CHROMETRACE_H

#include <stdio.h>

#include "profile.h"

/* Most samples in one ProfileChunk event. */
#define CHROMETRACE_CHUNK_SAMPLES 10000

/* Writes the profile as Chrome Trace Event JSON. Returns 0, or -1 when
 * writing failed. */
int chrometrace_write(FILE *out, struct profile *p);

/* The entry of the formats registry (registry.h). */
struct format_entry;
extern const struct format_entry format_chrometrace;

#endif
