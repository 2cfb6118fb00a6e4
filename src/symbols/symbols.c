/* symbols — addresses to frames: the symbolizer's entry points and its
 * cache of answers. See symbols.h for the contract. The pieces: procs.h
 * (which mapping and binary hold a user address), jit.h (JIT code, from
 * the perf map), binaries.h (the parsed binaries), resolve.h (an address
 * in a binary to frames, as addr2line), kallsyms.h (kernel addresses). */
#include "symbols.h"

#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binaries.h"
#include "hashmap.h"
#include "jit.h"
#include "kallsyms.h"
#include "perfmap.h"
#include "procs.h"
#include "pysyms.h"
#include "resolve.h"
#include "strpool.h"
#include "util.h"

#define UNKNOWN_NAME "[unknown]"
_Static_assert(RESOLVE_MAX_CHAIN < 256, "the result cache stores a chain length in 8 bits");

struct symbolizer {
	struct strpool strings;
	struct frame_namer names;
	struct binary_cache binaries;
	struct process_table processes;
	struct sym_frame *frames;  /* the result cache's frames */
	size_t nframes, frames_cap;
	struct kallsyms kernel;
	/* Perf maps of images replaced by exec: frames still use their names. */
	struct perfmap **old_jit;
	size_t nold_jit, old_jit_cap;
	struct symbols_stats stats;
	struct pysyms *python; /* created when first asked for */
};

/* ------------------------------------------------------------------------ */
/* The cache of answers: per binary and address, its frames in one pool.     */

/* A chain longer than `max` loses its middle: the innermost frames carry
 * the line, the last one is the function the code really runs in. */
static int copy_frames(struct symbolizer *s, const struct sym_frame *frames, int n,
		       struct sym_frame *out, int max)
{
	if (frames[0].kind == FRAME_UNKNOWN)
		s->stats.unresolved++;
	if (n <= max) {
		memcpy(out, frames, (size_t)n * sizeof(*out));
		return n;
	}
	memcpy(out, frames, (size_t)(max - 1) * sizeof(*out));
	out[max - 1] = frames[n - 1];
	return max;
}

/* The cached lookup every entry point goes through. */
static int binary_lookup(struct symbolizer *s, struct binary *b, uint64_t vaddr, bool is_return,
			 struct sym_frame *out, int max)
{
	uint64_t *slot = hashmap_put(&b->results[is_return], vaddr, NULL);
	if (!*slot) {
		struct sym_frame frames[RESOLVE_MAX_CHAIN];
		int n = binary_resolve(&s->names, b, vaddr, is_return, frames);
		grow_array((void **)&s->frames, &s->frames_cap, s->nframes + (size_t)n,
			   sizeof(*s->frames));
		memcpy(&s->frames[s->nframes], frames, (size_t)n * sizeof(*frames));
		*slot = (uint64_t)s->nframes << 8 | (uint64_t)n;
		s->nframes += (size_t)n;
	}
	return copy_frames(s, &s->frames[*slot >> 8], (int)(*slot & 0xff), out, max);
}

