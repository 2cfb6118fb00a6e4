/* capture — a spec's captures, from text to the kernel (see capture.h). */
#include "capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "util.h"
#include "values.h"

/* Names build b's captures in p as probe's: returns the layout its
 * records carry. */
static uint32_t name_captures(const struct capture_plan *plan, const struct fetch_build *b,
			      struct profile *p, uint32_t probe)
{
	uint32_t slots[CAPTURE_MAX];
	for (int k = 0; k < b->ndesc; k++) {
		const struct capture_desc *d = &b->desc[k];
		slots[k] = values_capture_intern(p, probe, d->name, d->type, d->kind, d->enums,
						 d->nenums);
	}
	return values_set_probe(p, probe, slots, (uint32_t)b->ndesc, plan->spec.pred_text);
}

bool capture_program(const struct capture_plan *plan, int i, const struct profile *p,
		     uint32_t probe, struct engine_fetch *out)
{
	if (!plan->builds || i >= plan->n)
		return false;
	out->prog = plan->builds[i].prog;
	out->layout = values_next_layout(p, probe);
	return true;
}

void capture_name(const struct capture_plan *plan, int i, struct profile *p, uint32_t probe)
{
	if (plan->builds && i < plan->n)
		name_captures(plan, &plan->builds[i], p, probe);
}

int capture_apply_points(const struct capture_plan *plan, struct engine *e, struct profile *p,
			 uint32_t probe, char *err, size_t errlen)
{
	if (!plan->builds || plan->n == 0)
		return 0;
	uint32_t layout = name_captures(plan, &plan->builds[0], p, probe);
	for (int i = 0; i < plan->n; i++) {
		struct engine_fetch f = {plan->builds[i].prog, layout};
		if (engine_set_point_fetch(e, probe, (uint32_t)i, &f))
			return errbuf_set(err, errlen,
					  "cannot store the fetch program of address %d of probe %u",
					  i, probe);
	}
	return 0;
}
