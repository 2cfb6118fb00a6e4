#include "frames.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Open-addressing hash sets over the frame array and the string pool. */
struct frame_table {
	struct frame *frames; /* index 0 unused */
	size_t n, cap;
	uint32_t *slots; /* frame ids, 0 = empty */
	size_t nslots;
	char **strs; /* interned strings */
	size_t nstrs, strs_cap;
	uint32_t *str_slots; /* index+1 into strs, 0 = empty */
	size_t nstr_slots;
};

struct frame_table *frames_new(void)
{
	struct frame_table *t = xcalloc(1, sizeof(*t));
	t->n = 1;
	grow_array((void **)&t->frames, &t->cap, 1, sizeof(*t->frames));
	t->nslots = 1024;
	t->slots = xcalloc(t->nslots, sizeof(*t->slots));
	t->nstr_slots = 1024;
	t->str_slots = xcalloc(t->nstr_slots, sizeof(*t->str_slots));
	return t;
}

void frames_free(struct frame_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nstrs; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->str_slots);
	free(t->slots);
	free(t->frames);
	free(t);
}

static void strs_rehash(struct frame_table *t)
{
	size_t n = t->nstr_slots * 2;
	uint32_t *s = xcalloc(n, sizeof(*s));
	for (size_t i = 0; i < t->nstrs; i++) {
		size_t j = hash_str(t->strs[i], 0) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)(i + 1);
	}
	free(t->str_slots);
	t->str_slots = s;
	t->nstr_slots = n;
}

const char *frames_strdup(struct frame_table *t, const char *s)
{
	if (!s)
		s = "";
	size_t j = hash_str(s, 0) & (t->nstr_slots - 1);
	while (t->str_slots[j]) {
		const char *c = t->strs[t->str_slots[j] - 1];
		if (strcmp(c, s) == 0)
			return c;
		j = (j + 1) & (t->nstr_slots - 1);
	}
	grow_array((void **)&t->strs, &t->strs_cap, t->nstrs + 1, sizeof(*t->strs));
	t->strs[t->nstrs++] = xstrdup(s);
	t->str_slots[j] = (uint32_t)t->nstrs;
	if (t->nstrs * 2 > t->nstr_slots)
		strs_rehash(t);
	return t->strs[t->nstrs - 1];
}

/* Strings are interned, so pointer equality is string equality. */
static uint64_t frame_hash(const char *name, const char *module, const char *file,
			   uint32_t line, enum frame_kind kind)
{
	uintptr_t v[5] = {(uintptr_t)name, (uintptr_t)module, (uintptr_t)file, line, kind};
	return hash_bytes(v, sizeof(v), 7);
}

static void frames_rehash(struct frame_table *t)
{
	size_t n = t->nslots * 2;
	uint32_t *s = xcalloc(n, sizeof(*s));
	for (size_t i = 1; i < t->n; i++) {
		const struct frame *f = &t->frames[i];
		size_t j = frame_hash(f->name, f->module, f->file, f->line, f->kind) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)i;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
}

uint32_t frames_intern(struct frame_table *t, const char *name, const char *module,
		       const char *file, uint32_t line, enum frame_kind kind)
{
	name = frames_strdup(t, name);
	module = frames_strdup(t, module);
	file = frames_strdup(t, file);
	size_t j = frame_hash(name, module, file, line, kind) & (t->nslots - 1);
	while (t->slots[j]) {
		const struct frame *f = &t->frames[t->slots[j]];
		if (f->name == name && f->module == module && f->file == file && f->line == line &&
		    f->kind == kind)
			return t->slots[j];
		j = (j + 1) & (t->nslots - 1);
	}
	grow_array((void **)&t->frames, &t->cap, t->n + 1, sizeof(*t->frames));
	uint32_t id = (uint32_t)t->n++;
	t->frames[id] = (struct frame){name, module, file, line, kind};
	t->slots[j] = id;
	if (t->n * 2 > t->nslots)
		frames_rehash(t);
	return id;
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