static int unknown_frame(struct symbolizer *s, const char *name, const char *module,
			 struct sym_frame *out)
{
	*out = (struct sym_frame){
		.name = name, .module = module, .file = "", .kind = FRAME_UNKNOWN,
	};
	s->stats.unresolved++;
	return 1;
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */

struct symbolizer *symbols_new(void)
{
	elf_version(EV_CURRENT);
	struct symbolizer *s = xcalloc(1, sizeof(struct symbolizer));
	s->binaries.strings = &s->strings;
	s->names.strings = &s->strings;
	s->processes.strings = &s->strings;
	return s;
}

void symbols_free(struct symbolizer *s)
{
	if (!s)
		return;
	binary_cache_free(&s->binaries);
	process_table_free(&s->processes);
	for (size_t i = 0; i < s->nold_jit; i++)
		perfmap_free(s->old_jit[i]);
	free(s->old_jit);
	kallsyms_free(&s->kernel);
	pysyms_free(s->python);
	free(s->frames);
	hashmap_free(&s->names.demangled);
	strpool_free(&s->strings);
	free(s);
}

struct pysyms *symbols_python(struct symbolizer *s)
{
	if (!s->python)
		s->python = pysyms_new();
	return s->python;
}

int symbols_user(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return,
		 struct sym_frame *out, int max)
{
	if (max < 1)
		return 0;
	s->stats.lookups++;
	struct process *p = process_get(&s->processes, pid);
	struct mapping *m = process_find_mapping(&s->processes, p, addr);
	const struct perfmap_sym *jit = may_be_jit(p, m) ? jit_symbol(p, addr, is_return) : NULL;
	if (jit) {
		s->stats.jit_frames++;
		return jit_frame(&s->strings, p, jit, out);
	}
	if (!m || m->path[0] == '\0')
		return unknown_frame(s, UNKNOWN_NAME, "", out);
	uint64_t off = addr - m->start + m->offset;
	struct binary *b = mapping_binary(&s->binaries, pid, m);
	uint64_t vaddr;
	if (!b || !binary_offset_to_vaddr(b, off, &vaddr)) {
		const char *label = module_label(&s->strings, m->path);
		return unknown_frame(s, unknown_frame_name(&s->strings, label, off), m->path, out);
	}
	return binary_lookup(s, b, vaddr, is_return, out, max);
}

const char *symbols_user_not_code(struct symbolizer *s, pid_t pid, uint64_t addr)
{
	struct process *p = process_get(&s->processes, pid);
	struct mapping *m = process_find_mapping(&s->processes, p, addr);
	/* A return address in memory that was not executable when the maps
	 * were read: dlopen maps a library's file read-only first and its code
	 * a moment later. Read the maps again, once for that address, and not
	 * twice within 10 ms (junk addresses of a frame-pointer walk through
	 * code without frame pointers point into data all the time). */
	/* Kept apart from the unmapped addresses of process_find_mapping by
	 * the top bit (user addresses never have it). */
	uint64_t key = addr | 1ull << 63;
	if (m && !m->exec && !p->gone && !hashmap_find(&p->misses, key) &&
	    monotonic_ns() - p->read_ns >= 10000000) {
		if (process_read_maps(&s->processes, p) == 0)
			m = process_mapping_at(p, addr);
		hashmap_put(&p->misses, key, NULL);
	}
	const char *where;
	if (!m && (!p->nmaps || (may_be_jit(p, m) && jit_symbol(p, addr, true))))
		where = NULL; /* no maps: nothing is known; or JIT code mapped since */
	else if (!m)
		where = "unmapped";
	else if (strcmp(m->path, "[uprobes]") == 0)
		where = "uprobes";
	else if (m->exec)
		where = NULL;
	else if (m->path[0] == '\0' || strcmp(m->path, "[heap]") == 0)
		where = "heap";
	else if (strncmp(m->path, "[stack", 6) == 0)
		where = "stack";
	else
		where = "data";
	if (!where)
		return NULL;
	char buf[64];
	snprintf(buf, sizeof(buf), "[broken stack: %s]", where);
	return strpool_intern(&s->strings, buf);
}

void symbols_kernel(struct symbolizer *s, uint64_t addr, struct sym_frame *out)
{
	s->stats.lookups++;
	if (!s->kernel.loaded)
		kallsyms_load(&s->kernel, &s->strings);
	const struct ksym *k = kallsyms_find(&s->kernel, addr);
	if (!k) {
		unknown_frame(s, UNKNOWN_NAME, KERNEL_MODULE, out);
		return;
	}
	*out = (struct sym_frame){
		.name = k->name, .module = k->module, .file = "", .kind = FRAME_KERNEL,
	};
}

int symbols_note_process(struct symbolizer *s, pid_t pid)
{
	return process_read_maps(&s->processes, process_get(&s->processes, pid));
}

void symbols_note_exec(struct symbolizer *s, pid_t pid, uint64_t exec_ns)
{
	struct process *p = process_find(&s->processes, pid);
	if (!p)
		return;
	if (p->jit && p->jit_since_ns <= exec_ns) { /* the new image's JIT writes its own */
		grow_array((void **)&s->old_jit, &s->old_jit_cap, s->nold_jit + 1,
			   sizeof(*s->old_jit));
		s->old_jit[s->nold_jit++] = p->jit;
		p->jit = NULL;
	}
	if (p->loaded && p->read_ns > exec_ns)
		return; /* read after the exec: already the new image */
	process_forget_maps(p);
}

int symbols_file(struct symbolizer *s, const char *path, uint64_t vaddr, bool is_return,
		 struct sym_frame *out, int max)
{
	struct binary *b = binary_from_path(&s->binaries, path);
	if (!b || !b->valid)
		return -1;
	if (max < 1)
		return 0;
	s->stats.lookups++;
	return binary_lookup(s, b, vaddr, is_return, out, max);
}

static void add_jit_stats(struct symbols_stats *out, const struct perfmap *m)
{
	struct perfmap_stats ps;
	perfmap_get_stats(m, &ps);
	out->jit_map_lines += ps.lines;
	out->jit_map_bad_lines += ps.bad_lines;
	out->jit_map_skipped_bytes += ps.skipped;
}

void symbols_get_stats(const struct symbolizer *s, struct symbols_stats *out)
{
	*out = s->stats;
	out->binaries_opened = s->binaries.opened;
	out->maps_reads = s->processes.maps_reads;
	uint64_t *v;
	for (size_t pos = 0; hashmap_next(&s->processes.by_pid, &pos, NULL, &v);) {
		const struct process *p = (const struct process *)(uintptr_t)*v;
		if (p->jit)
			add_jit_stats(out, p->jit);
	}
	for (size_t i = 0; i < s->nold_jit; i++)
		add_jit_stats(out, s->old_jit[i]);
}
