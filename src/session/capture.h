/* capture — the captures and predicate of a --trace spec, as planned
 * (probeplan.h: parsed and translated at each address before anything is
 * attached), to fetch programs in the kernel and the captures in the
 * profile. Each target's program (capture_program: a function's, or one
 * address of a line's) goes into the kernel with its attachment
 * (engine_attach_probes), so that its predicate decides every hit counted;
 * capture_name then names the probe's captures in the profile. */
#ifndef SONDE_CAPTURE_H
#define SONDE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine.h"
#include "probeplan.h"
#include "profile.h"

/* Target i's program for probe `probe` (in p or about to be added), into
 * *out (pointing into plan): true, or false when the spec captures nothing
 * (*out untouched). Its
 * records carry the layout capture_name gives the probe next. */
bool capture_program(const struct capture_plan *plan, int i, const struct profile *p,
		     uint32_t probe, struct engine_fetch *out);

/* Names target i's captures (and the predicate) in p as `probe`'s, once
 * its program is attached with it (a line's targets all capture the same:
 * name its first). */
void capture_name(const struct capture_plan *plan, int i, struct profile *p, uint32_t probe);

#endif
