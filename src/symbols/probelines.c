/* probelines — line probes (probelines.h), and the listing of a
 * function's lines: probes_function_lines (probes.h). */
#define _GNU_SOURCE
#include "probelines.h"

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errbuf.h"
#include "fnbinary.h"
#include "lines.h"
#include "probebinary.h"
#include "probes.h"
#include "probesyms.h"
#include "util.h"


/* Every probe address of FILE:LINE (lines.h), all checked safe, or -1 with
 * err: one unsafe address refuses the line, since its hits would be
 * missed. */
int resolve_line(struct safety *c, const struct debug_file *dbg, const struct line_query *q,
		 struct probe_target **out, char *err, size_t errlen)
{
	const char *binary = q->binary, *spec = q->spec, *file = q->file;
	const struct stat *st = q->st;
	unsigned line = q->line;
	const char *shown = display_path(binary);
	Dwarf *dw = open_dwarf(c->fd, dbg);
	struct debug_file own = {.fd = -1}; /* a debug file a binary with .symtab has too */
	if (!dw && dbg->fd < 0 && find_debug_file(c->elf, binary, &own))
		dw = open_dwarf(own.fd, &own);
	if (!dw) {
		if (own.elf) {
			elf_end(own.elf);
			close(own.fd);
		}
		errbuf_set(err, errlen,
			   "%s has no debug info (DWARF) to find %s:%u in: install its debug symbols "
			   "(the -dbgsym package of the package that ships it: dpkg -S %s names it; "
			   "libc6-dbg for libc), or fetch them with debuginfod-find debuginfo %s, or "
			   "build it with -g",
			   shown, file, line, shown, shown);
		return -1;
	}
	struct line_site *sites;
	struct line_lookup lq = {.dw = dw, .binary = shown, .file = file, .line = line};
	int n = lines_resolve(&lq, &sites, err, errlen);
	struct probe_target *t = n > 0 ? xcalloc((size_t)n, sizeof(*t)) : NULL;
	int k = 0;
	for (int i = 0; i < n; i++) {
		uint64_t off;
		char why[256];
		if (vaddr_to_offset(c->elf, sites[i].vaddr, &off)) {
			errbuf_set(err, errlen, "cannot trace %s: its address 0x%llx is in no executable "
				   "segment of %s", spec, (unsigned long long)sites[i].vaddr, shown);
			k = -1;
			break;
		}
		if (line_site_unsafe(c, sites[i].vaddr, off, why, sizeof(why))) {
			errbuf_set(err, errlen, "cannot trace %s in %s%s: %s; trace a line next to it",
				   spec, sites[i].function ? sites[i].function : shown,
				   sites[i].inlined ? " (inlined)" : "", why);
			k = -1;
			break;
		}
		t[k++] = (struct probe_target){
			.function = xstrdup(sites[i].function ? sites[i].function : "?"),
			.binary = xstrdup(binary),
			.offset = off,
			.dev = (uint64_t)st->st_dev,
			.ino = (uint64_t)st->st_ino,
			.line = line,
			.location = xasprintf("%s:%u", file, line),
			.inlined = sites[i].inlined != 0,
		};
	}
	free(sites);
	dwarf_end(dw);
	if (own.elf) {
		elf_end(own.elf);
		close(own.fd);
	}
	if (k < 0) {
		probes_free(t, n);
		return -1;
	}
	*out = t;
	return n;
}

/* --- listings: where a line probe can go in a function ---------------------- */

/* Why a line probe on the row's line would be refused (the first of its
 * addresses the kernel cannot step, as resolve_line refuses it), malloc'd;
 * NULL when it would not. */
static char *line_refused(struct safety *c, Dwarf *dw, const char *binary,
			  const struct line_row *row)
{
	struct line_site *sites;
	char ignored[256];
	struct line_lookup q = {.dw = dw, .binary = binary, .file = row->file, .line = row->line};
	int n = lines_resolve(&q, &sites, ignored, sizeof(ignored));
	char *why = NULL;
	for (int i = 0; i < n && !why; i++) {
		uint64_t off;
		char w[256];
		if (!vaddr_to_offset(c->elf, sites[i].vaddr, &off) &&
		    line_site_unsafe(c, sites[i].vaddr, off, w, sizeof(w)))
			why = xstrdup(w);
	}
	if (n > 0)
		free(sites);
	return why;
}

int probes_function_lines(const char *binary, const char *func, struct probes_lines *out,
			  char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->fd = out->debug_fd = -1;
	struct fn_binary b;
	if (fn_binary_open(binary, &b, err, errlen))
		return -1;
	struct function_list *fl = &b.fl;
	const char *path = b.path;
	const struct elf_function *f = NULL;
	for (size_t i = 0; i < fl->n && !f; i++)
		if (strcmp(fl->f[i].name, func) == 0 && !fl->f[i].ifunc)
			f = &fl->f[i];
	if (!f) {
		function_list_demangle(fl);
		for (size_t i = 0; i < fl->n && !f; i++)
			if (function_named(&fl->f[i], func, false) && !fl->f[i].ifunc)
				f = &fl->f[i];
	}
	Dwarf *dw = open_dwarf(b.fd, &b.dbg);
	int n = -1;
	if (!f) {
		char near[256];
		nearest_names(fl, func, near, sizeof(near));
		errbuf_set(err, errlen, "no function '%s' in %s%s%s", func, path,
			   *near ? "; nearest: " : "", near);
	} else if (!dw) {
		errbuf_set(err, errlen,
			   "%s has no debug info (DWARF) to list %s's lines: install its debug "
			   "symbols (the -dbgsym package of the package that ships it: dpkg -S %s "
			   "names it), or fetch them with debuginfod-find debuginfo %s, or build it "
			   "with -g",
			   path, func, path, path);
	} else {
		out->lo = f->vaddr;
		out->hi = f->vaddr + (f->size ? f->size : 1);
		n = lines_in_range(dw, out->lo, out->hi, &out->rows, err, errlen);
		/* A line whose addresses (in any instance) the kernel cannot step
		 * is one a line probe refuses: say so where it is listed. */
		struct safety safety = safety_of(b.elf, b.fd, &b.dbg, fl);
		for (int i = 0; i < n; i++)
			out->rows[i].refused = line_refused(&safety, dw, path, &out->rows[i]);
		safety_end(&safety);
	}
	if (n < 0) {
		if (dw)
			dwarf_end(dw);
		fn_binary_close(&b);
		return -1;
	}
	fn_binary_release(&b); /* the path and fds are out's now */
	out->n = n;
	out->binary = b.path;
	out->dwarf = dw;
	out->fd = b.fd;
	out->debug_fd = b.dbg.fd;
	return n;
}

void probes_lines_free(struct probes_lines *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->rows[i].refused);
	free(l->rows);
	if (l->dwarf)
		dwarf_end(l->dwarf);
	if (l->fd >= 0)
		close(l->fd);
	if (l->debug_fd >= 0)
		close(l->debug_fd);
	free(l->binary);
	memset(l, 0, sizeof(*l));
	l->fd = l->debug_fd = -1;
}
