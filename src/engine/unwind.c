/* unwind — the in-kernel unwinder's tables. See unwind.h. */
#define _GNU_SOURCE
#include "unwind.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cfi.h"
#include "cficache.h"
#include "errbuf.h"
#include "perfmap.h"
#include "procmaps.h"
#include "pytramp.h"
#include "sonde_abi.h"
#include "hashmap.h"
#include "util.h"

/* A table in the rows. */
struct loaded {
	const struct cfi_table *t; /* a cficache reference; NULL: slot free */
	uint32_t first, count;
	uint32_t refs; /* processes whose mappings use it, and a preload */
	/* the files it is known by in unwind_files (one binary may be reached
	 * as several files: copies, other mount namespaces) */
	struct sonde_unwind_file_key *files;
	size_t nfiles, files_cap;
};

/* Free entries [first, first + count) of an array, sorted by first, merged.
 * Entries given back wait EXTENT_COOL_NS before they are reused: a sampler
 * that read a process's old entry just before it was replaced may still be
 * walking its rows (microseconds), which must not change under it. */
struct extent {
	uint32_t first, count;
	uint64_t freed_ns; /* in cooling: when it was given back */
};
struct extents {
	struct extent *v; /* free */
	size_t n, cap;
	struct extent *cooling; /* given back, not yet free, oldest first */
	size_t ncooling, cooling_cap;
};
#define EXTENT_COOL_NS 10000000ull

struct proc {
	pid_t pid;
	uint32_t *tables; /* indexes into u->loaded this process holds (one each) */
	size_t ntables, cap;
	uint64_t loaded_ns; /* when its maps were last read (0: never) */
	uint32_t first, n;  /* its mappings in the kernel's array */
	uint64_t shape;     /* a hash of those mappings' addresses */
	uint64_t exec_maps; /* exec_maps_hash when its maps were last read */
	uint32_t reload_ms; /* the least time between two reloads a miss asks for */
	bool in_kernel;
	/* Python's -X perf trampolines (unwind_python_trampolines): their size
	 * and the stride assumed for an arena the perf map names one copy of;
	 * the process's perf map. */
	uint32_t tramp_size, tramp_stride;
	struct perfmap *perfmap;
};

struct unwind {
	int procs_fd, files_fd, found_fd;
	struct sonde_unwind_row *rows; /* the mmapped arrays */
	struct sonde_unwind_mapping *mappings;
	size_t rows_bytes, mappings_bytes;
	struct extents free_rows, free_mappings;
	struct cfi_cache *cache;
	struct loaded *loaded;
	size_t nloaded, loaded_cap;
	struct hashmap by_table; /* table pointer -> index in loaded */
	struct proc *procs;
	size_t nprocs, procs_cap;
	struct hashmap by_pid; /* pid -> index in procs */
	uint32_t *preloaded; /* tables held by unwind_preload until unwind_free */
	size_t npreloaded, preloaded_cap;
	struct unwind_stats stats;
	/* The rows of one trampoline copy, placed once (tramp_count 0: not yet). */
	uint32_t tramp_first, tramp_count;
};

static void extents_init(struct extents *x, uint32_t count)
{
	grow_array((void **)&x->v, &x->cap, 1, sizeof(*x->v));
	x->v[0] = (struct extent){ 0, count, 0 };
	x->n = 1;
}

static void extents_free(struct extents *x, uint32_t first, uint32_t count);

/* First fit, among the free entries and those that cooled long enough. */
static bool extents_alloc(struct extents *x, uint32_t count, uint32_t *first)
{
	uint64_t now = monotonic_ns();
	size_t cooled = 0;
	while (cooled < x->ncooling && now - x->cooling[cooled].freed_ns >= EXTENT_COOL_NS) {
		extents_free(x, x->cooling[cooled].first, x->cooling[cooled].count);
		cooled++;
	}
	if (cooled) {
		memmove(x->cooling, x->cooling + cooled, (x->ncooling - cooled) * sizeof(*x->cooling));
		x->ncooling -= cooled;
	}
	for (size_t i = 0; i < x->n; i++) {
		if (x->v[i].count < count)
			continue;
		*first = x->v[i].first;
		x->v[i].first += count;
		x->v[i].count -= count;
		if (x->v[i].count == 0) {
			memmove(&x->v[i], &x->v[i + 1], (x->n - i - 1) * sizeof(*x->v));
			x->n--;
		}
		return true;
	}
	return count == 0 ? (*first = 0, true) : false;
}

