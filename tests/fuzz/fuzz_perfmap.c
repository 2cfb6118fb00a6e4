/* Fuzzes the perf map reader (src/symbols/perfmap.h): the input, cut in two
 * reads at a point its first byte picks (a file read while it grows), must
 * never crash, and the ranges it leaves must be sorted, never overlap and
 * each be found by a lookup of its first and last address. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t cut = data[0] * (size - 1) / 255;
	const char *text = (const char *)data + 1;
	size_t n = size - 1;
	struct perfmap *m = perfmap_new(0);
	size_t used = perfmap_add_text(m, text, cut, false);
	if (used > cut)
		abort();
	size_t rest = perfmap_add_text(m, text + used, n - used, true);
	if (rest != n - used)
		abort(); /* a final read takes every byte */
	size_t count;
	const struct perfmap_sym *s = perfmap_syms(m, &count);
	for (size_t i = 0; i < count; i++) {
		if (s[i].start >= s[i].end || (i > 0 && s[i - 1].end > s[i].start))
			abort();
		if (perfmap_find(m, s[i].start) != &s[i] || perfmap_find(m, s[i].end - 1) != &s[i])
			abort();
	}
	perfmap_free(m);
	return 0;
}
