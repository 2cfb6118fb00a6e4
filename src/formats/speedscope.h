/* speedscope — a profile as speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json).
 *
 * The file holds every frame the samples use once in "shared.frames"
 * ({name, file?, line?}: the bare function name, file = the source file when
 * known, else the module). sonde's frames carry the line sampled in the
 * function, so frames with the same name and file/module are one speedscope
 * frame (see speedscope_frame_groups), else one function would show as many
 * in speedscope's tables. The file then holds:
 *
 *  - one "sampled" profile per thread that has samples, named
 *    "comm (pid/tid)", busiest thread first (so activeProfileIndex 0 opens
 *    it). Samples are in time order, each a list of frame indices root first.
 *    When the samples carry times the unit is "nanoseconds" and a sample's
 *    weight is the time it stands for: its weight x the sampling interval
 *    (1e9 / meta frequency_hz) when that is known, otherwise the gap to the
 *    thread's next sample capped at the typical (median) gap between
 *    samples. Without times the unit is "none" and weights are the samples'
 *    weights. startValue is the thread's first sample (ns after the profile
 *    start), endValue = startValue + the sum of its weights, so speedscope's
 *    percentages are of the time the thread was seen running;
 *
 *  - when the profile has spans, one "evented" profile per thread with
 *    spans ("comm (pid/tid) traced calls"): an "O" and a "C" event per
 *    traced call at its start and end, on a frame named after the probe
 *    (file = the probe's binary). Events are sorted by "at", balanced and
 *    properly nested (a call that would overlap its enclosing one's end is
 *    cut there); calls still open when the profile ended close at its end.
 *
 * Times are relative to the profile start (meta start_ns, or the earliest
 * sample or span when that is earlier or unknown). A profile with neither
 * samples nor spans gets one empty sampled profile, which speedscope opens. */
#ifndef SONDE_SPEEDSCOPE_H
#define SONDE_SPEEDSCOPE_H

#include <stdio.h>

#include "profile.h"

/* Writes the profile as speedscope JSON; `name` is the file's "name" (NULL:
 * "sonde"). Returns 0, or -1 when writing failed, or (errno EOVERFLOW) when
 * the weights in nanoseconds would not fit 64 bits (profile_weight_ns_fits,
 * or times centuries apart). */
int speedscope_write(FILE *out, struct profile *p, const char *name);

/* Frames as the viewers' formats show them (speedscope here, the Chrome
 * trace's call frames too): frames with the same function name and the same
 * place (source file when known, else module) are one, whatever their line
 * and kind. Returns canon[id] = the smallest frame id of id's group for ids
 * 1..frames_count(t) (canon[0] = 0); *line_out[canonical id] is the line all
 * frames of the group share, 0 when they differ or none is known. The caller
 * frees both. */
uint32_t *speedscope_frame_groups(const struct frame_table *t, uint32_t **line_out);

/* A frame's place as above: its source file, else its module ("" if none). */
const char *speedscope_frame_place(const struct frame *f);

/* The entry of the formats registry (registry.h). */
struct format_entry;
extern const struct format_entry format_speedscope;

#endif
