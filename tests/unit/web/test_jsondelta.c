/* jsondelta: a client that applies each patch (as docs/http-api.md says a
 * page does: merge objects, patch the keyed lists by key, replace the
 * rest) to what it holds ends up with exactly the next value, through a
 * series of status-like objects whose fields, probes (by name, reordered,
 * added, removed), histogram buckets (sorted by their low bound) and slow
 * lists change, at random; a change of two fields sends those two; an
 * unchanged value gives an empty patch; a
 * member that disappears, a list element without its key or a key twice
 * give no patch (-1). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jsondelta.h"
#include "util.h"

static const struct jsondelta_list lists[] = {
	{"probes", "name", false},
	{"buckets", NULL, true},
	{"slow", "span_id", false},
	{NULL, NULL, false},
};

static struct json_value *parse(const char *text, size_t len)
{
	char err[256];
	struct json_value *v = json_parse(text, len, err, sizeof(err));
	cr_assert_not_null(v, "%s: %.*s", err, (int)len, text);
	return v;
}

static const struct jsondelta_list *list_of(const char *member)
{
	for (const struct jsondelta_list *l = lists; l->member; l++)
		if (strcmp(l->member, member) == 0)
			return l;
	return NULL;
}

static const struct json_value *key_of(const struct jsondelta_list *l, const struct json_value *e)
{
	return l->key ? json_get(e, l->key) : &e->items[0];
}

static void apply_object(FILE *out, const struct json_value *old, const struct json_value *p);

/* The patched list: the old elements less the dropped, patched or replaced
 * by key, the new ones appended; then sorted, or put in `order`. */
static void apply_list(FILE *out, const struct jsondelta_list *l, const struct json_value *old,
		       const struct json_value *p)
{
	const struct json_value *drop = json_get(p, "drop"), *set = json_get(p, "set"),
				*order = json_get(p, "order");
	size_t n = 0;
	char **text = xcalloc(old->n + (set ? set->n : 0), sizeof(*text));
	const struct json_value **key = xcalloc(old->n + (set ? set->n : 0), sizeof(*key));
	const struct json_value **from = xcalloc(old->n + (set ? set->n : 0), sizeof(*from));
	for (size_t i = 0; i < old->n; i++) {
		bool dropped = false;
		for (size_t j = 0; drop && j < drop->n; j++)
			dropped |= json_equal(&drop->items[j], key_of(l, &old->items[i]));
		if (dropped)
			continue;
		from[n] = &old->items[i];
		key[n++] = key_of(l, &old->items[i]);
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;
		FILE *f = open_memstream(&text[i], &len);
		json_write_value(f, from[i]);
		fclose(f);
	}
	for (size_t j = 0; set && j < set->n; j++) {
		const struct json_value *e = &set->items[j];
		size_t i = 0;
		while (i < n && !json_equal(key[i], key_of(l, e)))
			i++;
		size_t len = 0;
		FILE *f;
		if (i == n) {
			key[n] = key_of(l, e);
			f = open_memstream(&text[n++], &len);
			json_write_value(f, e);
		} else {
			struct json_value *cur = parse(text[i], strlen(text[i]));
			free(text[i]);
			f = open_memstream(&text[i], &len);
			if (e->type == JSON_OBJECT)
				apply_object(f, cur, e);
			else
				json_write_value(f, e);
			json_free(cur);
			/* the key now lives in set, which outlives this list */
			key[i] = key_of(l, e);
		}
		fclose(f);
	}
	fputc('[', out);
	if (l->sorted) {
		cr_assert_null(order, "a sorted list got an order");
		bool *done = xcalloc(n + 1, sizeof(*done));
		for (size_t k = 0; k < n; k++) {
			size_t best = n;
			for (size_t i = 0; i < n; i++)
				if (!done[i] && (best == n || key[i]->number < key[best]->number))
					best = i;
			done[best] = true;
			fprintf(out, "%s%s", k ? "," : "", text[best]);
		}
		free(done);
	} else if (order) {
		cr_assert_eq(order->n, n, "order of %zu keys for %zu elements", order->n, n);
		for (size_t k = 0; k < order->n; k++) {
			size_t i = 0;
			while (i < n && !json_equal(key[i], &order->items[k]))
				i++;
			cr_assert_lt(i, n, "order names a key the list does not have");
			fprintf(out, "%s%s", k ? "," : "", text[i]);
		}
	} else {
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s%s", i ? "," : "", text[i]);
	}
	fputc(']', out);
	for (size_t i = 0; i < n; i++)
		free(text[i]);
	free(text);
	free(key);
	free(from);
}

