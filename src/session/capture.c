/* capture — a spec's captures, from text to the kernel (see capture.h). */
#include "capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "util.h"
#include "values.h"

/* Whether two addresses' programs read the same captures (a line probe's
 * records all name its one set). */
static bool same_captures(const struct fetch_build *a, const struct fetch_build *b)
{
	if (a->ndesc != b->ndesc)
		return false;
	for (int k = 0; k < a->ndesc; k++)
		if (strcmp(a->desc[k].type, b->desc[k].type) || a->desc[k].kind != b->desc[k].kind)
			return false;
	return true;
}

int capture_prepare(const char *tail, const struct probe_target *t, int n, bool one_probe,
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
		if (one_probe && !same_captures(&plan->builds[0], &plan->builds[i])) {
			int k = 0;
			while (k < plan->builds[0].ndesc && k < plan->builds[i].ndesc &&
			       !strcmp(plan->builds[0].desc[k].type, plan->builds[i].desc[k].type))
				k++;
			if (k >= plan->builds[0].ndesc)
				k = 0;
			errbuf_set(err, errlen,
				   "%s has type %s at file offset 0x%llx but %s at 0x%llx: one line's "
				   "addresses must read the same types",
				   plan->builds[0].desc[k].name, plan->builds[0].desc[k].type,
				   (unsigned long long)t[0].offset,
				   k < plan->builds[i].ndesc ? plan->builds[i].desc[k].type : "none",
				   (unsigned long long)t[i].offset);
			capture_plan_free(plan);
			return -1;
		}
	}
	return 0;
}

/* Names build b's captures in p as probe's: returns the layout its
 * records carry. */
static uint32_t name_captures(const struct capture_plan *plan, const struct fetch_build *b,
			      struct profile *p, uint32_t probe)
{
	uint32_t slots[SONDE_CAPTURES];
	for (int k = 0; k < b->ndesc; k++) {
		const struct capture_desc *d = &b->desc[k];
		slots[k] = values_capture_intern(p, probe, d->name, d->type, d->kind, d->enums,
						 d->nenums);
	}
	return values_set_probe(p, probe, slots, (uint32_t)b->ndesc, plan->spec.pred_text);
}

bool capture_program(const struct capture_plan *plan, int i, const struct profile *p,
		     uint32_t probe, struct sonde_fetch_prog *out)
{
	if (!plan->builds || i >= plan->n)
		return false;
	*out = plan->builds[i].prog;
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
		struct sonde_fetch_prog prog = plan->builds[i].prog;
		prog.layout = layout;
		if (engine_set_point_fetch(e, probe, (uint32_t)i, &prog))
			return errbuf_set(err, errlen,
					  "cannot store the fetch program of address %d of probe %u",
					  i, probe);
	}
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