static void extents_release(struct extents *x, uint32_t first, uint32_t count)
{
	if (count == 0)
		return;
	grow_array((void **)&x->cooling, &x->cooling_cap, x->ncooling + 1, sizeof(*x->cooling));
	x->cooling[x->ncooling++] = (struct extent){ first, count, monotonic_ns() };
}

static void extents_free(struct extents *x, uint32_t first, uint32_t count)
{
	if (count == 0)
		return;
	size_t i = 0;
	while (i < x->n && x->v[i].first < first)
		i++;
	grow_array((void **)&x->v, &x->cap, x->n + 1, sizeof(*x->v));
	memmove(&x->v[i + 1], &x->v[i], (x->n - i) * sizeof(*x->v));
	x->v[i] = (struct extent){ first, count, 0 };
	x->n++;
	/* Merge with the next, then with the previous. */
	if (i + 1 < x->n && first + count == x->v[i + 1].first) {
		x->v[i].count += x->v[i + 1].count;
		memmove(&x->v[i + 1], &x->v[i + 2], (x->n - i - 2) * sizeof(*x->v));
		x->n--;
	}
	if (i > 0 && x->v[i - 1].first + x->v[i - 1].count == first) {
		x->v[i - 1].count += x->v[i].count;
		memmove(&x->v[i], &x->v[i + 1], (x->n - i - 1) * sizeof(*x->v));
		x->n--;
	}
}

static void *map_array(int fd, size_t entries, size_t size, size_t *bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	*bytes = (entries * size + page - 1) / page * page;
	void *p = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

struct unwind *unwind_new(const struct unwind_maps *maps, uint32_t row_capacity, char *err,
			  size_t errlen)
{
	struct unwind *u = xcalloc(1, sizeof(*u));
	u->procs_fd = maps->procs_fd;
	u->files_fd = maps->files_fd;
	u->found_fd = maps->found_fd;
	int rows_fd = maps->rows_fd, mappings_fd = maps->mappings_fd;
	u->rows = map_array(rows_fd, row_capacity, sizeof(*u->rows), &u->rows_bytes);
	u->mappings = map_array(mappings_fd, SONDE_UNWIND_MAP_SLOTS, sizeof(*u->mappings),
				&u->mappings_bytes);
	if (!u->rows || !u->mappings) {
		errbuf_set(err, errlen, "cannot map the unwind tables into memory: %s",
			   strerror(errno));
		unwind_free(u);
		return NULL;
	}
	extents_init(&u->free_rows, row_capacity);
	extents_init(&u->free_mappings, SONDE_UNWIND_MAP_SLOTS);
	/* Tables no process uses stay built while they fit: a program run
	 * again, or a library loaded again, costs no rebuild. */
	u->cache = cfi_cache_new((size_t)row_capacity * sizeof(struct cfi_row) * 4);
	u->stats.row_capacity = row_capacity;
	return u;
}

void unwind_free(struct unwind *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nloaded; i++) {
		if (u->loaded[i].t)
			cfi_cache_put(u->cache, u->loaded[i].t);
		free(u->loaded[i].files);
	}
	free(u->preloaded);
	for (size_t i = 0; i < u->nprocs; i++) {
		free(u->procs[i].tables);
		perfmap_free(u->procs[i].perfmap);
	}
	cfi_cache_free(u->cache);
	if (u->rows)
		munmap(u->rows, u->rows_bytes);
	if (u->mappings)
		munmap(u->mappings, u->mappings_bytes);
	free(u->free_rows.v);
	free(u->free_rows.cooling);
	free(u->free_mappings.v);
	free(u->free_mappings.cooling);
	free(u->loaded);
	free(u->procs);
	hashmap_free(&u->by_table);
	hashmap_free(&u->by_pid);
	free(u);
}

