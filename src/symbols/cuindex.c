/* cuindex — a binary's DWARF indexed by address. See cuindex.h for the
 * contract. */
#include "cuindex.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "util.h"

#define MAX_DIE_DEPTH 64 /* DIE nesting we follow; real code nests < 20 */

/* Per compilation unit: every function DIE (out-of-line and inlined) with
 * its address ranges, built once on the first lookup that lands in the CU. */

struct dw_func {
	Dwarf_Die die;
	int32_t caller;    /* enclosing function of an inlined instance, or -1 */
	uint64_t entry_pc; /* low end of its first range: where its symbol starts */
	bool inlined;
};

struct dw_range {
	uint64_t low, high;
	uint32_t func;
	uint32_t order;    /* DIE order: among equal ranges the later is deeper */
	int32_t enclosing; /* smallest earlier range containing this one, or -1 */
};

struct cu_index {
	Dwarf_Die cudie;
	bool mangled_names; /* C++ and friends: DW_AT_name is not the symbol */
	const char *comp_dir; /* DW_AT_comp_dir, or NULL */
	Dwarf_Half version;
	struct dw_func *funcs;
	size_t nfuncs, funcs_cap;
	struct dw_range *ranges; /* sorted by low, then high descending, then order */
	size_t nranges, ranges_cap;
	Dwarf_Files *files; /* for DW_AT_call_file */
	size_t nfiles;
};

static const char *die_string(Dwarf_Die *die, int attr)
{
	Dwarf_Attribute mem;
	return dwarf_formstring(dwarf_attr_integrate(die, attr, &mem));
}

static bool tag_is_function(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* Only scopes can hold code; skipping types and variables keeps the walk
 * over a large CU cheap. */
static bool tag_may_contain_code(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_entry_point:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
	case DW_TAG_namespace:
	case DW_TAG_module:
		return true;
	default:
		return false;
	}
}

/* Languages whose DW_AT_name is the symbol name (binutils' list). */
static bool lang_has_plain_names(int lang)
{
	switch (lang) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case DW_LANG_UPC:
	case DW_LANG_Mips_Assembler:
	case DW_LANG_Fortran77:
	case DW_LANG_Pascal83:
	case DW_LANG_Cobol74:
	case DW_LANG_Cobol85:
	case DW_LANG_PLI:
		return true;
	default:
		return false;
	}
}

static void cu_index_add_ranges(struct cu_index *cu, Dwarf_Die *die, uint32_t func)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t off = 0;
	bool first = true;
	while ((off = dwarf_ranges(die, off, &base, &low, &high)) > 0) {
		if (high <= low)
			continue;
		if (first)
			cu->funcs[func].entry_pc = low;
		first = false;
		grow_array((void **)&cu->ranges, &cu->ranges_cap, cu->nranges + 1,
			   sizeof(*cu->ranges));
		cu->ranges[cu->nranges] = (struct dw_range){
			.low = low, .high = high, .func = func, .order = (uint32_t)cu->nranges,
		};
		cu->nranges++;
	}
}

static int32_t cu_index_add_function(struct cu_index *cu, Dwarf_Die *die, int tag,
				     int32_t enclosing)
{
	grow_array((void **)&cu->funcs, &cu->funcs_cap, cu->nfuncs + 1, sizeof(*cu->funcs));
	uint32_t idx = (uint32_t)cu->nfuncs++;
	bool inlined = tag == DW_TAG_inlined_subroutine;
	cu->funcs[idx] = (struct dw_func){
		.die = *die,
		.caller = inlined ? enclosing : -1,
		.inlined = inlined,
	};
	cu_index_add_ranges(cu, die, idx);
	return (int32_t)idx;
}

/* `enclosing` is the innermost function around `parent` (-1 at CU level):
 * lexical blocks are transparent, as in binutils' caller chains. */
