#include "strpool.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Copies go into chunks (a long string gets its own block), so interning
 * costs no malloc per string and copies never move. Chunks start small (a
 * pool of a few keys stays small) and double up to CHUNK_MAX. */
#define CHUNK_MIN 1024
#define CHUNK_MAX 65536

static uint64_t str_hash(const void *s, size_t len)
{
	return hash_bytes(s, len, 0);
}

static inline bool lookup(const struct strpool *p, const void *s, size_t len, uint64_t h, uint32_t *id)
{
	size_t pos;
	for (const uint64_t *v = hashmap_first(&p->index, h, &pos); v;
	     v = hashmap_again(&p->index, h, &pos)) {
		if (p->len[*v] == len && (len == 0 || memcmp(p->str[*v], s, len) == 0)) {
			*id = (uint32_t)*v;
			return true;
		}
	}
	return false;
}

bool strpool_find(const struct strpool *p, const void *s, size_t len, uint32_t *id)
{
	return lookup(p, s, len, str_hash(s, len), id);
}

static char *store(struct strpool *p, const void *s, size_t len)
{
	char *dst;
	if (len + 1 > p->chunk_left) {
		size_t chunk = p->bytes < CHUNK_MIN ? CHUNK_MIN
			       : p->bytes < CHUNK_MAX ? p->bytes : CHUNK_MAX;
		bool own = len + 1 > chunk / 4; /* leaves the current chunk be */
		size_t size = own ? len + 1 : chunk;
		dst = xmalloc(size);
		grow_array((void **)&p->chunks, &p->chunks_cap, p->nchunks + 1, sizeof(*p->chunks));
		p->chunks[p->nchunks++] = dst;
		p->bytes += size;
		if (!own) {
			p->chunk = dst + len + 1;
			p->chunk_left = size - len - 1;
		}
	} else {
		dst = p->chunk;
		p->chunk += len + 1;
		p->chunk_left -= len + 1;
	}
	if (len) /* s may be NULL then */
		memcpy(dst, s, len);
	dst[len] = '\0';
	return dst;
}

uint32_t strpool_add(struct strpool *p, const void *s, size_t len, bool *added)
{
	uint64_t h = str_hash(s, len);
	uint32_t id;
	bool found = lookup(p, s, len, h, &id);
	if (added)
		*added = !found;
	if (found)
		return id;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		p->str = xrealloc(p->str, cap * sizeof(*p->str));
		p->len = xrealloc(p->len, cap * sizeof(*p->len));
		p->cap = cap;
	}
	id = (uint32_t)p->n++;
	p->str[id] = store(p, s, len);
	p->len[id] = (uint32_t)len;
	hashmap_add(&p->index, h, id);
	return id;
}

const char *strpool_intern(struct strpool *p, const char *s)
{
	if (!s || !*s) { /* the commonest string (no module, no file): no hashing */
		if (!p->empty) {
			uint32_t id = strpool_id(p, "", 0);
			p->empty = p->str[id];
		}
		return p->empty;
	}
	uint32_t id = strpool_id(p, s, strlen(s)); /* before reading p->str: it may move */
	return p->str[id];
}

size_t strpool_bytes(const struct strpool *p)
{
	return p->bytes + p->cap * (sizeof(*p->str) + sizeof(*p->len)) + hashmap_bytes(&p->index);
}

void strpool_free(struct strpool *p)
{
	for (size_t i = 0; i < p->nchunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	free(p->str);
	free(p->len);
	hashmap_free(&p->index);
	memset(p, 0, sizeof(*p));
}