/* ---- tables ------------------------------------------------------------- */

/* The index in u->loaded of table t, placed in the rows if it is not yet;
 * takes over the cache reference (given back when it was there already).
 * False when it does not fit. */
static bool table_hold(struct unwind *u, const struct cfi_table *t, uint32_t *index)
{
	uint64_t found;
	uint32_t idx;
	if (hashmap_get(&u->by_table, (uint64_t)(uintptr_t)t, &found) &&
	    u->loaded[found].t == t) {
		idx = (uint32_t)found;
		cfi_cache_put(u->cache, t); /* one reference per loaded table */
		u->loaded[idx].refs++;
		*index = idx;
		return true;
	}
	uint32_t first;
	if (t->nrows >= (1u << SONDE_UNWIND_ROW_STEPS) || !extents_alloc(&u->free_rows, t->nrows, &first)) {
		u->stats.over_budget++;
		cfi_cache_put(u->cache, t);
		return false;
	}
	memcpy(&u->rows[first], t->rows, (size_t)t->nrows * sizeof(*t->rows));
	for (idx = 0; idx < u->nloaded && u->loaded[idx].t; idx++)
		;
	if (idx == u->nloaded) {
		grow_array((void **)&u->loaded, &u->loaded_cap, u->nloaded + 1, sizeof(*u->loaded));
		u->nloaded++;
	}
	u->loaded[idx] = (struct loaded){ .t = t, .first = first, .count = t->nrows, .refs = 1 };
	hashmap_set(&u->by_table, (uint64_t)(uintptr_t)t, idx);
	u->stats.tables_loaded++;
	u->stats.tables++;
	u->stats.rows += t->nrows;
	*index = idx;
	return true;
}

/* Makes table idx findable in the kernel by the file (dev, ino, size) it
 * was read from, so the sampler finds it in processes that map that file
 * before user space reads their maps. */
static void table_name_file(struct unwind *u, uint32_t idx, uint64_t dev, uint64_t ino,
			    const struct stat *st)
{
	struct loaded *l = &u->loaded[idx];
	struct sonde_unwind_file_key key = { (uint64_t)major(dev) << 20 | minor(dev), ino };
	for (size_t i = 0; i < l->nfiles; i++)
		if (l->files[i].dev == key.dev && l->files[i].ino == key.ino)
			return;
	struct sonde_unwind_file f = { .size = (uint64_t)st->st_size,
				       .mtime_sec = st->st_mtim.tv_sec,
				       .mtime_nsec = (uint32_t)st->st_mtim.tv_nsec,
				       .base = l->t->base, .first = l->first, .count = l->count };
	for (uint32_t i = 0; i < l->t->nsegs && f.nsegs < SONDE_UNWIND_FILE_SEGS; i++) {
		f.segs[f.nsegs].offset = l->t->segs[i].offset;
		f.segs[f.nsegs].vaddr = l->t->segs[i].vaddr;
		f.segs[f.nsegs].filesz = l->t->segs[i].filesz;
		f.nsegs++;
	}
	/* Full (SONDE_UNWIND_FILES): the process waits for user space, as
	 * before; another table's entry for the same file is replaced. */
	if (bpf_map_update_elem(u->files_fd, &key, &f, BPF_ANY) != 0)
		return;
	grow_array((void **)&l->files, &l->files_cap, l->nfiles + 1, sizeof(*l->files));
	l->files[l->nfiles++] = key;
}

