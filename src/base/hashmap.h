/* hashmap — the one hash table: 64-bit keys to 64-bit values.
 *
 * Open addressing with linear probing over a power-of-two array of
 * (key, value) slots, grown (doubled) before it is more than half full; a
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

/* --- exact keys --- */

/* The value of key, or NULL. */
uint64_t *hashmap_find(const struct hashmap *m, uint64_t key);
/* True with *val (when val is not NULL) if key is in the map. */
bool hashmap_get(const struct hashmap *m, uint64_t key, uint64_t *val);
/* The value of key, added as 0 when absent (*added tells, when not NULL). */
uint64_t *hashmap_put(struct hashmap *m, uint64_t key, bool *added);
/* Sets key to val, adding or replacing. */
void hashmap_set(struct hashmap *m, uint64_t key, uint64_t val);
/* Removes key; false if it was not there. */
bool hashmap_remove(struct hashmap *m, uint64_t key);

/* --- hashed keys --- */

/* The first value stored under hash, or NULL; *pos is the cursor for
 * hashmap_again, which gives the next one with the same hash. */
uint64_t *hashmap_first(const struct hashmap *m, uint64_t hash, size_t *pos);
uint64_t *hashmap_again(const struct hashmap *m, uint64_t hash, size_t *pos);
/* Adds val under hash (another entry even if the hash is there). */
void hashmap_add(struct hashmap *m, uint64_t hash, uint64_t val);

/* --- both --- */

/* Iterates: start with *pos = 0; true with the next key and value (either
 * may be NULL) until every entry was visited. The map must not change
 * during an iteration (collect keys to remove, then remove them). */
bool hashmap_next(const struct hashmap *m, size_t *pos, uint64_t *key, uint64_t **val);

static inline size_t hashmap_count(const struct hashmap *m)
{
	return m->n;
}

/* Empties the map. Its storage is kept for reuse, unless it held at most an
 * eighth of its capacity: then it shrinks to fit that many again, with
 * room (a map refilled to the same size each time neither grows nor
 * shrinks). */
void hashmap_clear(struct hashmap *m);
/* Makes room for n keys without growing again. */
void hashmap_reserve(struct hashmap *m, size_t n);
/* Bytes of storage held. */
size_t hashmap_bytes(const struct hashmap *m);
void hashmap_free(struct hashmap *m);

#endif
