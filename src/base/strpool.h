/* strpool — the one string pool: interned byte strings with stable ids and
 * pointers.
 *
 * Each distinct string (any bytes, NULs included; compared by length and
 * bytes) is stored once and gets the next id, 0, 1, 2... in the order
 * strings were first seen, so ids index the caller's own arrays and an
 * id-ordered walk is the insertion order. The stored copy is NUL-terminated
 * and never moves: pointers from strpool_intern/strpool_str stay valid
 * until strpool_free, so two interned pointers are equal exactly when the
 * strings are. A zeroed struct is an empty pool. Not thread-safe. */
#ifndef SONDE_STRPOOL_H
#define SONDE_STRPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"

struct strpool {
	struct hashmap index; /* hash of the bytes -> id (hashed keys) */
	char **str;           /* id -> the stored copy */
	uint32_t *len;        /* id -> its length */
	size_t n, cap;
	char *chunk;          /* where the next copy goes */
	size_t chunk_left;
	char **chunks;        /* every chunk, to free */
	size_t nchunks, chunks_cap;
	size_t bytes;         /* chunk bytes allocated */
	const char *empty;    /* the copy of "", once interned */
};

/* The id of the len bytes at s (NULL when len is 0), added when new
 * (*added tells which, when not NULL). */
uint32_t strpool_add(struct strpool *p, const void *s, size_t len, bool *added);
static inline uint32_t strpool_id(struct strpool *p, const void *s, size_t len)
{
	return strpool_add(p, s, len, NULL);
}
/* The id of s, without adding it: false when absent. */
bool strpool_find(const struct strpool *p, const void *s, size_t len, uint32_t *id);
/* The stored copy of the C string s (NULL counts as ""). */
const char *strpool_intern(struct strpool *p, const char *s);

static inline const char *strpool_str(const struct strpool *p, uint32_t id)
{
	return p->str[id];
}
static inline size_t strpool_len(const struct strpool *p, uint32_t id)
{
	return p->len[id];
}
static inline size_t strpool_count(const struct strpool *p)
{
	return p->n;
}

/* Bytes of storage held (copies, ids, index). */
size_t strpool_bytes(const struct strpool *p);
void strpool_free(struct strpool *p);

#endif
