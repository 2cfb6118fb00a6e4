/* procs — the processes the symbolizer has seen and their mappings. See
 * procs.h for the contract. */
#include "procs.h"

#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "perfmap.h"
#include "procmaps.h"
#include "util.h"

struct maps_reading {
	struct process_table *t;
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
		.path = strpool_intern(r->t->strings, e->path),
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

int process_read_maps(struct process_table *t, struct process *p)
{
	uint64_t t0 = monotonic_ns();
	struct maps_reading r = {.t = t};
	if (procmaps_each(p->pid, add_mapping, &r) < 0) {
		p->gone = true;
		return -1;
	}
	t->maps_reads++;
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

struct process *process_get(struct process_table *t, pid_t pid)
{
	uint64_t *slot = hashmap_put(&t->by_pid, (uint64_t)pid, NULL);
	if (!*slot) {
		struct process *p = xcalloc(1, sizeof(*p));
		p->pid = pid;
		*slot = (uintptr_t)p;
	}
	return (struct process *)(uintptr_t)*slot;
}

void process_forget_maps(struct process *p)
{
	free(p->maps);
	p->maps = NULL;
	p->nmaps = p->maps_cap = 0;
	p->loaded = false;
	p->gone = false;
	hashmap_free(&p->misses);
}

struct mapping *process_mapping_at(struct process *p, uint64_t addr)
{
	size_t lo = ORDER_PARTITION(p->nmaps, i, p->maps[i].start <= addr);
	if (lo > 0 && addr < p->maps[lo - 1].end)
		return &p->maps[lo - 1];
	return NULL;
}

/* A miss re-reads the maps once (the address may be a new mmap). */
struct mapping *process_find_mapping(struct process_table *t, struct process *p, uint64_t addr)
{
	if (!p->loaded && !p->gone)
		process_read_maps(t, p);
	struct mapping *m = process_mapping_at(p, addr);
	if (m || p->gone || hashmap_find(&p->misses, addr))
		return m;
	if (process_read_maps(t, p) == 0)
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

struct process *process_find(const struct process_table *t, pid_t pid)
{
	uint64_t *slot = hashmap_find(&t->by_pid, (uint64_t)pid);
	return slot ? (struct process *)(uintptr_t)*slot : NULL;
}

void process_table_free(struct process_table *t)
{
	uint64_t *v;
	for (size_t pos = 0; hashmap_next(&t->by_pid, &pos, NULL, &v);)
		process_free((struct process *)(uintptr_t)*v);
	hashmap_free(&t->by_pid);
}

struct binary *mapping_binary(struct binary_cache *c, pid_t pid, struct mapping *m)
{
	if (m->bin || m->open_failed)
		return m->bin;
	if (strcmp(m->path, VDSO_PATH) == 0)
		m->bin = vdso_binary(c, m->end - m->start);
	else if (m->inode != 0 && m->path[0] == '/')
		m->bin = binary_cached(c, m->dev, m->inode);
	if (!m->bin && m->inode != 0 && m->path[0] == '/') {
		struct procmaps_entry e = {
			.start = m->start, .end = m->end, .offset = m->offset,
			.dev = m->dev, .inode = m->inode,
			.exec = m->exec, .deleted = m->deleted, .path = m->path,
		};
		int fd = procmaps_open_mapped(pid, &e);
		if (fd >= 0)
			m->bin = binary_from_fd(c, fd, m->path);
	}
	m->open_failed = m->bin == NULL;
	return m->bin;
}
