/* u64map — a hash map from 64-bit keys to 32-bit values (open addressing,
 * grown at half full): ids of pairs (parent, child; thread, stack) to the
 * index of what they name. A zeroed struct is an empty map. */
#ifndef SONDE_U64MAP_H
#define SONDE_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;
	uint32_t *vals; /* value + 1; 0 = empty slot */
	size_t cap, n;
};

/* Finds key: true with *val, or false. */
bool u64map_get(const struct u64map *m, uint64_t key, uint32_t *val);
/* Sets key to val (adding or replacing). */
void u64map_put(struct u64map *m, uint64_t key, uint32_t val);
void u64map_free(struct u64map *m);

#endif
