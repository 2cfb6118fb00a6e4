#define _GNU_SOURCE
#include "lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "util.h"

int lines_file_matches(const char *path, const char *file)
{
	size_t lp = strlen(path), lf = strlen(file);
	if (!lf || lf > lp)
		return 0;
	if (strcmp(path + lp - lf, file) != 0)
		return 0;
	return lp == lf || path[lp - lf - 1] == '/' || file[0] == '/';
}

/* One statement row, with the instance of code that holds it. */
struct stmt {
	uint64_t vaddr;
	uint64_t end; /* the next row's address: the row's code is [vaddr, end) */
	const char *path;
	unsigned line;
	uint64_t instance; /* DIE offset of the innermost subprogram/inlined instance */
	const char *function;
	int inlined;
};

struct stmts {
	struct stmt *v;
	size_t n, cap;
};

/* True when scope is an inlined call made on the statement's own line:
 * its code starts at the line's address (Py_SIZE(x) on the line), but the
 * line belongs to the function around it. */
static bool called_from_line(Dwarf_Die *scope, const struct stmt *s, Dwarf_Files *files)
{
	Dwarf_Attribute a;
	Dwarf_Word line = 0, file = 0;
	if (dwarf_tag(scope) != DW_TAG_inlined_subroutine ||
	    !dwarf_attr(scope, DW_AT_call_line, &a) || dwarf_formudata(&a, &line) ||
	    line != s->line || !dwarf_attr(scope, DW_AT_call_file, &a) ||
	    dwarf_formudata(&a, &file))
		return false;
	const char *path = files ? dwarf_filesrc(files, file, NULL, NULL) : NULL;
	return path && (lines_file_matches(path, s->path) || lines_file_matches(s->path, path));
}

/* True when the function of scope is declared in path (a statement row of
 * a file belongs to a function of that file: the instances nested inside it
 * at the same address, Py_SIZE inside PyList_GET_SIZE inside
 * _PyList_AppendTakeRef, come from other files). */
static bool declared_in(Dwarf_Die *scope, const char *path)
{
	const char *decl = dwarf_decl_file(scope);
	/* The two tables may spell it apart: with or without the CU's directory. */
	return decl && (lines_file_matches(decl, path) || lines_file_matches(path, decl));
}

/* The concrete function instances holding addr, innermost first (at most
 * max): dwarf_getscopes follows an inlined instance into its abstract
 * definition, not out to the instances it was inlined into. */
static int concrete_scopes(Dwarf_Die *cu, uint64_t addr, Dwarf_Die *out, int max)
{
	Dwarf_Die chain[64];
	int n = 0;
	Dwarf_Die parent = *cu, child;
	while (n < 64 && dwarf_child(&parent, &child) == 0) {
		bool found = false;
		do {
			int tag = dwarf_tag(&child);
			if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
			     tag == DW_TAG_lexical_block) &&
			    dwarf_haspc(&child, addr) > 0) {
				found = true;
				break;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
		chain[n++] = child;
		parent = child;
	}
	int k = 0;
	for (int i = n - 1; i >= 0 && k < max; i--)
		if (dwarf_tag(&chain[i]) != DW_TAG_lexical_block)
			out[k++] = chain[i];
	return k;
}

/* The innermost function instance holding the statement (at s->vaddr, of
 * s->path:s->line) in cu: of those declared in its file, else of all. */
static void instance_of(Dwarf_Die *cu, struct stmt *s)
{
	Dwarf_Die scopes[64];
	uint64_t addr = s->vaddr;
	int n = concrete_scopes(cu, addr, scopes, 64);
	Dwarf_Files *files = NULL;
	size_t nfiles;
	if (dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	s->instance = (1ull << 63) | addr; /* none: the address is its own instance */
	s->function = NULL;
	s->inlined = 0;
	bool any_declared = false;
	for (int i = 0; i < n && !any_declared; i++)
		any_declared = declared_in(&scopes[i], s->path);
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if ((tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) ||
		    called_from_line(&scopes[i], s, files) ||
		    (any_declared && !declared_in(&scopes[i], s->path)))
			continue;
		s->instance = dwarf_dieoffset(&scopes[i]);
		s->function = dwarf_diename(&scopes[i]);
		s->inlined = tag == DW_TAG_inlined_subroutine;
		break;
	}
}

static void stmts_add(struct stmts *a, Dwarf_Die *cu, uint64_t vaddr, const char *path,
		      unsigned line)
{
	grow_array((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v));
	struct stmt *s = &a->v[a->n++];
	s->vaddr = vaddr;
	s->end = vaddr;
	s->path = path;
	s->line = line;
	instance_of(cu, s);
}

/* A row that begins a statement at a real address. */
static bool stmt_row(Dwarf_Line *l, Dwarf_Addr *addr, int *lineno, const char **path)
{
	bool stmt = false, end = false;
	if (dwarf_lineaddr(l, addr) || dwarf_lineno(l, lineno) || *lineno <= 0 ||
	    dwarf_linebeginstatement(l, &stmt) || !stmt || dwarf_lineendsequence(l, &end) || end)
		return false;
	*path = dwarf_linesrc(l, NULL, NULL);
	return *path && *addr != 0; /* 0: code the linker discarded */
}

