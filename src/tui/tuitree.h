/* tuitree — the navigable state of a flame tree shown as an indented tree
 * (the TUI's call tree): which nodes are expanded, which one is selected,
 * where the view is zoomed, which nodes match a search, and the scroll
 * position. No drawing: the TUI reads rows from it.
 *
 * A live display gets a new flame tree every refresh, so all state is keyed
 * by path (the frame ids from the root to a node) and survives the new tree:
 *   - a node expanded stays expanded (collapsing a node keeps what was
 *     expanded below it, so expanding it again restores that);
 *   - the selection stays on its path; while the path is absent from the
 *     tree (or hidden under a collapsed node) the nearest shown ancestor is
 *     selected, and the selection goes back to the path when it reappears,
 *     until the user moves;
 *   - the zoom stays on its subtree (or its nearest existing ancestor);
 *   - the selected row keeps its place in the panel across refreshes.
 *
 * Order: children are sorted by total weight, descending; ties by label
 * (flame_frame_label with the kind suffix), then frame id. "Tree order" is
 * the depth-first pre-order in that order. Rows are the shown nodes below the
 * displayed root (the zoom root, or the tree's root), in tree order; a row's
 * depth is 0 for a child of the displayed root. The displayed root itself is
 * not a row.
 *
 * Zoom is a stack: tuitree_zoom_in pushes the selected node, and
 * tuitree_zoom_out goes back to the previous zoom (so after one zoom-in it
 * shows the whole tree again), selecting the node that was zoomed into.
 *
 * The tree passed to tuitree_set_tree is not owned and must stay valid until
 * the next tuitree_set_tree or tuitree_free. Memory is bounded by the tree
 * plus the paths the user expanded. */
#ifndef SONDE_TUITREE_H
#define SONDE_TUITREE_H

#include <stdbool.h>
#include <stddef.h>

#include "flame.h"

struct tuitree;

struct tuitree *tuitree_new(void);
void tuitree_free(struct tuitree *t);

/* Shows a new tree (NULL: no tree, no rows). The first time a tree with
 * samples is shown (and nothing was expanded before), the hot path is
 * expanded: starting at the displayed root, its heaviest child is followed
 * while that child holds more than half of its parent's total; every node on
 * that path that leads on is expanded, and the last one is selected. */
void tuitree_set_tree(struct tuitree *t, const struct flame_tree *ft);

/* The displayed root: the zoom root, else the tree's root; NULL without a
 * tree. Percentages in the TUI are of its total. */
const struct flame_node *tuitree_display_root(const struct tuitree *t);

/* Number of zoom levels (0: not zoomed). */
size_t tuitree_zoom_depth(const struct tuitree *t);

struct tuitree_row {
	const struct flame_node *node;
	int depth;       /* 0 for a child of the displayed root */
	bool expandable; /* has children */
	bool expanded;
	bool match;      /* its label matches the search */
};

size_t tuitree_nrows(const struct tuitree *t);
/* Fills *out for row i; false when i is out of range. */
bool tuitree_row(const struct tuitree *t, size_t i, struct tuitree_row *out);

/* The selected row, or -1 when there are no rows. */
long tuitree_selected(const struct tuitree *t);

/* Selects a row (clamped to the rows), or moves the selection by delta
 * rows. */
void tuitree_select(struct tuitree *t, long row);
void tuitree_move(struct tuitree *t, long delta);

/* Selects the selected node's parent (false at depth 0) or first child
 * (false when it is collapsed or a leaf). */
bool tuitree_select_parent(struct tuitree *t);
bool tuitree_select_first_child(struct tuitree *t);

/* Expands / collapses the selected node; false when there was nothing to do
 * (a leaf, or already in that state). */
bool tuitree_expand(struct tuitree *t);
bool tuitree_collapse(struct tuitree *t);

/* Expands every node of the selected node's subtree. */
void tuitree_expand_all(struct tuitree *t);

/* Collapses every node (forgets all expansion); the selection moves to its
 * depth-0 ancestor. */
void tuitree_collapse_all(struct tuitree *t);

/* Zooms into the selected node (it becomes the displayed root, the first
 * row is selected). Returns -1 (nothing changes) when nothing is selected
 * or the node has no children. */
int tuitree_zoom_in(struct tuitree *t);

/* Goes back to the previous zoom; the node that was zoomed into (or where
 * the selection went since) is selected and its ancestors are expanded so
 * it shows. Returns -1 when not zoomed. */
int tuitree_zoom_out(struct tuitree *t);

/* Sets the search: nodes whose label (flame_frame_label with the kind
 * suffix) contains `pattern` (case-sensitive substring), or equals it when
 * `exact`. NULL or "" clears the search. */
void tuitree_search(struct tuitree *t, const char *pattern, bool exact);

/* Matches under the displayed root (m, returned) and, in *k when k is not
 * NULL, the 1-based position of the selected node among them in tree order
 * (0 when the selected node is not a match). */
size_t tuitree_matches(const struct tuitree *t, size_t *k);

/* Selects the next (dir > 0) or previous (dir < 0) match after / before the
 * selected node in tree order under the displayed root, wrapping around,
 * and expands its ancestors so it shows. *wrapped (when not NULL) tells
 * whether it wrapped. Returns -1 when there is no match. */
int tuitree_search_next(struct tuitree *t, int dir, bool *wrapped);

/* Selects the first match in tree order under the displayed root, expanding
 * its ancestors. Returns -1 when there is no match. */
int tuitree_search_first(struct tuitree *t);

/* The first row to show in a panel of `height` rows: the selection is
 * shown (mid-panel after a search jump that went off-screen), the panel is
 * filled when there are enough rows, and otherwise the top stays where it
 * was (or follows the selected row across refreshes). */
size_t tuitree_top(struct tuitree *t, size_t height);

#endif