/* The patched object: old's members in their order, patched; new members
 * after them. */
static void apply_member(FILE *out, const char *name, const struct json_value *ov,
			 const struct json_value *pv)
{
	const struct jsondelta_list *l = list_of(name);
	if (pv->type != JSON_OBJECT)
		json_write_value(out, pv);
	else if (l && ov && ov->type == JSON_ARRAY)
		apply_list(out, l, ov, pv);
	else
		apply_object(out, ov && ov->type == JSON_OBJECT ? ov : NULL, pv);
}

static void apply_object(FILE *out, const struct json_value *old, const struct json_value *p)
{
	fputc('{', out);
	size_t w = 0;
	for (size_t i = 0; old && i < old->n; i++) {
		fprintf(out, "%s\"%s\":", w++ ? "," : "", old->keys[i]);
		const struct json_value *pv = json_get(p, old->keys[i]);
		if (pv)
			apply_member(out, old->keys[i], &old->items[i], pv);
		else
			json_write_value(out, &old->items[i]);
	}
	for (size_t i = 0; i < p->n; i++) {
		if (old && json_get(old, p->keys[i]))
			continue;
		fprintf(out, "%s\"%s\":", w++ ? "," : "", p->keys[i]);
		apply_member(out, p->keys[i], NULL, &p->items[i]);
	}
	fputc('}', out);
}

/* Patches old to new, applies the patch, checks the result is new; returns
 * the patch's changes. */
static long roundtrip(const char *old_text, const char *new_text, size_t *patch_len)
{
	struct json_value *old = parse(old_text, strlen(old_text));
	struct json_value *new = parse(new_text, strlen(new_text));
	char *patch = NULL, *res = NULL;
	size_t plen = 0, rlen = 0;
	FILE *f = open_memstream(&patch, &plen);
	long changes = jsondelta_write(f, old, new, lists);
	fclose(f);
	if (changes >= 0) {
		struct json_value *p = parse(patch, plen);
		f = open_memstream(&res, &rlen);
		apply_object(f, old, p);
		fclose(f);
		struct json_value *r = parse(res, rlen);
		cr_assert(json_equal(r, new), "patched %s\nwith %s\ngives %s\nnot %s", old_text, patch,
			  res, new_text);
		if (!changes)
			cr_assert_str_eq(patch, "{}");
		json_free(r);
		json_free(p);
	}
	if (patch_len)
		*patch_len = plen;
	free(patch);
	free(res);
	json_free(old);
	json_free(new);
	return changes;
}

Test(jsondelta, fields_lists_and_order)
{
	const char *a = "{\"samples\":10,\"view\":\"all\",\"thr\":null,\"probes\":["
			"{\"name\":\"f\",\"calls\":3,\"buckets\":[[1,2,3],[4,5,6]],\"slow\":[]},"
			"{\"name\":\"g\",\"calls\":1,\"buckets\":[],\"slow\":[{\"span_id\":7,\"ago\":1}]}]}";
	cr_assert_eq(roundtrip(a, a, NULL), 0);
	/* fields: only they are sent */
	const char *b = "{\"samples\":11,\"view\":\"all\",\"thr\":5,\"probes\":["
			"{\"name\":\"f\",\"calls\":3,\"buckets\":[[1,2,3],[4,5,6]],\"slow\":[]},"
			"{\"name\":\"g\",\"calls\":1,\"buckets\":[],\"slow\":[{\"span_id\":7,\"ago\":1}]}]}";
	size_t plen;
	cr_assert_eq(roundtrip(a, b, &plen), 2);
	cr_assert_eq(plen, strlen("{\"samples\":11,\"thr\":5}"));
	/* a bucket changed, one gone, one new between the others */
	cr_assert_gt(roundtrip(a, "{\"samples\":10,\"view\":\"all\",\"thr\":null,\"probes\":["
				  "{\"name\":\"f\",\"calls\":3,\"buckets\":[[1,2,4],[2,3,1]],\"slow\":[]},"
				  "{\"name\":\"g\",\"calls\":1,\"buckets\":[],\"slow\":[{\"span_id\":7,\"ago\":1}]}]}",
			       NULL),
		     0);
	/* probes reordered, one new, one gone; a slow call kept (its ago changed)
	 * and one new before it */
	cr_assert_gt(roundtrip(a, "{\"samples\":10,\"view\":\"all\",\"thr\":null,\"probes\":["
				  "{\"name\":\"h\",\"calls\":0,\"buckets\":[],\"slow\":[]},"
				  "{\"name\":\"g\",\"calls\":1,\"buckets\":[],\"slow\":[{\"span_id\":9,\"ago\":0},"
				  "{\"span_id\":7,\"ago\":3}]}]}",
			       NULL),
		     0);
	/* a list replaced by null, and an object where a list was (which would
	 * read as a list patch) */
	cr_assert_gt(roundtrip(a, "{\"samples\":10,\"view\":\"all\",\"thr\":null,\"probes\":null}", NULL),
		     0);
	cr_assert_eq(roundtrip(a, "{\"samples\":10,\"view\":\"all\",\"thr\":null,\"probes\":{}}", NULL),
		     -1);
}

