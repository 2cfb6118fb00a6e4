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
		struct probe_capture c = {.probe = probe,
					  .name = d->name,
					  .type = d->type,
					  .kind = d->kind,
					  .enums = d->enums,
					  .nenums = d->nenums};
		slots[k] = values_capture_intern(p, &c);
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
