/* jsondelta — the changes from one JSON object to the next, for a client
 * that holds the first: the `status_delta` and `hot_delta` events
 * (docs/http-api.md), so a page is sent only the fields that changed.
 *
 * A patch of an object is an object holding the members that changed:
 *   - a member whose patch value is an object is merged into the member
 *     the client has (recursively; into {} when it has none or a
 *     non-object);
 *   - a member named in lists (below) whose value is a list of keyed
 *     elements gets a list patch: {"drop":[KEY,...],"set":[...],
 *     "order":[KEY,...]}, each part left out when empty. `drop` names the
 *     elements gone; `set` holds, for each element that changed or is new,
 *     its patch with its key (an object element: merged into the one of
 *     that key; an array element: replaces it) or, when new, the whole
 *     element, appended; `order`, present only when the result is not in
 *     the new order, gives every key in it. A sorted list (ascending
 *     numeric keys) is put back in that order by the client, never sent an
 *     `order`;
 *   - any other value (an array too) replaces the member.
 * Members never disappear from a patched object: when one is gone, or a
 * list's elements have no key or a key twice, no patch is written (-1) and
 * the caller sends the whole value. */
#ifndef SONDE_JSONDELTA_H
#define SONDE_JSONDELTA_H

#include <stdbool.h>
#include <stdio.h>

#include "json.h"

/* A member holding a list of keyed elements, wherever it is. */
struct jsondelta_list {
	const char *member;
	const char *key; /* the element's key member; NULL: element [0] of an array element */
	bool sorted;     /* kept in ascending numeric key order */
};

/* Writes the patch from old to new (both objects) with the lists of
 * lists (ended by a {NULL} entry). Returns the number of values that
 * changed (0: none, the patch is {}), or -1 when no patch can say it
 * (then what was written is to be discarded). */
long jsondelta_write(FILE *out, const struct json_value *old, const struct json_value *new,
		     const struct jsondelta_list *lists);

#endif
