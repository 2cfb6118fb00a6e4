/* probebranch — a branch spec resolved to its conditional jumps
 * (probebranch.h). */
#define _GNU_SOURCE
#include "probebranch.h"

#include <ctype.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errbuf.h"
#include "insn.h"
#include "lines.h"
#include "probebinary.h"
#include "probesyms.h"
#include "util.h"

#define MAX_JUMPS 256 /* jumps of one line range, of one function for a listing */

bool probebranch_is(const char *spec)
{
	return strncmp(spec, "branch", 6) == 0 && (spec[6] == ' ' || spec[6] == '\t');
}

int probebranch_split(const char *spec, char **location, unsigned *index, char *err,
		      size_t errlen)
{
	const char *p = spec + 6;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = strlen(p);
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	*index = 0;
	const char *hash = memchr(p, '#', n);
	if (hash) {
		char *end;
		unsigned long k = strtoul(hash + 1, &end, 10);
		if (end == hash + 1 || end != p + n || k == 0 || k > MAX_JUMPS)
			return errbuf_set(err, errlen,
					  "bad branch probe '%s': after # comes which of the line's "
					  "jumps, from 1 (branch FILE:LINE#2)",
					  spec);
		*index = (unsigned)k;
		n = (size_t)(hash - p);
	}
	if (!n)
		return errbuf_set(err, errlen,
				  "bad branch probe '%s': expected branch [BINARY:]FILE:LINE[#K] or "
				  "branch [BINARY:]FUNC+0xOFF",
				  spec);
	*location = strndup(p, n);
	return 0;
}

/* The source text of path:line, blanks trimmed (malloc'd), or NULL when
 * the file cannot be read. */
static char *source_line(const char *path, unsigned line)
{
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f)
		return NULL;
	char *buf = NULL, *text = NULL;
	size_t cap = 0;
	unsigned at = 0;
	while (getline(&buf, &cap, f) >= 0)
		if (++at == line) {
			char *s = buf;
			while (isspace((unsigned char)*s))
				s++;
			size_t n = strlen(s);
			while (n && isspace((unsigned char)s[n - 1]))
				n--;
			text = strndup(s, n < 160 ? n : 160);
			break;
		}
	free(buf);
	fclose(f);
	return text;
}

/* The conditional jumps in [lo, hi), decoded from the start of the
 * function holding lo: how many (in out), or -1 with err. */
static int jumps_in(struct safety *c, uint64_t lo, uint64_t hi, struct insn_branch *out, int max,
		    char *err, size_t errlen)
{
	uint64_t start, end;
	const char *name;
	if (!safety_function_of(c, lo, &start, &end, &name))
		return errbuf_set(err, errlen,
				  "no function symbol or unwind entry holds its code "
				  "at 0x%llx, so sonde cannot tell where its instructions begin",
				  (unsigned long long)lo);
	uint8_t *code;
	size_t got = safety_read_code(c, start, hi + 16, &code);
	int n = got ? insn_branches(code, got, start, lo, hi, out, max) : -1;
	free(code);
	if (n < 0)
		return errbuf_set(err, errlen,
				  "its code at 0x%llx does not decode from the start "
				  "of %s at 0x%llx",
				  (unsigned long long)lo, name ? name : "its function",
				  (unsigned long long)start);
	return n;
}

/* The lines of FILE with jumps in the function holding vaddr, "1290,
 * 1312", in buf ("" when none or it cannot be decoded; jumps of code
 * inlined from other files are not FILE's); *name its name. */
static void function_branch_lines(struct safety *c, Dwarf *dw, uint64_t vaddr, const char *file,
				  char *buf, size_t size, const char **name)
{
	buf[0] = 0;
	uint64_t start, end;
	if (!safety_function_of(c, vaddr, &start, &end, name) || !end)
		return;
	uint8_t *code;
	size_t got = safety_read_code(c, start, end, &code);
	struct insn_branch *b = xcalloc(MAX_JUMPS, sizeof(*b));
	int n = got ? insn_branches(code, got, start, start, start + got, b, MAX_JUMPS) : 0;
	unsigned lines[MAX_JUMPS];
	int nl = 0;
	for (int i = 0; i < n; i++) {
		unsigned l;
		const char *path;
		if (lines_line_of(dw, b[i].addr, &path, &l) || !path || !lines_file_matches(path, file))
			continue;
		int k = 0;
		while (k < nl && lines[k] != l)
			k++;
		if (k == nl)
			lines[nl++] = l;
	}
	free(b);
	free(code);
	for (int i = 1; i < nl; i++) /* a few: insertion sort */
		for (int k = i; k > 0 && lines[k - 1] > lines[k]; k--) {
			unsigned t = lines[k];
			lines[k] = lines[k - 1];
			lines[k - 1] = t;
		}
	size_t off = 0;
	for (int i = 0; i < nl && off < size; i++) {
		int w = snprintf(buf + off, size - off, "%s%u", i ? ", " : "", lines[i]);
		off = w < 0 ? size : off + (size_t)w;
	}
}

