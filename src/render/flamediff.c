#include "flamediff.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "hashmap.h"
#include "util.h"

enum side { SIDE_BASE = 0, SIDE_CMP = 1 };

/* Real sample counts of one merged node on both sides. */
struct node_counts {
	uint64_t total[2], self[2];
};

/* ---- the diff ---------------------------------------------------------- */

struct flamediff {
	struct frame_table *frames; /* one frame per display label */
	struct flame_tree *tree;    /* counts are weights in `width`'s basis */
	enum flamediff_width width;
	uint64_t side_total[2];
	double max_delta;
	const char **labels; /* merged frame id -> its interned label */
	size_t labels_cap;
	/* flame_node has no room for our data, and merged frames are found by
	 * their interned label's address: both lookups are pointer -> index. */
	struct hashmap frame_of_label; /* interned label -> merged frame id */
	struct node_counts *counts;
	size_t ncounts, counts_cap;
	struct hashmap counts_of_node; /* merged node -> index into counts */
};

/* Gives a new merged node its (zero) counts. */
static void counts_add(struct flamediff *d, const struct flame_node *n)
{
	grow_array((void **)&d->counts, &d->counts_cap, d->ncounts + 1, sizeof(*d->counts));
	memset(&d->counts[d->ncounts], 0, sizeof(*d->counts));
	hashmap_set(&d->counts_of_node, (uintptr_t)n, d->ncounts++);
}

/* NULL for a node that is not in d's tree. */
static const struct node_counts *counts_find(const struct flamediff *d,
					     const struct flame_node *n)
{
	const uint64_t *i = hashmap_find(&d->counts_of_node, (uintptr_t)n);
	return i ? &d->counts[*i] : NULL;
}

/* For nodes known to be in d's tree. */
static struct node_counts *counts_of(struct flamediff *d, const struct flame_node *n)
{
	const uint64_t *i = hashmap_find(&d->counts_of_node, (uintptr_t)n);
	return &d->counts[i ? *i : 0];
}

static double share_of(uint64_t count, uint64_t side_total)
{
	return side_total ? (double)count / (double)side_total : 0;
}

static double node_delta(const struct flamediff *d, const struct node_counts *c)
{
	return share_of(c->total[SIDE_CMP], d->side_total[SIDE_CMP]) -
	       share_of(c->total[SIDE_BASE], d->side_total[SIDE_BASE]);
}

/* ---- merging by label -------------------------------------------------- */

/* One side being merged in: the source tree and a cache from its frame ids
 * to merged ones, so each source frame's label is built only once. */
struct side_merge {
	struct flamediff *d;
	const struct flame_tree *src;
	enum side side;
	uint32_t *merged_id; /* by source frame id; 0 = not seen yet */
	size_t nmerged_id;
	struct flame_node **at; /* the merged node of each source node on the walk's path */
	size_t at_cap;
};

static char *source_label(const struct flame_tree *src, uint32_t frame)
{
	const struct frame *f = frames_get(src->frames, frame);
	size_t size = (f ? strlen(f->name) : 0) + 16; /* room for a kind suffix or "all" */
	char *label = xmalloc(size);
	flame_frame_label(src, frame, true, label, size);
	return label;
}

/* The merged frame for a label, created from the first source frame seen
 * with it (keeping that frame's module and file for display). */
static uint32_t merged_frame_for_label(struct flamediff *d, const struct flame_tree *src,
				       uint32_t frame, const char *label)
{
	const char *key = frames_strdup(d->frames, label); /* interned: its address is the key */
	uint64_t id;
	if (hashmap_get(&d->frame_of_label, (uintptr_t)key, &id))
		return (uint32_t)id;
	const struct frame *f = frames_get(src->frames, frame);
	uint32_t fid = f ? frames_intern(d->frames, f->name, f->module, f->file, f->line, f->kind)
			 : frames_intern(d->frames, label, "", "", 0, FRAME_UNKNOWN);
	grow_array((void **)&d->labels, &d->labels_cap, (size_t)fid + 1, sizeof(*d->labels));
	d->labels[fid] = key;
	hashmap_set(&d->frame_of_label, (uintptr_t)key, fid);
	return fid;
}

static uint32_t merged_frame(struct side_merge *m, uint32_t frame)
{
	bool cacheable = frame < m->nmerged_id;
	if (cacheable && m->merged_id[frame])
		return m->merged_id[frame];
	char *label = source_label(m->src, frame);
	uint32_t fid = merged_frame_for_label(m->d, m->src, frame, label);
	free(label);
	if (cacheable)
		m->merged_id[frame] = fid;
	return fid;
}

