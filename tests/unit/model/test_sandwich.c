/* flame_sandwich: the callers (inverted) and callees of one function, from
 * a tree with known stacks, recursion counted once, and a function absent
 * from the tree. Each tree is printed as sorted "path total self" lines and
 * compared with the lines worked out by hand. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "frames.h"

static struct frame_table *ft;
static uint32_t id_of(const char *name)
{
	return frames_intern(ft, name, "m", "", 0, FRAME_USER);
}

/* Adds "a;b;c" with count. */
static void add(struct flame_tree *t, const char *stack, uint64_t count)
{
	uint32_t frames[32];
	size_t n = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *save = NULL, *w = strtok_r(buf, ";", &save); w; w = strtok_r(NULL, ";", &save))
		frames[n++] = id_of(w);
	cr_assert_eq(flame_add(t, frames, n, count), 0);
}

struct dump {
	char lines[64][160];
	size_t n;
	char path[32][32];
};

static int dump_node(const struct flame_node *n, int depth, void *arg)
{
	struct dump *d = arg;
	if (!depth)
		return 0;
	snprintf(d->path[depth], sizeof(d->path[depth]), "%s", frames_get(ft, n->frame)->name);
	char *line = d->lines[d->n++];
	size_t off = 0;
	for (int i = 1; i <= depth; i++)
		off += (size_t)snprintf(line + off, 160 - off, "%s%s", i > 1 ? ";" : "", d->path[i]);
	snprintf(line + off, 160 - off, " %llu %llu", (unsigned long long)n->total,
		 (unsigned long long)n->self);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void expect(const struct flame_tree *t, const char *const *want, uint64_t root_total)
{
	struct dump d = {0};
	flame_walk(t, dump_node, &d);
	qsort(d.lines, d.n, sizeof(d.lines[0]), cmp);
	size_t k = 0;
	for (; want[k]; k++) {
		cr_assert_lt(k, d.n, "missing line %s", want[k]);
		cr_assert_str_eq(d.lines[k], want[k]);
	}
	cr_assert_eq(k, d.n, "extra line %s", d.n > k ? d.lines[k] : "");
	cr_assert_eq(t->root->total, root_total);
}

Test(sandwich, callers_inverted_callees_merged_recursion_once)
{
	ft = frames_new();
	struct flame_tree *t = flame_new(ft);
	add(t, "main;a;f;g", 5);
	add(t, "main;a;f", 2);
	add(t, "main;b;f;h", 3);
	add(t, "main;b;f;f;g", 4); /* recursion: the outer f counts */
	add(t, "main;c", 7);
	struct flame_tree *callers, *callees;
	flame_sandwich(t, id_of("f"), &callers, &callees);
	static const char *const want_callers[] = {
		"f 14 0", "f;a 7 0", "f;a;main 7 7", "f;b 7 0", "f;b;main 7 7", NULL};
	expect(callers, want_callers, 14);
	static const char *const want_callees[] = {
		"f 14 2", "f;f 4 0", "f;f;g 4 4", "f;g 5 5", "f;h 3 3", NULL};
	expect(callees, want_callees, 14);
	flame_free(callers);
	flame_free(callees);

	/* a function that is not in the tree: two empty trees */
	flame_sandwich(t, id_of("nowhere"), &callers, &callees);
	cr_assert_eq(callers->root->total, 0);
	cr_assert_eq(callees->root->total, 0);
	cr_assert_eq(callers->root->nchildren + callees->root->nchildren, 0);
	flame_free(callers);
	flame_free(callees);
	flame_free(t);
	frames_free(ft);
}
