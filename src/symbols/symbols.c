/* symbols — addresses to frames: the symbolizer's entry points and its
 * cache of answers. See symbols.h for the contract; how one address in one
 * binary becomes frames is resolve.h's. */
#define _GNU_SOURCE
#include "symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "binaries.h"
#include "cuindex.h"
#include "demangle.h"
#include "elfsyms.h"
#include "fderanges.h"
#include "hashmap.h"
#include "kallsyms.h"
#include "order.h"
#include "perfmap.h"
#include "resolve.h"
#include "procmaps.h"
#include "strpool.h"
#include "util.h"

#define UNKNOWN_NAME "[unknown]"
_Static_assert(RESOLVE_MAX_CHAIN < 256, "the result cache stores a chain length in 8 bits");

/* ------------------------------------------------------------------------ */
/* Processes and their mappings.                                            */

struct mapping {
	uint64_t start, end, offset;
	uint64_t dev, inode;
	const char *path; /* interned; "" for anonymous memory */
	bool exec;        /* mapped executable */
	bool deleted;
	bool open_failed;
	struct binary *bin;
};

struct process {
	pid_t pid;
	bool loaded; /* maps read since the last exec */
	uint64_t read_ns; /* CLOCK_MONOTONIC when the maps were last read */
	bool gone;   /* reading maps failed: it exited; keep what we have */
	struct mapping *maps;
	size_t nmaps, maps_cap;
	/* Addresses that still missed right after a re-read: do not re-read
	 * for them again (a bad address must not cost a file read each time). */
	struct hashmap misses; /* addresses (values unused): unmapped ones, and with
				* the top bit set, return addresses in non-code */
	struct perfmap *jit;    /* its /tmp/perf-PID.map, once JIT code is seen */
	uint64_t jit_since_ns;  /* CLOCK_MONOTONIC when it was looked for */
	uint64_t jit_read_ns;   /* ... and last read */
	const char *jit_module; /* "/tmp/perf-PID.map", the JIT frames' module */
};

struct symbolizer {
	struct strpool strings;
	struct frame_namer names;
	struct binary_cache binaries;
	struct hashmap processes; /* pid -> struct process * */
	struct sym_frame *frames;  /* the result cache's frames */
	size_t nframes, frames_cap;
	struct kallsyms kernel;
	/* Perf maps of images replaced by exec: frames still use their names. */
	struct perfmap **old_jit;
	size_t nold_jit, old_jit_cap;
	struct symbols_stats stats;
};

/* ------------------------------------------------------------------------ */
/* Resolution of one address in one binary.                                  */

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

static struct binary *mapping_binary(struct symbolizer *s, pid_t pid, struct mapping *m)
{
	if (m->bin || m->open_failed)
		return m->bin;
	if (strcmp(m->path, VDSO_PATH) == 0)
		m->bin = vdso_binary(&s->binaries, m->end - m->start);
	else if (m->inode != 0 && m->path[0] == '/')
		m->bin = binary_cached(&s->binaries, m->dev, m->inode);
	if (!m->bin && m->inode != 0 && m->path[0] == '/') {
		struct procmaps_entry e = {
			.start = m->start, .end = m->end, .offset = m->offset,
			.dev = m->dev, .inode = m->inode,
			.exec = m->exec, .deleted = m->deleted, .path = m->path,
		};
		int fd = procmaps_open_mapped(pid, &e);
		if (fd >= 0)
			m->bin = binary_from_fd(&s->binaries, fd, m->path);
	}
	m->open_failed = m->bin == NULL;
	return m->bin;
}

/* ------------------------------------------------------------------------ */
/* /proc/PID/maps                                                            */

struct maps_reading {
	struct symbolizer *s;
	struct mapping *maps;
	size_t n, cap;
};

static int add_mapping(const struct procmaps_entry *e, void *arg)
{
	struct maps_reading *r = arg;
	grow_array((void **)&r->maps, &r->cap, r->n + 1, sizeof(*r->maps));
	r->maps[r->n++] = (struct mapping){
		.start = e->start, .end = e->end, .offset = e->offset,
		.dev = e->dev, .inode = e->inode,
		.path = strpool_intern(&r->s->strings, e->path),
		.exec = e->exec,
		.deleted = e->deleted,
	};
	return 0;
}

