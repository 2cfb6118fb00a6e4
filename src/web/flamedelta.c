/* flamedelta — a flame tree as changes per client. The contract is in
 * flamedelta.h.
 *
 * A node is known by its parent's id and its frame: the map turns that pair
 * into the client's id. Ids are never reused while the table lives (a node
 * that went away and comes back is added again under its old id), so a
 * stale id can never name another node; the table is started over, with a
 * full message, when it holds too many dead ids. */
#define _GNU_SOURCE
#include "flamedelta.h"

#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "flamesvg.h"
#include "hashmap.h"
#include "json.h"
#include "util.h"

#define ROOT_KEY UINT64_MAX

struct node_state {
	uint64_t total, self;
	uint32_t seen; /* generation of the last message it was in the tree */
	bool alive;    /* the client has it */
};

struct flamedelta {
	struct hashmap ids; /* (parent id << 32 | frame) -> id */
	struct node_state *nodes;
	size_t nnodes, cap; /* ids given so far */
	size_t live;	    /* nodes the client has */
	uint32_t gen;
	uint64_t seq;
	bool full; /* the next message is a full one */
};

struct flamedelta *flamedelta_new(void)
{
	struct flamedelta *d = xcalloc(1, sizeof(*d));
	d->full = true;
	return d;
}

void flamedelta_free(struct flamedelta *d)
{
	if (!d)
		return;
	hashmap_free(&d->ids);
	free(d->nodes);
	free(d);
}

void flamedelta_reset(struct flamedelta *d)
{
	d->full = true;
}

struct walk {
	struct flamedelta *d;
	const struct flame_tree *t;
	uint32_t *id_at_depth; /* the id of the node at each depth of the path */
	size_t depth_cap;
	FILE *added, *changed;
	size_t nadded, nchanged;
};

static uint32_t node_id(struct flamedelta *d, uint64_t key, bool *is_new)
{
	uint64_t found;
	if (hashmap_get(&d->ids, key, &found)) {
		*is_new = !d->nodes[found].alive;
		return (uint32_t)found;
	}
	grow_array((void **)&d->nodes, &d->cap, d->nnodes + 1, sizeof(*d->nodes));
	uint32_t id = (uint32_t)d->nnodes++;
	memset(&d->nodes[id], 0, sizeof(d->nodes[id]));
	hashmap_set(&d->ids, key, id);
	*is_new = true;
	return id;
}

static int visit(const struct flame_node *n, int depth, void *arg)
{
	struct walk *w = arg;
	struct flamedelta *d = w->d;
	grow_array((void **)&w->id_at_depth, &w->depth_cap, (size_t)depth + 1,
		   sizeof(*w->id_at_depth));
	uint32_t parent = depth ? w->id_at_depth[depth - 1] : 0;
	uint64_t key = depth ? (uint64_t)parent << 32 | n->frame : ROOT_KEY;
	bool is_new;
	uint32_t id = node_id(d, key, &is_new);
	w->id_at_depth[depth] = id;
	struct node_state *ns = &d->nodes[id];
	ns->seen = d->gen;
	if (is_new) {
		char label[512];
		enum frame_kind kind = FRAME_USER;
		const struct frame *f = NULL;
		if (depth) {
			flame_frame_label(w->t, n->frame, false, label, sizeof(label));
			f = frames_get(w->t->frames, n->frame);
			if (f)
				kind = f->kind;
		} else {
			snprintf(label, sizeof(label), "all");
		}
		fprintf(w->added, "%s[%u,%ld,", w->nadded++ ? "," : "", id,
			depth ? (long)parent : -1L);
		json_write_string(w->added, label);
		fprintf(w->added, ",\"%s\",%llu,%llu,", frames_kind_name(kind),
			(unsigned long long)n->total, (unsigned long long)n->self);
		flamedelta_write_color(w->added, f);
		fputc(']', w->added);
		ns->alive = true;
		d->live++;
	} else if (ns->total != n->total || ns->self != n->self) {
		fprintf(w->changed, "%s[%u,%llu,%llu]", w->nchanged++ ? "," : "", id,
			(unsigned long long)n->total, (unsigned long long)n->self);
	}
	ns->total = n->total;
	ns->self = n->self;
	return 0;
}

static void start_over(struct flamedelta *d)
{
	hashmap_free(&d->ids);
	memset(&d->ids, 0, sizeof(d->ids));
	d->nnodes = 0;
	d->live = 0;
}

size_t flamedelta_write(struct flamedelta *d, const struct flame_tree *t, bool fractional,
			FILE *out)
{
	if (d->nnodes > 1024 && d->nnodes > FLAMEDELTA_SLACK * d->live)
		d->full = true;
	bool full = d->full;
	if (full)
		start_over(d);
	d->full = false;
	d->gen++;
	char *added = NULL, *changed = NULL;
	size_t alen = 0, clen = 0;
	struct walk w = {.d = d, .t = t};
	w.added = open_memstream(&added, &alen);
	w.changed = open_memstream(&changed, &clen);
	if (!w.added || !w.changed) {
		errorf("out of memory for a flame graph update");
		exit(1);
	}
	if (t)
		flame_walk(t, visit, &w);
	fclose(w.added);
	fclose(w.changed);
	free(w.id_at_depth);

	fprintf(out,
		"{\"seq\":%llu,\"full\":%s,\"total\":%llu,\"fractional\":%s,"
		"\"removed\":[",
		(unsigned long long)++d->seq, full ? "true" : "false",
		(unsigned long long)(t ? t->root->total : 0), fractional ? "true" : "false");
	size_t nremoved = 0;
	for (size_t id = 0; id < d->nnodes; id++) {
		struct node_state *ns = &d->nodes[id];
		if (ns->alive && ns->seen != d->gen) {
			fprintf(out, "%s%zu", nremoved++ ? "," : "", id);
			ns->alive = false;
			d->live--;
		}
	}
	fprintf(out, "],\"added\":[%s],\"changed\":[%s]}", added, changed);
	free(added);
	free(changed);
	/* A full message always counts: it tells the client to forget. */
	return w.nadded + w.nchanged + nremoved + (full ? 1 : 0);
}

void flamedelta_write_color(FILE *out, const struct frame *f)
{
	unsigned char rgb[3];
	flamesvg_color(f ? f->name : NULL, f ? f->kind : FRAME_USER, rgb);
	fprintf(out, "\"#%02x%02x%02x\"", rgb[0], rgb[1], rgb[2]);
}
