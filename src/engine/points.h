/* points — point probes (lines): uprobes at a line's addresses sharing one
 * slot and a point bit, each address with a capture program of its own.
 * Implements engine_attach_probes' batches of a point probe for one
 * process. */
#ifndef SONDE_POINTS_H
#define SONDE_POINTS_H

#include <stddef.h>

struct engine;
struct engine_probe_batch;

/* Attaches b's point probe (probes[0], point_bit set) for process b->pid:
 * 0, or -1 with err and nothing of it attached. */
int attach_point(struct engine *e, const struct engine_probe_batch *b, char *err, size_t errlen);

#endif