Test(jsondelta, no_patch_when_it_cannot_say_it)
{
	const char *a = "{\"x\":1,\"probes\":[{\"name\":\"f\"}]}";
	cr_assert_eq(roundtrip(a, "{\"probes\":[{\"name\":\"f\"}]}", NULL), -1, "a member gone");
	cr_assert_eq(roundtrip(a, "{\"x\":1,\"probes\":[{\"nom\":\"f\"}]}", NULL), -1, "no key");
	cr_assert_eq(roundtrip(a, "{\"x\":1,\"probes\":[{\"name\":\"f\"},{\"name\":\"f\"}]}", NULL), -1,
		     "a key twice");
	cr_assert_eq(roundtrip("{\"buckets\":[[1,2,3]]}", "{\"buckets\":[[4,5,6],[1,2,3]]}", NULL), -1,
		     "a sorted list out of order");
}

/* A random status-like object: a few fields, probes in a random order
 * (some left out), each with sorted buckets (some left out) and a slow
 * list. */
static char *random_status(unsigned *seed)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fprintf(f, "{\"elapsed_s\":%.1f,\"samples\":%u,\"thr\":", rand_r(seed) % 1000 / 10.0,
		rand_r(seed) % 5);
	if (rand_r(seed) % 2)
		fputs("null", f);
	else
		fprintf(f, "%u", rand_r(seed) % 3);
	fputs(",\"probes\":[", f);
	int order[6] = {0, 1, 2, 3, 4, 5};
	for (int i = 5; i > 0; i--) {
		int j = rand_r(seed) % (i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	int np = 0;
	for (int i = 0; i < 6; i++) {
		if (rand_r(seed) % 4 == 0)
			continue;
		fprintf(f, "%s{\"name\":\"p%d\",\"calls\":%u,\"buckets\":[", np++ ? "," : "", order[i],
			rand_r(seed) % 3);
		int nb = 0;
		for (int b = 0; b < 12; b++)
			if (rand_r(seed) % 3)
				fprintf(f, "%s[%d,%d,%u]", nb++ ? "," : "", b * 10, b * 10 + 10,
					1 + rand_r(seed) % 3);
		fputs("],\"slow\":[", f);
		int ns = 0;
		for (int s = 9; s >= 0; s--)
			if (rand_r(seed) % 3 == 0)
				fprintf(f, "%s{\"span_id\":%d,\"ago\":%u}", ns++ ? "," : "", s,
					rand_r(seed) % 2);
		fputs("]}", f);
	}
	fputs("]}", f);
	fclose(f);
	return buf;
}

Test(jsondelta, random_series)
{
	unsigned seed = 12345;
	char *prev = random_status(&seed);
	for (int i = 0; i < 2000; i++) {
		char *next = random_status(&seed);
		long c = roundtrip(prev, next, NULL);
		cr_assert_geq(c, 0, "no patch from %s\nto %s", prev, next);
		free(prev);
		prev = next;
	}
	free(prev);
}
