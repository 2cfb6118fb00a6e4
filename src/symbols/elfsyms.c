/* elfsyms — ELF symbol tables. See elfsyms.h for the contract. */
#include "elfsyms.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "pltnames.h"
#include "util.h"

/* Symbols that can name code: not data, TLS, sections, files, and not the
 * hidden local sizeless markers annotation plugins emit. */
static bool elf_sym_names_code(const struct elf_symbol *sym)
{
	int type = sym->type;
	if (type == STT_OBJECT || type == STT_COMMON || type == STT_TLS || type == STT_SECTION ||
	    type == STT_FILE)
		return false;
	if (sym->shndx == SHN_UNDEF || sym->shndx >= SHN_LORESERVE)
		return false;
	if (sym->size == 0 && sym->bind == STB_LOCAL && type == STT_NOTYPE &&
	    sym->visibility == STV_HIDDEN)
		return false;
	return true;
}

static int elf_sym_cmp(const void *pa, const void *pb)
{
	const struct elf_sym *a = pa, *b = pb;
	if (a->shndx != b->shndx)
		return a->shndx < b->shndx ? -1 : 1;
	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static Elf_Scn *elf_find_section_of_type(Elf *elf, Elf64_Word type, GElf_Shdr *shdr)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn))
		if (gelf_getshdr(scn, shdr) && shdr->sh_type == type)
			return scn;
	return NULL;
}

bool elf_has_symtab(Elf *elf)
{
	GElf_Shdr shdr;
	return elf_find_section_of_type(elf, SHT_SYMTAB, &shdr) != NULL;
}

_Static_assert(SYMBOLS_ELF_SYMTAB == 1u << SHT_SYMTAB && SYMBOLS_ELF_DYNSYM == 1u << SHT_DYNSYM,
	       "symbols.h's table masks are 1 << the section type");

/* Walks one symbol table (see struct elf_symbol for the file names). */
static void elf_table_each(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr,
			   void (*fn)(const struct elf_symbol *sym, void *arg), void *arg)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || shdr->sh_entsize == 0)
		return;
	size_t count = shdr->sh_size / shdr->sh_entsize;
	const char *file = NULL;
	bool symbol_seen = false, file_after_symbol = false;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		const char *name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (GELF_ST_TYPE(sym.st_info) == STT_FILE) {
			file = name;
			file_after_symbol = symbol_seen;
			continue;
		}
		symbol_seen = true;
		bool local = GELF_ST_BIND(sym.st_info) == STB_LOCAL;
		fn(&(struct elf_symbol){
			   .name = name,
			   .file = (local || !file_after_symbol) ? file : NULL,
			   .value = sym.st_value,
			   .size = sym.st_size,
			   .index = (uint32_t)i,
			   .shndx = sym.st_shndx,
			   .type = (uint8_t)GELF_ST_TYPE(sym.st_info),
			   .bind = (uint8_t)GELF_ST_BIND(sym.st_info),
			   .visibility = (uint8_t)GELF_ST_VISIBILITY(sym.st_other),
		   },
		   arg);
	}
}

unsigned symbols_elf_each(Elf *elf, unsigned tables,
			  void (*fn)(const struct elf_symbol *sym, void *arg), void *arg)
{
	unsigned found = 0;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !(tables & (1u << sh.sh_type)))
			continue;
		found |= 1u << sh.sh_type;
		elf_table_each(elf, scn, &sh, fn, arg);
	}
	return found;
}

/* Keeps a symbol that can name code in the symbolizer's table. */
static void elf_symtab_add(const struct elf_symbol *sym, void *arg)
{
	struct elf_symtab *t = arg;
	if (!sym->name || !elf_sym_names_code(sym))
		return;
	grow_array((void **)&t->syms, &t->cap, t->n + 1, sizeof(*t->syms));
	t->syms[t->n++] = (struct elf_sym){
		.value = sym->value,
		.size = sym->size ? sym->size : 1,
		.sizeless = sym->size == 0,
		.name = sym->name,
		.file = sym->file,
		.shndx = sym->shndx,
		.order = sym->index,
		.is_func = sym->type == STT_FUNC || sym->type == STT_GNU_IFUNC,
		.is_notype = sym->type == STT_NOTYPE,
	};
}

/* Links each symbol to the sized symbols open at its value, innermost
 * first (a stack of open symbols, as sorted ranges nest), so a lookup past a
 * symbol's end can climb to a symbol that still covers the address. */
