#include "u64map.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static size_t u64map_slot(const struct u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	size_t j = hash_bytes(&key, sizeof(key), 11) & mask;
	while (m->vals[j] && m->keys[j] != key)
		j = (j + 1) & mask;
	return j;
}

bool u64map_get(const struct u64map *m, uint64_t key, uint32_t *val)
{
	if (!m->cap)
		return false;
	size_t j = u64map_slot(m, key);
	if (!m->vals[j])
		return false;
	*val = m->vals[j] - 1;
	return true;
}

void u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct u64map g = {.cap = m->cap ? m->cap * 2 : 256};
		g.keys = xcalloc(g.cap, sizeof(*g.keys));
		g.vals = xcalloc(g.cap, sizeof(*g.vals));
		for (size_t i = 0; i < m->cap; i++) {
			if (m->vals[i]) {
				size_t j = u64map_slot(&g, m->keys[i]);
				g.keys[j] = m->keys[i];
				g.vals[j] = m->vals[i];
				g.n++;
			}
		}
		free(m->keys);
		free(m->vals);
		*m = g;
	}
	size_t j = u64map_slot(m, key);
	if (!m->vals[j])
		m->n++;
	m->keys[j] = key;
	m->vals[j] = val + 1;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
