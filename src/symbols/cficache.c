/* cficache — unwind tables by build-id, within a budget. See cficache.h. */
#define _GNU_SOURCE
#include "cficache.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi.h"
#include "errbuf.h"
#include "sonde_abi.h"
#include "util.h"

/* What a binary is known by: its build-id, else its file's identity. */
struct key {
	uint8_t kind; /* KEY_BUILD_ID or KEY_FILE */
	uint8_t len;
	uint8_t bytes[64];
};
enum { KEY_BUILD_ID = 1, KEY_FILE = 2 };

enum entry_state {
	ENTRY_TABLE,     /* t holds the table */
	ENTRY_NO_CFI,    /* the binary has no CFI */
	ENTRY_NOT_ELF,   /* not an ELF file */
	ENTRY_TOO_LARGE, /* its table is larger than the whole budget */
};

struct entry {
	struct key key;
	uint8_t state;
	struct cfi_table *t;
	size_t bytes;
	uint32_t refs;
	uint64_t last_use;
};

struct cfi_cache {
	size_t budget;
	struct entry *e;
	size_t n, cap;
	uint64_t clock; /* ticks at every get: the LRU order */
	struct cfi_cache_stats stats;
};

struct cfi_cache *cfi_cache_new(size_t budget)
{
	struct cfi_cache *c = xcalloc(1, sizeof(*c));
	c->budget = budget;
	return c;
}

void cfi_cache_free(struct cfi_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		cfi_table_free(c->e[i].t);
	free(c->e);
	free(c);
}

static void key_of_file(int fd, struct key *k)
{
	struct stat st;
	memset(k, 0, sizeof(*k));
	k->kind = KEY_FILE;
	if (fstat(fd, &st) != 0)
		return;
	uint64_t v[5] = { st.st_dev, st.st_ino, (uint64_t)st.st_size, (uint64_t)st.st_mtim.tv_sec,
			  (uint64_t)st.st_mtim.tv_nsec };
	memcpy(k->bytes, v, sizeof(v));
	k->len = sizeof(v);
}

/* The build-id of the ELF file on fd, else its identity. False when the
 * file is not ELF (*k is then its identity). */
static bool key_of(int fd, struct key *k)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool is_elf = elf && elf_kind(elf) == ELF_K_ELF;
	const void *id;
	ssize_t n = is_elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	if (n > 0 && (size_t)n <= sizeof(k->bytes)) {
		memset(k, 0, sizeof(*k));
		k->kind = KEY_BUILD_ID;
		k->len = (uint8_t)n;
		memcpy(k->bytes, id, (size_t)n);
	} else {
		key_of_file(fd, k);
	}
	if (elf)
		elf_end(elf);
	return is_elf;
}

static struct entry *entry_find(struct cfi_cache *c, const struct key *k)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].key.kind == k->kind && c->e[i].key.len == k->len &&
		    memcmp(c->e[i].key.bytes, k->bytes, k->len) == 0)
			return &c->e[i];
	return NULL;
}

static struct entry *entry_add(struct cfi_cache *c, const struct key *k, uint8_t state)
{
	grow_array((void **)&c->e, &c->cap, c->n + 1, sizeof(*c->e));
	struct entry *e = &c->e[c->n++];
	*e = (struct entry){ .key = *k, .state = state };
	return e;
}

/* Evicts unheld tables, least recently used first, until `need` more
 * bytes fit. False when they cannot. */
static bool make_room(struct cfi_cache *c, size_t need)
{
	while (c->stats.bytes + need > c->budget) {
		struct entry *lru = NULL;
		for (size_t i = 0; i < c->n; i++) {
			struct entry *e = &c->e[i];
			if (e->state == ENTRY_TABLE && e->refs == 0 &&
			    (!lru || e->last_use < lru->last_use))
				lru = e;
		}
		if (!lru)
			return false;
		c->stats.bytes -= lru->bytes;
		c->stats.tables--;
		c->stats.evictions++;
		cfi_table_free(lru->t);
		*lru = c->e[--c->n]; /* the order of entries does not matter */
	}
	return true;
}

static const struct cfi_table *entry_answer(struct cfi_cache *c, struct entry *e,
					    const char *path, char *err, size_t errlen)
{
	const char *name = path ? path : "binary";
	switch (e->state) {
	case ENTRY_TABLE:
		e->refs++;
		e->last_use = ++c->clock;
		return e->t;
	case ENTRY_NO_CFI:
		errbuf_set(err, errlen, "%s: no unwind tables (.eh_frame, .debug_frame)", name);
		return NULL;
	case ENTRY_NOT_ELF:
		errbuf_set(err, errlen, "%s: not an ELF file", name);
		return NULL;
	default:
		errbuf_set(err, errlen, "%s: unwind table of %zu bytes exceeds the budget of %zu",
			   name, e->bytes, c->budget);
		return NULL;
	}
}

const struct cfi_table *cfi_cache_get_fd(struct cfi_cache *c, int fd, const char *path,
					 char *err, size_t errlen)
{
	struct key k;
	bool is_elf = key_of(fd, &k);
	struct entry *e = entry_find(c, &k);
	if (e) {
		c->stats.hits++;
		return entry_answer(c, e, path, err, errlen);
	}
	if (!is_elf) {
		c->stats.not_elf++;
		return entry_answer(c, entry_add(c, &k, ENTRY_NOT_ELF), path, err, errlen);
	}
	struct cfi_table *t = cfi_table_from_fd(fd, path, err, errlen);
	if (!t) {
		c->stats.not_elf++;
		return entry_answer(c, entry_add(c, &k, ENTRY_NOT_ELF), path, err, errlen);
	}
	if (t->nrows == 0) {
		cfi_table_free(t);
		c->stats.no_cfi++;
		return entry_answer(c, entry_add(c, &k, ENTRY_NO_CFI), path, err, errlen);
	}
	c->stats.tables_built++;
	c->stats.rows_built += t->nrows;
	c->stats.unsupported_rows += t->rows_by_cfa[CFI_CFA_UNSUPPORTED];
	size_t bytes = cfi_table_bytes(t);
	if (bytes > c->budget || !make_room(c, bytes)) {
		c->stats.over_budget++;
		cfi_table_free(t);
		if (bytes > c->budget) { /* never fits: remember that */
			e = entry_add(c, &k, ENTRY_TOO_LARGE);
			e->bytes = bytes;
			return entry_answer(c, e, path, err, errlen);
		}
		errbuf_set(err, errlen,
			   "%s: unwind table of %zu bytes does not fit: %zu of %zu bytes are in use",
			   path ? path : "binary", bytes, (size_t)c->stats.bytes, c->budget);
		return NULL;
	}
	e = entry_add(c, &k, ENTRY_TABLE);
	e->t = t;
	e->bytes = bytes;
	c->stats.bytes += bytes;
	c->stats.tables++;
	return entry_answer(c, e, path, err, errlen);
}

const struct cfi_table *cfi_cache_get(struct cfi_cache *c, const char *path, char *err,
				      size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	const struct cfi_table *t = cfi_cache_get_fd(c, fd, path, err, errlen);
	close(fd);
	return t;
}

void cfi_cache_put(struct cfi_cache *c, const struct cfi_table *t)
{
	for (size_t i = 0; t && i < c->n; i++)
		if (c->e[i].t == t && c->e[i].refs > 0) {
			c->e[i].refs--;
			return;
		}
}

void cfi_cache_get_stats(const struct cfi_cache *c, struct cfi_cache_stats *out)
{
	*out = c->stats;
}
