#include "folded.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct folded_lines {
	const struct flame_tree *t;
	bool annotate;
	char **lines;
	size_t n, cap;
	char *path; /* the current path, ';'-joined */
	size_t path_cap;
	size_t *offsets; /* path length at each depth */
	size_t offsets_cap;
};

static void append_label(struct folded_lines *fl, size_t *len, uint32_t frame)
{
	char label[1024];
	flame_frame_label(fl->t, frame, fl->annotate, label, sizeof(label));
	for (char *c = label; *c; c++)
		if (*c == ';')
			*c = ':';
	size_t need = *len + strlen(label) + 2;
	if (need > fl->path_cap) {
		fl->path_cap = need * 2;
		fl->path = xrealloc(fl->path, fl->path_cap);
	}
	if (*len)
		fl->path[(*len)++] = ';';
	strcpy(fl->path + *len, label);
	*len += strlen(label);
}

static int collect(const struct flame_node *n, int depth, void *arg)
{
	struct folded_lines *fl = arg;
	if (depth == 0)
		return 0; /* the root is the whole profile, not a frame */
	grow_array((void **)&fl->offsets, &fl->offsets_cap, (size_t)depth + 1, sizeof(size_t));
	size_t len = depth > 1 ? fl->offsets[depth - 1] : 0;
	append_label(fl, &len, n->frame);
	fl->offsets[depth] = len;
	if (n->self) {
		grow_array((void **)&fl->lines, &fl->cap, fl->n + 1, sizeof(*fl->lines));
		fl->lines[fl->n++] = xasprintf("%.*s %llu", (int)len, fl->path,
					       (unsigned long long)n->self);
	}
	return 0;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int folded_write(FILE *out, const struct flame_tree *t, bool annotate)
{
	struct folded_lines fl = {.t = t, .annotate = annotate};
	flame_walk(t, collect, &fl);
	qsort(fl.lines, fl.n, sizeof(*fl.lines), line_cmp);
	int rc = 0;
	for (size_t i = 0; i < fl.n; i++) {
		if (fprintf(out, "%s\n", fl.lines[i]) < 0)
			rc = -1;
		free(fl.lines[i]);
	}
	free(fl.lines);
	free(fl.path);
	free(fl.offsets);
	return rc;
}
