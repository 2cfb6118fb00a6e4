/* capture — the captures and predicate of a --trace spec, from the text
 * after its location to a fetch program in the kernel and the captures in
 * the profile.
 *
 * capture_prepare parses the tail ("VAR... [if EXPR]", capexpr.h) and
 * translates it at each resolved probe address (dwarfvar.h), before
 * anything is attached, so bad input (a name not visible, no such member,
 * a type a predicate cannot compare, no DWARF, a location operation sonde
 * cannot read) refuses the whole spec with one line. A function's program
 * (capture_program) goes into the kernel with its attachment
 * (engine_attach_spans), so that its predicate decides every call counted;
 * capture_name then names its slots in the profile. A line's programs are
 * put on its addresses once attached (capture_apply_points). */
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

/* Target i's program for function probe `probe` (in p or about to be
 * added), into *out: true, or false when the spec captures nothing. Its
 * records carry the layout capture_name gives the probe next. */
bool capture_program(const struct capture_plan *plan, int i, const struct profile *p,
		     uint32_t probe, struct sonde_fetch_prog *out);

/* Names target i's captures (and the predicate) in p as `probe`'s, once
 * its program is attached with it. */
void capture_name(const struct capture_plan *plan, int i, struct profile *p, uint32_t probe);

/* A line probe (attached with a program per address, engine_attach_point):
 * puts each target's program on its address and the captures in p.
 * Returns 0 or -1 with err. */
int capture_apply_points(const struct capture_plan *plan, struct engine *e, struct profile *p,
			 uint32_t probe, char *err, size_t errlen);

void capture_plan_free(struct capture_plan *plan);

#endif
