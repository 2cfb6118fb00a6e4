#include "linecalls.h"

size_t line_calls_of(const struct profile *p, uint32_t line, line_calls_slow_fn slow_ns,
		     void *arg, struct line_in_calls *out)
{
	size_t n = 0;
	int bit = p->probes[line].point;
	for (size_t k = 0; k < p->npoint_calls; k++) {
		const struct point_calls *pc = &p->point_calls[k];
		if (pc->point_probe != line || pc->probe >= p->nprobes)
			continue;
		struct line_in_calls *o = &out[n++];
		*o = (struct line_in_calls){.probe = pc->probe,
					    .calls = pc->calls,
					    .hit = pc->hit,
					    .slow_ns = slow_ns(arg, pc->probe)};
		if (!o->slow_ns)
			continue;
		for (size_t i = 0; i < p->nspans; i++) {
			const struct span *sp = &p->spans[i];
			if (sp->probe != pc->probe || sp->open || sp->duration_ns <= o->slow_ns)
				continue;
			o->slow++;
			o->slow_hit += bit >= 0 && (sp->points >> bit & 1);
		}
	}
	return n;
}

double line_calls_share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}
