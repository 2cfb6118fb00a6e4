/* structure — a function's structure from DWARF and capstone
 * (structure.h). */
#define _GNU_SOURCE
#include "structure.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errbuf.h"
#include "fnbinary.h"
#include "lines.h"
#include "probebinary.h"
#include "probedebug.h"
#include "probes.h"
#include "probesafety.h"
#include "probesyms.h"
#include "util.h"

#define MAX_FUNCTION_BYTES (1u << 20)
#define MAX_SOURCE_LINES 20000 /* lines of one function shown */

/* The function spec'd: by name, or holding the line's first code. */
static const struct elf_function *find_function(struct function_list *fl, Dwarf *dw,
						const struct structure_query *q, const char *path,
						char *err, size_t errlen)
{
	if (q->func) {
		for (size_t i = 0; i < fl->n; i++)
			if (!fl->f[i].ifunc && strcmp(fl->f[i].name, q->func) == 0)
				return &fl->f[i];
		function_list_demangle(fl);
		for (size_t i = 0; i < fl->n; i++)
			if (!fl->f[i].ifunc && function_named(&fl->f[i], q->func, false))
				return &fl->f[i];
		char near[256];
		nearest_names(fl, q->func, near, sizeof(near));
		errbuf_set(err, errlen, "no function '%s' in %s%s%s", q->func, path,
			   *near ? "; nearest: " : "", near);
		return NULL;
	}
	if (!dw) {
		errbuf_set(err, errlen,
			   "%s has no debug info (DWARF) to find %s:%u in: install its debug symbols, "
			   "or build it with -g; explore FUNC needs none",
			   path, q->file, q->line);
		return NULL;
	}
	struct line_range *r;
	struct line_lookup lq = {.dw = dw, .binary = path, .file = q->file, .line = q->line};
	int nr = lines_ranges(&lq, &r, err, errlen);
	if (nr < 0)
		return NULL;
	uint64_t at = r[0].lo;
	free(r);
	const struct elf_function *best = NULL;
	for (size_t i = 0; i < fl->n; i++) {
		const struct elf_function *g = &fl->f[i];
		if (!g->ifunc && g->vaddr <= at && at < g->vaddr + g->size &&
		    (!best || g->size < best->size))
			best = g;
	}
	if (!best)
		errbuf_set(err, errlen, "no function symbol holds the code of %s:%u (0x%llx) in %s",
			   q->file, q->line, (unsigned long long)at, path);
	return best;
}

