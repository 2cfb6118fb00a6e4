#define _GNU_SOURCE
#include "ifunc.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procmaps.h"
#include "util.h"

/* Where the process maps a file (by device and inode): the load bias, the
 * value added to the file's virtual addresses, and the span it covers. */
struct placement {
	uint64_t bias, lo, hi;
	char path[PATH_MAX]; /* as the process maps it */
};

/* The load bias from a mapping of the file's code: the executable PT_LOAD
 * that starts at the mapping's file offset. (The code mapping, since the
 * process may also map the whole file from offset 0 to read it, as sonde
 * does with libelf.) Sets the span the PT_LOADs cover too. */
static bool bias_from_code(Elf *elf, uint64_t start, uint64_t off, struct placement *p)
{
	size_t n;
	if (elf_getphdrnum(elf, &n))
		return false;
	bool found = false;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		lo = ph.p_vaddr < lo ? ph.p_vaddr : lo;
		hi = ph.p_vaddr + ph.p_memsz > hi ? ph.p_vaddr + ph.p_memsz : hi;
		if ((ph.p_flags & PF_X) && (ph.p_offset & ~(uint64_t)0xfff) == off) {
			p->bias = start - (ph.p_vaddr & ~(uint64_t)0xfff);
			found = true;
		}
	}
	p->lo = p->bias + lo;
	p->hi = p->bias + hi;
	return found;
}

struct placement_search {
	uint64_t dev, ino;
	bool need_dev;
	Elf *elf;
	struct placement *p;
};

static int placement_mapping(const struct procmaps_entry *e, void *arg)
{
	struct placement_search *ps = arg;
	if (e->inode != ps->ino || (ps->need_dev && e->dev != ps->dev) || !e->exec)
		return 0;
	snprintf(ps->p->path, sizeof(ps->p->path), "%s", e->path);
	return bias_from_code(ps->elf, e->start, e->offset, ps->p);
}

/* Overlay file systems show another device in maps than stat gives: when
 * no mapping has both, the inode alone decides. */
static bool find_placement_on(pid_t pid, uint64_t dev, uint64_t ino, Elf *elf, struct placement *p,
			      bool need_dev)
{
	struct placement_search ps = {.dev = dev, .ino = ino, .need_dev = need_dev, .elf = elf, .p = p};
	return procmaps_each(pid, placement_mapping, &ps) > 0;
}

static bool find_placement(pid_t pid, uint64_t dev, uint64_t ino, Elf *elf, struct placement *p)
{
	return find_placement_on(pid, dev, ino, elf, p, true) ||
	       find_placement_on(pid, dev, ino, elf, p, false);
}

static bool executable_vaddr(Elf *elf, uint64_t vaddr)
{
	size_t n;
	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz)
			return true;
	}
	return false;
}

static bool read_word(pid_t pid, uint64_t addr, uint64_t *out)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = pread(fd, out, sizeof(*out), (off_t)addr) == (ssize_t)sizeof(*out);
	close(fd);
	return ok;
}

/* Calls fn for every GOT slot of `elf` filled for the IFUNC: IRELATIVE
 * with the resolver as addend (resolver != 0), or a symbol reference by
 * name. Stops when fn returns true. */
static bool for_each_slot(Elf *elf, const char *name, uint64_t resolver,
			  bool (*fn)(void *arg, uint64_t slot), void *arg)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize == 0)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
		GElf_Shdr symsh;
		Elf_Data *syms = symscn && gelf_getshdr(symscn, &symsh) ? elf_getdata(symscn, NULL) : NULL;
		size_t count = data ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < count; i++) {
			GElf_Rela r;
			if (!gelf_getrela(data, (int)i, &r))
				continue;
			uint32_t type = (uint32_t)GELF_R_TYPE(r.r_info);
			bool match = false;
			if (type == R_X86_64_IRELATIVE) {
				match = resolver && (uint64_t)r.r_addend == resolver;
			} else if ((type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT) && syms) {
				GElf_Sym sym;
				const char *sname = gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym)
							    ? elf_strptr(elf, symsh.sh_link, sym.st_name)
							    : NULL;
				match = sname && strcmp(sname, name) == 0;
			}
			if (match && fn(arg, r.r_offset))
				return true;
		}
	}
	return false;
}

struct slot_query {
	pid_t pid;
	uint64_t bias;            /* of the module whose slots are read */
	Elf *lib;
	struct placement libp;    /* where the library is */
	uint64_t resolver;
	uint64_t impl;
};

/* A slot holds the implementation when it points into the library's code,
 * elsewhere than the resolver (a lazy slot not yet bound points at a PLT
 * stub of its own module). */
static bool slot_filled(void *arg, uint64_t slot)
{
	struct slot_query *q = arg;
	uint64_t v;
	if (!read_word(q->pid, q->bias + slot, &v) || v < q->libp.lo || v >= q->libp.hi)
		return false;
	uint64_t vaddr = v - q->libp.bias;
	if (vaddr == q->resolver || !executable_vaddr(q->lib, vaddr))
		return false;
	q->impl = vaddr;
	return true;
}

/* In sonde's own process: the loader resolves the symbol for dlsym (a slot
 * of a lazily bound library stays unfilled until its first call). */
static int resolve_here(Elf *elf, const struct placement *p, const char *name, uint64_t resolver,
			uint64_t *impl)
{
	void *h = *p->path ? dlopen(p->path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
	void *sym = h ? dlsym(h, name) : NULL;
	if (h)
		dlclose(h);
	uint64_t v = (uint64_t)(uintptr_t)sym;
	if (!sym || v < p->lo || v >= p->hi)
		return -1;
	uint64_t vaddr = v - p->bias;
	if (vaddr == resolver || !executable_vaddr(elf, vaddr))
		return -1;
	*impl = vaddr;
	return 0;
}

int ifunc_resolve(const struct ifunc_symbol *sym, pid_t pid, uint64_t *impl)
{
	Elf *elf = sym->elf;
	uint64_t dev = sym->dev, ino = sym->ino, resolver = sym->resolver;
	const char *name = sym->name;
	struct slot_query q = {.pid = pid, .lib = elf, .resolver = resolver};
	if (!find_placement(pid, dev, ino, elf, &q.libp))
		return -1;
	if (pid == getpid())
		return resolve_here(elf, &q.libp, name, resolver, impl);
	q.bias = q.libp.bias;
	if (for_each_slot(elf, name, resolver, slot_filled, &q)) {
		*impl = q.impl;
		return 0;
	}
	/* The executable's references to the symbol. */
	char exe[64];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	int fd = open(exe, O_RDONLY | O_CLOEXEC);
	struct stat st;
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	struct placement exep;
	bool found = false;
	if (e && fstat(fd, &st) == 0 && (uint64_t)st.st_ino != ino &&
	    find_placement(pid, (uint64_t)st.st_dev, (uint64_t)st.st_ino, e, &exep)) {
		q.bias = exep.bias;
		found = for_each_slot(e, name, 0, slot_filled, &q);
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	if (found)
		*impl = q.impl;
	return found ? 0 : -1;
}
