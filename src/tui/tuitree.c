/* tuitree — see tuitree.h.
 *
 * Each tree is flattened into an array of nodes in tree order (pre-order,
 * children sorted), each with its subtree size, so a subtree is an index
 * range, the next sibling is i + size, and "next match in tree order" is a
 * scan. Expansion lives in a trie of paths (struct tt_state) that outlives
 * the trees; the flattened nodes point into it. */
#define _GNU_SOURCE
#include "tuitree.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "util.h"

#define NONE UINT32_MAX
#define LABEL_MAX 512

/* One path in the expansion trie; kids sorted by frame. */
struct tt_state {
	uint32_t frame;
	bool expanded;
	struct tt_state **kids;
	size_t nkids, cap;
};

struct tt_node {
	const struct flame_node *fn;
	uint32_t parent; /* NONE for the root */
	uint32_t size;   /* nodes in the subtree, itself included */
	uint32_t depth;  /* root = 0 */
	struct tt_state *st; /* its path in the trie, NULL when never expanded */
	bool expanded, match;
};

struct path {
	uint32_t *f; /* frame ids from the root's child down */
	size_t n, cap;
};

struct tuitree {
	const struct flame_tree *ft;
	struct tt_node *nodes;
	size_t nnodes, nodes_cap;
	const struct flame_node **scratch; /* children being sorted, as a stack */
	size_t nscratch, scratch_cap;
	struct tt_state root_state;
	uint32_t *rows; /* node indexes, ascending */
	size_t nrows, rows_cap;
	uint32_t droot;   /* displayed root (node index) */
	long sel_row;     /* -1: none */
	struct path want; /* where the user put the selection */
	struct path *zoom; /* zoom stack, each a path */
	size_t nzoom, zoom_cap;
	size_t top;        /* first row shown */
	long sel_offset;   /* selected row - top, last time it was shown */
	char *pattern;
	bool exact;
	bool auto_done;    /* the hot path was expanded once */
	bool want_is_zoom_default; /* the selection is still the row zoom_in chose */
	bool center;       /* a jump: show the selection mid-panel if it is off */
	int8_t *memo;      /* per frame: -1 unknown, 0 no match, 1 match */
	size_t memo_cap;
};

/* ---- paths and the expansion trie ---------------------------------------- */

/* Without recursion: a path can be as deep as the deepest stack. Entries
 * waiting to be freed are kept on a list of their own. */
static void state_free_kids(struct tt_state *s)
{
	struct tt_state **todo = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < s->nkids; i++) {
		grow_array((void **)&todo, &cap, n + 1, sizeof(*todo));
		todo[n++] = s->kids[i];
	}
	while (n) {
		struct tt_state *k = todo[--n];
		if (k->nkids) {
			grow_array((void **)&todo, &cap, n + k->nkids, sizeof(*todo));
			memcpy(todo + n, k->kids, k->nkids * sizeof(*todo));
			n += k->nkids;
		}
		free(k->kids);
		free(k);
	}
	free(todo);
	free(s->kids);
	s->kids = NULL;
	s->nkids = s->cap = 0;
}

/* Index of the first kid with frame >= `frame`. */
static size_t state_lower(const struct tt_state *s, uint32_t frame)
{
	return ORDER_PARTITION(s->nkids, i, s->kids[i]->frame < frame);
}

static struct tt_state *state_find(const struct tt_state *s, uint32_t frame)
{
	if (!s)
		return NULL;
	size_t i = state_lower(s, frame);
	return i < s->nkids && s->kids[i]->frame == frame ? s->kids[i] : NULL;
}

static struct tt_state *state_get(struct tt_state *s, uint32_t frame)
{
	size_t i = state_lower(s, frame);
	if (i < s->nkids && s->kids[i]->frame == frame)
		return s->kids[i];
	grow_array((void **)&s->kids, &s->cap, s->nkids + 1, sizeof(*s->kids));
	memmove(s->kids + i + 1, s->kids + i, (s->nkids - i) * sizeof(*s->kids));
	struct tt_state *k = xcalloc(1, sizeof(*k));
	k->frame = frame;
	s->kids[i] = k;
	s->nkids++;
	return k;
}

