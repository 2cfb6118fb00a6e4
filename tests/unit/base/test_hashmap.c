/* Unit tests for hashmap, the one hash table: exact keys against a
 * reference (a sorted array), key 0, removal keeping every other key
 * reachable, colliding hashed keys, growth, iteration and clear. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

/* 64 random bits from libc's generator (seeded in the test: reproducible). */
static uint64_t next_rand(void)
{
	return (uint64_t)random() << 42 ^ (uint64_t)random() << 21 ^ (uint64_t)random();
}

Test(hashmap, empty_map_finds_nothing)
{
	struct hashmap m = {0};
	cr_assert_null(hashmap_find(&m, 0));
	cr_assert_null(hashmap_find(&m, 42));
	cr_assert_not(hashmap_remove(&m, 42));
	size_t pos = 0;
	cr_assert_not(hashmap_next(&m, &pos, NULL, NULL));
	cr_assert_null(hashmap_first(&m, 7, &pos));
	cr_assert_eq(hashmap_bytes(&m), 0);
	hashmap_free(&m);
}

Test(hashmap, key_zero_is_a_key_like_any)
{
	struct hashmap m = {0};
	bool added;
	*hashmap_put(&m, 0, &added) = 5;
	cr_assert(added);
	hashmap_set(&m, 1, 6);
	uint64_t v;
	cr_assert(hashmap_get(&m, 0, &v));
	cr_assert_eq(v, 5);
	cr_assert_eq(hashmap_count(&m), 2);
	hashmap_put(&m, 0, &added);
	cr_assert_not(added);
	size_t pos = 0, seen = 0;
	uint64_t k, *pv;
	while (hashmap_next(&m, &pos, &k, &pv))
		seen += k == 0 ? *pv * 10 : *pv;
	cr_assert_eq(seen, 56);
	cr_assert(hashmap_remove(&m, 0));
	cr_assert_not(hashmap_get(&m, 0, NULL));
	cr_assert_eq(hashmap_count(&m), 1);
	hashmap_free(&m);
}

