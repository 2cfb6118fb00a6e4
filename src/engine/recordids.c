#include "recordids.h"

#include "sonde_abi.h"

uint32_t record_probe(const void *data, size_t size)
{
	const struct sonde_hdr *h = data;
	if (size < sizeof(*h))
		return NO_PROBE;
	if (h->kind == SONDE_REC_SPAN && size >= sizeof(struct sonde_span))
		return ((const struct sonde_span *)data)->probe;
	if (h->kind == SONDE_REC_VALUES && size >= sizeof(struct sonde_values))
		return ((const struct sonde_values *)data)->probe;
	return NO_PROBE;
}