static void table_release(struct unwind *u, uint32_t idx)
{
	struct loaded *l = &u->loaded[idx];
	if (--l->refs > 0)
		return;
	/* Before its rows are given back (they cool 10 ms before reuse, and a
	 * walk that read the entry just before is over long before). */
	for (size_t i = 0; i < l->nfiles; i++) {
		struct sonde_unwind_file f;
		if (bpf_map_lookup_elem(u->files_fd, &l->files[i], &f) == 0 && f.first == l->first &&
		    f.count == l->count)
			bpf_map_delete_elem(u->files_fd, &l->files[i]);
	}
	free(l->files);
	extents_release(&u->free_rows, l->first, l->count);
	hashmap_remove(&u->by_table, (uint64_t)(uintptr_t)l->t);
	cfi_cache_put(u->cache, l->t);
	u->stats.tables_unloaded++;
	u->stats.tables--;
	u->stats.rows -= l->count;
	*l = (struct loaded){ 0 };
}

/* ---- processes ---------------------------------------------------------- */

static struct proc *proc_of(struct unwind *u, pid_t pid)
{
	uint64_t idx;
	if (hashmap_get(&u->by_pid, (uint64_t)pid, &idx))
		return &u->procs[idx];
	grow_array((void **)&u->procs, &u->procs_cap, u->nprocs + 1, sizeof(*u->procs));
	u->procs[u->nprocs] = (struct proc){ .pid = pid, .reload_ms = UNWIND_RELOAD_MIN_MS };
	hashmap_set(&u->by_pid, (uint64_t)pid, u->nprocs);
	return &u->procs[u->nprocs++];
}

/* Drops what a process holds: its tables, its mappings. */
static void proc_release(struct unwind *u, struct proc *p)
{
	for (size_t i = 0; i < p->ntables; i++)
		table_release(u, p->tables[i]);
	free(p->tables);
	p->tables = NULL;
	p->ntables = p->cap = 0;
	if (p->in_kernel) {
		extents_release(&u->free_mappings, p->first, p->n);
		u->stats.processes--;
	}
	p->in_kernel = false;
	p->first = p->n = 0;
}

/* One read of a process's maps. */
struct load {
	struct unwind *u;
	pid_t pid;
	struct sonde_unwind_mapping *m; /* SONDE_UNWIND_MAPPINGS */
	uint32_t n;
	uint32_t *tables; /* held for this load */
	size_t ntables, cap;
};

/* The table of one file mapping, or NULL; *st: the file's status. The
 * file is opened as mapped (procmaps_open_mapped). */
static const struct cfi_table *mapping_table(struct unwind *u, pid_t pid,
					     const struct procmaps_entry *e, struct stat *st)
{
	if (e->path[0] != '/')
		return NULL;
	char err[256];
	int fd = procmaps_open_mapped(pid, e);
	if (fd < 0)
		return NULL;
	if (fstat(fd, st) != 0)
		memset(st, 0, sizeof(*st));
	const struct cfi_table *t = cfi_cache_get_fd(u->cache, fd, e->path, err, sizeof(err));
	close(fd);
	if (t && t->nrows == 0) {
		cfi_cache_put(u->cache, t);
		return NULL;
	}
	return t;
}

/* An anonymous mapping of a process with Python trampolines that holds
 * them: every copy described by the trampoline rows. */
static bool trampoline_mapping(struct unwind *u, struct proc *p, const struct procmaps_entry *e,
			       struct sonde_unwind_mapping *m)
{
	uint32_t stride;
	if (!p->tramp_size || !u->tramp_count || e->path[0] || !p->perfmap)
		return false;
	perfmap_refresh(p->perfmap, false);
	if (!pytramp_arena(p->perfmap, e->start, e->end, p->tramp_size, p->tramp_stride, &stride))
		return false;
	m->adj = stride;
	m->first = u->tramp_first;
	m->count = SONDE_UNWIND_PERIODIC | u->tramp_count;
	u->stats.trampoline_arenas++;
	return true;
}