/* Any row at a real address, and where its code ends (the next row's
 * address in its sequence; 0 when it is the sequence's end). */
static bool code_row(Dwarf_Lines *lines, size_t i, size_t n, Dwarf_Addr *addr, Dwarf_Addr *end,
		     int *lineno, const char **path)
{
	Dwarf_Line *l = dwarf_onesrcline(lines, i);
	bool last = false;
	if (dwarf_lineaddr(l, addr) || dwarf_lineno(l, lineno) || *lineno <= 0 ||
	    dwarf_lineendsequence(l, &last) || last || i + 1 >= n ||
	    dwarf_lineaddr(dwarf_onesrcline(lines, i + 1), end) || *end <= *addr)
		return false;
	*path = dwarf_linesrc(l, NULL, NULL);
	return *path && *addr != 0;
}

static int by_instance_then_addr(const void *a, const void *b)
{
	const struct stmt *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->instance != y->instance)
		return x->instance < y->instance ? -1 : 1;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* Keeps the lowest address of each (path, line, instance); sorts by them. */
static void one_per_instance(struct stmts *a)
{
	qsort(a->v, a->n, sizeof(*a->v), by_instance_then_addr);
	size_t k = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (k && a->v[k - 1].instance == a->v[i].instance &&
		    a->v[k - 1].line == a->v[i].line && strcmp(a->v[k - 1].path, a->v[i].path) == 0)
			continue;
		a->v[k++] = a->v[i];
	}
	a->n = k;
}

static int by_addr(const void *a, const void *b)
{
	const struct line_site *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static void append(char *buf, size_t size, size_t *off, const char *fmt, const char *s)
{
	if (*off >= size)
		return;
	int w = snprintf(buf + *off, size - *off, fmt, s);
	*off = w < 0 ? size : *off + (size_t)w;
}

/* The rows of q's line: statement rows (all_rows false) or every row with
 * its code's extent, in *found; 0, or -1 with err (lines_resolve's). */
static int line_rows(const struct line_lookup *q, bool all_rows, struct stmts *found, char *err,
		     size_t errlen)
{
	Dwarf *dw = q->dw;
	const char *binary = q->binary, *file = q->file;
	unsigned line = q->line;
	const char *paths[4] = {0}; /* distinct paths FILE matched */
	int npaths = 0;
	unsigned below = 0, above = 0; /* nearest lines with code */
	char cus[256] = "";
	size_t cus_off = 0;
	int ncus = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		Dwarf_Files *files;
		size_t n, nfiles;
		if (!dwarf_offdie(dw, off + hsize, &cu)) {
			off = next;
			continue;
		}
		const char *cuname = dwarf_diename(&cu);
		if (cuname && ncus++ < 5)
			append(cus, sizeof(cus), &cus_off, cus_off ? ", %s" : "%s", base_name(cuname));
		/* A CU whose file table does not name FILE has no row of it. */
		bool named = false;
		if (dwarf_getsrcfiles(&cu, &files, &nfiles) == 0)
			for (size_t k = 0; k < nfiles && !named; k++) {
				const char *f = dwarf_filesrc(files, k, NULL, NULL);
				named = f && lines_file_matches(f, file);
			}
		if (!named || dwarf_getsrclines(&cu, &lines, &n)) {
			off = next;
			continue;
		}
		const char *last_path = NULL;
		bool last_match = false;
		for (size_t i = 0; i < n; i++) {
			Dwarf_Addr addr, end = 0;
			int lineno;
			const char *path;
			if (all_rows ? !code_row(lines, i, n, &addr, &end, &lineno, &path)
				     : !stmt_row(dwarf_onesrcline(lines, i), &addr, &lineno, &path))
				continue;
			if (path != last_path) { /* rows of one file come in runs */
				last_path = path;
				last_match = lines_file_matches(path, file);
				bool known = false;
				for (int k = 0; last_match && k < npaths && !known; k++)
					known = strcmp(paths[k], path) == 0;
				if (last_match && !known && npaths < 4)
					paths[npaths++] = path;
			}
			if (!last_match)
				continue;
			unsigned l = (unsigned)lineno;
			if (l == line) {
				stmts_add(found, &cu, addr, path, l);
				found->v[found->n - 1].end = end;
			} else if (l < line && l > below)
				below = l;
			else if (l > line && (!above || l < above))
				above = l;
		}
		off = next;
	}
	if (npaths == 0)
		return errbuf_set(err, errlen,
				  "no file %s in the debug info of %s (its compile units: %s%s)", file,
				  binary, *cus ? cus : "none", ncus > 5 ? ", ..." : "");
	if (npaths > 1) {
		char list[512] = "";
		size_t lo = 0;
		for (int k = 0; k < npaths; k++)
			append(list, sizeof(list), &lo, lo ? ", %s" : "%s", paths[k]);
		return errbuf_set(err, errlen, "%s names several files in %s: %s; give more of its path",
				  file, binary, list);
	}
	if (found->n == 0) {
		char near[64] = "";
		if (below && above)
			snprintf(near, sizeof(near), "%u, %u", below, above);
		else if (below || above)
			snprintf(near, sizeof(near), "%u", below ? below : above);
		return errbuf_set(err, errlen, "no code at %s:%u; nearest lines with code: %s", file,
				  line, *near ? near : "none");
	}
	return 0;
}