/* The instruction index at addr (-1: none begins there). */
static int insn_at(const struct structure *s, uint64_t addr)
{
	int lo = 0, hi = s->ninsns - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (s->insns[mid].i.addr == addr)
			return mid;
		if (s->insns[mid].i.addr < addr)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static bool ends_block(enum insn_flow f)
{
	return f != INSN_FLOW_NEXT;
}

static bool in_function(const struct structure *s, uint64_t a)
{
	return a >= s->lo && a < s->hi;
}

/* Blocks, their successors, and the loops' back edges. */
static void build_blocks(struct structure *s)
{
	bool *leader = xcalloc((size_t)s->ninsns + 1, sizeof(*leader));
	if (s->ninsns)
		leader[0] = true;
	for (int i = 0; i < s->ninsns; i++) {
		const struct insn_info *in = &s->insns[i].i;
		if ((in->flow == INSN_FLOW_COND || in->flow == INSN_FLOW_JUMP) &&
		    in_function(s, in->target)) {
			int t = insn_at(s, in->target);
			if (t >= 0)
				leader[t] = true;
		}
		if (ends_block(in->flow) && i + 1 < s->ninsns)
			leader[i + 1] = true;
	}
	int n = 0;
	for (int i = 0; i < s->ninsns; i++)
		n += leader[i];
	s->blocks = xcalloc((size_t)n + 1, sizeof(*s->blocks));
	for (int i = 0, b = -1; i < s->ninsns; i++) {
		if (leader[i]) {
			b++;
			s->blocks[b] = (struct structure_block){.lo = s->insns[i].i.addr, .first = i};
		}
		s->blocks[b].n++;
		s->blocks[b].hi = s->insns[i].i.addr + s->insns[i].i.size;
		s->insns[i].block = b;
	}
	s->nblocks = n;
	free(leader);
	for (int b = 0; b < n; b++) {
		struct structure_block *bl = &s->blocks[b];
		const struct insn_info *last = &s->insns[bl->first + bl->n - 1].i;
		int t = (last->flow == INSN_FLOW_COND || last->flow == INSN_FLOW_JUMP) &&
					in_function(s, last->target)
				? insn_at(s, last->target)
				: -1;
		if (t >= 0)
			bl->succ[bl->nsucc++] = s->insns[t].block;
		else if (last->flow != INSN_FLOW_NEXT)
			bl->exits = true; /* a tail call, an indirect jump, ret, a trap */
		if ((last->flow == INSN_FLOW_COND || last->flow == INSN_FLOW_NEXT) && b + 1 < n)
			bl->succ[bl->nsucc++] = b + 1;
		else if (last->flow == INSN_FLOW_NEXT)
			bl->exits = true; /* runs off the end (into the next symbol) */
	}
	/* Depth-first from the entry: an edge to a block on the path is a
	 * loop's back edge. */
	unsigned char *state = xcalloc((size_t)n + 1, 1); /* 0 new, 1 on the path, 2 done */
	int *stack = xcalloc((size_t)n + 1, sizeof(*stack)), *next = xcalloc((size_t)n + 1, sizeof(*next));
	int depth = 0;
	size_t cap = 0;
	if (n) {
		stack[depth++] = 0;
		state[0] = 1;
	}
	while (depth) {
		int b = stack[depth - 1];
		if (next[b] >= s->blocks[b].nsucc) {
			state[b] = 2;
			depth--;
			continue;
		}
		int c = s->blocks[b].succ[next[b]++];
		if (state[c] == 1) {
			grow_array((void **)&s->loops, &cap, (size_t)s->nloops + 1,
				   sizeof(*s->loops));
			s->loops[s->nloops++] = (struct structure_loop){.head = c, .from = b};
			s->blocks[c].loop_head = true;
		} else if (state[c] == 0) {
			state[c] = 1;
			stack[depth++] = c;
		}
	}
	for (int b = 0; b < n; b++)
		s->blocks[b].reachable = state[b] != 0;
	free(state);
	free(stack);
	free(next);
}

/* The lexical blocks and inlined calls under die, depth-first. */
static void add_scopes(struct structure *s, Dwarf_Die *die, Dwarf_Files *files, int depth,
		       size_t *cap)
{
	Dwarf_Die child;
	if (depth > 32 || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_lexical_block && tag != DW_TAG_inlined_subroutine)
			continue;
		Dwarf_Addr base, lo, hi, min = UINT64_MAX, max = 0;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
			if (hi > lo) {
				if (lo < min)
					min = lo;
				if (hi > max)
					max = hi;
			}
		if (max > min) {
			grow_array((void **)&s->scopes, cap, (size_t)s->nscopes + 1, sizeof(*s->scopes));
			struct structure_scope *sc = &s->scopes[s->nscopes++];
			memset(sc, 0, sizeof(*sc));
			sc->inlined = tag == DW_TAG_inlined_subroutine;
			sc->lo = min;
			sc->hi = max;
			sc->depth = depth;
			int dl = 0;
			if (dwarf_decl_line(&child, &dl) == 0 && dl > 0)
				sc->decl_line = (unsigned)dl;
			if (sc->inlined) {
				const char *name = dwarf_diename(&child);
				sc->name = xstrdup(name ? name : "?");
				Dwarf_Attribute a;
				Dwarf_Word w;
				if (dwarf_attr(&child, DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0)
					sc->call_line = (unsigned)w;
				if (files && dwarf_attr(&child, DW_AT_call_file, &a) &&
				    dwarf_formudata(&a, &w) == 0) {
					const char *f = dwarf_filesrc(files, w, NULL, NULL);
					const char *b = f ? strrchr(f, '/') : NULL;
					sc->call_file = f ? xstrdup(b ? b + 1 : f) : NULL;
				}
			} else if (!dl) {
				/* a lexical block's first line: that of its first address */
				for (int i = 0; i < s->ninsns; i++)
					if (s->insns[i].i.addr == min) {
						sc->decl_line = s->insns[i].line;
						break;
					}
			}
		}
		add_scopes(s, &child, files, depth + 1, cap);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* The subprogram DIE whose code holds lo. */
static bool subprogram_of(Dwarf *dw, uint64_t lo, Dwarf_Die *cu, Dwarf_Die *out)
{
	if (!dwarf_addrdie(dw, lo, cu)) { /* clang emits no .debug_aranges */
		Dwarf_Off off = 0, next;
		size_t hsize;
		bool found = false;
		while (!found && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			found = dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, lo) > 0;
			off = next;
		}
		if (!found)
			return false;
	}
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, lo, &scopes);
	bool found = false;
	for (int i = n - 1; i >= 0 && !found; i--)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			*out = scopes[i];
			found = true;
		}
	free(scopes);
	return found;
}