static int add_mapping(const struct procmaps_entry *e, void *arg)
{
	struct load *l = arg;
	struct unwind *u = l->u;
	if (!e->exec)
		return 0;
	if (l->n >= SONDE_UNWIND_MAPPINGS) {
		u->stats.mappings_dropped++;
		u->stats.no_table++;
		return 0;
	}
	struct sonde_unwind_mapping *m = &l->m[l->n++];
	*m = (struct sonde_unwind_mapping){ .start = e->start, .end = e->end };
	if (trampoline_mapping(u, proc_of(u, l->pid), e, m))
		return 0;
	uint64_t vaddr;
	struct stat st;
	const struct cfi_table *t = mapping_table(u, l->pid, e, &st);
	uint32_t idx;
	if (!t) {
		u->stats.no_table++;
		return 0;
	}
	if (!cfi_table_vaddr(t, e->offset, &vaddr)) {
		cfi_cache_put(u->cache, t);
		u->stats.no_table++;
		return 0;
	}
	if (!table_hold(u, t, &idx)) {
		u->stats.no_table++;
		return 0;
	}
	grow_array((void **)&l->tables, &l->cap, l->ntables + 1, sizeof(*l->tables));
	l->tables[l->ntables++] = idx;
	if (!e->deleted && st.st_size > 0)
		table_name_file(u, idx, e->dev, e->inode, &st);
	/* pc - bias = vaddr; vaddr - base = the row key. */
	m->adj = e->start - vaddr + t->base;
	m->first = u->loaded[idx].first;
	m->count = u->loaded[idx].count;
	return 0;
}

static int hash_exec_mapping(const struct procmaps_entry *e, void *arg)
{
	uint64_t *h = arg;
	if (e->exec) {
		uint64_t v[4] = {e->start, e->end, e->offset, e->inode};
		*h = hash_bytes(v, sizeof(v), *h);
	}
	return 0;
}

/* A hash of a process's executable mappings as /proc/PID/maps lists them
 * now: reading them costs ~50 us, loading their tables far more. */
static uint64_t exec_maps_hash(pid_t pid)
{
	uint64_t h = 1;
	procmaps_each(pid, hash_exec_mapping, &h);
	return h;
}

int unwind_load_pid(struct unwind *u, pid_t pid, char *err, size_t errlen)
{
	struct proc *p = proc_of(u, pid);
	p->loaded_ns = monotonic_ns();
	p->exec_maps = exec_maps_hash(pid);
	struct load l = { .u = u, .pid = pid };
	l.m = xcalloc(SONDE_UNWIND_MAPPINGS, sizeof(*l.m));
	int r = procmaps_each(pid, add_mapping, &l);
	struct sonde_unwind_proc kp = { 0, l.n };
	uint32_t key = (uint32_t)pid;
	int e = 0;
	if (r == 0 && !extents_alloc(&u->free_mappings, l.n, &kp.first))
		e = ENOSPC;
	if (r == 0 && e == 0) {
		memcpy(&u->mappings[kp.first], l.m, (size_t)l.n * sizeof(*l.m));
		if (bpf_map_update_elem(u->procs_fd, &key, &kp, BPF_ANY) != 0) {
			e = errno;
			extents_free(&u->free_mappings, kp.first, l.n); /* never seen by the kernel */
		}
	}
	uint64_t shape = hash_bytes(l.m, (size_t)l.n * sizeof(*l.m), 0);
	free(l.m);
	if (r < 0 || e) {
		for (size_t i = 0; i < l.ntables; i++)
			table_release(u, l.tables[i]);
		free(l.tables);
		u->stats.load_failures++;
		if (r < 0)
			return errbuf_set(err, errlen, "cannot read the mappings of PID %d (gone?)",
					  (int)pid);
		return errbuf_set(err, errlen, "cannot load the unwind tables of PID %d: %s",
				  (int)pid, strerror(e));
	}
	/* A reload that found the same mappings as before did not help the
	 * miss (a pc no mapping holds: a frame-pointer walk through code
	 * without them): the next one waits twice as long. */
	if (p->in_kernel && shape == p->shape)
		p->reload_ms = p->reload_ms * 2 > UNWIND_RELOAD_MAX_MS ? UNWIND_RELOAD_MAX_MS
								 : p->reload_ms * 2;
	else
		p->reload_ms = UNWIND_RELOAD_MIN_MS;
	p->shape = shape;
	/* The kernel uses the new mappings now: the old ones can go. */
	proc_release(u, p);
	/* What its samples found by file is in its mappings now. */
	bpf_map_delete_elem(u->found_fd, &key);
	p->tables = l.tables;
	p->ntables = l.ntables;
	p->cap = l.cap;
	p->first = kp.first;
	p->n = kp.n;
	p->in_kernel = true;
	u->stats.processes++;
	u->stats.loads++;
	return 0;
}

