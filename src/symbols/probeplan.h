/* probeplan — a --trace spec from text to what the engine attaches, in one
 * call: "LOCATION [VAR...] [if EXPR]" split (capexpr_split_spec), the
 * location resolved to its addresses (probes_resolve: functions, or a
 * line's addresses, each checked safe), and the captures and predicate
 * parsed (capexpr.h) and translated at every address (dwarfvar.h) into
 * fetch programs, before anything is attached: bad input refuses the whole
 * spec with one line. The session decides probe ids and attaches. */
#ifndef SONDE_PROBEPLAN_H
#define SONDE_PROBEPLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "capexpr.h"
#include "dwarfvar.h"
#include "probes.h"
#include "usdt.h"

/* What a spec captures, translated for each of its addresses. */
struct capture_plan {
	struct cap_spec spec;
	struct fetch_build *builds; /* one per probe target; none when it captures nothing */
	int n;
};

struct probe_plan {
	char *location;          /* the spec's location part */
	struct probe_target *t;  /* its addresses (probes_resolve) */
	int n;
	bool line;               /* a line probe: t[] are one probe's addresses;
				  * or a USDT glob's probes: each the run of
				  * t[] of one location (its own spec) */
	/* A branch probe (probebranch.h): t[] its jumps, whose outcomes are
	 * probes of their own (two per jump index); it captures nothing. */
	bool branch;
	/* A USDT span pair: t[] its entry sites, then its return sites
	 * (usdt_return); captures, read at its entry, at t[0] only. */
	bool pair;
	int nentries;                  /* its entry sites: t[0, nentries) */
	int nholds;                    /* sites held for their semaphores: the last */
	struct usdt_pair_key pair_key; /* which arguments pair a return with its entry */
	struct capture_plan captures;
	char note[768];          /* what the spec named but left out ("" if nothing) */
};

/* Plans spec in scope. Returns 0, or -1 with one line in err (the
 * location's or the captures' refusal) and nothing in *out to free. A
 * line's addresses are one probe: their captures must read the same types. */
int probe_plan_make(const char *spec, const struct probe_scope *scope, struct probe_plan *out,
		    char *err, size_t errlen);

/* A span pair's key (struct usdt_pair_key) from its sites: the entry's
 * t[0, nentries) and the return's t[nentries, n). Pure. */
void probe_plan_pair_key(const struct probe_target *t, int nentries, int n,
			 struct usdt_pair_key *key);

void probe_plan_free(struct probe_plan *p);
void capture_plan_free(struct capture_plan *plan);

#endif
