#include "flame.h"
#include <stdio.h>

#include <stdlib.h>
#include <string.h>

#include "util.h"

static struct flame_node *node_new(uint32_t frame, struct flame_node *parent)
{
	struct flame_node *n = xcalloc(1, sizeof(*n));
	n->frame = frame;
	n->parent = parent;
	return n;
}

static void node_free(struct flame_node *n)
{
	for (size_t i = 0; i < n->nchildren; i++)
		node_free(n->children[i]);
	free(n->children);
	free(n);
}

struct flame_tree *flame_new(const struct frame_table *frames)
{
	struct flame_tree *t = xcalloc(1, sizeof(*t));
	t->root = node_new(0, NULL);
	t->frames = frames;
	return t;
}

void flame_free(struct flame_tree *t)
{
	if (!t)
		return;
	node_free(t->root);
	free(t);
}

/* Children are searched linearly: fan-out is small in real profiles, and the
 * last-used child is checked first, which makes repeated stacks cheap. */
static struct flame_node *child_get(struct flame_node *n, uint32_t frame)
{
	for (size_t i = n->nchildren; i-- > 0;)
		if (n->children[i]->frame == frame)
			return n->children[i];
	grow_array((void **)&n->children, &n->cap, n->nchildren + 1, sizeof(*n->children));
	struct flame_node *c = node_new(frame, n);
	n->children[n->nchildren++] = c;
	return c;
}

int flame_add(struct flame_tree *t, const uint32_t *frames, size_t depth, uint64_t count)
{
	struct flame_node *n = t->root;
	n->total += count;
	for (size_t i = 0; i < depth; i++) {
		n = child_get(n, frames[i]);
		n->total += count;
	}
	n->self += count;
	return 0;
}

void flame_frame_label(const struct flame_tree *t, uint32_t frame, bool annotate, char *buf,
		       size_t size)
{
	const struct frame *f = frames_get(t->frames, frame);
	if (!f) {
		snprintf(buf, size, "all");
		return;
	}
	snprintf(buf, size, "%s%s", f->name, annotate ? frames_kind_suffix(f->kind) : "");
}

static const struct flame_tree *sort_tree; /* qsort has no context argument */

static int child_cmp(const void *a, const void *b)
{
	const struct flame_node *x = *(const struct flame_node *const *)a;
	const struct flame_node *y = *(const struct flame_node *const *)b;
	char lx[512], ly[512];
	flame_frame_label(sort_tree, x->frame, true, lx, sizeof(lx));
	flame_frame_label(sort_tree, y->frame, true, ly, sizeof(ly));
	int c = strcmp(lx, ly);
	if (c)
		return c;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static void sort_node(struct flame_node *n)
{
	if (n->nchildren > 1)
		qsort(n->children, n->nchildren, sizeof(*n->children), child_cmp);
	for (size_t i = 0; i < n->nchildren; i++)
		sort_node(n->children[i]);
}

void flame_sort(struct flame_tree *t)
{
	sort_tree = t;
	sort_node(t->root);
	sort_tree = NULL;
}

static int walk_node(const struct flame_node *n, int depth,
		     int (*fn)(const struct flame_node *, int, void *), void *arg)
{
	int r = fn(n, depth, arg);
	if (r)
		return r;
	for (size_t i = 0; i < n->nchildren; i++) {
		r = walk_node(n->children[i], depth + 1, fn, arg);
		if (r)
			return r;
	}
	return 0;
}

int flame_walk(const struct flame_tree *t,
	       int (*fn)(const struct flame_node *n, int depth, void *arg), void *arg)
{
	return walk_node(t->root, 0, fn, arg);
}