/* The base name of path when it is not own's file (malloc'd), else NULL. */
static char *other_file(const char *own, const char *path)
{
	if (!path || (own && strcmp(own, path) == 0))
		return NULL;
	const char *base = strrchr(path, '/');
	return xstrdup(base ? base + 1 : path);
}

/* One jump as a probe target: 0, or -1 with err when the kernel cannot
 * take it or sonde cannot tell its outcome. */
static int jump_target(struct safety *c, Dwarf *dw, const struct branch_query *q,
		       const struct insn_branch *b, struct probe_target *t, char *err,
		       size_t errlen)
{
	uint64_t off;
	char why[256];
	const char *shown = display_path(q->binary);
	if (vaddr_to_offset(c->elf, b->addr, &off))
		return errbuf_set(err, errlen,
				  "its jump at 0x%llx is in no executable segment of %s",
				  (unsigned long long)b->addr, shown);
	if (line_site_unsafe(c, b->addr, off, why, sizeof(why)))
		return errbuf_set(err, errlen, "the kernel cannot probe its jump: %s",
				  why);
	if (b->unsupported[0])
		return errbuf_set(err, errlen,
				  "its jump at 0x%llx is %s, whose outcome sonde "
				  "cannot evaluate",
				  (unsigned long long)b->addr, b->unsupported);
	t->offset = off;
	t->binary = xstrdup(q->binary);
	t->dev = (uint64_t)q->st->st_dev;
	t->ino = (uint64_t)q->st->st_ino;
	t->branch = true;
	t->jump.cond = b->cond;
	t->jump.text = xstrdup(b->text);
	/* jcc is emulated by the kernel; loop and jrcxz are stepped */
	t->trap_known = true;
	t->trap = b->cond < INSN_COND_RCXZ ? INSN_TRAP_EMULATED : INSN_TRAP_STEPPED;
	const char *own = NULL, *to = NULL, *fall = NULL;
	unsigned line;
	if (dw) {
		lines_line_of(dw, b->addr, &own, &line);
		lines_line_of(dw, b->target, &to, &t->jump.taken_line);
		lines_line_of(dw, b->next, &fall, &t->jump.fall_line);
		t->jump.taken_file = other_file(own, to);
		t->jump.fall_file = other_file(own, fall);
	}
	return 0;
}

/* DWARF of the binary (its own, its debug file's, or the one a binary
 * with .symtab has beside it: *own, ended by the caller). */
static Dwarf *dwarf_of(struct safety *c, const struct debug_file *dbg, const char *binary,
		       struct debug_file *own)
{
	own->fd = -1;
	own->elf = NULL;
	Dwarf *dw = open_dwarf(c->fd, dbg);
	if (!dw && dbg->fd < 0 && find_debug_file(c->elf, binary, own))
		dw = open_dwarf(own->fd, own);
	return dw;
}

static void own_end(struct debug_file *own)
{
	if (own->elf) {
		elf_end(own->elf);
		close(own->fd);
	}
}

/* The jumps of q's line in *out: how many, or -1 with err. */
static int line_jumps(struct safety *c, Dwarf *dw, const struct branch_query *q,
		      struct probe_target **out, char *err, size_t errlen)
{
	const char *shown = display_path(q->binary);
	struct line_range *r;
	struct line_lookup lq = {.dw = dw, .binary = shown, .file = q->file, .line = q->line};
	int nr = lines_ranges(&lq, &r, err, errlen);
	if (nr < 0)
		return -1;
	char *source = source_line(r[0].path, q->line);
	struct probe_target *t = NULL;
	size_t n = 0, cap = 0;
	struct insn_branch *b = xcalloc(MAX_JUMPS, sizeof(*b));
	int rc = 0;
	unsigned most = 0; /* jumps of the instance that has the most */
	for (int i = 0; i < nr && !rc;) {
		/* One instance: its ranges' jumps, numbered by address. */
		size_t first = n;
		int j = i;
		for (; j < nr && r[j].instance == r[i].instance && !rc; j++) {
			int k = jumps_in(c, r[j].lo, r[j].hi, b, MAX_JUMPS, err, errlen);
			if (k < 0) {
				rc = -1;
				break;
			}
			for (int m = 0; m < k; m++) {
				grow_array((void **)&t, &cap, n + 1, sizeof(*t));
				t[n] = (struct probe_target){0};
				t[n].jump.index = (unsigned)(n - first + 1);
				if (jump_target(c, dw, q, &b[m], &t[n], err, errlen)) {
					n++;
					rc = -1;
					break;
				}
				t[n].function = xstrdup(r[i].function ? r[i].function : "?");
				t[n].inlined = r[i].inlined != 0;
				t[n].line = q->line;
				t[n].location = xasprintf("%s:%u", q->file, q->line);
				t[n].jump.source = source ? xstrdup(source) : NULL;
				n++;
			}
		}
		for (size_t m = first; m < n; m++)
			t[m].jump.count = (unsigned)(n - first);
		if (n - first > most)
			most = (unsigned)(n - first);
		i = j;
	}
	free(b);
	if (!rc && n == 0) {
		char lines[256];
		const char *fname = NULL;
		function_branch_lines(c, dw, r[0].lo, q->file, lines, sizeof(lines), &fname);
		if (*lines)
			errbuf_set(err, errlen, "no branch at %s:%u; branches in %s at lines %s", q->file,
				   q->line, fname ? fname : r[0].function ? r[0].function : "its function",
				   lines);
		else
			errbuf_set(err, errlen, "no branch at %s:%u, and none in %s", q->file, q->line,
				   fname ? fname : r[0].function ? r[0].function : "its function");
		rc = -1;
	}
	if (!rc && q->index) { /* keep the K-th of each instance */
		size_t k = 0;
		for (size_t m = 0; m < n; m++) {
			if (t[m].jump.index == q->index) {
				struct probe_target keep = t[m];
				t[m] = t[k];
				t[k++] = keep;
			}
		}
		if (k == 0) {
			char list[256] = "";
			size_t off = 0;
			for (size_t m = 0; m < n && m < t[0].jump.count && off < sizeof(list); m++) {
				int w = snprintf(list + off, sizeof(list) - off, "%s#%u %s", m ? ", " : "",
						 t[m].jump.index, t[m].jump.text);
				off = w < 0 ? sizeof(list) : off + (size_t)w;
			}
			errbuf_set(err, errlen, "%s:%u has %u conditional jump%s: no #%u (%s)", q->file,
				   q->line, most, most == 1 ? "" : "s", q->index, list);
			rc = -1;
		} else {
			struct probe_target *tail = xmalloc((n - k + 1) * sizeof(*tail));
			memcpy(tail, t + k, (n - k) * sizeof(*tail));
			probes_free(tail, (int)(n - k));
			n = k;
		}
	}
	free(source);
	free(r);
	if (rc) {
		probes_free(t, (int)n);
		return -1;
	}
	*out = t;
	return (int)n;
}

