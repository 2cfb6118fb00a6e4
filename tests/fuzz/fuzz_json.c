/* Fuzzes the JSON reader (the control socket's answers, json.h): any bytes
 * must parse or fail with one line, never read past the length given (the
 * input is copied to a buffer of exactly its size), and what parses must be
 * whole: strings as long as their text (no NUL inside), every member found
 * by its key. abort()s on a mismatch so the fuzzer reports the input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static void check(const struct json_value *v, int depth)
{
	if (depth > JSON_MAX_DEPTH + 1)
		abort();
	if (v->type == JSON_STRING && (!v->string || strlen(v->string) != v->len))
		abort();
	for (size_t i = 0; i < v->n; i++) {
		check(&v->items[i], depth + 1);
		if (v->type == JSON_OBJECT && !json_get(v, v->keys[i]))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	char err[256] = "";
	struct json_value *v = json_parse(text, size, err, sizeof(err));
	if (!v && (!err[0] || strchr(err, '\n'))) {
		fprintf(stderr, "bad error: '%s'\n", err);
		abort();
	}
	if (v)
		check(v, 0);
	json_free(v);
	free(text);
	return 0;
}
