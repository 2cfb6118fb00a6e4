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

/* Children are left before their parent, so the walk never reads a freed
 * node. */
static void free_on_leave(struct flame_node *n, size_t depth, void *arg)
{
	(void)depth;
	(void)arg;
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
	flame_visit(t->root, &(struct flame_visitor){.leave = free_on_leave}, NULL);
	free(t);
}

/* Children are searched linearly: fan-out is small in real profiles, and the
 * last-used child is checked first, which makes repeated stacks cheap. */
struct flame_node *flame_child(struct flame_node *n, uint32_t frame)
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
	/* Every node's total is at most the root's: one check covers them all. */
	if (count > UINT64_MAX - t->root->total)
		return -1;
	struct flame_node *n = t->root;
	n->total += count;
	for (size_t i = 0; i < depth; i++) {
		n = flame_child(n, frames[i]);
		n->total += count;
	}
	n->self += count;
	return 0;
}

size_t flame_frame_label(const struct flame_tree *t, uint32_t frame, bool annotate, char *buf,
			 size_t size)
{
	const struct frame *f = frames_get(t->frames, frame);
	int n = f ? snprintf(buf, size, "%s%s", f->name, annotate ? frames_kind_suffix(f->kind) : "")
		  : snprintf(buf, size, "all");
	return n > 0 ? (size_t)n : 0;
}

static const struct flame_tree *sort_tree; /* qsort has no context argument */

/* The annotated label's two parts (flame_frame_label): name and suffix. */
static void label_parts(const struct flame_tree *t, uint32_t frame, const char **name,
			const char **suffix)
{
	const struct frame *f = frames_get(t->frames, frame);
	*name = f ? f->name : "all";
	*suffix = f ? frames_kind_suffix(f->kind) : "";
}

int flame_label_cmp(const struct flame_tree *t, uint32_t x, uint32_t y)
{
	const char *a1, *a2, *b1, *b2;
	label_parts(t, x, &a1, &a2);
	label_parts(t, y, &b1, &b2);
	for (;;) {
		if (!*a1 && a2) {
			a1 = a2;
			a2 = NULL;
		}
		if (!*b1 && b2) {
			b1 = b2;
			b2 = NULL;
		}
		unsigned char ca = (unsigned char)*a1, cb = (unsigned char)*b1;
		if (ca != cb || !ca)
			return (ca > cb) - (ca < cb);
		a1++;
		b1++;
	}
}

