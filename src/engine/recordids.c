#include "recordids.h"

#include <stdbool.h>
#include <string.h>

#include "sonde_abi.h"
#include "util.h"

const void *record_with_ids(const uint32_t *slot_probe, const void *data, size_t size,
			    unsigned char **buf, size_t *cap)
{
	const struct sonde_hdr *h = data;
	if (h->kind == SONDE_REC_VALUES && size >= sizeof(struct sonde_values)) {
		uint32_t slot = ((const struct sonde_values *)data)->probe;
		uint32_t id = slot < SONDE_MAX_PROBES ? slot_probe[slot] : NO_PROBE;
		if (id == slot)
			return data;
		if (id == NO_PROBE)
			return NULL;
		grow_array((void **)buf, cap, size, 1);
		memcpy(*buf, data, size);
		((struct sonde_values *)*buf)->probe = id;
		return *buf;
	}
	if (h->kind == SONDE_REC_THREAD && size >= sizeof(struct sonde_thread_sample)) {
		const struct sonde_thread_sample *t = data;
		bool same = true;
		for (uint32_t i = 0; i < t->nspans && i < SONDE_THREAD_SPANS; i++)
			same &= t->span_probes[i] < SONDE_MAX_PROBES &&
				slot_probe[t->span_probes[i]] == t->span_probes[i];
		if (same)
			return data;
		grow_array((void **)buf, cap, size, 1);
		memcpy(*buf, data, size);
		struct sonde_thread_sample *r = (struct sonde_thread_sample *)*buf;
		for (uint32_t i = 0; i < r->nspans && i < SONDE_THREAD_SPANS; i++)
			r->span_probes[i] = r->span_probes[i] < SONDE_MAX_PROBES
						    ? slot_probe[r->span_probes[i]]
						    : NO_PROBE;
		return *buf;
	}
	if (h->kind == SONDE_REC_SPAN && size >= sizeof(struct sonde_span)) {
		uint32_t slot = ((const struct sonde_span *)data)->probe;
		uint32_t id = slot < SONDE_MAX_PROBES ? slot_probe[slot] : NO_PROBE;
		if (id == slot)
			return data;
		if (id == NO_PROBE)
			return NULL;
	} else if ((h->kind == SONDE_REC_SAMPLE || h->kind == SONDE_REC_THREAD_STACK) &&
		   size >= SONDE_SAMPLE_HEAD) {
		const struct sonde_sample *s = data;
		bool same = true;
		for (uint32_t i = 0; i < s->nspans && i < SONDE_SAMPLE_SPANS; i++)
			same &= s->span_probes[i] < SONDE_MAX_PROBES &&
				slot_probe[s->span_probes[i]] == s->span_probes[i];
		if (same)
			return data;
	} else {
		return data;
	}
	grow_array((void **)buf, cap, size, 1);
	memcpy(*buf, data, size);
	if (h->kind == SONDE_REC_SPAN) {
		struct sonde_span *r = (struct sonde_span *)*buf;
		r->probe = slot_probe[r->probe];
	} else {
		struct sonde_sample *r = (struct sonde_sample *)*buf;
		for (uint32_t i = 0; i < r->nspans && i < SONDE_SAMPLE_SPANS; i++)
			r->span_probes[i] = r->span_probes[i] < SONDE_MAX_PROBES
						    ? slot_probe[r->span_probes[i]]
						    : NO_PROBE;
	}
	return *buf;
}
