/* binaries — the ELF files the symbolizer reads, one per (device, inode).
 * See binaries.h for the contract. */
#define _GNU_SOURCE
#include "binaries.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define MIN_PAGE_SIZE 4096

struct segment {
	uint64_t offset, vaddr, filesz;
};

struct alloc_section {
	uint64_t addr, size;
	uint32_t sym_shndx; /* its index in the symbol table's file, or UINT32_MAX */
};

static bool section_name_is(Elf *elf, size_t shstrndx, Elf_Scn *scn, const char *name)
{
	GElf_Shdr shdr;
	const char *n = scn && gelf_getshdr(scn, &shdr) ? elf_strptr(elf, shstrndx, shdr.sh_name) : NULL;
	return n && name && strcmp(n, name) == 0;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static void binary_read_segments(struct binary *b, Elf *elf)
{
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return;
	b->segs = xcalloc(phnum ? phnum : 1, sizeof(*b->segs));
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			b->segs[b->nsegs++] = (struct segment){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
}

/* The allocated sections of the binary, in header order (the first one
 * holding an address wins, as in addr2line). Symbols may come from the
 * separate debug file, whose section headers mirror the binary's. */
static void binary_read_sections(struct binary *b, Elf *elf, Elf *symelf)
{
	size_t shstrndx, sym_shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0 || elf_getshdrstrndx(symelf, &sym_shstrndx) != 0)
		return;
	size_t cap = 0;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_ALLOC) || shdr.sh_size == 0)
			continue;
		size_t idx = elf_ndxscn(scn);
		uint32_t sym_shndx = (uint32_t)idx;
		if (symelf != elf) {
			const char *name = elf_strptr(elf, shstrndx, shdr.sh_name);
			if (!section_name_is(symelf, sym_shstrndx, elf_getscn(symelf, idx), name))
				sym_shndx = UINT32_MAX;
		}
		grow_array((void **)&b->secs, &cap, b->nsecs + 1, sizeof(*b->secs));
		b->secs[b->nsecs++] = (struct alloc_section){ shdr.sh_addr, shdr.sh_size, sym_shndx };
	}
}

const struct alloc_section *binary_section_at(const struct binary *b, uint64_t vaddr)
{
	for (size_t i = 0; i < b->nsecs; i++)
		if (vaddr - b->secs[i].addr < b->secs[i].size)
			return &b->secs[i];
	return NULL;
}

/* Which file the function symbols come from: the separate debug file when
 * DWARF came from one (it keeps the full .symtab), else the binary. */
static Elf *binary_symbol_elf(struct binary *b, Elf *main_elf)
{
	Elf *debug_elf = b->dw.dwarf ? dwarf_getelf(b->dw.dwarf) : NULL;
	if (!debug_elf || debug_elf == main_elf)
		return main_elf;
	return elf_has_symtab(debug_elf) ? debug_elf : main_elf;
}

/* What "[name+0xoffset]" calls a module: the file's base name, or the
 * pseudo-path without its brackets ("[vdso]" -> "vdso"). */
const char *module_label(struct strpool *pool, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (base[0] != '[')
		return strpool_intern(pool, base);
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(base + 1, "]"), base + 1);
	return strpool_intern(pool, buf);
}

/* Parses the ELF file open on `fd` (the Dwfl takes the descriptor). */
static void binary_parse(struct binary *b, int fd)
{
	b->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!b->dwfl) {
		close(fd);
		return;
	}
	dwfl_report_begin(b->dwfl);
	/* Base 0 relative to p_vaddr: module addresses are the file's vaddrs. */
	b->mod = dwfl_report_elf(b->dwfl, b->label, b->path, fd, 0, true);
	dwfl_report_end(b->dwfl, NULL, NULL);
	if (!b->mod) {
		close(fd);
		return;
	}
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(b->mod, &bias);
	if (!elf)
		return;
	b->dw.dwarf = dwfl_module_getdwarf(b->mod, &b->dw.bias);
	Elf *symelf = binary_symbol_elf(b, elf);
	binary_read_segments(b, elf);
	binary_read_sections(b, elf, symelf);
	elf_symtab_build(&b->symtab, symelf, elf);
	b->valid = true;
}

static void binary_free(struct binary *b)
{
	dwarf_index_free(&b->dw);
	hashmap_free(&b->results[0]);
	hashmap_free(&b->results[1]);
	if (b->dwfl)
		dwfl_end(b->dwfl);
	free(b->segs);
	free(b->secs);
	elf_symtab_free(&b->symtab);
	fde_table_free(&b->fdes);
	free(b);
}

bool binary_offset_to_vaddr(const struct binary *b, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < b->nsegs; i++) {
		const struct segment *sg = &b->segs[i];
		if (off - sg->offset < sg->filesz) {
			*vaddr = off - sg->offset + sg->vaddr;
			return true;
		}
	}
	/* The mapping is page-aligned: accept the page around a segment too. */
	for (size_t i = 0; i < b->nsegs; i++) {
		const struct segment *sg = &b->segs[i];
		uint64_t start = sg->offset & ~(uint64_t)(MIN_PAGE_SIZE - 1);
		if (off >= start && off < sg->offset + sg->filesz + MIN_PAGE_SIZE) {
			*vaddr = off - sg->offset + sg->vaddr;
			return true;
		}
	}
	return false;
}

