/* perfscript_counts — the collapse's counts as Perl adds them (unsigned
 * integers while they fit, doubles once they do not), and counts by key:
 * keys interned in a strpool, their counts by id (perfscriptscan.h). */
#include "perfscriptscan.h"

#include <stdlib.h>

struct count perfscript_count_of_digits(const char *p, size_t n)
{
	struct count c = {0};
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(p[i] - '0');
		if (c.u > (UINT64_MAX - d) / 10) {
			c.nv = true;
			break;
		}
		c.u = c.u * 10 + d;
	}
	if (c.nv) {
		char small[64];
		char *s = n < sizeof(small) ? small : xmalloc(n + 1);
		memcpy(s, p, n);
		s[n] = 0;
		c.d = strtod(s, NULL);
		if (s != small)
			free(s);
	}
	return c;
}

void perfscript_count_add(struct count *a, struct count b)
{
	if (!a->nv && !b.nv && a->u <= UINT64_MAX - b.u) {
		a->u += b.u;
		return;
	}
	double x = a->nv ? a->d : (double)a->u;
	double y = b.nv ? b.d : (double)b.u;
	a->nv = true;
	a->d = x + y;
}

struct count *perfscript_table_get(struct table *t, const char *key, size_t len, bool *added)
{
	bool is_new;
	uint32_t id = strpool_add(&t->keys, key, len, &is_new);
	if (is_new) {
		grow_array((void **)&t->val, &t->cap, (size_t)id + 1, sizeof(*t->val));
		t->val[id] = (struct count){0};
	}
	if (added)
		*added = is_new;
	return &t->val[id];
}

void perfscript_table_free(struct table *t)
{
	strpool_free(&t->keys);
	free(t->val);
}
