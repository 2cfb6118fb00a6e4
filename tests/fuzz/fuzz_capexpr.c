/* Fuzzes the capture and predicate parser (capexpr.h): any bytes must give
 * a tree or fail with one non-empty line and nothing kept; a tree has at
 * most CAPEXPR_MAX_CAPTURES captures, each with its text, and the
 * predicate's text when there is a predicate. Also splits the input as a
 * whole --trace spec: the location and tail lie inside it. abort()s on a
 * violation so the fuzzer reports the input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capexpr.h"

static void check_tree(const struct cap_node *n, int depth)
{
	if (!n)
		return;
	if (depth > 4 * CAPEXPR_MAX_DEPTH) {
		fprintf(stderr, "tree deeper than the limit\n");
		abort();
	}
	if ((n->kind == CAP_VAR || n->kind == CAP_MEMBER || n->kind == CAP_ARROW) && !n->name) {
		fprintf(stderr, "a name node without a name\n");
		abort();
	}
	if ((n->kind == CAP_BINARY || n->kind == CAP_INDEX) && (!n->l || !n->r)) {
		fprintf(stderr, "a binary node without both sides\n");
		abort();
	}
	check_tree(n->l, depth + 1);
	check_tree(n->r, depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct cap_spec s;
	char err[512] = "";
	if (capexpr_parse(text, &s, err, sizeof(err)) != 0) {
		if (!err[0] || strchr(err, '\n') || s.ncaptures || s.pred) {
			fprintf(stderr, "bad failure for '%s': '%s'\n", text, err);
			abort();
		}
	} else {
		if (s.ncaptures > CAPEXPR_MAX_CAPTURES || (s.pred && !s.pred_text)) {
			fprintf(stderr, "bad tree for '%s'\n", text);
			abort();
		}
		for (int i = 0; i < s.ncaptures; i++) {
			if (!s.texts[i] || !s.captures[i]) {
				fprintf(stderr, "capture %d without text\n", i);
				abort();
			}
			check_tree(s.captures[i], 0);
		}
		check_tree(s.pred, 0);
		capexpr_free(&s);
	}
	const char *tail;
	size_t loc = capexpr_split_spec(text, &tail);
	size_t len = strlen(text);
	if (loc > len || tail < text + loc || tail > text + len) {
		fprintf(stderr, "split outside the spec\n");
		abort();
	}
	free(text);
	return 0;
}
