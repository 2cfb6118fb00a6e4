/* probesyms — a binary's functions for probe specs (probesyms.h). */
#include "probesyms.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "errbuf.h"
#include "probebinary.h"
#include "elfsyms.h"
#include "util.h"


/* Fills every mangled function's demangled names (once: only a spec that
 * no linkage name matches needs them). */
void function_list_demangle(struct function_list *l)
{
	if (l->demangled)
		return;
	l->demangled = true;
	for (size_t i = 0; i < l->n; i++) {
		struct elf_function *f = &l->f[i];
		f->readable = demangle_short(f->name);
		f->signature = f->readable ? demangle_full(f->name) : NULL;
	}
}

/* The name a function is shown by: demangled when it is C++ or Rust. */
const char *function_shown(const struct elf_function *f)
{
	return f->readable ? f->readable : f->name;
}

/* Does `spec` name function f: its linkage name, or (once demangled) its
 * readable name ("shop::Cart::total") or whole signature ("shop::Cart::
 * total(int) const"); a glob matches any of them. */
bool function_named(const struct elf_function *f, const char *spec, bool glob)
{
	const char *names[3] = {f->name, f->readable, f->signature};
	for (int i = 0; i < 3; i++) {
		if (!names[i])
			continue;
		if (glob ? fnmatch(spec, names[i], 0) == 0 : strcmp(spec, names[i]) == 0)
			return true;
	}
	return false;
}

static void list_add(struct function_list *l, const char *name, uint64_t vaddr, uint64_t size,
		     bool ifunc)
{
	grow_array((void **)&l->f, &l->cap, l->n + 1, sizeof(*l->f));
	l->f[l->n++] = (struct elf_function){xstrdup(name), vaddr, size, ifunc, NULL, NULL};
}

void function_list_free(struct function_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->f[i].name);
		free(l->f[i].readable);
		free(l->f[i].signature);
	}
	free(l->f);
}

/* Keeps a defined function symbol (STT_FUNC or STT_GNU_IFUNC) with a
 * name and a non-zero address. */
static void add_function(const struct elf_symbol *sym, void *arg)
{
	struct function_list *l = arg;
	if ((sym->type != STT_FUNC && sym->type != STT_GNU_IFUNC) || sym->shndx == SHN_UNDEF ||
	    sym->value == 0 || !sym->name || !*sym->name)
		return;
	list_add(l, sym->name, sym->value, sym->size, sym->type == STT_GNU_IFUNC);
}

/* Reads the functions of .symtab and/or .dynsym (tables: SYMBOLS_ELF_*). */
void read_symbols(Elf *elf, struct function_list *l, unsigned tables)
{
	if (symbols_elf_each(elf, tables, add_function, l) & SYMBOLS_ELF_SYMTAB)
		l->had_symtab = true;
}

/* File offset of a virtual address, through the PT_LOAD segment holding it. */
int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;
	if (elf_getphdrnum(elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return (size_t)-1;
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t sub = prev + (a[i - 1] != b[j - 1]);
			size_t del = row[j] + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			prev = cur;
		}
	}
	return row[lb];
}

/* "nearest: a, b, c" — the three names closest to `want` by edit distance,
 * names containing `want` first. */
void nearest_names(const struct function_list *l, const char *want, char *buf, size_t size)
{
	const char *best[3] = {0};
	size_t bestd[3] = {(size_t)-1, (size_t)-1, (size_t)-1};
	for (size_t i = 0; i < l->n; i++) {
		const char *name = function_shown(&l->f[i]);
		size_t d = strstr(name, want) ? 0 : edit_distance(want, name);
		bool dup = false;
		for (int k = 0; k < 3; k++)
			dup |= best[k] && strcmp(best[k], name) == 0;
		if (dup)
			continue;
		for (int k = 0; k < 3; k++) {
			if (d < bestd[k]) {
				for (int m = 2; m > k; m--) {
					best[m] = best[m - 1];
					bestd[m] = bestd[m - 1];
				}
				best[k] = name;
				bestd[k] = d;
				break;
			}
		}
	}
	size_t off = 0;
	buf[0] = 0;
	for (int k = 0; k < 3 && best[k] && bestd[k] <= strlen(want) / 2 + 2 && off < size; k++) {
		int w = snprintf(buf + off, size - off, "%s%s", off ? ", " : "", best[k]);
		off = w < 0 ? size : off + (size_t)w; /* truncated: stop at the end */
	}
}

/* --- functions that exist only inlined --------------------------------- */

struct inline_search {
	const char *want;
	char sites[512]; /* "caller (file:line), ..." */
	size_t off;
	int nsites;
	Dwarf_Files *files;
};

static void note_inline_site(struct inline_search *q, const char *caller, Dwarf_Die *site)
{
	Dwarf_Attribute a;
	Dwarf_Word fileidx = 0, line = 0;
	if (dwarf_attr(site, DW_AT_call_file, &a))
		dwarf_formudata(&a, &fileidx);
	if (dwarf_attr(site, DW_AT_call_line, &a))
		dwarf_formudata(&a, &line);
	const char *file = q->files ? dwarf_filesrc(q->files, fileidx, NULL, NULL) : NULL;
	if (q->nsites++ >= 3 || q->off >= sizeof(q->sites))
		return; /* a few examples are enough */
	int w = snprintf(q->sites + q->off, sizeof(q->sites) - q->off, "%s%s at %s:%llu",
			 q->off ? ", " : "", caller ? caller : "?", file ? file_base_name(file) : "?",
			 (unsigned long long)line);
	q->off = w < 0 ? sizeof(q->sites) : q->off + (size_t)w;
}

/* Walks a DIE tree; `caller` is the enclosing function's name. */
static void find_inlined(struct inline_search *q, Dwarf_Die *die, const char *caller, int depth)
{
	if (depth > 64)
		return;
	Dwarf_Die child;
	if (dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		const char *name = dwarf_diename(&child); /* follows abstract_origin */
		if (tag == DW_TAG_inlined_subroutine && name && strcmp(name, q->want) == 0)
			note_inline_site(q, caller, &child);
		const char *inner = caller;
		if (tag == DW_TAG_subprogram && name)
			inner = name;
		if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block ||
		    tag == DW_TAG_inlined_subroutine || tag == DW_TAG_namespace ||
		    tag == DW_TAG_class_type || tag == DW_TAG_structure_type)
			find_inlined(q, &child, inner, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* When FUNC is not a symbol, it may still exist in DWARF, inlined into its
 * callers: say so and where. Returns true when it found inlined copies. */
bool describe_inlined_only(int fd, const char *func, const char *binary, char *err,
				  size_t errlen)
{
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw)
		return false;
	struct inline_search q = {.want = func};
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(dw, off + hsize, &cu)) {
			size_t nfiles;
			q.files = NULL;
			dwarf_getsrcfiles(&cu, &q.files, &nfiles);
			find_inlined(&q, &cu, NULL, 0);
		}
		off = next;
	}
	dwarf_end(dw);
	if (!q.nsites)
		return false;
	errbuf_set(err, errlen,
		   "'%s' exists only inlined in %s (%d place%s: %s%s); trace a caller instead",
		   func, binary, q.nsites, q.nsites == 1 ? "" : "s", q.sites,
		   q.nsites > 3 ? ", ..." : "");
	return true;
}