/* A sorted array of distinct keys with values: what the map must hold. */
struct ref {
	uint64_t *k, *v;
	size_t n;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

Test(hashmap, many_keys_with_removals_match_a_reference)
{
	enum { N = 200000 };
	srandom(42);
	struct hashmap m = {0};
	uint64_t *keys = malloc(N * sizeof(*keys));
	bool *live = calloc(N, sizeof(*live));
	/* Keys of every shape callers use: small dense ids, packed pairs,
	 * pointers (multiples of 16), random 64-bit values. */
	for (size_t i = 0; i < N; i++) {
		switch (i % 4) {
		case 0: keys[i] = i; break;
		case 1: keys[i] = (uint64_t)(i % 1000) << 32 | i / 1000; break;
		case 2: keys[i] = 0x7f0000000000ULL + i * 16; break;
		default: keys[i] = next_rand(); break;
		}
	}
	/* Deduplicate (random keys could repeat another). */
	uint64_t *sorted = malloc(N * sizeof(*sorted));
	memcpy(sorted, keys, N * sizeof(*sorted));
	qsort(sorted, N, sizeof(*sorted), cmp_u64);
	for (size_t i = 1; i < N; i++)
		cr_assert_neq(sorted[i], sorted[i - 1], "test keys must be distinct");

	for (size_t i = 0; i < N; i++) {
		bool added;
		*hashmap_put(&m, keys[i], &added) = keys[i] ^ 0xabcdef;
		cr_assert(added);
		live[i] = true;
	}
	cr_assert_eq(hashmap_count(&m), N);
	cr_assert_leq(hashmap_count(&m) * 10, m.cap * 7, "grown before 70%% full");
	/* Remove a third, at random: everything else must stay reachable. */
	size_t n = N;
	for (size_t r = 0; r < N / 3; r++) {
		size_t i = next_rand() % N;
		cr_assert_eq(hashmap_remove(&m, keys[i]), live[i]);
		if (live[i])
			n--;
		live[i] = false;
	}
	cr_assert_eq(hashmap_count(&m), n);
	for (size_t i = 0; i < N; i++) {
		uint64_t v = 0;
		cr_assert_eq(hashmap_get(&m, keys[i], &v), live[i], "key %zu", i);
		if (live[i])
			cr_assert_eq(v, keys[i] ^ 0xabcdef);
	}
	/* Iteration visits each live key once. */
	uint64_t *it = malloc(N * sizeof(*it));
	size_t pos = 0, nit = 0;
	uint64_t k, *pv;
	while (hashmap_next(&m, &pos, &k, &pv)) {
		cr_assert_eq(*pv, k ^ 0xabcdef);
		it[nit++] = k;
	}
	cr_assert_eq(nit, n);
	qsort(it, nit, sizeof(*it), cmp_u64);
	size_t j = 0;
	for (size_t i = 0; i < N; i++)
		if (live[i])
			sorted[j++] = keys[i];
	qsort(sorted, j, sizeof(*sorted), cmp_u64);
	cr_assert_eq(j, nit);
	cr_assert_arr_eq(sorted, it, nit * sizeof(*it));
	/* Removed keys come back as new. */
	for (size_t i = 0; i < N; i++) {
		bool added;
		hashmap_put(&m, keys[i], &added);
		cr_assert_eq(added, !live[i]);
	}
	cr_assert_eq(hashmap_count(&m), N);
	free(it);
	free(sorted);
	free(live);
	free(keys);
	hashmap_free(&m);
}

Test(hashmap, removal_inside_a_wrapped_run)
{
	/* Keys whose home slots are the last ones of a 16-slot table, so their
	 * run wraps to slot 0: removing from the middle must keep the rest. */
	struct hashmap m = {0};
	hashmap_reserve(&m, 8);
	cr_assert_eq(m.cap, 16);
	uint64_t last[6];
	size_t nlast = 0;
	for (uint64_t k = 1; nlast < 6; k++)
		if (((k * 0x9E3779B97F4A7C15ULL) >> m.shift) >= 14)
			last[nlast++] = k;
	for (size_t i = 0; i < 6; i++)
		hashmap_set(&m, last[i], i);
	cr_assert_eq(m.cap, 16);
	cr_assert(hashmap_remove(&m, last[1]));
	cr_assert(hashmap_remove(&m, last[3]));
	for (size_t i = 0; i < 6; i++) {
		uint64_t v;
		cr_assert_eq(hashmap_get(&m, last[i], &v), i != 1 && i != 3, "key %zu", i);
		if (i != 1 && i != 3)
			cr_assert_eq(v, i);
	}
	hashmap_free(&m);
}

Test(hashmap, hashed_keys_keep_every_value_of_a_colliding_hash)
{
	/* Many values under one hash (a real collision) and under hash 0. */
	struct hashmap m = {0};
	for (uint64_t i = 0; i < 100; i++)
		hashmap_add(&m, i % 2 ? 0x1234 : 0, i);
	for (uint64_t i = 0; i < 1000; i++)
		hashmap_add(&m, 0x5000 + i, 1000 + i);
	cr_assert_eq(hashmap_count(&m), 1100);
	for (int odd = 0; odd < 2; odd++) {
		bool seen[100] = {0};
		size_t pos, n = 0;
		uint64_t h = odd ? 0x1234 : 0;
		for (uint64_t *v = hashmap_first(&m, h, &pos); v; v = hashmap_again(&m, h, &pos)) {
			cr_assert_lt(*v, 100);
			cr_assert_eq(*v % 2, (uint64_t)odd);
			cr_assert_not(seen[*v]);
			seen[*v] = true;
			n++;
		}
		cr_assert_eq(n, 50);
	}
	size_t pos;
	uint64_t *v = hashmap_first(&m, 0x5000 + 777, &pos);
	cr_assert_not_null(v);
	cr_assert_eq(*v, 1777);
	cr_assert_null(hashmap_again(&m, 0x5000 + 777, &pos));
	cr_assert_null(hashmap_first(&m, 0x9999, &pos));
	hashmap_free(&m);
}

Test(hashmap, clear_keeps_storage_and_recycle_shrinks_when_mostly_empty)
{
	struct hashmap m = {0};
	for (uint64_t k = 0; k < 1000; k++)
		hashmap_set(&m, k, k);
	size_t cap = m.cap;
	hashmap_recycle(&m);
	cr_assert_eq(hashmap_count(&m), 0);
	cr_assert_eq(m.cap, cap, "a full map keeps its storage");
	cr_assert_not(hashmap_get(&m, 0, NULL));
	cr_assert_not(hashmap_get(&m, 5, NULL));
	for (uint64_t k = 0; k < 10; k++)
		hashmap_set(&m, k, k);
	hashmap_clear(&m);
	cr_assert_eq(m.cap, cap, "clear never shrinks");
	cr_assert_not(hashmap_get(&m, 0, NULL));
	for (uint64_t k = 0; k < 10; k++)
		hashmap_set(&m, k, k);
	hashmap_recycle(&m);
	cr_assert_lt(m.cap, cap, "a map that held 10 of %zu shrinks", cap);
	cr_assert_geq(m.cap * 7, 10 * 10, "room for the 10 again");
	size_t small = m.cap;
	for (int round = 0; round < 3; round++) { /* same fill: same size */
		for (uint64_t k = 0; k < 10; k++)
			hashmap_set(&m, k + 100, k);
		cr_assert_eq(hashmap_count(&m), 10);
		hashmap_recycle(&m);
		cr_assert_eq(m.cap, small);
	}
	hashmap_free(&m);
}
