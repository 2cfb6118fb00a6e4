/* tuistate — the screen's state shared by drawing, keys and the prompt.
 * The contract is in tuistate.h. */
#define _GNU_SOURCE
#include "tuistate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "printable.h"
#include "util.h"

void tuistate_set_msg(struct tui *t, enum msg_kind k, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	t->msg_kind = k;
}

void tuistate_frame_label(const struct live_view *v, uint32_t frame, char *buf, size_t size)
{
	char raw[LABEL_MAX];
	if (v && v->flame)
		flame_frame_label(v->flame, frame, true, raw, sizeof(raw));
	else
		snprintf(raw, sizeof(raw), "#%u", frame);
	printable_copy(buf, size, raw);
}

/* ---- the call tree's data ---------------------------------------------------- */

struct tuitree *tuistate_tree(const struct tui *t)
{
	return t->tree[t->inverted];
}

const struct flame_tree *tuistate_flame(const struct tui *t)
{
	if (t->inverted)
		return t->inv;
	return t->view ? t->view->flame : NULL;
}

/* Adds every stack that ends in a node with self weight, reversed (leaf
 * first), to the inverted tree. path holds the frames from the root's child
 * down to the node being visited. */
struct inverter {
	struct flame_tree *inv;
	uint32_t *path, *rev;
	size_t cap;
};

static enum flame_step invert_node(struct flame_node *n, size_t depth, void *arg)
{
	struct inverter *iv = arg;
	if (depth == 0)
		return FLAME_STEP_INTO;
	if (depth > iv->cap) {
		iv->cap = depth * 2;
		iv->path = xrealloc(iv->path, iv->cap * sizeof(*iv->path));
		iv->rev = xrealloc(iv->rev, iv->cap * sizeof(*iv->rev));
	}
	iv->path[depth - 1] = n->frame;
	if (n->self > 0) {
		for (size_t k = 0; k < depth; k++)
			iv->rev[k] = iv->path[depth - 1 - k];
		flame_add(iv->inv, iv->rev, depth, n->self);
	}
	return FLAME_STEP_INTO;
}

static struct flame_tree *invert_tree(const struct flame_tree *ft)
{
	struct inverter iv = {.inv = flame_new(ft->frames)};
	flame_visit(ft->root, &(struct flame_visitor){.enter = invert_node}, &iv);
	free(iv.path);
	free(iv.rev);
	return iv.inv;
}

/* Gives the trees of the current view to the tree states. The inverted tree
 * is only built while it is shown. */
void tuistate_sync_trees(struct tui *t)
{
	const struct flame_tree *ft = t->view ? t->view->flame : NULL;
	tuitree_set_tree(t->tree[0], ft);
	tuitree_set_tree(t->tree[1], NULL);
	flame_free(t->inv);
	t->inv = NULL;
	if (t->inverted && ft) {
		t->inv = invert_tree(ft);
		tuitree_set_tree(t->tree[1], t->inv);
	}
}

void tuistate_search_apply(struct tui *t, const char *pattern, bool exact)
{
	for (int i = 0; i < 2; i++)
		tuitree_search(t->tree[i], pattern, exact);
}

void tuistate_search_set(struct tui *t, const char *pattern, bool exact)
{
	free(t->search);
	t->search = pattern && *pattern ? xstrdup(pattern) : NULL;
	t->search_exact = exact;
	tuistate_search_apply(t, t->search, exact);
}

/* ---- search jumps ------------------------------------------------------------ */

void tuistate_no_match(struct tui *t)
{
	tuistate_set_msg(t, MSG_ERROR, "no match for '%s'%s", t->search,
		tuitree_zoom_depth(tuistate_tree(t)) ? " under the zoom (Z: zoom out)" : "");
}

void tuistate_search_jump(struct tui *t, int dir)
{
	struct tuitree *tt = tuistate_tree(t);
	size_t k;
	t->search_wrapped = false;
	if (dir == 0) {
		tuitree_matches(tt, &k);
		if (k)
			return;
		dir = 1;
	}
	if (tuitree_search_next(tt, dir, &t->search_wrapped) < 0)
		tuistate_no_match(t);
}

/* ---- list cursors ------------------------------------------------------------ */

/* Keeps the hot and probe cursors on the same function / probe when the
 * list changes. */
void tuistate_cursors_follow(struct tui *t)
{
	const struct live_view *v = t->view;
	if (!v)
		return;
	for (size_t i = 0; i < v->nhot; i++)
		if (v->hot[i].frame == t->hot_sel_frame) {
			t->hot_sel = i;
			break;
		}
	if (t->hot_sel >= v->nhot)
		t->hot_sel = v->nhot ? v->nhot - 1 : 0;
	for (size_t i = 0; i < v->nprobes; i++)
		if (!strcmp(v->probes[i].name, t->probe_sel_name)) {
			t->probe_sel = i;
			break;
		}
	if (t->probe_sel >= v->nprobes)
		t->probe_sel = v->nprobes ? v->nprobes - 1 : 0;
}

void tuistate_cursors_commit(struct tui *t)
{
	const struct live_view *v = t->view;
	if (v && t->hot_sel < v->nhot)
		t->hot_sel_frame = v->hot[t->hot_sel].frame;
	if (v && t->probe_sel < v->nprobes)
		snprintf(t->probe_sel_name, sizeof(t->probe_sel_name), "%s",
			 v->probes[t->probe_sel].name);
}
