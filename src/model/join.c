#include "join.h"

#include <stdlib.h>

#include "util.h"

/* A call's samples, as positions in the profile's history of samples
 * (index + shifted): names that stay right across join_shift. */
struct join_call {
	uint64_t first_ns; /* when its first noted sample was taken */
	uint64_t *pos;
	size_t n, cap;
};

struct join {
	struct hashmap calls; /* span id -> struct join_call * */
	size_t max_links, nlinks;
	uint64_t dropped;
	uint64_t shifted;     /* samples the profile dropped from its front */
	uint32_t *taken;      /* join_take's answer */
	size_t taken_cap;
};

struct join *join_new(size_t max_links)
{
	struct join *j = xcalloc(1, sizeof(*j));
	j->max_links = max_links;
	return j;
}

static void call_free(struct join_call *c)
{
	free(c->pos);
	free(c);
}

void join_free(struct join *j)
{
	if (!j)
		return;
	join_sweep(j, UINT64_MAX);
	hashmap_free(&j->calls);
	free(j->taken);
	free(j);
}

void join_add_sample(struct join *j, const struct profile *p, size_t index,
		     const struct hashmap *only)
{
	const struct sample *s = &p->samples[index];
	for (uint32_t i = 0; i < s->nlinks; i++) {
		uint64_t id = p->span_links[s->links + i].span_id;
		if (only && !hashmap_find(only, id))
			continue;
		if (j->nlinks >= j->max_links) {
			j->dropped++;
			continue;
		}
		bool added;
		uint64_t *v = hashmap_put(&j->calls, id, &added);
		if (added) {
			struct join_call *c = xcalloc(1, sizeof(*c));
			c->first_ns = s->time_ns;
			*v = (uintptr_t)c;
		}
		struct join_call *c = (struct join_call *)(uintptr_t)*v;
		grow_array((void **)&c->pos, &c->cap, c->n + 1, sizeof(*c->pos));
		c->pos[c->n++] = j->shifted + index;
		j->nlinks++;
	}
}

const uint32_t *join_take(struct join *j, uint64_t span_id, size_t *n)
{
	*n = 0;
	const uint64_t *v = hashmap_find(&j->calls, span_id);
	if (!v)
		return NULL;
	struct join_call *c = (struct join_call *)(uintptr_t)*v;
	hashmap_remove(&j->calls, span_id);
	j->nlinks -= c->n;
	grow_array((void **)&j->taken, &j->taken_cap, c->n + 1, sizeof(*j->taken));
	for (size_t i = 0; i < c->n; i++)
		if (c->pos[i] >= j->shifted)
			j->taken[(*n)++] = (uint32_t)(c->pos[i] - j->shifted);
	call_free(c);
	return *n ? j->taken : NULL;
}

size_t join_sweep(struct join *j, uint64_t cutoff_ns)
{
	/* Into a new table: entries are not removed while walking one. */
	struct hashmap keep = {0};
	size_t forgotten = 0;
	uint64_t id, *v;
	for (size_t pos = 0; hashmap_next(&j->calls, &pos, &id, &v);) {
		struct join_call *c = (struct join_call *)(uintptr_t)*v;
		if (c->first_ns >= cutoff_ns) {
			hashmap_set(&keep, id, *v);
			continue;
		}
		j->nlinks -= c->n;
		call_free(c);
		forgotten++;
	}
	hashmap_free(&j->calls);
	j->calls = keep;
	return forgotten;
}

void join_shift(struct join *j, size_t nsamples)
{
	j->shifted += nsamples;
}

uint64_t join_dropped(const struct join *j)
{
	return j->dropped;
}

size_t join_calls(const struct join *j)
{
	return hashmap_count(&j->calls);
}

size_t join_bytes(const struct join *j)
{
	/* Each call's array counted by what it holds (its spare room aside):
	 * a figure read often, that needs no walk. */
	return sizeof(*j) + hashmap_bytes(&j->calls) +
	       hashmap_count(&j->calls) * sizeof(struct join_call) +
	       j->nlinks * sizeof(uint64_t) + j->taken_cap * sizeof(*j->taken);
}