/* Walks the source tree; the merged node of each source node is found or
 * made (flame_child: zero counts, set later by reweighting) under the
 * merged node of its parent, so the tree stays a plain flame tree. */
static enum flame_step merge_node(struct flame_node *s, size_t depth, void *arg)
{
	struct side_merge *m = arg;
	grow_array((void **)&m->at, &m->at_cap, depth + 1, sizeof(*m->at));
	if (depth == 0) {
		m->at[0] = m->d->tree->root;
		return FLAME_STEP_INTO;
	}
	struct flame_node *parent = m->at[depth - 1];
	size_t before = parent->nchildren;
	struct flame_node *c = flame_child(parent, merged_frame(m, s->frame));
	if (parent->nchildren != before)
		counts_add(m->d, c);
	struct node_counts *cc = counts_of(m->d, c);
	cc->total[m->side] += s->total;
	cc->self[m->side] += s->self;
	m->at[depth] = c;
	return FLAME_STEP_INTO;
}

static void merge_side(struct flamediff *d, const struct flame_tree *src, enum side side)
{
	if (!src)
		return;
	struct side_merge m = {.d = d, .src = src, .side = side};
	m.nmerged_id = frames_count(src->frames) + 1;
	m.merged_id = xcalloc(m.nmerged_id, sizeof(*m.merged_id));
	struct node_counts *root = counts_of(d, d->tree->root);
	root->total[side] = src->root->total;
	root->self[side] = src->root->self;
	d->side_total[side] = src->root->total;
	flame_visit(src->root, &(struct flame_visitor){.enter = merge_node}, &m);
	free(m.merged_id);
	free(m.at);
}

/* ---- width basis ------------------------------------------------------- */

/* The share a width basis gives a count pair. UNION averages over the sides
 * that have samples, so an empty side does not halve every width. */
static double basis_share(const struct flamediff *d, const uint64_t count[2],
			  enum flamediff_width width)
{
	double base = share_of(count[SIDE_BASE], d->side_total[SIDE_BASE]);
	double cmp = share_of(count[SIDE_CMP], d->side_total[SIDE_CMP]);
	switch (width) {
	case FLAMEDIFF_WIDTH_CMP:
		return cmp;
	case FLAMEDIFF_WIDTH_BASE:
		return base;
	case FLAMEDIFF_WIDTH_UNION:
	default: {
		int sides = (d->side_total[SIDE_BASE] > 0) + (d->side_total[SIDE_CMP] > 0);
		return sides ? (base + cmp) / sides : 0;
	}
	}
}

/* Rounded to parts per billion, but never to 0 when there are samples, so
 * nothing with samples disappears from the tree. */
static uint64_t share_weight(double share)
{
	if (share <= 0)
		return 0;
	uint64_t w = (uint64_t)llround(share * FLAMEDIFF_SCALE);
	return w ? w : 1;
}

struct reweight {
	struct flamediff *d;
	enum flamediff_width width;
};

/* On leaving a node its children's totals are final. */
static void reweight_node(struct flame_node *n, size_t depth, void *arg)
{
	(void)depth;
	struct reweight *r = arg;
	n->self = share_weight(basis_share(r->d, counts_of(r->d, n)->self, r->width));
	uint64_t total = n->self;
	for (size_t i = 0; i < n->nchildren; i++)
		total += n->children[i]->total;
	n->total = total;
}

void flamediff_set_width(struct flamediff *d, enum flamediff_width width)
{
	if (width != FLAMEDIFF_WIDTH_CMP && width != FLAMEDIFF_WIDTH_BASE)
		width = FLAMEDIFF_WIDTH_UNION;
	d->width = width;
	struct reweight r = {d, width};
	flame_visit(d->tree->root, &(struct flame_visitor){.leave = reweight_node}, &r);
}

/* ---- construction ------------------------------------------------------ */

struct max_delta {
	const struct flamediff *d;
	double max;
};

static enum flame_step note_delta(struct flame_node *n, size_t depth, void *arg)
{
	(void)depth;
	struct max_delta *m = arg;
	m->max = fmax(m->max, fabs(node_delta(m->d, counts_find(m->d, n))));
	return FLAME_STEP_INTO;
}

static double max_delta(const struct flamediff *d)
{
	struct max_delta m = {d, 0};
	flame_visit(d->tree->root, &(struct flame_visitor){.enter = note_delta}, &m);
	return m.max;
}

struct flamediff *flamediff_new(const struct flame_tree *base, const struct flame_tree *cmp)
{
	struct flamediff *d = xcalloc(1, sizeof(*d));
	d->frames = frames_new();
	d->tree = flame_new(d->frames);
	counts_add(d, d->tree->root);
	merge_side(d, base, SIDE_BASE);
	merge_side(d, cmp, SIDE_CMP);
	flame_sort(d->tree);
	d->max_delta = max_delta(d);
	flamediff_set_width(d, FLAMEDIFF_WIDTH_UNION);
	return d;
}

