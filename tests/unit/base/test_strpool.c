/* Unit tests for strpool, the one string pool: ids in first-seen order,
 * equal strings share one stable copy, byte strings with NULs, many
 * strings against a reference, pointers that survive growth. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strpool.h"

Test(strpool, ids_in_first_seen_order_and_one_copy_each)
{
	struct strpool p = {0};
	cr_assert_eq(strpool_id(&p, "b", 1), 0);
	cr_assert_eq(strpool_id(&p, "a", 1), 1);
	cr_assert_eq(strpool_id(&p, "b", 1), 0);
	cr_assert_eq(strpool_id(&p, "", 0), 2);
	const char *x = strpool_intern(&p, "a");
	cr_assert_eq(x, strpool_str(&p, 1));
	cr_assert_eq(strpool_intern(&p, NULL), strpool_str(&p, 2));
	cr_assert_eq(strpool_count(&p), 3);
	uint32_t id;
	cr_assert(strpool_find(&p, "b", 1, &id));
	cr_assert_eq(id, 0);
	cr_assert_not(strpool_find(&p, "c", 1, &id));
	cr_assert_eq(strpool_count(&p), 3);
	strpool_free(&p);
}

Test(strpool, intern_into_an_empty_pool)
{
	/* The first string allocates the id arrays: the pointer returned
	 * must be read from them after that. */
	struct strpool p = {0};
	const char *s = strpool_intern(&p, "first");
	cr_assert_str_eq(s, "first");
	cr_assert_eq(strpool_intern(&p, "first"), s);
	strpool_free(&p);
}

Test(strpool, byte_strings_compare_by_length_and_bytes)
{
	struct strpool p = {0};
	uint32_t a = strpool_id(&p, "ab\0c", 4);
	uint32_t b = strpool_id(&p, "ab\0d", 4);
	uint32_t c = strpool_id(&p, "ab", 2);
	cr_assert_neq(a, b);
	cr_assert_neq(a, c);
	cr_assert_eq(strpool_id(&p, "ab\0c", 4), a);
	cr_assert_eq(strpool_len(&p, a), 4);
	/* the empty string may come as (NULL, 0) */
	uint32_t e = strpool_id(&p, NULL, 0);
	cr_assert_eq(strpool_id(&p, "", 0), e);
	cr_assert_str_eq(strpool_str(&p, e), "");
	cr_assert_eq(memcmp(strpool_str(&p, b), "ab\0d", 5), 0, "stored with a NUL after");
	strpool_free(&p);
}

Test(strpool, many_strings_keep_ids_and_pointers)
{
	enum { N = 100000 };
	struct strpool p = {0};
	const char **ptr = malloc(N * sizeof(*ptr));
	char buf[64];
	for (int i = 0; i < N; i++) {
		int n = snprintf(buf, sizeof(buf), "func_%d", i * 7919 % N);
		cr_assert_eq(strpool_id(&p, buf, (size_t)n), (uint32_t)i);
		ptr[i] = strpool_str(&p, (uint32_t)i);
	}
	/* A string longer than a chunk's share gets its own block. */
	size_t big = 100000;
	char *long_str = malloc(big);
	memset(long_str, 'x', big);
	uint32_t lid = strpool_id(&p, long_str, big);
	cr_assert_eq(lid, N);
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "func_%d", i * 7919 % N);
		cr_assert_str_eq(ptr[i], buf, "pointer %d moved or changed", i);
		cr_assert_eq(strpool_intern(&p, buf), ptr[i]);
	}
	cr_assert_eq(strpool_id(&p, long_str, big), lid);
	cr_assert_eq(strpool_count(&p), N + 1);
	cr_assert_gt(strpool_bytes(&p), big);
	free(long_str);
	free(ptr);
	strpool_free(&p);
	cr_assert_eq(strpool_count(&p), 0);
}
