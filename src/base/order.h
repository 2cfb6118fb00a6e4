/* order — the one comparator of each integer type for qsort, and the one
 * binary search of sonde.
 *
 * Every sorted array in sonde (symbol tables, address ranges, gaps in time,
 * tree rows, histogram values) is searched the same way: the elements for
 * which a predicate holds come first, and the search finds where they end
 * (C++'s partition_point). A lower bound is "element < key", an upper bound
 * "element <= key"; an exact match is the lower bound when it equals the
 * key. The search is a macro over an expression so that the test inlines:
 * lookups inside symbolization stay a plain loop. */
#ifndef SONDE_ORDER_H
#define SONDE_ORDER_H

#include <stddef.h>
#include <sys/types.h>

/* qsort comparators: ascending. */
int order_u64(const void *a, const void *b);
int order_u32(const void *a, const void *b);
int order_pid(const void *a, const void *b);

/* The first index in [0, n) at which `before` is false, n when it holds at
 * every index; `before` is an expression of the index variable `i` (named
 * by the caller), true on a prefix of the indexes and false on the rest
 * (the array is sorted by what it tests). n is evaluated once.
 *     size_t k = ORDER_PARTITION(t->n, i, t->syms[i].value <= addr);
 * gives the number of symbols at or below addr. */
#define ORDER_PARTITION(n, i, before)                                       \
	({                                                                  \
		size_t order_lo_ = 0, order_hi_ = (n);                      \
		while (order_lo_ < order_hi_) {                             \
			size_t i = order_lo_ + (order_hi_ - order_lo_) / 2; \
			if (before)                                         \
				order_lo_ = i + 1;                          \
			else                                                \
				order_hi_ = i;                              \
		}                                                           \
		order_lo_;                                                  \
	})

#endif
