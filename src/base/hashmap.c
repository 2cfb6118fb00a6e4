#include "hashmap.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MIN_CAP 16

#define home hashmap_home_
#define nonzero hashmap_nonzero_

static void alloc_slots(struct hashmap *m, size_t cap)
{
	m->slots = xcalloc(cap, sizeof(*m->slots));
	m->cap = cap;
	int bits = 0;
	while (((size_t)1 << bits) < cap)
		bits++;
	m->shift = 64 - bits;
}

/* Moves every slot into a table of cap slots (key 0 stays where it is). */
static void resize(struct hashmap *m, size_t cap)
{
	struct hashmap_slot *old = m->slots;
	size_t nold = m->cap;
	alloc_slots(m, cap);
	size_t mask = cap - 1;
	for (size_t i = 0; i < nold; i++) {
		if (!old[i].key)
			continue;
		size_t j = home(m, old[i].key);
		while (m->slots[j].key)
			j = (j + 1) & mask;
		m->slots[j] = old[i];
	}
	free(old);
}

static size_t cap_for(size_t n)
{
	size_t cap = MIN_CAP;
	while (n * 10 > cap * 7)
		cap *= 2;
	return cap;
}

void hashmap_grow_(struct hashmap *m)
{
	resize(m, m->cap ? m->cap * 2 : MIN_CAP);
}

/* Room for one more key in the slots. */
static void make_room(struct hashmap *m)
{
	if (hashmap_full_(m))
		hashmap_grow_(m);
}

void hashmap_reserve(struct hashmap *m, size_t n)
{
	size_t cap = cap_for(n);
	if (cap > m->cap)
		resize(m, cap);
}

uint64_t *hashmap_put_zero_(struct hashmap *m, bool *added)
{
	if (added)
		*added = !m->has_zero;
	if (!m->has_zero) {
		m->has_zero = true;
		m->zero_val = 0;
		m->n++;
	}
	return &m->zero_val;
}

/* Empties slot i, moving later entries of its run back so every key stays
 * reachable from its home (backward-shift deletion: no tombstones). */
static void remove_slot(struct hashmap *m, size_t i)
{
	size_t mask = m->cap - 1;
	for (size_t k = (i + 1) & mask; m->slots[k].key; k = (k + 1) & mask) {
		size_t h = home(m, m->slots[k].key);
		/* k may move to i when its home is not in (i, k]. */
		if (((k - h) & mask) >= ((k - i) & mask)) {
			m->slots[i] = m->slots[k];
			i = k;
		}
	}
	m->slots[i] = (struct hashmap_slot){0, 0};
	m->n--;
}

bool hashmap_remove(struct hashmap *m, uint64_t key)
{
	if (!key) {
		if (!m->has_zero)
			return false;
		m->has_zero = false;
		m->n--;
		return true;
	}
	uint64_t *v = hashmap_find(m, key);
	if (!v)
		return false;
	remove_slot(m, (size_t)((struct hashmap_slot *)((char *)v - offsetof(struct hashmap_slot, val)) -
				m->slots));
	return true;
}

void hashmap_add(struct hashmap *m, uint64_t hash, uint64_t val)
{
	uint64_t key = nonzero(hash);
	make_room(m);
	size_t mask = m->cap - 1, j = home(m, key);
	while (m->slots[j].key)
		j = (j + 1) & mask;
	m->slots[j] = (struct hashmap_slot){key, val};
	m->n++;
}

void hashmap_clear(struct hashmap *m)
{
	if (m->cap)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->has_zero = false;
	m->n = 0;
}

void hashmap_recycle(struct hashmap *m)
{
	if (m->cap > MIN_CAP && m->n * 8 <= m->cap) {
		size_t n = m->n;
		free(m->slots);
		m->slots = NULL;
		m->cap = 0;
		if (n)
			alloc_slots(m, cap_for(n));
		m->has_zero = false;
		m->n = 0;
		return;
	}
	hashmap_clear(m);
}

size_t hashmap_bytes(const struct hashmap *m)
{
	return m->cap * sizeof(*m->slots);
}

void hashmap_free(struct hashmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