/* The trie entry of a node, created (with its ancestors') when missing:
 * the nodes up to the nearest ancestor that has one are noted, then given
 * entries top down (no recursion: a path is as deep as its stack). */
static struct tt_state *node_state(struct tuitree *t, uint32_t i)
{
	uint32_t *chain = NULL;
	size_t n = 0, cap = 0;
	uint32_t k = i;
	for (; !t->nodes[k].st && t->nodes[k].parent != NONE; k = t->nodes[k].parent) {
		grow_array((void **)&chain, &cap, n + 1, sizeof(*chain));
		chain[n++] = k;
	}
	if (!t->nodes[k].st) /* the root */
		t->nodes[k].st = &t->root_state;
	while (n--) {
		struct tt_node *c = &t->nodes[chain[n]];
		c->st = state_get(t->nodes[c->parent].st, c->fn->frame);
	}
	free(chain);
	return t->nodes[i].st;
}

static void node_set_expanded(struct tuitree *t, uint32_t i, bool on)
{
	if (t->nodes[i].parent == NONE)
		return; /* the root always shows its children */
	if (on || t->nodes[i].st)
		node_state(t, i)->expanded = on;
	t->nodes[i].expanded = on;
}

/* ---- the flattened tree ----------------------------------------------------- */

static int child_cmp(const void *a, const void *b, void *arg)
{
	const struct flame_node *x = *(const struct flame_node *const *)a;
	const struct flame_node *y = *(const struct flame_node *const *)b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	/* The label is name + kind suffix: compared without copies (ties are
	 * common among small nodes). */
	int c = flame_label_cmp(arg, x->frame, y->frame);
	if (c)
		return c;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* Appends a node and puts its children, sorted, on the scratch stack.
 * Returns its index. */
static uint32_t flat_add(struct tuitree *t, const struct flame_node *fn, uint32_t parent,
			 uint32_t depth, struct tt_state *st)
{
	grow_array((void **)&t->nodes, &t->nodes_cap, t->nnodes + 1, sizeof(*t->nodes));
	uint32_t idx = (uint32_t)t->nnodes++;
	t->nodes[idx] = (struct tt_node){
		.fn = fn, .parent = parent, .depth = depth, .st = st,
		.expanded = parent == NONE || (st && st->expanded),
	};
	size_t base = t->nscratch, n = fn->nchildren;
	grow_array((void **)&t->scratch, &t->scratch_cap, base + n + 1, sizeof(*t->scratch));
	if (n)
		memcpy(t->scratch + base, fn->children, n * sizeof(*fn->children));
	t->nscratch = base + n;
	qsort_r(t->scratch + base, n, sizeof(*t->scratch), child_cmp, (void *)t->ft);
	return idx;
}

/* Pre-order without recursion (stacks may be far deeper than the C stack):
 * each level of `open` is a node whose sorted children wait on the scratch
 * stack from `base`. t->scratch may move: index, never hold. */
struct flat_level {
	uint32_t idx;
	size_t base, next, n;
};

static void flatten(struct tuitree *t, const struct flame_node *root)
{
	struct flat_level *open = NULL;
	size_t depth = 0, cap = 0;
	const struct flame_node *fn = root;
	uint32_t parent = NONE;
	struct tt_state *st = &t->root_state;
	for (;;) {
		if (fn) {
			size_t base = t->nscratch;
			uint32_t idx = flat_add(t, fn, parent, (uint32_t)depth, st);
			grow_array((void **)&open, &cap, depth + 1, sizeof(*open));
			open[depth++] = (struct flat_level){idx, base, 0, fn->nchildren};
			fn = NULL;
		}
		if (!depth)
			break;
		struct flat_level *top = &open[depth - 1];
		if (top->next < top->n) {
			fn = t->scratch[top->base + top->next++];
			parent = top->idx;
			st = state_find(t->nodes[top->idx].st, fn->frame);
		} else {
			t->nodes[top->idx].size = (uint32_t)(t->nnodes - top->idx);
			t->nscratch = top->base;
			depth--;
		}
	}
	free(open);
}

static uint32_t child_find(const struct tuitree *t, uint32_t i, uint32_t frame)
{
	uint32_t end = i + t->nodes[i].size;
	for (uint32_t c = i + 1; c < end; c += t->nodes[c].size)
		if (t->nodes[c].fn->frame == frame)
			return c;
	return NONE;
}

/* The deepest node on a path that exists (the root when none). */
static uint32_t path_resolve(const struct tuitree *t, const struct path *p)
{
	uint32_t i = 0;
	for (size_t k = 0; k < p->n; k++) {
		uint32_t c = child_find(t, i, p->f[k]);
		if (c == NONE)
			break;
		i = c;
	}
	return i;
}

static void path_of(const struct tuitree *t, uint32_t i, struct path *p)
{
	size_t n = 0;
	for (uint32_t a = i; t->nodes[a].parent != NONE; a = t->nodes[a].parent)
		n++;
	grow_array((void **)&p->f, &p->cap, n + 1, sizeof(*p->f));
	p->n = n;
	for (uint32_t a = i; t->nodes[a].parent != NONE; a = t->nodes[a].parent)
		p->f[--n] = t->nodes[a].fn->frame;
}

static bool in_display(const struct tuitree *t, uint32_t i)
{
	return i > t->droot && i < t->droot + t->nodes[t->droot].size;
}

/* ---- rows and selection ------------------------------------------------------- */

static void rows_build(struct tuitree *t)
{
	t->nrows = 0;
	if (!t->nnodes)
		return;
	uint32_t end = t->droot + t->nodes[t->droot].size;
	for (uint32_t i = t->droot + 1; i < end;
	     i += t->nodes[i].expanded ? 1 : t->nodes[i].size) {
		grow_array((void **)&t->rows, &t->rows_cap, t->nrows + 1, sizeof(*t->rows));
		t->rows[t->nrows++] = i;
	}
}

/* Row of a node, -1 when it is not shown (rows are ascending node indexes). */
static long row_of(const struct tuitree *t, uint32_t node)
{
	size_t lo = ORDER_PARTITION(t->nrows, i, t->rows[i] < node);
	return lo < t->nrows && t->rows[lo] == node ? (long)lo : -1;
}

static uint32_t sel_node(const struct tuitree *t)
{
	return t->sel_row >= 0 ? t->rows[t->sel_row] : NONE;
}

/* Puts the selection where the wanted path leads: its deepest existing node,
 * or that node's highest collapsed ancestor when it is hidden. */
static void sel_resolve(struct tuitree *t)
{
	if (!t->nrows) {
		t->sel_row = -1;
		return;
	}
	uint32_t n = path_resolve(t, &t->want);
	if (!in_display(t, n)) {
		t->sel_row = 0;
		return;
	}
	uint32_t shown = n;
	for (uint32_t a = t->nodes[n].parent; a != t->droot; a = t->nodes[a].parent)
		if (!t->nodes[a].expanded)
			shown = a;
	long r = row_of(t, shown);
	t->sel_row = r >= 0 ? r : 0;
}

/* The user chose the selected row: remember its path. */
static void sel_commit(struct tuitree *t)
{
	t->want_is_zoom_default = false;
	uint32_t n = sel_node(t);
	if (n != NONE)
		path_of(t, n, &t->want);
}

/* Expands every ancestor of a node below the displayed root. */
static void reveal(struct tuitree *t, uint32_t i)
{
	for (uint32_t a = t->nodes[i].parent; a != NONE && a != t->droot; a = t->nodes[a].parent)
		node_set_expanded(t, a, true);
}

static void select_node(struct tuitree *t, uint32_t i)
{
	reveal(t, i);
	rows_build(t);
	long r = row_of(t, i);
	t->sel_row = r >= 0 ? r : (t->nrows ? 0 : -1);
	sel_commit(t);
}

static void droot_resolve(struct tuitree *t)
{
	t->droot = t->nzoom && t->nnodes ? path_resolve(t, &t->zoom[t->nzoom - 1]) : 0;
}

/* ---- search ------------------------------------------------------------------------ */

static bool label_matches(struct tuitree *t, uint32_t frame)
{
	if (frame >= t->memo_cap) {
		size_t cap = frame + 1 + frame / 2 + 64;
		t->memo = xrealloc(t->memo, cap);
		memset(t->memo + t->memo_cap, -1, cap - t->memo_cap);
		t->memo_cap = cap;
	}
	if (t->memo[frame] < 0) {
		/* The whole label, however long (C++ names can be kilobytes). */
		const struct frame *f = frames_get(t->ft->frames, frame);
		size_t need = (f ? strlen(f->name) : 0) + 16;
		char small[LABEL_MAX];
		char *l = need <= sizeof(small) ? small : xmalloc(need);
		flame_frame_label(t->ft, frame, true, l, need);
		bool m = t->exact ? !strcmp(l, t->pattern) : strstr(l, t->pattern) != NULL;
		t->memo[frame] = m;
		if (l != small)
			free(l);
	}
	return t->memo[frame] == 1;
}

static void matches_compute(struct tuitree *t)
{
	if (t->memo_cap)
		memset(t->memo, -1, t->memo_cap);
	for (size_t i = 0; i < t->nnodes; i++) {
		const struct flame_node *fn = t->nodes[i].fn;
		t->nodes[i].match = t->pattern && fn->frame && label_matches(t, fn->frame);
	}
}

/* ---- the hot path ---------------------------------------------------------------- */

static void auto_expand(struct tuitree *t)
{
	uint32_t n = t->droot, last = NONE;
	for (;;) {
		uint32_t c = n + 1; /* heaviest child: children are sorted */
		if (t->nodes[n].size == 1 || 2 * t->nodes[c].fn->total <= t->nodes[n].fn->total)
			break;
		if (n != t->droot)
			node_set_expanded(t, n, true);
		last = n = c;
	}
	rows_build(t);
	if (last != NONE)
		t->sel_row = row_of(t, last);
	sel_commit(t); /* the first row when there is no hot path: it is kept too */
}

/* ---- public -------------------------------------------------------------------------- */

struct tuitree *tuitree_new(void)
{
	struct tuitree *t = xcalloc(1, sizeof(*t));
	t->sel_row = -1;
	return t;
}

void tuitree_free(struct tuitree *t)
{
	if (!t)
		return;
	state_free_kids(&t->root_state);
	free(t->nodes);
	free(t->scratch);
	free(t->rows);
	free(t->want.f);
	for (size_t i = 0; i < t->zoom_cap; i++)
		free(t->zoom[i].f);
	free(t->zoom);
	free(t->pattern);
	free(t->memo);
	free(t);
}

void tuitree_set_tree(struct tuitree *t, const struct flame_tree *ft)
{
	t->ft = ft;
	t->nnodes = 0;
	t->nscratch = 0;
	if (ft && ft->root)
		flatten(t, ft->root);
	matches_compute(t);
	droot_resolve(t);
	rows_build(t);
	bool fresh = !t->auto_done && t->nnodes > 1 && !t->root_state.nkids;
	if (t->nnodes > 1)
		t->auto_done = true;
	if (fresh) {
		t->sel_row = t->nrows ? 0 : -1;
		auto_expand(t);
		t->top = 0; /* show the hot path from its start */
		return;
	}
	sel_resolve(t);
	/* Keep the selected row where it was on the screen. */
	if (t->sel_row >= 0)
		t->top = t->sel_row > t->sel_offset ? (size_t)(t->sel_row - t->sel_offset) : 0;
}

const struct flame_node *tuitree_display_root(const struct tuitree *t)
{
	return t->nnodes ? t->nodes[t->droot].fn : NULL;
}

size_t tuitree_zoom_depth(const struct tuitree *t)
{
	return t->nzoom;
}

size_t tuitree_nrows(const struct tuitree *t)
{
	return t->nrows;
}

bool tuitree_row(const struct tuitree *t, size_t i, struct tuitree_row *out)
{
	if (i >= t->nrows)
		return false;
	const struct tt_node *n = &t->nodes[t->rows[i]];
	*out = (struct tuitree_row){
		.node = n->fn,
		.depth = (int)(n->depth - t->nodes[t->droot].depth - 1),
		.expandable = n->size > 1,
		.expanded = n->expanded && n->size > 1,
		.match = n->match,
	};
	return true;
}

long tuitree_selected(const struct tuitree *t)
{
	return t->sel_row;
}

void tuitree_select(struct tuitree *t, long row)
{
	if (!t->nrows)
		return;
	if (row < 0)
		row = 0;
	if ((size_t)row >= t->nrows)
		row = (long)t->nrows - 1;
	t->sel_row = row;
	sel_commit(t);
}

void tuitree_move(struct tuitree *t, long delta)
{
	/* Past either end is the end: clamp first, so no sum overflows. */
	long lim = (long)t->nrows + 1;
	if (delta > lim)
		delta = lim;
	if (delta < -lim)
		delta = -lim;
	tuitree_select(t, t->sel_row + delta);
}

bool tuitree_select_parent(struct tuitree *t)
{
	uint32_t n = sel_node(t);
	if (n == NONE || t->nodes[n].parent == t->droot)
		return false;
	select_node(t, t->nodes[n].parent);
	return true;
}

bool tuitree_select_first_child(struct tuitree *t)
{
	uint32_t n = sel_node(t);
	if (n == NONE || !t->nodes[n].expanded || t->nodes[n].size == 1)
		return false;
	select_node(t, n + 1);
	return true;
}

bool tuitree_expand(struct tuitree *t)
{
	uint32_t n = sel_node(t);
	if (n == NONE || t->nodes[n].size == 1 || t->nodes[n].expanded)
		return false;
	node_set_expanded(t, n, true);
	rows_build(t); /* the selected row keeps its index: children come after it */
	sel_commit(t);
	return true;
}

bool tuitree_collapse(struct tuitree *t)
{
	uint32_t n = sel_node(t);
	if (n == NONE || t->nodes[n].size == 1 || !t->nodes[n].expanded)
		return false;
	node_set_expanded(t, n, false);
	rows_build(t);
	sel_commit(t);
	return true;
}

void tuitree_expand_all(struct tuitree *t)
{
	uint32_t n = sel_node(t);
	if (n == NONE)
		return;
	for (uint32_t i = n; i < n + t->nodes[n].size; i++)
		if (t->nodes[i].size > 1)
			node_set_expanded(t, i, true);
	rows_build(t);
	sel_commit(t);
}

void tuitree_collapse_all(struct tuitree *t)
{
	uint32_t n = sel_node(t);
	state_free_kids(&t->root_state);
	for (size_t i = 1; i < t->nnodes; i++) {
		t->nodes[i].st = NULL;
		t->nodes[i].expanded = false;
	}
	rows_build(t);
	if (n == NONE)
		return;
	while (t->nodes[n].parent != t->droot)
		n = t->nodes[n].parent;
	t->sel_row = row_of(t, n);
	sel_commit(t);
}

int tuitree_zoom_in(struct tuitree *t)
{
	uint32_t n = sel_node(t);
	if (n == NONE || t->nodes[n].size == 1)
		return -1;
	if (t->nzoom == t->zoom_cap) { /* new slots start as empty paths */
		size_t old = t->zoom_cap;
		grow_array((void **)&t->zoom, &t->zoom_cap, t->nzoom + 1, sizeof(*t->zoom));
		memset(t->zoom + old, 0, (t->zoom_cap - old) * sizeof(*t->zoom));
	}
	path_of(t, n, &t->zoom[t->nzoom++]);
	/* The first row is selected (and followed across refreshes like any
	 * selection); zooming out before the user moves selects n again. */
	t->droot = n;
	rows_build(t);
	t->sel_row = t->nrows ? 0 : -1;
	sel_commit(t);
	t->want_is_zoom_default = true;
	t->top = 0;
	return 0;
}

int tuitree_zoom_out(struct tuitree *t)
{
	if (!t->nzoom)
		return -1;
	const struct path *back = &t->zoom[--t->nzoom];
	if (t->want_is_zoom_default) { /* not moved since: back to the zoomed node */
		grow_array((void **)&t->want.f, &t->want.cap, back->n + 1, sizeof(*t->want.f));
		memcpy(t->want.f, back->f, back->n * sizeof(*back->f));
		t->want.n = back->n; /* still not the user's choice: an outer zoom-out
				      * goes back to its node too */
	}
	droot_resolve(t);
	if (!t->nnodes)
		return 0;
	uint32_t n = path_resolve(t, &t->want);
	if (in_display(t, n)) {
		reveal(t, n);
		rows_build(t);
		t->sel_row = row_of(t, n);
	} else {
		rows_build(t);
		sel_resolve(t);
	}
	return 0;
}

void tuitree_search(struct tuitree *t, const char *pattern, bool exact)
{
	free(t->pattern);
	t->pattern = pattern && *pattern ? xstrdup(pattern) : NULL;
	t->exact = exact;
	matches_compute(t);
}

size_t tuitree_matches(const struct tuitree *t, size_t *k)
{
	size_t m = 0, pos = 0;
	if (t->nnodes) {
		uint32_t sel = sel_node(t);
		uint32_t end = t->droot + t->nodes[t->droot].size;
		for (uint32_t i = t->droot + 1; i < end; i++) {
			if (!t->nodes[i].match)
				continue;
			m++;
			if (i == sel)
				pos = m;
		}
	}
	if (k)
		*k = pos;
	return m;
}

int tuitree_search_next(struct tuitree *t, int dir, bool *wrapped)
{
	if (wrapped)
		*wrapped = false;
	if (!t->nnodes)
		return -1;
	long lo = (long)t->droot + 1, hi = (long)(t->droot + t->nodes[t->droot].size);
	long count = hi - lo;
	if (count <= 0)
		return -1;
	uint32_t s = sel_node(t);
	/* Start just before the first node (forward) or after the last
	 * (backward) when nothing is selected. */
	long start = s != NONE ? (long)s : dir > 0 ? lo - 1 : hi;
	for (long step = 1; step <= count; step++) {
		long i = start + (dir > 0 ? step : -step);
		bool wrap = false;
		if (i >= hi) {
			i -= count;
			wrap = true;
		} else if (i < lo) {
			i += count;
			wrap = true;
		}
		if (!t->nodes[i].match)
			continue;
		if (wrapped)
			*wrapped = wrap && s != NONE;
		select_node(t, (uint32_t)i);
		t->center = true;
		return 0;
	}
	return -1;
}

int tuitree_search_first(struct tuitree *t)
{
	if (!t->nnodes)
		return -1;
	uint32_t end = t->droot + t->nodes[t->droot].size;
	for (uint32_t i = t->droot + 1; i < end; i++)
		if (t->nodes[i].match) {
			select_node(t, i);
			t->center = true;
			return 0;
		}
	return -1;
}

size_t tuitree_top(struct tuitree *t, size_t height)
{
	if (height == 0 || !t->nrows) {
		t->top = 0;
		return 0;
	}
	if (t->top + height > t->nrows)
		t->top = t->nrows > height ? t->nrows - height : 0;
	if (t->sel_row >= 0) {
		size_t r = (size_t)t->sel_row;
		if (t->center && (r < t->top || r >= t->top + height))
			t->top = r > height / 2 ? r - height / 2 : 0;
		t->center = false;
		if (t->top + height > t->nrows)
			t->top = t->nrows > height ? t->nrows - height : 0;
		if (r < t->top)
			t->top = r;
		else if (r >= t->top + height)
			t->top = r - height + 1;
		t->sel_offset = (long)(r - t->top);
	}
	return t->top;
}
