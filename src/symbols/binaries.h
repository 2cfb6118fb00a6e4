/* binaries — the ELF files the symbolizer reads: one per (device, inode),
 * opened and parsed once and kept for the symbolizer's lifetime.
 *
 * A binary is reported to libdwfl at its own virtual addresses (module
 * addresses are the file's vaddrs), which finds its separate debug info by
 * build-id (/usr/lib/debug/.build-id/xx/rest.debug) or .gnu_debuglink. Its
 * function symbols come from that debug file's .symtab when DWARF came from
 * there (it keeps the full table), else from the binary. A file that is not
 * ELF, or cannot be read, is a binary too (not valid), remembered so it is
 * not opened again.
 *
 * The cache finds a binary by (device, inode) (one file reached through
 * several paths or processes is one binary), by path for symbols_file()
 * (a stat() per lookup would cost more than the cached answer), and gives
 * the kernel's vDSO from sonde's own copy: the same image in every 64-bit
 * process. Not thread-safe. */
#ifndef SONDE_BINARIES_H
#define SONDE_BINARIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuindex.h"
#include "elfsyms.h"
#include "fderanges.h"
#include "hashmap.h"
#include "strpool.h"

#define VDSO_PATH "[vdso]"

typedef struct Dwfl Dwfl;               /* libdwfl's, opaque here */
typedef struct Dwfl_Module Dwfl_Module;

struct segment;       /* a PT_LOAD: file offsets to vaddrs */
struct alloc_section; /* an allocated section, and its index in the symbols' file */

struct binary {
	bool valid; /* false: not ELF or unreadable (remembered, not retried) */
	const char *path;
	const char *label; /* see module_label() */
	uint64_t dev, ino; /* the file's identity: one binary per (dev, inode) */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct dwarf_index dw;
	struct segment *segs;
	size_t nsegs;
	struct alloc_section *secs;
	size_t nsecs;
	struct elf_symtab symtab;
	struct hashmap results[2]; /* [is_return] vaddr -> frame pool index << 8 | count */
	struct fde_table fdes;   /* built on the first lookup past a symbol */
	bool fdes_built;
};

struct binary_cache {
	struct strpool *strings; /* where paths and labels are interned (the symbolizer's) */
	struct hashmap by_file;  /* hash of (dev, inode) -> struct binary * (hashed keys) */
	struct hashmap by_path;  /* interned path of symbols_file() -> binary */
	struct binary *vdso;
	uint64_t vdso_size; /* its mapping's size */
	bool vdso_tried;
	uint64_t opened; /* distinct binaries parsed */
};

/* The binary of (dev, ino) if it was opened already, else NULL. */
struct binary *binary_cached(struct binary_cache *c, uint64_t dev, uint64_t ino);
/* Takes ownership of `fd`. Returns the cached binary for its (dev, inode)
 * or parses it; `path` names it in frames. NULL: not a regular file. */
struct binary *binary_from_fd(struct binary_cache *c, int fd, const char *path);
/* The binary at `path` (looked up once per path), or NULL. */
struct binary *binary_from_path(struct binary_cache *c, const char *path);
/* Our vDSO, for a [vdso] mapping of `mapping_size` bytes (another size is
 * another ABI's vDSO: NULL). */
struct binary *vdso_binary(struct binary_cache *c, uint64_t mapping_size);
void binary_cache_free(struct binary_cache *c);

/* File offset -> vaddr through the PT_LOAD segments (the page around a
 * segment counts: mappings are page-aligned); false when none holds it. */
bool binary_offset_to_vaddr(const struct binary *b, uint64_t off, uint64_t *vaddr);
/* vaddr -> file offset (vaddr itself when no segment holds it). */
uint64_t binary_vaddr_to_offset(const struct binary *b, uint64_t vaddr);

/* The first allocated section holding vaddr (as addr2line), or NULL. */
const struct alloc_section *binary_section_at(const struct binary *b, uint64_t vaddr);
/* The nearest symbol at or below pc in its section (elf_symtab_find), or NULL. */
const struct elf_sym *binary_symbol_at(const struct binary *b, uint64_t pc);
/* The FDE whose range holds pc, or NULL; the table is built on first use. */
const struct fde_range *binary_fde_at(struct binary *b, uint64_t pc);

/* What "[name+0xoffset]" calls a module: the file's base name, or the
 * pseudo-path without its brackets ("[vdso]" -> "vdso"); interned. */
const char *module_label(struct strpool *pool, const char *path);

#endif