/* The file's text, from source_dir or where DWARF says: the path read
 * (malloc'd) and its lines, or NULL. */
static char *read_source(const char *file, const char *comp_dir, const char *source_dir,
			 char ***lines, int *nlines)
{
	char *tries[4] = {0};
	int nt = 0;
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	if (source_dir) {
		const char *rel = file;
		if (comp_dir && strncmp(file, comp_dir, strlen(comp_dir)) == 0)
			rel = file + strlen(comp_dir);
		while (*rel == '/' || (rel[0] == '.' && rel[1] == '/'))
			rel += *rel == '/' ? 1 : 2;
		tries[nt++] = xasprintf("%s/%s", source_dir, rel);
		tries[nt++] = xasprintf("%s/%s", source_dir, base);
	}
	if (file[0] == '/')
		tries[nt++] = xstrdup(file);
	else if (comp_dir)
		tries[nt++] = xasprintf("%s/%s", comp_dir, file);
	char *found = NULL;
	*lines = NULL;
	*nlines = 0;
	for (int t = 0; t < nt && !found; t++) {
		FILE *f = fopen(tries[t], "r");
		if (!f)
			continue;
		char *buf = NULL;
		size_t cap = 0, lcap = 0;
		ssize_t len;
		while ((len = getline(&buf, &cap, f)) >= 0 && *nlines < 1000000) {
			while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
				buf[--len] = 0;
			grow_array((void **)lines, &lcap, (size_t)*nlines + 1, sizeof(**lines));
			(*lines)[(*nlines)++] = xstrdup(buf);
		}
		free(buf);
		fclose(f);
		found = xstrdup(tries[t]);
	}
	for (int t = 0; t < nt; t++)
		free(tries[t]);
	return found;
}

/* The rows of the function's own file, its first line to its last. */
static void build_lines(struct structure *s, Dwarf *dw, unsigned first, const char *comp_dir,
			const char *source_dir)
{
	unsigned lo = first, hi = first;
	for (int i = 0; i < s->ninsns; i++)
		if (s->insns[i].file && !strcmp(s->insns[i].file, s->file) && s->insns[i].line) {
			if (!lo || s->insns[i].line < lo)
				lo = s->insns[i].line;
			if (s->insns[i].line > hi)
				hi = s->insns[i].line;
		}
	if (!lo)
		return;
	if (hi - lo >= MAX_SOURCE_LINES)
		hi = lo + MAX_SOURCE_LINES - 1;
	s->nlines = (int)(hi - lo + 1);
	s->lines = xcalloc((size_t)s->nlines, sizeof(*s->lines));
	char **text;
	int ntext;
	s->source_path = read_source(s->file, comp_dir, source_dir, &text, &ntext);
	for (int k = 0; k < s->nlines; k++) {
		s->lines[k].line = lo + (unsigned)k;
		if (s->source_path && lo + (unsigned)k <= (unsigned)ntext)
			s->lines[k].text = xstrdup(text[lo + k - 1]);
	}
	for (int t = 0; t < ntext; t++)
		free(text[t]);
	free(text);
	for (int i = 0; i < s->ninsns; i++) {
		int k = s->insns[i].file && !strcmp(s->insns[i].file, s->file)
				? structure_line_index(s, s->insns[i].line)
				: -1;
		if (k < 0)
			continue;
		s->lines[k].insns++;
		s->lines[k].branches += s->insns[i].i.flow == INSN_FLOW_COND;
		s->lines[k].branch_refused |= s->insns[i].i.flow == INSN_FLOW_COND && s->insns[i].refused;
	}
	/* Where a line probe would go: the line table's statement rows, one
	 * per instance (lines.h), refused where the kernel cannot step one. */
	struct line_row *rows;
	char ignored[256];
	int nrows = lines_in_range(dw, s->lo, s->hi, &rows, ignored, sizeof(ignored));
	for (int r = 0; r < nrows; r++) {
		if (strcmp(rows[r].file, s->file))
			continue;
		int k = structure_line_index(s, rows[r].line);
		if (k < 0)
			continue;
		s->lines[k].sites = rows[r].sites;
		int at = insn_at(s, rows[r].first_site);
		s->lines[k].refused = at >= 0 && s->insns[at].refused;
	}
	if (nrows > 0)
		free(rows);
}

