/* recordids — records, as the kernel names probes (by slot), turned into
 * records as the caller names them (by its probe ids).
 *
 * Pure: the slot table is an argument, so it is tested without a kernel. */
#ifndef SONDE_RECORDIDS_H
#define SONDE_RECORDIDS_H

#include <stddef.h>
#include <stdint.h>

/* A slot no probe is in (slot_probe[slot]). */
#define NO_PROBE UINT32_MAX

/* The record at data (size bytes) with every slot it names (a values
 * record's, a span's probe; a sample's, a thread stack's or a thread
 * record's probes of the calls in flight) replaced by slot_probe[slot]
 * (SONDE_MAX_PROBES entries; a slot beyond them names NO_PROBE). Returns
 * data itself when every slot is its own id (the usual case), else a copy
 * in *buf (grown as needed, *cap bytes; the caller frees it), or NULL for
 * a span or values record of a slot no probe is in any more (its calls were
 * delivered when it was detached). Records of other kinds come back as
 * they are. */
const void *record_with_ids(const uint32_t *slot_probe, const void *data, size_t size,
			    unsigned char **buf, size_t *cap);

#endif