uint64_t binary_vaddr_to_offset(const struct binary *b, uint64_t vaddr)
{
	for (size_t i = 0; i < b->nsegs; i++)
		if (vaddr - b->segs[i].vaddr < b->segs[i].filesz)
			return vaddr - b->segs[i].vaddr + b->segs[i].offset;
	return vaddr;
}

const struct elf_sym *binary_symbol_at(const struct binary *b, uint64_t pc)
{
	const struct alloc_section *sec = binary_section_at(b, pc);
	if (!sec || sec->sym_shndx == UINT32_MAX)
		return NULL;
	return elf_symtab_find(&b->symtab, sec->sym_shndx, pc);
}

/* The FDE whose range holds pc, or NULL; the table is built on first use. */
const struct fde_range *binary_fde_at(struct binary *b, uint64_t pc)
{
	if (!b->fdes_built) {
		b->fdes_built = true;
		GElf_Addr bias;
		Elf *elf = b->mod ? dwfl_module_getelf(b->mod, &bias) : NULL;
		if (elf)
			fde_table_build(&b->fdes, elf, b->dw.dwarf ? dwarf_getelf(b->dw.dwarf) : NULL);
	}
	return fde_table_find(&b->fdes, pc);
}

/* ------------------------------------------------------------------------ */
/* The cache.                                                                */

static uint64_t dev_ino_hash(uint64_t dev, uint64_t ino)
{
	uint64_t v[2] = {dev, ino};
	return hash_bytes(v, sizeof(v), 0);
}

struct binary *binary_cached(struct binary_cache *c, uint64_t dev, uint64_t ino)
{
	uint64_t h = dev_ino_hash(dev, ino);
	size_t pos;
	for (const uint64_t *v = hashmap_first(&c->by_file, h, &pos); v;
	     v = hashmap_again(&c->by_file, h, &pos)) {
		struct binary *b = (struct binary *)(uintptr_t)*v;
		if (b->dev == dev && b->ino == ino)
			return b;
	}
	return NULL;
}

/* Takes ownership of `fd`. Returns the cached binary for its (dev, inode)
 * or parses it; `path` names it in frames. */
struct binary *binary_from_fd(struct binary_cache *c, int fd, const char *path)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	struct binary *b = binary_cached(c, st.st_dev, st.st_ino);
	if (b) {
		close(fd);
		return b;
	}
	b = xcalloc(1, sizeof(*b));
	b->path = strpool_intern(c->strings, path);
	b->label = module_label(c->strings, path);
	binary_parse(b, fd);
	c->opened++;
	b->dev = st.st_dev;
	b->ino = st.st_ino;
	hashmap_add(&c->by_file, dev_ino_hash(b->dev, b->ino), (uintptr_t)b);
	return b;
}

/* A path is looked up once: symbols_file() callers ask for the same file
 * thousands of times and a stat() each time would cost more than the
 * cached answer. */
struct binary *binary_from_path(struct binary_cache *c, const char *path)
{
	const char *key = strpool_intern(c->strings, path);
	uint64_t *slot = hashmap_find(&c->by_path, (uintptr_t)key);
	if (slot)
		return (struct binary *)(uintptr_t)*slot;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct binary *b = fd < 0 ? NULL : binary_from_fd(c, fd, path);
	if (b)
		hashmap_set(&c->by_path, (uintptr_t)key, (uintptr_t)b);
	return b;
}

/* The kernel's vDSO is the same image in every process of our ABI, so our
 * own copy (written to a memfd so libdwfl can read it) resolves anybody's
 * whose [vdso] mapping has the same size (a 32-bit one differs). */
struct binary *vdso_binary(struct binary_cache *c, uint64_t mapping_size)
{
	if (!c->vdso_tried) {
		c->vdso_tried = true;
		const unsigned char *image = (const void *)getauxval(AT_SYSINFO_EHDR);
		if (!image || memcmp(image, ELFMAG, SELFMAG) != 0 || image[EI_CLASS] != ELFCLASS64)
			return NULL;
		const Elf64_Ehdr *eh = (const void *)image;
		size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		int fd = memfd_create("sonde-vdso", MFD_CLOEXEC);
		if (fd < 0)
			return NULL;
		if (write(fd, image, size) != (ssize_t)size) {
			close(fd);
			return NULL;
		}
		c->vdso = binary_from_fd(c, fd, VDSO_PATH);
		c->vdso_size = (size + page - 1) / page * page;
	}
	return mapping_size == c->vdso_size ? c->vdso : NULL;
}

void binary_cache_free(struct binary_cache *c)
{
	uint64_t *v;
	for (size_t pos = 0; hashmap_next(&c->by_file, &pos, NULL, &v);)
		binary_free((struct binary *)(uintptr_t)*v);
	hashmap_free(&c->by_file);
	hashmap_free(&c->by_path);
}
