#include "offcpucut.h"

#include <bpf/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "sonde_abi.h"
#include "util.h"

/* The entry of one thread, whole: its switch-out writes seq odd, then
 * even; after the end nothing writes it, but a handler that began just
 * before may still be at it. */
static bool read_whole(int fd, uint32_t tid, struct sonde_offcpu_entry *e)
{
	for (int tries = 0; tries < 3; tries++) {
		if (bpf_map_lookup_elem(fd, &tid, e))
			return false; /* gone meanwhile: it exited */
		if (!(e->seq & 1))
			return true;
	}
	return false;
}

static size_t record_bytes(const struct sonde_sample *s)
{
	size_t size = SONDE_SAMPLE_BYTES((size_t)s->nkernel + s->nuser + 2 * (size_t)s->npython);
	return size > sizeof(*s) ? sizeof(*s) : size;
}

void offcpu_cut_open(const struct offcpu_cut *c, engine_record_fn fn, void *arg,
		     struct offcpu_cut_counts *out)
{
	memset(out, 0, sizeof(*out));
	struct sonde_offcpu_entry *e = xcalloc(1, sizeof(*e));
	uint32_t key, next;
	bool first = true;
	while (bpf_map_get_next_key(c->stash_fd, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		if (!read_whole(c->stash_fd, key, e))
			continue;
		struct sonde_sample *s = &e->s;
		uint64_t left = s->hdr.time_ns;
		if (s->hdr.kind != SONDE_REC_SAMPLE || left < c->since_ns || left >= c->until_ns)
			continue; /* running at the end, or away since before the recording */
		s->off_ns = c->until_ns - left;
		if (s->off_ns < c->min_ns) {
			out->below++;
			continue;
		}
		fn(arg, s, record_bytes(s));
		out->cut++;
	}
	free(e);
}
