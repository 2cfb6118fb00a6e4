/* capture — a spec's captures, from text to the kernel (see capture.h). */
#include "capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "values.h"

int capture_prepare(const char *tail, const struct probe_target *t, int n,
		    struct capture_plan *plan, char *err, size_t errlen)
{
	memset(plan, 0, sizeof(*plan));
	if (capexpr_parse(tail, &plan->spec, err, errlen))
		return -1;
	if (plan->spec.ncaptures == 0 && !plan->spec.pred)
		return 0;
	plan->builds = xcalloc((size_t)n, sizeof(*plan->builds));
	for (int i = 0; i < n; i++) {
		if (dwarfvar_compile(t[i].binary, t[i].offset, &plan->spec, &plan->builds[i], err,
				     errlen)) {
			capture_plan_free(plan);
			return -1;
		}
		plan->n = i + 1;
	}
	return 0;
}

int capture_apply(const struct capture_plan *plan, int i, struct engine *e, struct profile *p,
		  uint32_t probe, char *err, size_t errlen)
{
	if (!plan->builds || i >= plan->n)
		return 0;
	const struct fetch_build *b = &plan->builds[i];
	uint32_t slots[SONDE_CAPTURES];
	for (int k = 0; k < b->ndesc; k++) {
		const struct capture_desc *d = &b->desc[k];
		slots[k] = values_capture_intern(p, probe, d->name, d->type, d->kind, d->enums,
						 d->nenums);
	}
	struct sonde_fetch_prog prog = b->prog;
	prog.layout = values_set_probe(p, probe, slots, (uint32_t)b->ndesc, plan->spec.pred_text);
	if (engine_set_fetch(e, probe, &prog))
		return errbuf_set(err, errlen, "cannot store the fetch program of probe %u", probe);
	return 0;
}

void capture_plan_free(struct capture_plan *plan)
{
	for (int i = 0; i < plan->n; i++)
		dwarfvar_build_free(&plan->builds[i]);
	free(plan->builds);
	capexpr_free(&plan->spec);
	memset(plan, 0, sizeof(*plan));
}