/* Keeps the binaries of mappings that did not change across a re-read. */
static void carry_over_binaries(struct mapping *fresh, size_t nfresh, const struct mapping *old,
				size_t nold)
{
	size_t j = 0;
	for (size_t i = 0; i < nfresh; i++) {
		while (j < nold && old[j].start < fresh[i].start)
			j++;
		if (j < nold && old[j].start == fresh[i].start && old[j].end == fresh[i].end &&
		    old[j].inode == fresh[i].inode && old[j].offset == fresh[i].offset &&
		    old[j].path == fresh[i].path) {
			fresh[i].bin = old[j].bin;
			fresh[i].open_failed = old[j].open_failed;
		}
	}
}

static int process_read_maps(struct symbolizer *s, struct process *p)
{
	uint64_t t0 = monotonic_ns();
	struct maps_reading r = {.s = s};
	if (procmaps_each(p->pid, add_mapping, &r) < 0) {
		p->gone = true;
		return -1;
	}
	s->stats.maps_reads++;
	struct mapping *maps = r.maps;
	size_t n = r.n, cap = r.cap;
	if (n == 0 && p->nmaps > 0) { /* a zombie has no maps: keep the old ones */
		free(maps);
		p->gone = true;
		return -1;
	}
	carry_over_binaries(maps, n, p->maps, p->nmaps);
	free(p->maps);
	p->maps = maps;
	p->nmaps = n;
	p->maps_cap = cap;
	p->loaded = true;
	p->read_ns = t0;
	p->gone = false;
	hashmap_free(&p->misses);
	return 0;
}

static struct process *process_get(struct symbolizer *s, pid_t pid)
{
	uint64_t *slot = hashmap_put(&s->processes, (uint64_t)pid, NULL);
	if (!*slot) {
		struct process *p = xcalloc(1, sizeof(*p));
		p->pid = pid;
		*slot = (uintptr_t)p;
	}
	return (struct process *)(uintptr_t)*slot;
}

static void process_forget_maps(struct process *p)
{
	free(p->maps);
	p->maps = NULL;
	p->nmaps = p->maps_cap = 0;
	p->loaded = false;
	p->gone = false;
	hashmap_free(&p->misses);
}

static struct mapping *process_mapping_at(struct process *p, uint64_t addr)
{
	size_t lo = ORDER_PARTITION(p->nmaps, i, p->maps[i].start <= addr);
	if (lo > 0 && addr < p->maps[lo - 1].end)
		return &p->maps[lo - 1];
	return NULL;
}

/* A miss re-reads the maps once (the address may be a new mmap). */
static struct mapping *process_find_mapping(struct symbolizer *s, struct process *p,
					    uint64_t addr)
{
	if (!p->loaded && !p->gone)
		process_read_maps(s, p);
	struct mapping *m = process_mapping_at(p, addr);
	if (m || p->gone || hashmap_find(&p->misses, addr))
		return m;
	if (process_read_maps(s, p) == 0)
		m = process_mapping_at(p, addr);
	if (!m)
		hashmap_put(&p->misses, addr, NULL);
	return m;
}

static void process_free(struct process *p)
{
	perfmap_free(p->jit);
	free(p->maps);
	hashmap_free(&p->misses);
	free(p);
}

/* ------------------------------------------------------------------------ */
/* JIT code: /tmp/perf-PID.map                                               */

/* Where a JIT puts code: anonymous executable memory (maybe named with
 * PR_SET_VMA_ANON_NAME), or, in a process whose perf map was found, memory
 * mapped after the maps were last read (no mapping holds it: the process
 * exited, or mapped it since). Any other address that no mapping holds
 * does not look for a map (a wild one would only cost a failed open). */
static bool may_be_jit(const struct process *p, const struct mapping *m)
{
	if (!m)
		return p->jit && perfmap_is_open(p->jit);
	return m->exec && (m->path[0] == '\0' || strncmp(m->path, "[anon:", 6) == 0);
}

