#include "frames.h"

#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "strpool.h"
#include "util.h"

/* Frames by hash of (name, module, file, line, kind) -> id, over the frame
 * array; every string a frame points to is in the pool. */
struct frame_table {
	struct frame *frames; /* index 0 unused */
	size_t n, cap;
	struct hashmap index; /* hashed keys */
	struct strpool strs;
};

struct frame_table *frames_new(void)
{
	struct frame_table *t = xcalloc(1, sizeof(*t));
	t->n = 1;
	grow_array((void **)&t->frames, &t->cap, 1, sizeof(*t->frames));
	return t;
}

void frames_free(struct frame_table *t)
{
	if (!t)
		return;
	strpool_free(&t->strs);
	hashmap_free(&t->index);
	free(t->frames);
	free(t);
}

const char *frames_strdup(struct frame_table *t, const char *s)
{
	return strpool_intern(&t->strs, s);
}

/* Strings are interned, so pointer equality is string equality. */
static uint64_t frame_hash(const char *name, const char *module, const char *file,
			   uint32_t line, enum frame_kind kind)
{
	uintptr_t v[5] = {(uintptr_t)name, (uintptr_t)module, (uintptr_t)file, line, kind};
	return hash_bytes(v, sizeof(v), 7);
}

uint32_t frames_intern(struct frame_table *t, const char *name, const char *module,
		       const char *file, uint32_t line, enum frame_kind kind)
{
	name = frames_strdup(t, name);
	module = frames_strdup(t, module);
	file = frames_strdup(t, file);
	uint64_t h = frame_hash(name, module, file, line, kind);
	size_t pos;
	for (const uint64_t *v = hashmap_first(&t->index, h, &pos); v;
	     v = hashmap_again(&t->index, h, &pos)) {
		const struct frame *f = &t->frames[*v];
		if (f->name == name && f->module == module && f->file == file && f->line == line &&
		    f->kind == kind)
			return (uint32_t)*v;
	}
	grow_array((void **)&t->frames, &t->cap, t->n + 1, sizeof(*t->frames));
	uint32_t id = (uint32_t)t->n++;
	t->frames[id] = (struct frame){name, module, file, line, kind, frames_strdup(t, "")};
	hashmap_add(&t->index, h, id);
	return id;
}

void frames_set_system_name(struct frame_table *t, uint32_t id, const char *system_name)
{
	if (id == 0 || id >= t->n || !system_name || !*system_name || *t->frames[id].system_name)
		return;
	t->frames[id].system_name = frames_strdup(t, system_name);
}

const struct frame *frames_get(const struct frame_table *t, uint32_t id)
{
	if (id == 0 || id >= t->n)
		return NULL;
	return &t->frames[id];
}

size_t frames_count(const struct frame_table *t)
{
	return t->n - 1;
}

const char *frames_kind_name(enum frame_kind kind)
{
	switch (kind) {
	case FRAME_USER:
		return "user";
	case FRAME_KERNEL:
		return "kernel";
	case FRAME_INLINED:
		return "inlined";
	case FRAME_JIT:
		return "jit";
	case FRAME_PROCESS:
		return "process";
	case FRAME_UNKNOWN:
		return "unknown";
	case FRAME_OVERHEAD:
		return "sonde";
	case FRAME_STATE:
		return "state";
	case FRAME_PYTHON:
		return "python";
	}
	return "user";
}

const char *frames_kind_suffix(enum frame_kind kind)
{
	switch (kind) {
	case FRAME_KERNEL:
		return "_[k]";
	case FRAME_INLINED:
		return "_[i]";
	case FRAME_JIT:
		return "_[j]";
	default:
		return "";
	}
}
