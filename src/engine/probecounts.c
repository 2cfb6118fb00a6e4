#include "probecounts.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdlib.h>
#include <string.h>

#include "enginestate.h"
#include "slots.h"
#include "sonde.skel.h"
#include "util.h"

/* Sums over CPUs the histogram of a slot into out[SONDE_HIST_BUCKETS]. */
static int read_slot_hist(struct engine *e, uint32_t slot, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return -1;
	struct sonde_probe_counts *vals = xcalloc((size_t)ncpu, sizeof(*vals));
	int r = bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.probe_counts), &slot, vals);
	memset(out, 0, SONDE_HIST_BUCKETS * sizeof(*out));
	for (int c = 0; r == 0 && c < ncpu; c++)
		for (uint32_t b = 0; b < SONDE_HIST_BUCKETS; b++)
			out[b] += vals[c].buckets[b];
	free(vals);
	return r;
}

int engine_read_hist(struct engine *e, struct engine_probe_ref probe, uint64_t *buckets)
{
	int slot = slot_of_ref(e, probe);
	if (slot < 0) {
		memset(buckets, 0, SONDE_HIST_BUCKETS * sizeof(*buckets));
		return 0;
	}
	return read_slot_hist(e, (uint32_t)slot, buckets);
}

int engine_read_probe_stats(struct engine *e, struct engine_probe_ref probe,
			    struct engine_probe_stats *out)
{
	memset(out, 0, sizeof(*out));
	int ncpu = libbpf_num_possible_cpus();
	int slot = slot_of_ref(e, probe);
	if (ncpu <= 0 || slot < 0)
		return -1;
	uint32_t key = (uint32_t)slot;
	struct sonde_probe_counts *vals = xcalloc((size_t)ncpu, sizeof(*vals));
	int r = bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.probe_counts), &key, vals);
	for (int c = 0; r == 0 && c < ncpu; c++) {
		const struct sonde_probe_stats *v = &vals[c].stats;
		out->entered += v->entered;
		out->completed += v->completed;
		out->raw_ns += v->raw_ns;
		out->own_ns += v->own_ns;
		out->handler_ns += v->handler_ns;
		out->emitted += v->emitted;
	}
	free(vals);
	return r ? -1 : 0;
}

int engine_read_point_calls(struct engine *e, struct engine_probe_ref span_probe,
			    struct engine_probe_ref point_probe, struct engine_point_calls *out)
{
	memset(out, 0, sizeof(*out));
	int ss = slot_of_ref(e, span_probe), ps = slot_of_ref(e, point_probe);
	int ncpu = libbpf_num_possible_cpus();
	if (ss < 0 || ps < 0 || !e->slots[ps].point_bit || e->slots[ss].point_bit || ncpu <= 0)
		return -1;
	uint32_t key = (uint32_t)ss * SONDE_MAX_POINTS + (e->slots[ps].point_bit - 1u);
	struct sonde_point_calls *vals = xcalloc((size_t)ncpu, sizeof(*vals));
	int r = bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.point_calls), &key, vals);
	for (int c = 0; r == 0 && c < ncpu; c++) {
		out->calls += vals[c].calls;
		out->hit += vals[c].hit;
	}
	free(vals);
	return r ? -1 : 0;
}