int structure_line_index(const struct structure *s, unsigned line)
{
	if (!s->nlines || line < s->lines[0].line || line > s->lines[s->nlines - 1].line)
		return -1;
	return (int)(line - s->lines[0].line);
}

/* The instructions of code (got bytes at s->lo), each with its line, why
 * a probe is refused there and a direct call's callee. */
static void decode_insns(struct structure *s, const uint8_t *code, size_t got,
			 const struct insn_info *ii, int n, const struct function_list *fl, Dwarf *dw)
{
	s->insns = xcalloc((size_t)n, sizeof(*s->insns));
	s->ninsns = n;
	for (int i = 0; i < n; i++) {
		struct structure_insn *si = &s->insns[i];
		si->i = ii[i];
		char why[256];
		uint64_t at = ii[i].addr - s->lo;
		if (insn_unprobeable(code + at, got - at, why, sizeof(why)))
			si->refused = xstrdup(why);
		if (dw)
			lines_line_of(dw, ii[i].addr, &si->file, &si->line);
		for (size_t k = 0; ii[i].call && ii[i].target && k < fl->n && !si->callee; k++)
			if (fl->f[k].vaddr == ii[i].target && !fl->f[k].ifunc)
				si->callee = xstrdup(function_shown(&fl->f[k]));
	}
	if (n && s->insns[n - 1].i.addr + s->insns[n - 1].i.size < s->hi)
		s->hi = s->insns[n - 1].i.addr + s->insns[n - 1].i.size;
}

/* What DWARF says of the function: its file, lines, scopes. */
static void dwarf_parts(struct structure *s, Dwarf *dw, const char *source_dir)
{
	Dwarf_Die cu, sp;
	if (!dw || !subprogram_of(dw, s->lo, &cu, &sp))
		return;
	const char *decl = dwarf_decl_file(&sp);
	/* the file as the line table spells it: the entry's */
	const char *entry = s->insns[0].file;
	s->file = xstrdup(entry ? entry : decl ? decl : "?");
	int dl = 0;
	dwarf_decl_line(&sp, &dl);
	Dwarf_Attribute a;
	const char *comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &a));
	build_lines(s, dw, dl > 0 ? (unsigned)dl : 0, comp_dir, source_dir);
	Dwarf_Files *files = NULL;
	size_t nfiles, cap = 0;
	if (dwarf_getsrcfiles(&cu, &files, &nfiles))
		files = NULL;
	add_scopes(s, &sp, files, 1, &cap);
}

/* Each block's lines in the function's own file. */
static void block_lines(struct structure *s)
{
	for (int b = 0; b < s->nblocks; b++) {
		struct structure_block *bl = &s->blocks[b];
		for (int i = bl->first; i < bl->first + bl->n; i++) {
			const struct structure_insn *si = &s->insns[i];
			if (!si->line || !si->file || !s->file || strcmp(si->file, s->file))
				continue;
			if (!bl->lo_line || si->line < bl->lo_line)
				bl->lo_line = si->line;
			if (si->line > bl->hi_line)
				bl->hi_line = si->line;
		}
	}
}