static int child_cmp(const void *a, const void *b)
{
	const struct flame_node *x = *(const struct flame_node *const *)a;
	const struct flame_node *y = *(const struct flame_node *const *)b;
	int c = flame_label_cmp(sort_tree, x->frame, y->frame);
	if (c)
		return c;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static enum flame_step sort_children(struct flame_node *n, size_t depth, void *arg)
{
	(void)depth;
	(void)arg;
	if (n->nchildren > 1)
		qsort(n->children, n->nchildren, sizeof(*n->children), child_cmp);
	return FLAME_STEP_INTO;
}

void flame_sort(struct flame_tree *t)
{
	sort_tree = t;
	flame_visit(t->root, &(struct flame_visitor){.enter = sort_children}, NULL);
	sort_tree = NULL;
}

/* The path from the walk's start to the node being visited: each entry a
 * node and the index of its next child to visit. */
struct visit_level {
	struct flame_node *n;
	size_t next;
};

bool flame_visit(struct flame_node *from, const struct flame_visitor *v, void *arg)
{
	struct visit_level *path = NULL;
	size_t depth = 0, cap = 0;
	bool stopped = false;
	struct flame_node *n = from; /* the node to enter next */
	for (;;) {
		if (n) {
			enum flame_step step = v->enter ? v->enter(n, depth, arg) : FLAME_STEP_INTO;
			if (step == FLAME_STEP_STOP) {
				stopped = true;
				break;
			}
			if (step == FLAME_STEP_INTO) {
				grow_array((void **)&path, &cap, depth + 1, sizeof(*path));
				path[depth++] = (struct visit_level){n, 0};
			} else if (v->leave) {
				v->leave(n, depth, arg);
			}
			n = NULL;
		}
		if (!depth)
			break;
		struct visit_level *top = &path[depth - 1];
		if (top->next < top->n->nchildren) {
			n = top->n->children[top->next++];
		} else {
			depth--;
			if (v->leave)
				v->leave(top->n, depth, arg);
		}
	}
	free(path);
	return stopped;
}

struct walk_call {
	int (*fn)(const struct flame_node *, int, void *);
	void *arg;
	int result;
};

static enum flame_step walk_enter(struct flame_node *n, size_t depth, void *arg)
{
	struct walk_call *w = arg;
	w->result = w->fn(n, (int)depth, w->arg);
	return w->result ? FLAME_STEP_STOP : FLAME_STEP_INTO;
}

int flame_walk(const struct flame_tree *t,
	       int (*fn)(const struct flame_node *n, int depth, void *arg), void *arg)
{
	struct walk_call w = {fn, arg, 0};
	flame_visit(t->root, &(struct flame_visitor){.enter = walk_enter}, &w);
	return w.result;
}

/* ---- the sandwich ---------------------------------------------------------- */

struct sandwich {
	uint32_t frame;
	struct flame_tree *callers, *callees;
	uint32_t *path;		   /* frames from the root down to the node entered */
	struct flame_node **under; /* callees' node for each depth inside the call */
	size_t cap, ucap;
	size_t call_depth; /* depth of the outermost call entered; 0: outside */
	uint32_t *rev;
	size_t rcap;
};

static enum flame_step sandwich_enter(struct flame_node *n, size_t depth, void *arg)
{
	struct sandwich *sw = arg;
	grow_array((void **)&sw->path, &sw->cap, depth + 1, sizeof(*sw->path));
	sw->path[depth] = n->frame;
	if (depth && !sw->call_depth && n->frame == sw->frame) {
		/* Its callers, nearest first: the path reversed (the root left out). */
		grow_array((void **)&sw->rev, &sw->rcap, depth, sizeof(*sw->rev));
		for (size_t i = 0; i < depth; i++)
			sw->rev[i] = sw->path[depth - i];
		flame_add(sw->callers, sw->rev, depth, n->total);
		sw->call_depth = depth;
	}
	if (sw->call_depth) {
		size_t k = depth - sw->call_depth; /* 0: the function itself */
		grow_array((void **)&sw->under, &sw->ucap, k + 1, sizeof(*sw->under));
		struct flame_node *parent = k ? sw->under[k - 1] : sw->callees->root;
		sw->under[k] = flame_child(parent, n->frame);
		sw->under[k]->self += n->self;
	}
	return FLAME_STEP_INTO;
}

static void sandwich_leave(struct flame_node *n, size_t depth, void *arg)
{
	struct sandwich *sw = arg;
	(void)n;
	if (sw->call_depth == depth)
		sw->call_depth = 0;
}

/* Totals from selves, children before parents. */
static void total_leave(struct flame_node *n, size_t depth, void *arg)
{
	(void)depth, (void)arg;
	n->total = n->self;
	for (size_t i = 0; i < n->nchildren; i++)
		n->total += n->children[i]->total;
}

void flame_sandwich(const struct flame_tree *t, uint32_t frame, struct flame_tree **callers,
		    struct flame_tree **callees)
{
	struct sandwich sw = {.frame = frame,
			      .callers = flame_new(t->frames),
			      .callees = flame_new(t->frames)};
	struct flame_visitor v = {sandwich_enter, sandwich_leave};
	flame_visit(t->root, &v, &sw);
	struct flame_visitor totals = {NULL, total_leave};
	flame_visit(sw.callees->root, &totals, NULL);
	free(sw.path);
	free(sw.under);
	free(sw.rev);
	*callers = sw.callers;
	*callees = sw.callees;
}