void flamediff_free(struct flamediff *d)
{
	if (!d)
		return;
	flame_free(d->tree);
	frames_free(d->frames);
	free(d->labels);
	free(d->counts);
	hashmap_free(&d->frame_of_label);
	hashmap_free(&d->counts_of_node);
	free(d);
}

const struct flame_tree *flamediff_tree(const struct flamediff *d)
{
	return d->tree;
}

const char *flamediff_label(const struct flamediff *d, const struct flame_node *n)
{
	if (n->frame == 0 || n->frame >= d->labels_cap || !d->labels[n->frame])
		return "all";
	return d->labels[n->frame];
}

double flamediff_max_delta(const struct flamediff *d)
{
	return d->max_delta;
}

void flamediff_info(const struct flamediff *d, const struct flame_node *n,
		    struct flamediff_node_info *out)
{
	memset(out, 0, sizeof(*out));
	const struct node_counts *c = counts_find(d, n);
	if (!c)
		return;
	out->base_total = c->total[SIDE_BASE];
	out->cmp_total = c->total[SIDE_CMP];
	out->base_self = c->self[SIDE_BASE];
	out->cmp_self = c->self[SIDE_CMP];
	out->base_share = share_of(out->base_total, d->side_total[SIDE_BASE]);
	out->cmp_share = share_of(out->cmp_total, d->side_total[SIDE_CMP]);
	out->delta = out->cmp_share - out->base_share;
}

/* ---- drawing ----------------------------------------------------------- */

/* Interpolated from near white (no change) to the full colour (largest
 * change); black labels stay readable on all of them. */
static const unsigned char NEUTRAL_RGB[3] = {245, 245, 245};
static const unsigned char GROWTH_RGB[3] = {235, 60, 60};
static const unsigned char SHRINK_RGB[3] = {80, 125, 240};
#define ONE_SIDED_MIN_INTENSITY 0.5 /* a new or vanished frame is always tinted */
#define SIGNIFICANT_SHARE 0.01      /* ... and fully so from 1% of its side */

/* What the colour and tooltip callbacks share (flamesvg's color_arg). */
struct paint {
	const struct flamediff *d;
	const char *base_name, *cmp_name;
	const char *count_name; /* of the real counts in tooltips */
};

static bool only_on_one_side(const struct flamediff_node_info *i)
{
	return (i->base_total == 0) != (i->cmp_total == 0);
}

static double color_intensity(const struct flamediff *d, const struct flamediff_node_info *i)
{
	double t = d->max_delta > 0 ? fabs(i->delta) / d->max_delta : 0;
	if (only_on_one_side(i)) {
		double share = fmax(i->base_share, i->cmp_share);
		t = fmax(t, share >= SIGNIFICANT_SHARE ? 1.0 : ONE_SIDED_MIN_INTENSITY);
	}
	return fmin(t, 1.0);
}

static bool diff_color(const struct flame_node *n, void *arg, unsigned char rgb[3])
{
	const struct paint *p = arg;
	struct flamediff_node_info info;
	flamediff_info(p->d, n, &info);
	double t = color_intensity(p->d, &info);
	const unsigned char *target = info.delta > 0 ? GROWTH_RGB
				      : info.delta < 0 ? SHRINK_RGB
						       : NEUTRAL_RGB;
	for (int k = 0; k < 3; k++)
		rgb[k] = (unsigned char)lround(NEUTRAL_RGB[k] + t * (target[k] - NEUTRAL_RGB[k]));
	return true;
}

/* "fast 30.00% (3 samples), slow 45.00% (45 samples), delta +15.00 pp" */
static const char *diff_extra_info(const struct flame_node *n, void *arg, char *buf,
				   size_t size)
{
	const struct paint *p = arg;
	struct flamediff_node_info i;
	flamediff_info(p->d, n, &i);
	char base[32], cmp[32];
	int len = snprintf(buf, size, "%s %.2f%% (%s %s), %s %.2f%% (%s %s), delta %+.2f pp",
			   p->base_name, 100 * i.base_share, format_count(i.base_total, base),
			   p->count_name, p->cmp_name, 100 * i.cmp_share,
			   format_count(i.cmp_total, cmp), p->count_name, 100 * i.delta);
	if (only_on_one_side(&i) && len >= 0 && (size_t)len < size)
		snprintf(buf + len, size - (size_t)len, ", only in %s",
			 i.cmp_total ? p->cmp_name : p->base_name);
	return buf;
}

