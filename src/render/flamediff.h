/* flamediff — differential flame graphs: where did the time go in B (slow
 * calls, "after") compared with A (fast calls, "before")?
 *
 * The two inputs may come from different recordings, hence different frame
 * tables, so frames are matched by their display label (name plus kind
 * suffix, as flame_frame_label(t, id, true, ..) prints it), never by id. The
 * merged tree holds every stack of either side, so stacks that vanished in B
 * ("missing towers") stay in the graph.
 *
 * Everything is compared as shares of each side's own total: a B with ten
 * times the samples of A in the same shape differs by nothing. A node's delta
 * is the change of its *total* share, so every frame (not only leaves) is
 * coloured by how much more or less of the profile runs through it.
 *
 * Widths: flame trees hold integer counts, so the merged tree's counts are
 * weights in parts per billion (FLAMEDIFF_SCALE) of the chosen width basis:
 * a node's self weight is round(share_of_self × 1e9), at least 1 when the
 * basis side has any of its samples, and totals are the sums of self weights
 * below (so they are consistent, and the root is ~1e9). */
#ifndef SONDE_FLAMEDIFF_H
#define SONDE_FLAMEDIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flame.h"
#include "flamesvg.h"

/* Weight of a 100% share in the merged tree's counts. */
#define FLAMEDIFF_SCALE 1000000000.0

/* The merged tree plus per-node counts of both sides. */
struct flamediff;

/* Merges base (A, e.g. fast calls / before) and cmp (B, e.g. slow calls /
 * after) into one tree over a new frame table it owns; the inputs are only
 * read and may be freed afterwards. Each merged node knows its count in A and
 * in B (total and self). NULL counts as an empty tree. Children are sorted
 * alphabetically (flame_sort). Never returns NULL (allocation failure exits). */
struct flamediff *flamediff_new(const struct flame_tree *base, const struct flame_tree *cmp);
void flamediff_free(struct flamediff *d);

/* Width basis of the merged tree's counts (see the top of this file).
 * UNION is 0, so a zeroed flamediff_options means the default. */
enum flamediff_width {
	FLAMEDIFF_WIDTH_UNION = 0, /* mean of the shares of the non-empty sides:
				    * towers only in A and only in B both show */
	FLAMEDIFF_WIDTH_CMP,       /* B's share (flamegraph.pl's classic diff) */
	FLAMEDIFF_WIDTH_BASE,      /* A's share (the "negated" view: what vanished) */
};

/* The merged tree (for drawing or walking). Its counts are weights in the
 * current width basis: UNION after flamediff_new, then whatever
 * flamediff_set_width or flamediff_write_svg set last. Nodes whose weight is
 * 0 in that basis (present only on the other side) stay in the tree with
 * total 0. Valid until flamediff_free. */
const struct flame_tree *flamediff_tree(const struct flamediff *d);

/* Re-weights the merged tree's counts for another width basis (O(nodes)). */
void flamediff_set_width(struct flamediff *d, enum flamediff_width width);

/* The label every merged node of one function shares (frame ids of the
 * merged table are one per label). Valid until flamediff_free. */
const char *flamediff_label(const struct flamediff *d, const struct flame_node *n);

/* Per-node numbers for a node of flamediff_tree(). Shares are of each side's
 * own total (normalization), so a graph of 10x more samples in B does not
 * look all red; a side with no samples has share 0 everywhere. */
struct flamediff_node_info {
	uint64_t base_total, cmp_total, base_self, cmp_self; /* real sample counts */
	double base_share, cmp_share; /* total / side total, in [0, 1] */
	double delta;                 /* cmp_share - base_share of total */
};

/* Fills out for n; a node that is not in d's tree gets all zeros. */
void flamediff_info(const struct flamediff *d, const struct flame_node *n,
		    struct flamediff_node_info *out);

/* The largest |delta| over all nodes (0 when the sides have the same shape). */
double flamediff_max_delta(const struct flamediff *d);

struct flamediff_options {
	enum flamediff_width width; /* default (0) UNION */
	const char *base_name;      /* e.g. "fast"; NULL = "A" */
	const char *cmp_name;       /* e.g. "slow"; NULL = "B" */
};

/* Writes the differential SVG through flamesvg_write with colour and tooltip
 * callbacks: red where the frame's total share grew in cmp, blue where it
 * shrank, intensity |delta| / max|delta| over the graph (near white at 0).
 * A frame present on one side only is tinted at least half way, fully when
 * its share is significant (>= 1%), so small vanished or new towers are
 * still seen. The tooltip/detail line shows both shares, both counts and
 * the delta in percentage points.
 * o may be NULL (defaults); svg may be NULL (flamesvg defaults). From svg:
 * a NULL title becomes "Differential Flame Graph" (or "...Icicle Graph");
 * a NULL subtitle becomes "red: more in B (N samples), blue: more in A
 * (M samples); width: ..."; count_name names the real counts in the subtitle
 * and tooltips, while the drawn counts (weights) are shown as "ppb";
 * color/extra_info/color_arg are replaced by the diff's own. Leaves the
 * tree in o's width basis. Returns 0, or -1 when writing failed (errno set). */
int flamediff_write_svg(FILE *out, struct flamediff *d, const struct flamediff_options *o,
			const struct flamesvg_options *svg);

/* The frames whose total share grew most in cmp. A function's share on a
 * side is the samples with it anywhere on the stack / side total, each
 * sample counted once: only the topmost occurrence on each path counts, so
 * recursion does not double count. Functions are aggregated across the tree
 * by label. */
struct flamediff_top {
	const char *label; /* valid until flamediff_free */
	double base_share, cmp_share, delta;
};

/* Fills up to max entries with the functions whose delta is > 0, sorted by
 * delta descending (ties by label). The root "all" is never listed.
 * Returns the count. Used by the `slow` command's summary. */
size_t flamediff_top_growth(const struct flamediff *d, struct flamediff_top *out, size_t max);

#endif
