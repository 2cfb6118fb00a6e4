/* flame — the call tree a flame graph draws.
 *
 * Built by adding stacks (frame ids, root first) with a count; identical
 * prefixes merge, so a node's `total` is the count of every stack through it
 * and `self` the count of stacks ending at it. Children can be put in the
 * flame graph's order (alphabetical by display name) with flame_sort.
 * The tree refers to a frame table it does not own. */
#ifndef SONDE_FLAME_H
#define SONDE_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "frames.h"

struct flame_node {
	uint32_t frame; /* frame id; 0 for the root */
	uint64_t total; /* samples in this subtree (weighted counts) */
	uint64_t self;  /* samples whose stack ends here */
	struct flame_node *parent;
	struct flame_node **children;
	size_t nchildren, cap;
};

struct flame_tree {
	struct flame_node *root;
	const struct frame_table *frames;
};

struct flame_tree *flame_new(const struct frame_table *frames);
void flame_free(struct flame_tree *t);

/* Adds one stack (root first) with weight `count`. Returns 0, or -1 when
 * the root's total would overflow (the tree is unchanged then; trees of a
 * profile cannot, see PROFILE_MAX_WEIGHT). */
int flame_add(struct flame_tree *t, const uint32_t *frames_root_first, size_t depth,
	      uint64_t count);

/* The child of `parent` for `frame`, added with zero counts when missing:
 * for building a tree node by node without walking from the root each time
 * (which is quadratic in the depth). */
struct flame_node *flame_child(struct flame_node *parent, uint32_t frame);

/* Sorts every node's children by display name (then id), the order
 * flamegraph.pl draws them in. */
void flame_sort(struct flame_tree *t);

/* The name a frame is drawn with: its name plus the kind suffix ("_[k]" ...)
 * when `annotate` is true. Writes at most `size` bytes (NUL-terminated);
 * returns the whole label's length (more than size - 1: it was cut). */
size_t flame_frame_label(const struct flame_tree *t, uint32_t frame, bool annotate, char *buf,
			 size_t size);

/* Compares the annotated labels of frames x and y as strcmp would, however
 * long they are, without building them (sorting by label). */
int flame_label_cmp(const struct flame_tree *t, uint32_t x, uint32_t y);

/* The sandwich of one function: `callers`, an inverted tree (the function
 * at depth 1, each path from it up to the root's child below it, every
 * stack where it appears weighted by the samples in it) and `callees`, its
 * subtrees merged (the function at depth 1). Only its outermost call on a
 * stack counts (recursion is counted once), so both trees' totals are the
 * samples with the function on the stack. Frames are t's; a frame that is
 * not in t gives two empty trees. The caller frees both with flame_free. */
void flame_sandwich(const struct flame_tree *t, uint32_t frame, struct flame_tree **callers,
		    struct flame_tree **callees);

/* Every walk over a tree goes through flame_visit or flame_walk: stacks may
 * be millions of frames deep (folded or pprof input), far deeper than the C
 * stack allows recursion, so nothing recurses over the depth. */

/* What a visitor's `enter` returns. */
enum flame_step {
	FLAME_STEP_INTO = 0, /* visit the node's children */
	FLAME_STEP_OVER,     /* skip them (leave is still called) */
	FLAME_STEP_STOP,     /* end the walk now (no more calls) */
};

struct flame_visitor {
	/* Before a node's children; depth 0 for the node the walk starts at.
	 * NULL = FLAME_STEP_INTO everywhere. */
	enum flame_step (*enter)(struct flame_node *n, size_t depth, void *arg);
	/* After its children (NULL: none). A node is left after all of its
	 * subtree, so leave may free it or finish counts from its children's. */
	void (*leave)(struct flame_node *n, size_t depth, void *arg);
};

/* Depth-first walk from `from`, children in their current order, without
 * recursion. Returns true when `enter` stopped it. */
bool flame_visit(struct flame_node *from, const struct flame_visitor *v, void *arg);

/* Calls `fn` for every node in depth-first pre-order (children in their
 * current order) with its depth (root = 0). Stops when fn returns non-zero
 * and returns that value. */
int flame_walk(const struct flame_tree *t,
	       int (*fn)(const struct flame_node *n, int depth, void *arg), void *arg);

#endif