/* The perf map's function holding addr (addr - 1 for a return address).
 * What the JIT appended is read on a miss, and every JIT_REREAD_NS anyway:
 * a JIT that rewrites code in place names it anew at the same address. */
#define JIT_REREAD_NS 50000000ull
static const struct perfmap_sym *jit_symbol(struct process *p, uint64_t addr, bool is_return)
{
	if (!p->jit) {
		p->jit = perfmap_new(p->pid);
		p->jit_since_ns = monotonic_ns();
	}
	uint64_t pc = is_return && addr > 0 ? addr - 1 : addr;
	uint64_t now = monotonic_ns();
	bool reread = now - p->jit_read_ns >= JIT_REREAD_NS;
	if (reread) {
		perfmap_refresh(p->jit, p->gone);
		p->jit_read_ns = now;
	}
	const struct perfmap_sym *f = perfmap_find(p->jit, pc);
	if (!f && !reread && perfmap_refresh(p->jit, p->gone) > 0)
		f = perfmap_find(p->jit, pc);
	return f;
}

static int jit_frame(struct symbolizer *s, struct process *p, const struct perfmap_sym *f,
		     struct sym_frame *out)
{
	if (!p->jit_module) {
		char path[64];
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)p->pid);
		p->jit_module = strpool_intern(&s->strings, path);
	}
	*out = (struct sym_frame){
		.name = f->name, .module = p->jit_module, .file = "", .kind = FRAME_JIT,
	};
	s->stats.jit_frames++;
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
	return s;
}

void symbols_free(struct symbolizer *s)
{
	if (!s)
		return;
	binary_cache_free(&s->binaries);
	uint64_t *v;
	for (size_t pos = 0; hashmap_next(&s->processes, &pos, NULL, &v);)
		process_free((struct process *)(uintptr_t)*v);
	for (size_t i = 0; i < s->nold_jit; i++)
		perfmap_free(s->old_jit[i]);
	free(s->old_jit);
	kallsyms_free(&s->kernel);
	free(s->frames);
	hashmap_free(&s->names.demangled);
	hashmap_free(&s->processes);
	strpool_free(&s->strings);
	free(s);
}

int symbols_user(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return,
		 struct sym_frame *out, int max)
{
	if (max < 1)
		return 0;
	s->stats.lookups++;
	struct process *p = process_get(s, pid);
	struct mapping *m = process_find_mapping(s, p, addr);
	const struct perfmap_sym *jit = may_be_jit(p, m) ? jit_symbol(p, addr, is_return) : NULL;
	if (jit)
		return jit_frame(s, p, jit, out);
	if (!m || m->path[0] == '\0')
		return unknown_frame(s, UNKNOWN_NAME, "", out);
	uint64_t off = addr - m->start + m->offset;
	struct binary *b = mapping_binary(s, pid, m);
	uint64_t vaddr;
	if (!b || !binary_offset_to_vaddr(b, off, &vaddr)) {
		const char *label = module_label(&s->strings, m->path);
		return unknown_frame(s, unknown_frame_name(&s->strings, label, off), m->path, out);
	}
	return binary_lookup(s, b, vaddr, is_return, out, max);
}

const char *symbols_user_not_code(struct symbolizer *s, pid_t pid, uint64_t addr)
{
	struct process *p = process_get(s, pid);
	struct mapping *m = process_find_mapping(s, p, addr);
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
		if (process_read_maps(s, p) == 0)
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
	return process_read_maps(s, process_get(s, pid));
}

void symbols_note_exec(struct symbolizer *s, pid_t pid, uint64_t exec_ns)
{
	uint64_t *slot = hashmap_find(&s->processes, (uint64_t)pid);
	if (!slot)
		return;
	struct process *p = (struct process *)(uintptr_t)*slot;
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
	uint64_t *v;
	for (size_t pos = 0; hashmap_next(&s->processes, &pos, NULL, &v);) {
		const struct process *p = (const struct process *)(uintptr_t)*v;
		if (p->jit)
			add_jit_stats(out, p->jit);
	}
	for (size_t i = 0; i < s->nold_jit; i++)
		add_jit_stats(out, s->old_jit[i]);
}