int unwind_preload(struct unwind *u, const char *path)
{
	char err[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	const struct cfi_table *t = cfi_cache_get_fd(u->cache, fd, path, err, sizeof(err));
	close(fd);
	if (t && t->nrows == 0) {
		cfi_cache_put(u->cache, t);
		t = NULL;
	}
	uint32_t idx;
	if (!t || !table_hold(u, t, &idx))
		return -1;
	grow_array((void **)&u->preloaded, &u->preloaded_cap, u->npreloaded + 1,
		   sizeof(*u->preloaded));
	u->preloaded[u->npreloaded++] = idx;
	table_name_file(u, idx, st.st_dev, st.st_ino, &st);
	return 0;
}

void unwind_on_miss(struct unwind *u, pid_t pid)
{
	struct proc *p = proc_of(u, pid);
	/* While reloads wait (they found nothing new), a miss still reloads
	 * at once when the process mapped new code since (dlopen: its
	 * samples would otherwise end early until the wait is over, 130 ms
	 * of them once). */
	if (p->loaded_ns && monotonic_ns() - p->loaded_ns < p->reload_ms * 1000000ull &&
	    exec_maps_hash(pid) == p->exec_maps)
		return;
	char err[256];
	if (unwind_load_pid(u, pid, err, sizeof(err)) == 0)
		u->stats.miss_reloads++;
}

void unwind_on_exit(struct unwind *u, pid_t pid)
{
	uint64_t idx;
	if (!hashmap_get(&u->by_pid, (uint64_t)pid, &idx) || !u->procs[idx].in_kernel)
		return;
	struct sonde_unwind_proc kp;
	uint32_t key = (uint32_t)pid;
	if (bpf_map_lookup_elem(u->procs_fd, &key, &kp) == 0)
		return; /* another thread of it still runs */
	proc_release(u, &u->procs[idx]);
	u->procs[idx].loaded_ns = 0;
	u->procs[idx].tramp_size = 0; /* a process that reuses the PID is another */
	perfmap_free(u->procs[idx].perfmap);
	u->procs[idx].perfmap = NULL;
}

int unwind_python_trampolines(struct unwind *u, pid_t pid, const uint8_t *code, uint32_t size,
			      uint32_t stride, char *err, size_t errlen)
{
	struct cfi_row rows[PYTRAMP_ROWS];
	uint32_t n;
	if (!pytramp_rows(code, size, rows, &n))
		return errbuf_set(err, errlen,
				  "its -X perf trampoline is not the x86-64 code sonde knows: stacks "
				  "end at it");
	if (!u->tramp_count) {
		if (!extents_alloc(&u->free_rows, n, &u->tramp_first))
			return errbuf_set(err, errlen, "no room in the unwind rows for its trampolines");
		memcpy(&u->rows[u->tramp_first], rows, n * sizeof(*rows));
		u->tramp_count = n;
	}
	struct proc *p = proc_of(u, pid);
	p->tramp_size = size;
	p->tramp_stride = stride;
	if (!p->perfmap)
		p->perfmap = perfmap_new(pid);
	/* Its arenas now: the next ones come as table misses. */
	return p->in_kernel ? unwind_load_pid(u, pid, err, errlen) : 0;
}

void unwind_get_stats(const struct unwind *u, struct unwind_stats *out)
{
	*out = u->stats;
}
