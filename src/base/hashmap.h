/* hashmap — the one hash table: 64-bit keys to 64-bit values.
 *
 * Open addressing with linear probing over a power-of-two array of
 * (key, value) slots, grown (doubled) before it is more than 70% full; a
 * key's home slot is a Fibonacci hash of the key, so keys need no mixing
 * first (ids, pairs of ids packed as a << 32 | b, pointers). Every key is
 * allowed, 0 too (it is kept beside the slots). A zeroed struct is an empty
 * map; nothing is allocated until the first insert.
 *
 * Two ways to use it:
 *  - exact keys (hashmap_get, _find, _put, _remove): the key is the 64-bit
 *    thing itself; one value per key.
 *  - hashed keys (hashmap_first, _again, _add): for keys that do not fit
 *    in 64 bits (strings, frames, (pid, tid, comm)) and live in the
 *    caller's own array. The caller hashes the key (hash_bytes), stores its
 *    array index as the value, and compares candidates itself: several
 *    values may share one hash. A map is used one way or the other, never
 *    both.
 *
 * Pointers to values stay valid until the next insert or remove. Iteration
 * (hashmap_next) visits slot order, which depends on the keys and the
 * capacity: callers whose output order matters sort, or keep their own
 * insertion-ordered array. Not thread-safe. */
#ifndef SONDE_HASHMAP_H
#define SONDE_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap_slot {
	uint64_t key; /* 0 = empty (key 0 itself lives in zero_val) */
	uint64_t val;
};

struct hashmap {
	struct hashmap_slot *slots;
	size_t cap;  /* a power of two, or 0 */
	size_t n;    /* keys held, key 0 included */
	int shift;   /* 64 - log2(cap): the hash's top bits pick the home slot */
	bool has_zero;
	uint64_t zero_val;
};

/* The probing below is inline: callers' hot loops (interning frames,
 * stacks, strings) run it millions of times. */

static inline size_t hashmap_home_(const struct hashmap *m, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> m->shift);
}

/* True when one more key would fill the slots past 70% (a load linear
 * probing still finds keys quickly at, and that keeps iteration and
 * clearing, which visit every slot, cheap). */
static inline bool hashmap_full_(const struct hashmap *m)
{
	return (m->n - m->has_zero + 1) * 10 > m->cap * 7;
}

/* Slot count growth, out of line (hashmap.c). */
void hashmap_grow_(struct hashmap *m);

/* --- exact keys --- */

/* The value of key, or NULL. */
static inline uint64_t *hashmap_find(const struct hashmap *m, uint64_t key)
{
	if (!key)
		return m->has_zero ? (uint64_t *)&m->zero_val : NULL;
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1;
	for (size_t j = hashmap_home_(m, key); m->slots[j].key; j = (j + 1) & mask)
		if (m->slots[j].key == key)
			return &m->slots[j].val;
	return NULL;
}

/* True with *val (when val is not NULL) if key is in the map. */
static inline bool hashmap_get(const struct hashmap *m, uint64_t key, uint64_t *val)
{
	const uint64_t *v = hashmap_find(m, key);
	if (v && val)
		*val = *v;
	return v != NULL;
}

uint64_t *hashmap_put_zero_(struct hashmap *m, bool *added);

/* The value of key, added as 0 when absent (*added tells, when not NULL). */
static inline uint64_t *hashmap_put(struct hashmap *m, uint64_t key, bool *added)
{
	if (!key)
		return hashmap_put_zero_(m, added);
	if (hashmap_full_(m))
		hashmap_grow_(m);
	size_t mask = m->cap - 1, j = hashmap_home_(m, key);
	for (; m->slots[j].key; j = (j + 1) & mask) {
		if (m->slots[j].key == key) {
			if (added)
				*added = false;
			return &m->slots[j].val;
		}
	}
	m->slots[j].key = key;
	m->slots[j].val = 0;
	m->n++;
	if (added)
		*added = true;
	return &m->slots[j].val;
}

/* Sets key to val, adding or replacing. */
static inline void hashmap_set(struct hashmap *m, uint64_t key, uint64_t val)
{
	*hashmap_put(m, key, NULL) = val;
}

/* Removes key; false if it was not there. */
bool hashmap_remove(struct hashmap *m, uint64_t key);

/* --- hashed keys --- */

/* Hashed keys never use the zero key's place: hash 0 is stored as 1 (the
 * caller compares candidates anyway). */
static inline uint64_t hashmap_nonzero_(uint64_t hash)
{
	return hash ? hash : 1;
}

/* The next value stored under hash from *pos on, or NULL (see below). */
static inline uint64_t *hashmap_again(const struct hashmap *m, uint64_t hash, size_t *pos)
{
	uint64_t key = hashmap_nonzero_(hash);
	size_t mask = m->cap - 1;
	for (size_t j = *pos; m->slots[j].key; j = (j + 1) & mask) {
		if (m->slots[j].key == key) {
			*pos = (j + 1) & mask;
			return &m->slots[j].val;
		}
	}
	return NULL;
}

/* The first value stored under hash, or NULL; *pos is the cursor for
 * hashmap_again, which gives the next one with the same hash. */
static inline uint64_t *hashmap_first(const struct hashmap *m, uint64_t hash, size_t *pos)
{
	if (!m->cap)
		return NULL;
	*pos = hashmap_home_(m, hashmap_nonzero_(hash));
	return hashmap_again(m, hash, pos);
}

/* Adds val under hash (another entry even if the hash is there). */
void hashmap_add(struct hashmap *m, uint64_t hash, uint64_t val);

/* --- both --- */

/* Iterates: start with *pos = 0; true with the next key and value (either
 * may be NULL) until every entry was visited. The map must not change
 * during an iteration (collect keys to remove, then remove them). */
static inline bool hashmap_next(const struct hashmap *m, size_t *pos, uint64_t *key,
				uint64_t **val)
{
	/* Position 0 is key 0; slot i is position i + 1. */
	if (*pos == 0) {
		*pos = 1;
		if (m->has_zero) {
			if (key)
				*key = 0;
			if (val)
				*val = (uint64_t *)&m->zero_val;
			return true;
		}
	}
	for (size_t i = *pos - 1; i < m->cap; i++) {
		if (m->slots[i].key) {
			*pos = i + 2;
			if (key)
				*key = m->slots[i].key;
			if (val)
				*val = &m->slots[i].val;
			return true;
		}
	}
	*pos = m->cap + 1;
	return false;
}

static inline size_t hashmap_count(const struct hashmap *m)
{
	return m->n;
}

/* Empties the map, keeping its storage for reuse. */
void hashmap_clear(struct hashmap *m);
/* Empties the map for reuse, keeping its storage unless it held at most an
 * eighth of its capacity: then it shrinks to fit that many again, with room
 * (a map refilled to the same size each time neither grows nor shrinks). */
void hashmap_recycle(struct hashmap *m);
/* Makes room for n keys without growing again. */
void hashmap_reserve(struct hashmap *m, size_t n);
/* Bytes of storage held. */
size_t hashmap_bytes(const struct hashmap *m);
void hashmap_free(struct hashmap *m);

#endif
