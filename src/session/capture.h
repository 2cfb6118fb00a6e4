/* capture — the captures and predicate of a --trace spec, as planned
 * (probeplan.h: parsed and translated at each address before anything is
 * attached), to a fetch program in the kernel and the captures in the
 * profile. A function's program
 * (capture_program) goes into the kernel with its attachment
 * (engine_attach_probes), so that its predicate decides every call counted;
 * capture_name then names its slots in the profile. A line's programs are
 * put on its addresses once attached (capture_apply_points). */
#ifndef SONDE_CAPTURE_H
#define SONDE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine.h"
#include "probeplan.h"
#include "profile.h"

/* Target i's program for function probe `probe` (in p or about to be
 * added), into *out (pointing into plan): true, or false when the spec
 * captures nothing (*out untouched). Its
 * records carry the layout capture_name gives the probe next. */
bool capture_program(const struct capture_plan *plan, int i, const struct profile *p,
		     uint32_t probe, struct engine_fetch *out);

/* Names target i's captures (and the predicate) in p as `probe`'s, once
 * its program is attached with it. */
void capture_name(const struct capture_plan *plan, int i, struct profile *p, uint32_t probe);

/* A line probe (attached with a program per address, engine_attach_probes with point_bit):
 * puts each target's program on its address and the captures in p.
 * Returns 0 or -1 with err. */
int capture_apply_points(const struct capture_plan *plan, struct engine *e, struct profile *p,
			 uint32_t probe, char *err, size_t errlen);

#endif
