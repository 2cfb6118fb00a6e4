/* probeusdt (private to symbols) — a spec usdt:[BINARY:]PROVIDER:NAME
 * resolved to its probe's addresses: every note of that provider and name
 * in the binary (the compiler may place one probe at several sites), each
 * a target with its semaphore (usdt.h). PROVIDER and NAME may be globs:
 * each probe's sites then go by its own spec. usdt:[BINARY:]PROVIDER:
 * ENTRY,RETURN is a span pair: ENTRY's sites, then RETURN's. */
#ifndef SONDE_PROBEUSDT_H
#define SONDE_PROBEUSDT_H

#include <stddef.h>

#include "probes.h"

/* Whether spec is a USDT spec ("usdt:..."). */
bool probeusdt_is(const char *spec);

/* Resolves spec (with its "usdt:") in scope: the number of targets in *out
 * (free with probes_free), or -1 with one line in err (a binary without
 * USDT probes, a name it does not have, with the names it has). */
int probeusdt_resolve(const char *spec, const struct probe_scope *scope, struct probe_target **out,
		      char *err, size_t errlen);

#endif
