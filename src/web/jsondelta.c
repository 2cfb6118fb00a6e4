/* jsondelta — object and list patches. The contract is in jsondelta.h. */
#include "jsondelta.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static long write_object(FILE *out, const struct json_value *old, const struct json_value *new,
			 const struct jsondelta_list *lists, const char *keep);

static const struct jsondelta_list *list_of(const struct jsondelta_list *lists, const char *member)
{
	for (; lists && lists->member; lists++)
		if (strcmp(lists->member, member) == 0)
			return lists;
	return NULL;
}

/* The key of a list element, or NULL when it has none of the right kind. */
static const struct json_value *key_of(const struct jsondelta_list *l, const struct json_value *e)
{
	const struct json_value *k;
	if (l->key) {
		k = json_get(e, l->key);
		return k && (k->type == JSON_STRING || k->type == JSON_NUMBER) ? k : NULL;
	}
	if (e->type != JSON_ARRAY || !e->n || e->items[0].type != JSON_NUMBER)
		return NULL;
	return &e->items[0];
}

/* The index of the element of a (keys ka) with key k, or -1; looks at
 * *hint first (lists mostly keep their order), and leaves it after the
 * element found. */
static long find_key(const struct json_value **ka, size_t n, const struct json_value *k,
		     size_t *hint)
{
	for (size_t j = 0; j < n; j++) {
		size_t i = (*hint + j) % n;
		if (json_equal(ka[i], k)) {
			*hint = i + 1;
			return (long)i;
		}
	}
	return -1;
}

/* The keys of a list's elements, each there once (NULL when not). */
static const struct json_value **list_keys(const struct jsondelta_list *l,
					   const struct json_value *a)
{
	const struct json_value **k = xcalloc(a->n + 1, sizeof(*k));
	for (size_t i = 0; i < a->n; i++) {
		k[i] = key_of(l, &a->items[i]);
		bool bad = !k[i];
		if (!bad && l->sorted) /* ascending: each key there once */
			bad = k[i]->type != JSON_NUMBER || (i && k[i]->number <= k[i - 1]->number);
		for (size_t j = 0; !bad && !l->sorted && j < i; j++)
			bad = json_equal(k[j], k[i]);
		if (bad) {
			free(k);
			return NULL;
		}
	}
	return k;
}

static long write_list(FILE *out, const struct jsondelta_list *l, const struct json_value *old,
		       const struct json_value *new, const struct jsondelta_list *lists)
{
	const struct json_value **ok = list_keys(l, old), **nk = list_keys(l, new);
	long changes = 0;
	if (!ok || !nk) {
		changes = -1;
		goto out;
	}
	fputc('{', out);
	bool part = false;
	/* drop: the old keys the new list does not have */
	size_t hint = 0, kept = 0, nset = 0;
	for (size_t i = 0; i < old->n; i++) {
		if (find_key(nk, new->n, ok[i], &hint) >= 0) {
			kept++;
			continue;
		}
		fputs(!part ? "\"drop\":[" : ",", out);
		part = true;
		json_write_value(out, ok[i]);
		changes++;
	}
	if (part)
		fputc(']', out);
	/* set: the elements new or changed; and whether the client's list
	 * (the old order less the dropped, then the new ones) is the new order */
	bool in_order = true;
	long last = -1;
	hint = 0;
	for (size_t i = 0; i < new->n; i++) {
		const struct json_value *e = &new->items[i];
		long at = find_key(ok, old->n, nk[i], &hint);
		if (at >= 0 ? at < last || i >= kept : i < kept)
			in_order = false;
		if (at >= 0)
			last = at;
		if (at >= 0 && json_equal(&old->items[at], e))
			continue;
		fputs(nset++ ? "," : part ? ",\"set\":[" : "\"set\":[", out);
		part = true;
		if (at >= 0 && e->type == JSON_OBJECT && old->items[at].type == JSON_OBJECT) {
			long c = write_object(out, &old->items[at], e, lists, l->key);
			if (c < 0) {
				changes = -1;
				goto out;
			}
			changes += c;
		} else {
			json_write_value(out, e);
			changes++;
		}
	}
	if (nset)
		fputc(']', out);
	if (!in_order && !l->sorted) {
		fputs(part ? ",\"order\":[" : "\"order\":[", out);
		for (size_t i = 0; i < new->n; i++) {
			if (i)
				fputc(',', out);
			json_write_value(out, nk[i]);
		}
		fputc(']', out);
		changes++;
	}
	fputc('}', out);
out:
	free(ok);
	free(nk);
	return changes;
}

/* The patch of one object; keep: a member written even when unchanged (a
 * list element's key), or NULL. */
static long write_object(FILE *out, const struct json_value *old, const struct json_value *new,
			 const struct jsondelta_list *lists, const char *keep)
{
	for (size_t i = 0; i < old->n; i++)
		if (!json_get(new, old->keys[i]))
			return -1;
	long changes = 0;
	size_t written = 0;
	fputc('{', out);
	for (size_t i = 0; i < new->n; i++) {
		const char *name = new->keys[i];
		const struct json_value *nv = &new->items[i], *ov = json_get(old, name);
		bool same = ov && json_equal(ov, nv);
		if (same && !(keep && strcmp(keep, name) == 0))
			continue;
		if (written++)
			fputc(',', out);
		json_write_string(out, name);
		fputc(':', out);
		if (same) {
			json_write_value(out, nv);
			continue;
		}
		const struct jsondelta_list *l = list_of(lists, name);
		bool arrays = ov && ov->type == JSON_ARRAY && nv->type == JSON_ARRAY;
		long c;
		if (l && ov && ov->type == JSON_ARRAY && nv->type == JSON_OBJECT)
			c = -1; /* it would be read as a list patch */
		else if (l && arrays)
			c = write_list(out, l, ov, nv, lists);
		else if (ov && ov->type == JSON_OBJECT && nv->type == JSON_OBJECT)
			c = write_object(out, ov, nv, lists, NULL);
		else {
			json_write_value(out, nv);
			c = 1;
		}
		if (c < 0)
			return -1;
		changes += c;
	}
	fputc('}', out);
	return changes;
}

long jsondelta_write(FILE *out, const struct json_value *old, const struct json_value *new,
		     const struct jsondelta_list *lists)
{
	if (old->type != JSON_OBJECT || new->type != JSON_OBJECT)
		return -1;
	return write_object(out, old, new, lists, NULL);
}