static const char *width_description(enum flamediff_width width, const struct paint *p)
{
	switch (width) {
	case FLAMEDIFF_WIDTH_CMP:
		return p->cmp_name;
	case FLAMEDIFF_WIDTH_BASE:
		return p->base_name;
	case FLAMEDIFF_WIDTH_UNION:
	default:
		return "mean of both";
	}
}

/* "red: more in slow (1,000 samples), blue: more in fast (100 samples);
 * width: mean of both"; malloc'd. */
static char *default_subtitle(const struct flamediff *d, const struct paint *p)
{
	char base[32], cmp[32];
	return xasprintf("red: more in %s (%s %s), blue: more in %s (%s %s); width: %s",
			 p->cmp_name, format_count(d->side_total[SIDE_CMP], cmp), p->count_name,
			 p->base_name, format_count(d->side_total[SIDE_BASE], base),
			 p->count_name, width_description(d->width, p));
}

int flamediff_write_svg(FILE *out, struct flamediff *d, const struct flamediff_options *o,
			const struct flamesvg_options *svg)
{
	struct flamediff_options opt = {0};
	if (o)
		opt = *o;
	flamediff_set_width(d, opt.width);

	struct flamesvg_options so;
	if (svg)
		so = *svg;
	else
		flamesvg_default_options(&so);
	struct paint paint = {
		.d = d,
		.base_name = opt.base_name ? opt.base_name : "A",
		.cmp_name = opt.cmp_name ? opt.cmp_name : "B",
		.count_name = so.count_name ? so.count_name : "samples",
	};
	if (!so.title)
		so.title = so.icicle ? "Differential Icicle Graph" : "Differential Flame Graph";
	char *subtitle = so.subtitle ? NULL : default_subtitle(d, &paint);
	if (subtitle)
		so.subtitle = subtitle;
	so.count_name = "ppb"; /* the drawn counts are weights, see flamediff.h */
	so.color = diff_color;
	so.extra_info = diff_extra_info;
	so.color_arg = &paint;

	int rc = flamesvg_write(out, d->tree, &so);
	free(subtitle);
	return rc;
}

/* ---- top growth -------------------------------------------------------- */

/* Samples per merged frame with the frame anywhere on their stack: a node
 * counts only when no ancestor has the same frame (the topmost occurrence),
 * which the `on_path` depth counters tell in O(1). */
struct stack_presence {
	const struct flamediff *d;
	uint32_t *on_path;   /* by merged frame id */
	uint64_t (*samples)[2]; /* by merged frame id, per side */
};

static enum flame_step presence_enter(struct flame_node *n, size_t depth, void *arg)
{
	(void)depth;
	struct stack_presence *s = arg;
	uint32_t fid = n->frame;
	if (fid && s->on_path[fid] == 0) {
		const struct node_counts *c = counts_find(s->d, n);
		s->samples[fid][SIDE_BASE] += c->total[SIDE_BASE];
		s->samples[fid][SIDE_CMP] += c->total[SIDE_CMP];
	}
	s->on_path[fid]++;
	return FLAME_STEP_INTO;
}

static void presence_leave(struct flame_node *n, size_t depth, void *arg)
{
	(void)depth;
	struct stack_presence *s = arg;
	s->on_path[n->frame]--;
}

static int top_cmp(const void *a, const void *b)
{
	const struct flamediff_top *x = a, *y = b;
	if (x->delta != y->delta)
		return x->delta > y->delta ? -1 : 1;
	return strcmp(x->label, y->label);
}

size_t flamediff_top_growth(const struct flamediff *d, struct flamediff_top *out, size_t max)
{
	size_t nframes = frames_count(d->frames) + 1;
	struct stack_presence s = {
		.d = d,
		.on_path = xcalloc(nframes, sizeof(*s.on_path)),
		.samples = xcalloc(nframes, sizeof(*s.samples)),
	};
	flame_visit(d->tree->root,
		    &(struct flame_visitor){.enter = presence_enter, .leave = presence_leave}, &s);

	struct flamediff_top *grown = xcalloc(nframes, sizeof(*grown));
	size_t n = 0;
	for (uint32_t fid = 1; fid < nframes; fid++) {
		double base = share_of(s.samples[fid][SIDE_BASE], d->side_total[SIDE_BASE]);
		double cmp = share_of(s.samples[fid][SIDE_CMP], d->side_total[SIDE_CMP]);
		if (cmp - base > 0)
			grown[n++] = (struct flamediff_top){d->labels[fid], base, cmp, cmp - base};
	}
	qsort(grown, n, sizeof(*grown), top_cmp);
	if (n > max)
		n = max;
	if (n)
		memcpy(out, grown, n * sizeof(*out));
	free(grown);
	free(s.on_path);
	free(s.samples);
	return n;
}
