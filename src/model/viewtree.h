/* viewtree — the call trees and totals of the samples a view takes: what
 * every flame graph, folded export and total draws from. It sits above
 * profile (the samples) and view (which of them count, and with what
 * weight), so that neither of those needs the other's trees.
 *
 * A NULL view takes every sample but sonde's own cost. Trees are built
 * afresh on each call and owned by the caller (flame_free); the root
 * frames they add are interned into the profile's frame table. */
#ifndef SONDE_VIEWTREE_H
#define SONDE_VIEWTREE_H

#include <stdint.h>

#include "flame.h"
#include "profile.h"
#include "view.h"

/* Builds the call tree of the samples a view takes (weights summed), one
 * node per function (profile_function_frame) on each path. The
 * tree's root frames are interned into the profile's frame table as
 * FRAME_PROCESS frames. The caller frees it with flame_free(). */
struct flame_tree *viewtree_flame(struct profile *p, const struct view *v,
				  enum flame_root root);

/* The same tree with a node per source line (profile_line_frame). */
struct flame_tree *viewtree_flame_lines(struct profile *p, const struct view *v,
					enum flame_root root);

/* Sum of the weights of all samples a view takes. */
uint64_t viewtree_total_weight(const struct profile *p, const struct view *v);

#endif