/* The jump at FUNC+0xOFF in *out: 1, or -1 with err. */
static int offset_jump(struct safety *c, Dwarf *dw, const struct branch_query *q,
		       struct probe_target **out, char *err, size_t errlen)
{
	const struct elf_function *f = NULL;
	for (size_t i = 0; i < c->fl->n && !f; i++)
		if (!c->fl->f[i].ifunc && (strcmp(c->fl->f[i].name, q->func) == 0 ||
					   function_named(&c->fl->f[i], q->func, false)))
			f = &c->fl->f[i];
	if (!f) {
		char near[256];
		nearest_names(c->fl, q->func, near, sizeof(near));
		return errbuf_set(err, errlen, "no function '%s' in %s%s%s", q->func,
				  display_path(q->binary), *near ? "; nearest: " : "", near);
	}
	if (f->size && q->offset >= f->size)
		return errbuf_set(err, errlen, "%s is %llu bytes, +0x%llx is past its end",
				  q->func, (unsigned long long)f->size,
				  (unsigned long long)q->offset);
	uint64_t at = f->vaddr + q->offset;
	struct insn_branch b[1];
	uint8_t *code;
	size_t got = safety_read_code(c, f->vaddr, at + 16, &code);
	int n = got ? insn_branches(code, got, f->vaddr, at, at + 1, b, 1) : -1;
	free(code);
	if (n < 0)
		return errbuf_set(err, errlen,
				  "no instruction begins at +0x%llx of %s (decoded "
				  "from its start)",
				  (unsigned long long)q->offset, q->func);
	if (n == 0 || b[0].addr != at)
		return errbuf_set(err, errlen,
				  "the instruction at +0x%llx of %s is no conditional "
				  "jump",
				  (unsigned long long)q->offset, q->func);
	struct probe_target *t = xcalloc(1, sizeof(*t));
	if (jump_target(c, dw, q, &b[0], t, err, errlen)) {
		probes_free(t, 1);
		return -1;
	}
	t->function = xstrdup(function_shown(f));
	t->location = xasprintf("%s+0x%llx", q->func, (unsigned long long)q->offset);
	t->jump.index = t->jump.count = 1;
	const char *path = NULL;
	if (dw && !lines_line_of(dw, at, &path, &t->line))
		t->jump.source = source_line(path, t->line);
	*out = t;
	return 1;
}

int resolve_branch(struct safety *c, const struct debug_file *dbg, const struct branch_query *q,
		   struct probe_target **out, char *err, size_t errlen)
{
	*out = NULL;
	struct debug_file own;
	Dwarf *dw = dwarf_of(c, dbg, q->binary, &own);
	int n;
	if (q->file && !dw) {
		const char *shown = display_path(q->binary);
		n = errbuf_set(err, errlen,
			       "%s has no debug info (DWARF) to find %s:%u in: install its debug "
			       "symbols, or build it with -g; branch FUNC+0xOFF needs none",
			       shown, q->file, q->line);
	} else if (q->file) {
		n = line_jumps(c, dw, q, out, err, errlen);
	} else {
		n = offset_jump(c, dw, q, out, err, errlen);
	}
	if (dw)
		dwarf_end(dw);
	own_end(&own);
	return n;
}
