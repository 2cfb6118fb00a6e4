/* trace — the session's probes: a --trace spec resolved to addresses
 * (symbols' probes and captures), attached in the engine, refreshed
 * (counts, histograms) and detached; the policy of which calls send a
 * record. session_trace / session_untrace (session.h) are its API; the
 * rest is for the session's own files. */
#ifndef SONDE_TRACE_H
#define SONDE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "probeplan.h"
#include "sessionstate.h"

/* A spec is planned (probeplan.h: its addresses and captures), then
 * attached: the session plans every --trace spec first, then attaches
 * them in one batch. */
/* Resolves spec into r. Returns 0, or -1 with err (r holds nothing). */
int trace_spec_resolve(struct session *s, const char *spec, struct probe_plan *r, char *err,
		       size_t errlen);
/* Attaches what r resolved; *count is how many probes it made. Returns 0,
 * or -1 with err. */
int trace_spec_attach(struct session *s, const char *spec, struct probe_plan *r, int *count,
		      char *err, size_t errlen);
/* Resolves and attaches one spec (session_trace, sample-when's probe). */
int trace_attach(struct session *s, const char *spec, int *count, char *err, size_t errlen);

/* The name of a branch probe's outcome probe: "branch AT taken", with the
 * jump's index when its line has several ("branch AT#2 not-taken"). */
char *trace_branch_name(const char *at, unsigned jump, unsigned jumps, bool taken);
/* Reads the probe's counts and histogram from the kernel into the
 * profile's probe_info. */
void trace_refresh_probe(struct session *s, uint32_t probe);

#endif
