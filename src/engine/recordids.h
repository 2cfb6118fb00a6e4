/* recordids — which probe a record belongs to, as the caller names it.
 *
 * The kernel's programs write the caller's probe ids into every record
 * (sonde_probe_config.id), so records reach the caller as they are; this
 * says which probe's calls or values a record carries, for the engine to
 * drop those of a probe being taken back (engine_discard_span).
 *
 * Pure: tested without a kernel. */
#ifndef SONDE_RECORDIDS_H
#define SONDE_RECORDIDS_H

#include <stddef.h>
#include <stdint.h>

/* No probe: a slot no probe is in, a record of no probe's. */
#define NO_PROBE UINT32_MAX

/* The probe id of a span or values record (size bytes at data), or
 * NO_PROBE for a record of another kind or one too short to be read. */
uint32_t record_probe(const void *data, size_t size);

#endif
