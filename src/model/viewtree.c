#include "viewtree.h"

#include <stdio.h>
#include <stdlib.h>

#include "util.h"

uint64_t viewtree_total_weight(const struct profile *p, const struct view *v)
{
	uint64_t total = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		if (view_takes(v, p, &p->samples[i]))
			total += view_weight(v, p, &p->samples[i]);
	return total;
}

static uint32_t root_frame(struct profile *p, const struct thread_info *t, enum flame_root root)
{
	char name[128];
	/* FlameGraph turns spaces in process names into underscores. */
	char comm[64];
	snprintf(comm, sizeof(comm), "%s", t->comm);
	for (char *c = comm; *c; c++)
		if (*c == ' ')
			*c = '_';
	switch (root) {
	case FLAME_ROOT_PID:
		snprintf(name, sizeof(name), "%s-%u", comm, t->pid);
		break;
	case FLAME_ROOT_TID:
		snprintf(name, sizeof(name), "%s-%u/%u", comm, t->pid, t->tid);
		break;
	default:
		snprintf(name, sizeof(name), "%s", comm);
		break;
	}
	return frames_intern(p->frames, name, "", "", 0, FRAME_PROCESS);
}

static struct flame_tree *flame_grouped(struct profile *p, const struct view *v,
					enum flame_root root,
					uint32_t (*group)(struct profile *, uint32_t))
{
	struct flame_tree *t = flame_new(p->frames);
	size_t cap = 256;
	uint32_t *buf = xmalloc(cap * sizeof(*buf));
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		if (!view_takes(v, p, s))
			continue;
		size_t depth = p->nodes[s->stack].depth + 2;
		if (depth > cap) {
			cap = depth * 2;
			buf = xrealloc(buf, cap * sizeof(*buf));
		}
		size_t off = 0;
		if (root != FLAME_ROOT_NONE)
			buf[off++] = root_frame(p, &p->threads[s->thread], root);
		size_t n = profile_stack_frames(p, s->stack, buf + off, cap - off);
		for (size_t k = off; k < off + n; k++)
			buf[k] = group(p, buf[k]);
		uint32_t leaf = view_leaf_frame(v, p, s);
		if (leaf)
			buf[off + n++] = leaf;
		flame_add(t, buf, off + n, view_weight(v, p, s));
	}
	free(buf);
	return t;
}

struct flame_tree *viewtree_flame(struct profile *p, const struct view *v, enum flame_root root)
{
	return flame_grouped(p, v, root, profile_function_frame);
}

struct flame_tree *viewtree_flame_lines(struct profile *p, const struct view *v,
				       enum flame_root root)
{
	return flame_grouped(p, v, root, profile_line_frame);
}