static void cu_index_scan(struct cu_index *cu, Dwarf_Die *parent, int32_t enclosing, int depth)
{
	Dwarf_Die child;
	if (depth > MAX_DIE_DEPTH || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		int32_t inner = enclosing;
		if (tag_is_function(tag))
			inner = cu_index_add_function(cu, &child, tag, enclosing);
		if (tag_may_contain_code(tag) && dwarf_haschildren(&child) > 0)
			cu_index_scan(cu, &child, inner, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int dw_range_cmp(const void *pa, const void *pb)
{
	const struct dw_range *a = pa, *b = pb;
	if (a->low != b->low)
		return a->low < b->low ? -1 : 1;
	if (a->high != b->high)
		return a->high > b->high ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Sorted ranges nest like parentheses; a stack of open ranges gives each
 * one its smallest container, so a lookup climbs instead of scanning. */
static void cu_index_link_ranges(struct cu_index *cu)
{
	if (cu->nranges)
		qsort(cu->ranges, cu->nranges, sizeof(*cu->ranges), dw_range_cmp);
	int32_t *stack = xmalloc((cu->nranges + 1) * sizeof(*stack));
	size_t depth = 0;
	for (size_t i = 0; i < cu->nranges; i++) {
		while (depth && cu->ranges[stack[depth - 1]].high <= cu->ranges[i].low)
			depth--;
		cu->ranges[i].enclosing = depth ? stack[depth - 1] : -1;
		stack[depth++] = (int32_t)i;
	}
	free(stack);
}

static struct cu_index *cu_index_build(Dwarf_Die *cudie)
{
	struct cu_index *cu = xcalloc(1, sizeof(*cu));
	cu->cudie = *cudie;
	cu->mangled_names = !lang_has_plain_names(dwarf_srclang(cudie));
	cu->comp_dir = die_string(cudie, DW_AT_comp_dir);
	if (dwarf_cu_info(cudie->cu, &cu->version, NULL, NULL, NULL, NULL, NULL, NULL) != 0)
		cu->version = 0;
	if (dwarf_getsrcfiles(cudie, &cu->files, &cu->nfiles) != 0) {
		cu->files = NULL;
		cu->nfiles = 0;
	}
	cu_index_scan(cu, cudie, -1, 0);
	cu_index_link_ranges(cu);
	return cu;
}

static void cu_index_free(struct cu_index *cu)
{
	if (!cu)
		return;
	free(cu->funcs);
	free(cu->ranges);
	free(cu);
}

/* The innermost function whose range holds `pc`, or -1. */
static int32_t cu_index_find(const struct cu_index *cu, uint64_t pc)
{
	size_t lo = ORDER_PARTITION(cu->nranges, i, cu->ranges[i].low <= pc);
	int32_t r = (int32_t)lo - 1;
	while (r >= 0 && pc >= cu->ranges[r].high)
		r = cu->ranges[r].enclosing;
	return r >= 0 ? (int32_t)cu->ranges[r].func : -1;
}

static uint32_t die_udata(Dwarf_Die *die, int attr)
{
	Dwarf_Attribute mem;
	Dwarf_Word v;
	if (dwarf_formudata(dwarf_attr(die, attr, &mem), &v) != 0)
		return 0;
	return (uint32_t)v;
}

/* ------------------------------------------------------------------------ */
/* The functions of a CU, as frames name them.                              */

const char *cu_index_linkage_name(struct cu_index *cu, int32_t f)
{
	Dwarf_Die *die = &cu->funcs[f].die;
	const char *name = die_string(die, DW_AT_linkage_name);
	return name ? name : die_string(die, DW_AT_MIPS_linkage_name);
}

const char *cu_index_name(struct cu_index *cu, int32_t f)
{
	return die_string(&cu->funcs[f].die, DW_AT_name);
}

bool cu_index_name_is_symbol(const struct cu_index *cu)
{
	return !cu->mangled_names;
}

uint64_t cu_index_entry_pc(const struct cu_index *cu, int32_t f)
{
	return cu->funcs[f].entry_pc;
}

int32_t cu_index_inlined_into(const struct cu_index *cu, int32_t f)
{
	return cu->funcs[f].caller;
}

uint32_t cu_index_call_line(const struct cu_index *cu, int32_t f)
{
	Dwarf_Die die = cu->funcs[f].die;
	return die_udata(&die, DW_AT_call_line);
}

/* libdw joins a relative file name to its line-table directory only;
 * addr2line also puts the compilation directory in front when that
 * directory is relative (DWARF 5 directory 0 is the compilation directory
 * itself, so GCC's "./dir" builds show "./dir/./dir/file.c"). */
const char *cu_index_path(const struct cu_index *cu, struct strpool *strings, const char *name)
{
	if (!name || name[0] == '/' || !cu->comp_dir)
		return strpool_intern(strings, name);
	size_t dirlen = strlen(cu->comp_dir);
	bool under_comp_dir = strncmp(name, cu->comp_dir, dirlen) == 0 && name[dirlen] == '/';
	if (cu->version < 5 && under_comp_dir) /* DWARF 4 directory 0: done already */
		return strpool_intern(strings, name);
	char buf[PATH_MAX * 2];
	snprintf(buf, sizeof(buf), "%s/%s", cu->comp_dir, name);
	return strpool_intern(strings, buf);
}

const char *cu_index_call_file(const struct cu_index *cu, int32_t f)
{
	Dwarf_Attribute mem;
	Dwarf_Word idx;
	Dwarf_Die die = cu->funcs[f].die;
	if (!cu->files || dwarf_formudata(dwarf_attr(&die, DW_AT_call_file, &mem), &idx) != 0 ||
	    idx >= cu->nfiles)
		return NULL;
	return dwarf_filesrc(cu->files, idx, NULL, NULL);
}

/* ------------------------------------------------------------------------ */
/* Which CU holds an address.                                                */

/* Where each compilation unit's code is, from the CU DIEs themselves:
 * libdwfl's lookup needs .debug_aranges (clang emits none) and lets a CU
 * claim the gap up to the next one. */
struct cu_range {
	uint64_t low, high;
	Dwarf_Die cudie;
};

static int cu_range_cmp(const void *pa, const void *pb)
{
	const struct cu_range *a = pa, *b = pb;
	if (a->low != b->low)
		return a->low < b->low ? -1 : 1;
	return a->high < b->high ? -1 : a->high > b->high;
}

static void cu_ranges_build(Dwarf *dwarf, struct cu_range **out, size_t *n)
{
	size_t cap = 0;
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie;
	while (dwarf_get_units(dwarf, cu, &next, &version, &unit_type, &cudie, NULL) == 0) {
		cu = next;
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton)
			continue;
		Dwarf_Addr base, low, high;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(&cudie, off, &base, &low, &high)) > 0) {
			if (high <= low)
				continue;
			grow_array((void **)out, &cap, *n + 1, sizeof(**out));
			(*out)[(*n)++] = (struct cu_range){ low, high, cudie };
		}
	}
	if (*n)
		qsort(*out, *n, sizeof(**out), cu_range_cmp);
}

static Dwarf_Die *cu_ranges_find(struct cu_range *r, size_t n, uint64_t pc)
{
	size_t lo = ORDER_PARTITION(n, i, r[i].low <= pc);
	/* Ranges of different CUs do not nest; look back a little for overlaps. */
	for (size_t i = lo; i > 0 && lo - i < 4; i--)
		if (pc < r[i - 1].high)
			return &r[i - 1].cudie;
	return NULL;
}

static struct cu_index *dwarf_index_cu(struct dwarf_index *dw, Dwarf_Die *cudie)
{
	uint64_t *slot = hashmap_put(&dw->cus, dwarf_dieoffset(cudie), NULL);
	if (!*slot)
		*slot = (uintptr_t)cu_index_build(cudie);
	return (struct cu_index *)(uintptr_t)*slot;
}

void dwarf_index_lookup(struct dwarf_index *dw, uint64_t pc, struct dwarf_answer *ans)
{
	*ans = (struct dwarf_answer){ .func = -1 };
	if (!dw->dwarf)
		return;
	if (!dw->cu_ranges_built) {
		cu_ranges_build(dw->dwarf, &dw->cu_ranges, &dw->ncu_ranges);
		dw->cu_ranges_built = true;
	}
	ans->bias = dw->bias;
	Dwarf_Die *cudie = cu_ranges_find(dw->cu_ranges, dw->ncu_ranges, pc - ans->bias);
	if (!cudie)
		return;
	ans->cu = dwarf_index_cu(dw, cudie);
	ans->func = cu_index_find(ans->cu, pc - ans->bias);
	Dwarf_Line *line = dwarf_getsrc_die(&ans->cu->cudie, pc - ans->bias);
	int lineno = 0;
	unsigned int disc = 0;
	if (!line || dwarf_lineno(line, &lineno) != 0)
		return;
	ans->file = dwarf_linesrc(line, NULL, NULL);
	ans->line = lineno > 0 ? (uint32_t)lineno : 0;
	if (dwarf_linediscriminator(line, &disc) == 0)
		ans->discriminator = disc;
	ans->has_line = true;
}

void dwarf_index_free(struct dwarf_index *dw)
{
	uint64_t *cu;
	for (size_t pos = 0; hashmap_next(&dw->cus, &pos, NULL, &cu);)
		cu_index_free((struct cu_index *)(uintptr_t)*cu);
	hashmap_free(&dw->cus);
	free(dw->cu_ranges);
}