int structure_build(const struct structure_query *q, struct structure *out, char *err,
		    size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->fd = out->debug_fd = -1;
	struct fn_binary b;
	if (fn_binary_open(q->binary, &b, err, errlen))
		return -1;
	Dwarf *dw = open_dwarf(b.fd, &b.dbg);
	out->binary = b.path;
	out->fd = b.fd;
	out->debug_fd = b.dbg.fd;
	out->dwarf = dw;
	out->has_dwarf = dw != NULL;
	const char *shown = display_path(b.path);
	const struct elf_function *f = find_function(&b.fl, dw, q, shown, err, errlen);
	struct safety safety = safety_of(b.elf, b.fd, &b.dbg, &b.fl);
	uint8_t *code = NULL;
	size_t got = 0;
	if (f) {
		out->function = xstrdup(function_shown(f));
		out->lo = f->vaddr;
		out->hi = f->vaddr + (f->size ? f->size : 1);
		got = f->size > MAX_FUNCTION_BYTES ? 0 : safety_read_code(&safety, out->lo, out->hi, &code);
		if (!got)
			errbuf_set(err, errlen, "cannot read the code of %s in %s (%llu bytes)",
				   out->function, shown, (unsigned long long)f->size);
	}
	struct insn_info *ii = NULL;
	int n = got ? insn_list(code, got, out->lo, &ii) : -1;
	if (got && n <= 0)
		errbuf_set(err, errlen, "the code of %s in %s does not decode", out->function, shown);
	if (n > 0) {
		decode_insns(out, code, got, ii, n, &b.fl, dw);
		build_blocks(out);
		dwarf_parts(out, dw, q->source_dir);
		block_lines(out);
	}
	free(ii);
	free(code);
	safety_end(&safety);
	fn_binary_release(&b); /* the path and fds are out's now */
	if (n <= 0) {
		structure_free(out);
		return -1;
	}
	return 0;
}

static int by_vaddr(const void *a, const void *b)
{
	const struct structure_fn *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

int structure_functions(const char *binary, struct structure_fn **out, char *err, size_t errlen)
{
	*out = NULL;
	struct fn_binary b;
	if (fn_binary_open(binary, &b, err, errlen))
		return -1;
	function_list_demangle(&b.fl);
	Dwarf *dw = open_dwarf(b.fd, &b.dbg);
	struct structure_fn *v = xcalloc(b.fl.n + 1, sizeof(*v));
	int n = 0;
	for (size_t i = 0; i < b.fl.n; i++)
		if (!b.fl.f[i].ifunc)
			v[n++] = (struct structure_fn){.name = xstrdup(function_shown(&b.fl.f[i])),
						       .vaddr = b.fl.f[i].vaddr,
						       .size = b.fl.f[i].size};
	qsort(v, (size_t)n, sizeof(*v), by_vaddr);
	int k = 0; /* aliases at one address: one name */
	for (int i = 0; i < n; i++) {
		if (k && v[k - 1].vaddr == v[i].vaddr) {
			free(v[i].name);
			continue;
		}
		v[k++] = v[i];
	}
	n = k;
	for (int i = 0; i < n && dw; i++) {
		const char *file = NULL;
		if (lines_line_of(dw, v[i].vaddr, &file, &v[i].line) == 0 && file) {
			const char *base = strrchr(file, '/');
			v[i].file = xstrdup(base ? base + 1 : file);
		}
	}
	if (dw)
		dwarf_end(dw);
	fn_binary_close(&b);
	*out = v;
	return n;
}

void structure_fns_free(struct structure_fn *f, int n)
{
	for (int i = 0; i < n; i++) {
		free(f[i].name);
		free(f[i].file);
	}
	free(f);
}

void structure_free(struct structure *s)
{
	for (int i = 0; i < s->ninsns; i++) {
		free(s->insns[i].refused);
		free(s->insns[i].callee);
	}
	free(s->insns);
	free(s->blocks);
	free(s->loops);
	for (int i = 0; i < s->nscopes; i++) {
		free(s->scopes[i].name);
		free(s->scopes[i].call_file);
	}
	free(s->scopes);
	for (int i = 0; i < s->nlines; i++)
		free(s->lines[i].text);
	free(s->lines);
	free(s->file);
	free(s->source_path);
	free(s->binary);
	free(s->function);
	if (s->dwarf)
		dwarf_end(s->dwarf);
	if (s->fd >= 0)
		close(s->fd);
	if (s->debug_fd >= 0)
		close(s->debug_fd);
	memset(s, 0, sizeof(*s));
	s->fd = s->debug_fd = -1;
}
