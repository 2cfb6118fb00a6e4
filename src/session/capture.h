/* capture — the captures and predicate of a --trace spec, from the text
 * after its location to a fetch program in the kernel and the captures in
 * the profile.
 *
 * capture_prepare parses the tail ("VAR... [if EXPR]", capexpr.h) and
 * translates it at each resolved probe address (dwarfvar.h), before
 * anything is attached, so bad input (a name not visible, no such member,
 * a type a predicate cannot compare, no DWARF, a location operation sonde
 * cannot read) refuses the whole spec with one line. capture_apply then
 * writes a probe's program into the kernel and names its slots in the
 * profile. */
#ifndef SONDE_CAPTURE_H
#define SONDE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "dwarfvar.h"
#include "engine.h"
#include "probes.h"
#include "profile.h"

struct capture_plan {
	struct cap_spec spec;
	struct fetch_build *builds; /* one per probe target */
	int n;
};

/* Returns 0 (plan empty when the tail is empty) or -1 with err.
 * one_probe: the targets are the addresses of one probe (a line), whose
 * records name one set of captures: each must read the same types. */
int capture_prepare(const char *tail, const struct probe_target *t, int n, bool one_probe,
		    struct capture_plan *plan, char *err, size_t errlen);

/* Puts target i's program on `probe` (attached) and its captures in p.
 * Returns 0 or -1 with err. */
int capture_apply(const struct capture_plan *plan, int i, struct engine *e, struct profile *p,
		  uint32_t probe, char *err, size_t errlen);

/* A line probe (attached with a program per address, engine_attach_point):
 * puts each target's program on its address and the captures in p.
 * Returns 0 or -1 with err. */
int capture_apply_points(const struct capture_plan *plan, struct engine *e, struct profile *p,
			 uint32_t probe, char *err, size_t errlen);

void capture_plan_free(struct capture_plan *plan);

#endif