static void elf_symtab_link(struct elf_symtab *t)
{
	int32_t *open = xmalloc((t->n + 1) * sizeof(*open));
	size_t depth = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct elf_sym *s = &t->syms[i];
		while (depth && (t->syms[open[depth - 1]].shndx != s->shndx ||
				 t->syms[open[depth - 1]].value + t->syms[open[depth - 1]].size <= s->value))
			depth--;
		s->enclosing = depth ? open[depth - 1] : -1;
		if (!s->sizeless)
			open[depth++] = (int32_t)i;
	}
	free(open);
}

struct adding {
	struct elf_symtab *t;
	size_t nreal;     /* the file's own symbols, sorted: t->syms[0, nreal) */
	Elf *sym_elf;     /* whose section indices the table uses */
	size_t sym_shstrndx;
	bool same_file;
};

/* Keeps a name pltnames gave where the symbol file names nothing starting
 * at that address, in the symbol file's section of the same index and name. */
static void elf_symtab_add_plt(const struct plt_name *pn, void *arg)
{
	struct adding *a = arg;
	struct elf_symtab *t = a->t;
	if (!a->same_file) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(a->sym_elf, pn->shndx);
		const char *n = scn && gelf_getshdr(scn, &sh)
					? elf_strptr(a->sym_elf, a->sym_shstrndx, sh.sh_name)
					: NULL;
		if (!n || strcmp(n, pn->section) != 0)
			return;
	}
	struct elf_symtab real = {.syms = t->syms, .n = a->nreal};
	const struct elf_sym *at = elf_symtab_find(&real, pn->shndx, pn->value);
	if (at && at->value == pn->value)
		return;
	grow_array((void **)&t->syms, &t->cap, t->n + 1, sizeof(*t->syms));
	t->syms[t->n] = (struct elf_sym){
		.value = pn->value,
		.size = pn->size,
		.name = strpool_intern(&t->added, pn->name),
		.shndx = pn->shndx,
		.order = UINT32_MAX, /* after the file's own at one address */
		.is_func = true,
	};
	t->n++;
}

/* .symtab when there is one, else .dynsym (stripped binaries keep it),
 * then the PLT and .init/.fini names. */
void elf_symtab_build(struct elf_symtab *t, Elf *elf, Elf *code_elf)
{
	symbols_elf_each(elf, SYMBOLS_ELF_SYMTAB, elf_symtab_add, t);
	if (t->n == 0)
		symbols_elf_each(elf, SYMBOLS_ELF_DYNSYM, elf_symtab_add, t);
	if (t->n)
		qsort(t->syms, t->n, sizeof(*t->syms), elf_sym_cmp);
	struct adding a = {.t = t, .nreal = t->n, .sym_elf = elf, .same_file = elf == code_elf};
	if (a.same_file || elf_getshdrstrndx(elf, &a.sym_shstrndx) == 0)
		plt_names_each(code_elf, elf_symtab_add_plt, &a);
	if (t->n > a.nreal)
		qsort(t->syms, t->n, sizeof(*t->syms), elf_sym_cmp);
	elf_symtab_link(t);
}

/* Among symbols at the same address, binutils keeps the first in table
 * order unless another one covers the address where it does not, or is a
 * function where it is not, or is typed where it is not, or is smaller. */
static bool elf_sym_better(const struct elf_sym *best, const struct elf_sym *s, uint64_t addr)
{
	if (!elf_sym_covers(best, addr))
		return s->size > best->size;
	if (!elf_sym_covers(s, addr))
		return false;
	if (best->is_func != s->is_func)
		return s->is_func;
	if (best->is_notype != s->is_notype)
		return best->is_notype;
	return s->size < best->size;
}

/* The nearest function symbol at or below `addr` in section `shndx`, even
 * when its size does not reach `addr` (addr2line does the same). */
const struct elf_sym *elf_symtab_find(const struct elf_symtab *t, uint32_t shndx, uint64_t addr)
{
	/* The first index ordered after (shndx, addr). */
	size_t lo = ORDER_PARTITION(t->n, i, t->syms[i].shndx < shndx ||
					     (t->syms[i].shndx == shndx && t->syms[i].value <= addr));
	if (lo == 0 || t->syms[lo - 1].shndx != shndx)
		return NULL;
	size_t first = lo - 1;
	while (first > 0 && t->syms[first - 1].shndx == shndx &&
	       t->syms[first - 1].value == t->syms[lo - 1].value)
		first--;
	const struct elf_sym *best = &t->syms[first];
	for (size_t i = first + 1; i < lo; i++)
		if (elf_sym_better(best, &t->syms[i], addr))
			best = &t->syms[i];
	return best;
}

void elf_symtab_free(struct elf_symtab *t)
{
	free(t->syms);
	strpool_free(&t->added);
	*t = (struct elf_symtab){0};
}