int lines_resolve(const struct line_lookup *q, struct line_site **out, char *err, size_t errlen)
{
	*out = NULL;
	struct stmts found = {0};
	if (line_rows(q, false, &found, err, errlen)) {
		free(found.v);
		return -1;
	}
	one_per_instance(&found);
	struct line_site *s = xcalloc(found.n, sizeof(*s));
	for (size_t i = 0; i < found.n; i++)
		s[i] = (struct line_site){found.v[i].vaddr, found.v[i].function, found.v[i].inlined};
	qsort(s, found.n, sizeof(*s), by_addr);
	int count = (int)found.n;
	free(found.v);
	*out = s;
	return count;
}

static int range_by_instance_then_addr(const void *a, const void *b)
{
	const struct line_range *x = a, *y = b;
	if (x->instance != y->instance)
		return x->instance < y->instance ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int lines_ranges(const struct line_lookup *q, struct line_range **out, char *err, size_t errlen)
{
	*out = NULL;
	struct stmts found = {0};
	if (line_rows(q, true, &found, err, errlen)) {
		free(found.v);
		return -1;
	}
	struct line_range *r = xcalloc(found.n, sizeof(*r));
	for (size_t i = 0; i < found.n; i++)
		r[i] = (struct line_range){found.v[i].vaddr, found.v[i].end, found.v[i].instance,
					   found.v[i].function, found.v[i].inlined, found.v[i].path};
	qsort(r, found.n, sizeof(*r), range_by_instance_then_addr);
	/* Adjacent rows of one instance are one range. */
	size_t k = 0;
	for (size_t i = 0; i < found.n; i++) {
		if (k && r[k - 1].instance == r[i].instance && r[k - 1].hi >= r[i].lo) {
			if (r[i].hi > r[k - 1].hi)
				r[k - 1].hi = r[i].hi;
			continue;
		}
		r[k++] = r[i];
	}
	free(found.v);
	*out = r;
	return (int)k;
}

/* The CU holding addr: by .debug_aranges, else (clang emits none) by each
 * CU's ranges. */
static bool cu_of(Dwarf *dw, uint64_t addr, Dwarf_Die *cu)
{
	if (dwarf_addrdie(dw, addr, cu))
		return true;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, addr) > 0)
			return true;
		off = next;
	}
	return false;
}

int lines_in_range(Dwarf *dw, uint64_t lo, uint64_t hi, struct line_row **out, char *err,
		   size_t errlen)
{
	*out = NULL;
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t n;
	if (!cu_of(dw, lo, &cu) || dwarf_getsrclines(&cu, &lines, &n)) {
		errbuf_set(err, errlen, "no line table covers address 0x%llx",
			   (unsigned long long)lo);
		return -1;
	}
	struct stmts found = {0};
	for (size_t i = 0; i < n; i++) {
		Dwarf_Addr addr;
		int lineno;
		const char *path;
		if (stmt_row(dwarf_onesrcline(lines, i), &addr, &lineno, &path) && addr >= lo &&
		    addr < hi)
			stmts_add(&found, &cu, addr, path, (unsigned)lineno);
	}
	one_per_instance(&found); /* sorted by path, line */
	struct line_row *rows = xcalloc(found.n + 1, sizeof(*rows));
	int nrows = 0;
	for (size_t i = 0; i < found.n; i++) {
		if (nrows && rows[nrows - 1].line == found.v[i].line &&
		    strcmp(rows[nrows - 1].file, found.v[i].path) == 0) {
			rows[nrows - 1].sites++;
			if (found.v[i].vaddr < rows[nrows - 1].first_site)
				rows[nrows - 1].first_site = found.v[i].vaddr;
			continue;
		}
		rows[nrows++] = (struct line_row){found.v[i].path, found.v[i].line, 1,
						  found.v[i].vaddr, NULL};
	}
	free(found.v);
	*out = rows;
	return nrows;
}

int lines_line_of(Dwarf *dw, uint64_t addr, const char **path, unsigned *line)
{
	Dwarf_Die cu;
	if (!cu_of(dw, addr, &cu))
		return -1;
	Dwarf_Line *l = dwarf_getsrc_die(&cu, addr);
	int lineno;
	if (!l || dwarf_lineno(l, &lineno) || lineno <= 0)
		return -1;
	*line = (unsigned)lineno;
	if (path)
		*path = dwarf_linesrc(l, NULL, NULL);
	return 0;
}
