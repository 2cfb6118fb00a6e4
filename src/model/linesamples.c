/* linesamples — samples per source line of one function (linesamples.h). */
#include "linesamples.h"

#include <stdbool.h>
#include <string.h>

#include "frames.h"

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p ? p : "";
}

uint64_t line_samples_of(const struct profile *p, const struct view *v,
			 const struct line_samples_query *q, struct line_samples *out)
{
	memset(out, 0, q->n * sizeof(*out));
	const char *module = base_name(q->module), *file = base_name(q->file);
	uint64_t in = 0;
	uint32_t ids[PROFILE_STACK_READ];
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		if (!view_takes(v, p, s))
			continue;
		size_t depth = profile_stack_frames(p, s->stack, ids, PROFILE_STACK_READ);
		if (depth > PROFILE_STACK_READ)
			depth = PROFILE_STACK_READ;
		/* the innermost frame of the function (recursion: its deepest call) */
		size_t at = depth;
		for (size_t k = depth; k-- > 0;) {
			const struct frame *f = frames_get(p->frames, ids[k]);
			if (f && f->kind != FRAME_INLINED && strcmp(f->name, q->func) == 0 &&
			    strcmp(base_name(f->module), module) == 0) {
				at = k;
				break;
			}
		}
		if (at == depth)
			continue;
		in += s->weight;
		size_t end = at + 1; /* its code: it and the frames inlined into it */
		while (end < depth) {
			const struct frame *f = frames_get(p->frames, ids[end]);
			if (!f || f->kind != FRAME_INLINED)
				break;
			end++;
		}
		/* each line once per sample */
		unsigned counted[16];
		size_t ncounted = 0;
		for (size_t k = at; k < end; k++) {
			const struct frame *f = frames_get(p->frames, ids[k]);
			if (!f || !f->line || f->line < q->lo || f->line - q->lo >= q->n ||
			    strcmp(base_name(f->file), file) != 0)
				continue;
			bool seen = false;
			for (size_t c = 0; c < ncounted && !seen; c++)
				seen = counted[c] == f->line;
			if (!seen && ncounted < 16)
				counted[ncounted++] = f->line;
			if (!seen)
				out[f->line - q->lo].total += s->weight;
			if (k == end - 1 && end == depth)
				out[f->line - q->lo].self += s->weight;
		}
	}
	return in;
}
