/* pltnames — names of PLT entries and of .init/.fini. See pltnames.h. */
#include "pltnames.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "hashmap.h"

/* GOT slot address -> the bound symbol's name (a pointer into the ELF's
 * string table), from every RELA section whose symbols are .dynsym. */
static void bound_slots(Elf *elf, struct hashmap *slots)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh, symsh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize == 0)
			continue;
		Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
		Elf_Data *rel = elf_getdata(scn, NULL);
		Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
		if (!rel || !syms || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			if (!gelf_getrela(rel, (int)i, &r))
				break;
			unsigned type = GELF_R_TYPE(r.r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
				continue;
			if (GELF_R_SYM(r.r_info) == 0 ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			const char *name = elf_strptr(elf, symsh.sh_link, sym.st_name);
			if (name && name[0])
				*hashmap_put(slots, r.r_offset, NULL) = (uint64_t)(uintptr_t)name;
		}
	}
}

/* The end of an entry's `jmp *disp32(%rip)` (ff 25), after an optional
 * endbr64 and an optional bnd prefix, with the displacement; 0 when the
 * entry does not start so (PLT0 pushes first; lazy IBT stubs push). */
static size_t plt_jump(const uint8_t *p, size_t len, int32_t *disp)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t at = 0;
	if (len >= 4 && memcmp(p, endbr64, 4) == 0)
		at = 4;
	if (at < len && p[at] == 0xf2)
		at++;
	if (at + 6 > len || p[at] != 0xff || p[at + 1] != 0x25)
		return 0;
	memcpy(disp, p + at + 2, 4);
	return at + 6;
}

static void plt_section(const GElf_Shdr *sh, Elf_Data *data, const char *secname, uint32_t shndx,
			const struct hashmap *slots,
			void (*fn)(const struct plt_name *n, void *arg), void *arg)
{
	uint64_t entsize = sh->sh_entsize;
	if (entsize < 6)
		entsize = strcmp(secname, ".plt.got") == 0 ? 8 : 16;
	size_t size = data->d_size < sh->sh_size ? data->d_size : sh->sh_size;
	for (uint64_t off = 0; off + entsize <= size; off += entsize) {
		int32_t disp;
		size_t end = plt_jump((const uint8_t *)data->d_buf + off, entsize, &disp);
		uint64_t name;
		if (!end || !hashmap_get(slots, sh->sh_addr + off + end + (int64_t)disp, &name))
			continue;
		char buf[512];
		snprintf(buf, sizeof(buf), "%s@plt", (const char *)(uintptr_t)name);
		fn(&(struct plt_name){.name = buf, .section = secname, .value = sh->sh_addr + off,
				      .size = entsize, .shndx = shndx},
		   arg);
	}
}

void plt_names_each(Elf *elf, void (*fn)(const struct plt_name *n, void *arg), void *arg)
{
	GElf_Ehdr eh;
	size_t shstrndx;
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	struct hashmap slots = {0};
	bool bound = false;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || sh.sh_size == 0 ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		const char *secname = elf_strptr(elf, shstrndx, sh.sh_name);
		uint32_t shndx = (uint32_t)elf_ndxscn(scn);
		if (!secname)
			continue;
		if (strcmp(secname, ".init") == 0 || strcmp(secname, ".fini") == 0) {
			fn(&(struct plt_name){.name = secname[1] == 'i' ? "_init" : "_fini",
					      .section = secname, .value = sh.sh_addr,
					      .size = sh.sh_size, .shndx = shndx},
			   arg);
			continue;
		}
		if (strcmp(secname, ".plt") != 0 && strcmp(secname, ".plt.sec") != 0 &&
		    strcmp(secname, ".plt.got") != 0)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		if (!bound) {
			bound_slots(elf, &slots);
			bound = true;
		}
		plt_section(&sh, data, secname, shndx, &slots, fn, arg);
	}
	hashmap_free(&slots);
}
