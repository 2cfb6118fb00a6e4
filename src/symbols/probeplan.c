#include "probeplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "probepy.h"
#include "usdtfetch.h"
#include "util.h"

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

/* A line's address i reads other types than its first (first): says
 * which. */
static int refuse_other_types(const struct capture_plan *plan, const struct probe_target *t,
			      int first, int i, char *err, size_t errlen)
{
	const struct fetch_build *a = &plan->builds[first], *b = &plan->builds[i];
	int k = 0;
	while (k < a->ndesc && k < b->ndesc && !strcmp(a->desc[k].type, b->desc[k].type))
		k++;
	if (k >= a->ndesc)
		k = 0;
	return errbuf_set(err, errlen,
			  "%s has type %s at file offset 0x%llx but %s at 0x%llx: one line's "
			  "addresses must read the same types",
			  a->desc[k].name, a->desc[k].type, (unsigned long long)t[first].offset,
			  k < b->ndesc ? b->desc[k].type : "none", (unsigned long long)t[i].offset);
}

/* The tail's captures at every address of p's (p->t, p->n; the same types
 * at all of a line's, or of a USDT probe's: a glob's probes, each a run of
 * addresses, may differ), into p->captures. */
static int plan_captures(const char *tail, struct probe_plan *p, char *err, size_t errlen)
{
	const struct probe_target *t = p->t;
	int n = p->n;
	bool one_probe = p->line;
	struct capture_plan *plan = &p->captures;
	memset(plan, 0, sizeof(*plan));
	if (capexpr_parse(tail, &plan->spec, err, errlen))
		return -1;
	if (plan->spec.ncaptures == 0 && !plan->spec.pred)
		return 0;
	if (n > 0 && t[0].py) {
		/* A Python function's captures are its arguments and locals, read
		 * from the call's frame by name (probepy.h). */
		plan->builds = xcalloc(1, sizeof(*plan->builds));
		if (probepy_captures(&plan->spec, p->location, t[0].py, &plan->builds[0], err, errlen)) {
			capture_plan_free(plan);
			return -1;
		}
		plan->n = 1;
		return 0;
	}
	if (p->pair) {
		/* Its captures are read at its entry, by one program. */
		const char *why =
			plan->spec.pred ? "takes no predicate yet (a call left out could not be told "
					  "from the calls around it at its return)"
			: p->nentries > 1 ? "captures at an entry probe of one site only"
					: NULL;
		if (why) {
			errbuf_set(err, errlen, "the span pair %s %s", p->location, why);
			capexpr_free(&plan->spec);
			memset(plan, 0, sizeof(*plan));
			return -1;
		}
		n = 1;
	}
	plan->builds = xcalloc((size_t)n, sizeof(*plan->builds));
	int first = 0; /* the first address of address i's probe */
	for (int i = 0; i < n; i++) {
		if (t[i].usdt && i > 0 && strcmp(t[i].location, t[i - 1].location))
			first = i;
		struct usdtfetch_site site = {t[i].usdt_args, t[i].usdt_nargs, t[i].usdt_vaddr};
		if (t[i].usdt ? usdtfetch_compile(&site, &plan->spec, &plan->builds[i], err, errlen)
			      : dwarfvar_compile(t[i].binary, t[i].offset, &plan->spec,
						 &plan->builds[i], err, errlen)) {
			capture_plan_free(plan);
			return -1;
		}
		plan->n = i + 1;
		if (one_probe && !same_captures(&plan->builds[first], &plan->builds[i])) {
			refuse_other_types(plan, t, first, i, err, errlen);
			capture_plan_free(plan);
			return -1;
		}
	}
	return 0;
}

/* Whether a is a key argument: 8 bytes unsigned, in a register or at one
 * (not rip-relative, not a constant). */
static bool key_arg(const struct usdt_arg *a)
{
	return a->size == 8 && !a->is_signed && (a->kind == USDT_ARG_REG || a->kind == USDT_ARG_MEM) &&
	       a->reg != 16;
}

static bool same_arg(const struct usdt_arg *a, const struct usdt_arg *b)
{
	return a->kind == b->kind && a->size == b->size && a->is_signed == b->is_signed &&
	       a->reg == b->reg && a->offset == b->offset;
}

/* Whether argument pos is a key argument, the same at sites t[from, to). */
static bool key_at(const struct probe_target *t, int from, int to, int pos)
{
	for (int i = from; i < to; i++)
		if (t[i].usdt_nargs <= pos || !key_arg(&t[i].usdt_args[pos]) ||
		    !same_arg(&t[i].usdt_args[pos], &t[from].usdt_args[pos]))
			return false;
	return true;
}

void probe_plan_pair_key(const struct probe_target *t, int entries, int n,
			 struct usdt_pair_key *k)
{
	memset(k, 0, sizeof(*k));
	if (entries == 0 || entries == n)
		return;
	for (int pos = 0; pos < USDT_MAX_ARGS && k->n < USDT_PAIR_KEYS; pos++)
		if (key_at(t, 0, entries, pos) && key_at(t, entries, n, pos)) {
			k->positions[k->n] = pos;
			k->entry[k->n] = t[0].usdt_args[pos];
			k->ret[k->n++] = t[entries].usdt_args[pos];
		}
}

int probe_plan_make(const char *spec, const struct probe_scope *scope, struct probe_plan *out,
		    char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const char *tail;
	out->location = xasprintf("%.*s", (int)capexpr_split_spec(spec, &tail), spec);
	struct probes_found found = {.note = out->note, .notelen = sizeof(out->note)};
	out->n = probes_resolve(out->location, scope, &found, err, errlen);
	out->t = found.t;
	if (out->n < 0) {
		out->t = NULL;
		probe_plan_free(out);
		return -1;
	}
	out->pair = out->n > 0 && out->t[0].usdt_pair;
	out->branch = out->n > 0 && out->t[0].branch;
	out->line = out->n > 0 && (out->t[0].line || out->t[0].usdt) && !out->pair && !out->branch;
	if (out->branch && *tail) {
		errbuf_set(err, errlen,
			   "%s: a branch probe counts outcomes and captures nothing; capture at a "
			   "line probe on the same line (--trace '%s %s')",
			   out->location, out->t[0].location, tail);
		probe_plan_free(out);
		return -1;
	}
	while (out->pair && out->nentries < out->n && !out->t[out->nentries].usdt_return)
		out->nentries++;
	for (int i = 0; i < out->n; i++)
		out->nholds += out->t[i].usdt_hold;
	if (out->pair)
		probe_plan_pair_key(out->t, out->nentries, out->n - out->nholds, &out->pair_key);
	if (plan_captures(tail, out, err, errlen)) {
		probe_plan_free(out);
		return -1;
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

void probe_plan_free(struct probe_plan *p)
{
	if (p->t)
		probes_free(p->t, p->n);
	capture_plan_free(&p->captures);
	free(p->location);
	memset(p, 0, sizeof(*p));
}
