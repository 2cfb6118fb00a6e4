/* proberesolve — probes_resolve (probes.h), in its steps: the spec taken
 * apart (spec_take_apart), its binary found (spec_binary, probebinary) and
 * opened with its functions (binary_open, probesyms, probedebug); then a line
 * spec's addresses (resolve_line, probelines), or every function the spec
 * names taken (take_function: an IFUNC's implementation, aliases once, the
 * safety checks of probesafety); last the note of what a glob left out and
 * the error of an empty match (explain_no_match). */
#define _GNU_SOURCE
#include "probes.h"

#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"
#include "ifunc.h"
#include "probebinary.h"
#include "probedebug.h"
#include "probebranch.h"
#include "probelines.h"
#include "probesafety.h"
#include "probesyms.h"
#include "probepy.h"
#include "probeusdt.h"
#include "elfsyms.h"
#include "util.h"

/* Adds "name (why)" to a glob's list of functions it leaves out. */
static void note_skip(char *list, size_t size, size_t *len, const char *name, const char *why)
{
	if (*len >= size)
		return;
	int w = snprintf(list + *len, size - *len, "%s%s (%s)", *len ? ", " : "", name, why);
	*len = w < 0 ? size : *len + (size_t)w;
}

/* --- the spec taken apart, its binary found and opened ---------------------- */

/* A spec's parts: BINARY or LIB, and FUNC or FILE:LINE. */
struct spec_parts {
	char *bin_part;   /* malloc'd; NULL: the target's executable */
	const char *func; /* FUNC; for a line spec, the whole spec */
	char *line_file;  /* a line spec's FILE (malloc'd), else NULL */
	unsigned line_no;
};

static int spec_take_apart(const char *spec, struct spec_parts *p, char *err, size_t errlen)
{
	*p = (struct spec_parts){.func = spec};
	if (!probes_split_line(spec, &p->bin_part, &p->line_file, &p->line_no)) {
		int colon = probes_split(spec);
		p->bin_part = colon > 0 ? strndup(spec, (size_t)colon) : NULL;
		p->func = colon > 0 ? spec + colon + 1 : spec;
	} else if (!*p->line_file || p->line_no == 0) {
		errbuf_set(err, errlen, "bad probe '%s': expected [BINARY:]FILE:LINE with a line "
			   "number from 1", spec);
		free(p->bin_part);
		free(p->line_file);
		return -1;
	}
	if (!*p->func) {
		errbuf_set(err, errlen, "bad probe '%s': expected FUNC, BINARY:FUNC or LIB:FUNC", spec);
		free(p->bin_part);
		return -1;
	}
	return 0;
}

/* The file the spec's binary part names in scope (find_binary), else the
 * target's executable: malloc'd, or NULL with err. Frees bin_part. */
static char *spec_binary(const char *spec, char *bin_part, const struct probe_scope *scope,
			 char *err, size_t errlen)
{
	char *binary = NULL;
	if (bin_part)
		binary = find_binary(bin_part, scope, err, errlen);
	else if (scope->executable)
		binary = xstrdup(scope->executable);
	else
		errbuf_set(err, errlen, "probe '%s' names no binary and there is no target "
			   "executable: use BINARY:FUNC", spec);
	free(bin_part);
	return binary;
}

/* A binary a spec is resolved in: its ELF, its identity, its functions. */
struct opened_binary {
	char *path;           /* malloc'd */
	const char *shown;    /* path as the user knows it (display_path) */
	int fd;
	Elf *elf;
	struct stat st;
	struct function_list fl;
	struct debug_file dbg; /* its separate debug file, read when it has no .symtab */
};

/* Opens path (taking it: freed on failure) and reads its functions: 0, or
 * -1 with err. End with binary_close. */
static int binary_open(struct opened_binary *b, char *path, char *err, size_t errlen)
{
	int fd;
	Elf *elf = probes_open_elf(path, &fd, err, errlen);
	if (elf && fstat(fd, &b->st)) {
		errbuf_set(err, errlen, "%s is not an ELF binary sonde can read", display_path(path));
		elf_end(elf);
		close(fd);
		elf = NULL;
	}
	if (!elf) {
		free(path);
		return -1;
	}
	b->path = path;
	b->shown = display_path(path);
	b->fd = fd;
	b->elf = elf;
	b->fl = (struct function_list){0};
	read_symbols(elf, &b->fl, SYMBOLS_ELF_SYMTAB | SYMBOLS_ELF_DYNSYM);
	/* Stripped (only .dynsym: the exported functions): the static ones are
	 * in the debug file, if one is installed. */
	b->dbg = (struct debug_file){.fd = -1};
	if (!b->fl.had_symtab && find_debug_file(elf, path, &b->dbg))
		read_symbols(b->dbg.elf, &b->fl, SYMBOLS_ELF_SYMTAB);
	return 0;
}

static void binary_close(struct opened_binary *b)
{
	function_list_free(&b->fl);
	if (b->dbg.elf) {
		elf_end(b->dbg.elf);
		close(b->dbg.fd);
	}
	elf_end(b->elf);
	close(b->fd);
	free(b->path);
}

/* --- IFUNC symbols: probe the implementation the target uses ---------------- */

/* The function an IFUNC symbol resolved to, as a function of the list (the
 * symbol at the implementation's address: __strlen_avx2), asking the
 * target's processes that map the file, else sonde's own process (the
 * same file, CPU and environment make the same choice as a command sonde
 * starts will). Fills *impl (name: malloc'd) and *asked (the PID, or 0
 * for sonde itself); -1 when no process knows. */
static int resolve_ifunc(const struct opened_binary *b, const struct elf_function *f,
			 const struct probe_scope *sc, struct elf_function *impl, pid_t *asked)
{
	const struct ifunc_symbol sym = {.elf = b->elf,
					 .dev = b->st.st_dev,
					 .ino = b->st.st_ino,
					 .name = f->name,
					 .resolver = f->vaddr};
	const struct function_list *fl = &b->fl;
	uint64_t vaddr = 0;
	int r = -1;
	for (int i = 0; i < sc->npids && r < 0; i++)
		if ((r = ifunc_resolve(&sym, sc->pids[i], &vaddr)) == 0)
			*asked = sc->pids[i];
	if (r < 0 && (r = ifunc_resolve(&sym, getpid(), &vaddr)) == 0)
		*asked = 0;
	if (r < 0)
		return -1;
	*impl = (struct elf_function){NULL, vaddr, 0, false, NULL, NULL};
	for (size_t i = 0; i < fl->n && !impl->name; i++)
		if (fl->f[i].vaddr == vaddr && !fl->f[i].ifunc) {
			impl->name = xstrdup(fl->f[i].name);
			impl->size = fl->f[i].size;
		}
	if (!impl->name)
		impl->name = xasprintf("0x%llx", (unsigned long long)vaddr);
	return 0;
}

/* --- the functions a spec names --------------------------------------------- */

/* What resolving a spec gathers. */
struct resolving {
	const char *func; /* FUNC as the spec gives it */
	bool glob;        /* FUNC is a glob: it leaves unsafe functions out */
	const struct probe_scope *scope;
	struct opened_binary *b;
	struct safety safety;
	struct probe_target *t; /* the targets so far */
	int n;
	size_t cap;
	uint64_t *unsafe_offs; /* aliases of a refused function are refused too */
	int nunsafe;
	size_t unsafe_cap;
	int nskipped;          /* functions a glob left out, listed in skipped */
	char skipped[512];
	size_t skipped_len;
	bool refused;          /* the spec is refused, with err */
	char *err;
	size_t errlen;
};

/* Where calls of f go: f, or for an IFUNC the implementation the target
 * uses (*impl, *asked). 0: go on; 1: a glob leaves f out (an IFUNC no
 * process has loaded); -1: the spec is refused. */
static int function_code(struct resolving *r, const struct elf_function *f,
			 struct elf_function *impl, pid_t *asked)
{
	if (!f->ifunc || !resolve_ifunc(r->b, f, r->scope, impl, asked))
		return 0;
	if (!r->glob) {
		errbuf_set(r->err, r->errlen,
			   "%s in %s is an IFUNC (its implementation is chosen when the "
			   "library loads) and no process of the target, nor sonde, has it "
			   "loaded: start the target first (-p), or trace an implementation",
			   f->name, r->b->shown);
		return -1;
	}
	note_skip(r->skipped, sizeof(r->skipped), &r->skipped_len, f->name,
		  "an IFUNC no process has loaded");
	r->nskipped++;
	return 1;
}

/* Is the code at file offset off taken already (aliases and .symtab/.dynsym
 * duplicates), or refused already? */
static bool offset_seen(const struct resolving *r, uint64_t off)
{
	bool seen = false;
	for (int k = 0; k < r->n && !seen; k++)
		seen = r->t[k].offset - r->t[k].entry_skip == off;
	for (int k = 0; k < r->nunsafe && !seen; k++)
		seen = r->unsafe_offs[k] == off;
	return seen;
}

/* A function a probe would break (check_safe's u and why): a name is
 * refused (-1); a glob leaves it out, and says so in the note (0). */
static int take_unsafe(struct resolving *r, enum unsafe u, const struct elf_function *f,
		       uint64_t off, const char *why)
{
	if (!r->glob) {
		explain_unsafe(u, function_shown(f), r->b->shown, why, r->err, r->errlen);
		return -1;
	}
	grow_array((void **)&r->unsafe_offs, &r->unsafe_cap, (size_t)r->nunsafe + 1,
		   sizeof(*r->unsafe_offs));
	r->unsafe_offs[r->nunsafe++] = off;
	r->nskipped++;
	note_skip(r->skipped, sizeof(r->skipped), &r->skipped_len, function_shown(f), why);
	return 0;
}

/* Function f, which the spec names, as a target: 0 (taken, or left out),
 * or -1 when it refuses the spec. */
static int take_function(struct resolving *r, const struct elf_function *f)
{
	struct elf_function impl = {0};
	pid_t asked = 0;
	int how = function_code(r, f, &impl, &asked);
	if (how)
		return how < 0 ? -1 : 0;
	const struct elf_function *code = impl.name ? &impl : f; /* where calls go */
	uint64_t off;
	if (vaddr_to_offset(r->b->elf, code->vaddr, &off) || offset_seen(r, off)) {
		free(impl.name);
		return 0;
	}
	struct safe_site s;
	enum unsafe u = check_safe(&r->safety, code, &s);
	if (u != SAFE) {
		free(impl.name);
		return take_unsafe(r, u, f, off, s.why);
	}
	uint64_t site = s.site;
	uint64_t site_off = off + (site - code->vaddr);
	bool dup = false; /* an alias's probe moved to the same place */
	for (int k = 0; k < r->n && !dup; k++)
		dup = r->t[k].offset == site_off;
	if (dup) {
		free(impl.name);
		return 0;
	}
	grow_array((void **)&r->t, &r->cap, (size_t)r->n + 1, sizeof(*r->t));
	r->t[r->n++] = (struct probe_target){.function = xstrdup(function_shown(f)),
					     .binary = xstrdup(r->b->path),
					     .offset = site_off,
					     .entry_skip = site - code->vaddr,
					     .moved = s.moved[0] ? xstrdup(s.moved) : NULL,
					     .size = code->size,
					     .dev = (uint64_t)r->b->st.st_dev,
					     .ino = (uint64_t)r->b->st.st_ino,
					     .ifunc_impl = impl.name,
					     .ifunc_asked = asked,
					     .trap_known = s.trap_known,
					     .trap = s.trap};
	return 0;
}

/* Every function the spec names, taken until one refuses the spec. */
static void match_functions(struct resolving *r)
{
	struct function_list *fl = &r->b->fl;
	/* A C++ or Rust function by its demangled name, when no linkage name
	 * is the spec (a glob may match either). */
	bool by_linkage = false;
	for (size_t i = 0; i < fl->n && !by_linkage && !r->glob; i++)
		by_linkage = strcmp(fl->f[i].name, r->func) == 0;
	if (!by_linkage)
		function_list_demangle(fl);
	for (size_t i = 0; i < fl->n; i++) {
		if (!function_named(&fl->f[i], r->func, r->glob))
			continue;
		if (take_function(r, &fl->f[i])) {
			r->refused = true;
			break;
		}
	}
}

/* --- the outcome ------------------------------------------------------------ */

/* Why the spec gave no target, in err: all it named were left out, or it
 * names nothing (the nearest names; a function that exists only inlined;
 * no debug info to search). */
static void explain_no_match(const struct resolving *r)
{
	const struct opened_binary *b = r->b;
	if (r->nskipped) {
		errbuf_set(r->err, r->errlen, "no function in %s that '%s' names can be traced: %s",
			   b->shown, r->func, r->skipped);
		return;
	}
	char near[256];
	nearest_names(&b->fl, r->func, near, sizeof(near));
	if (r->glob)
		errbuf_set(r->err, r->errlen, "no function in %s matches '%s'%s", b->shown, r->func,
			   b->fl.had_symtab ? "" : " (it has no debug info: only its exported "
						   "functions were searched)");
	else if (describe_inlined_only(b->dbg.fd >= 0 ? b->dbg.fd : b->fd, r->func, b->shown,
				       r->err, r->errlen))
		;
	else if (!b->fl.had_symtab)
		errbuf_set(r->err, r->errlen,
			   "no symbol %s: %s has no debug info; install its -dbgsym package or "
			   "build with -g",
			   r->func, b->shown);
	else
		errbuf_set(r->err, r->errlen, "no function '%s' in %s%s%s", r->func, b->shown,
			   *near ? "; nearest: " : "", near);
}

int probes_resolve(const char *spec, const struct probe_scope *scope, struct probes_found *out,
		   char *err, size_t errlen)
{
	char *note = out->note;
	size_t notelen = out->notelen;
	out->t = NULL;
	if (note && notelen)
		note[0] = 0;
	if (probeusdt_is(spec))
		return probeusdt_resolve(spec, scope, &out->t, err, errlen);
	if (probepy_is(spec))
		return probepy_resolve(spec, scope, &out->t, err, errlen);
	/* branch LOCATION: a line or FUNC+0xOFF, resolved to its jumps */
	char *branch_at = NULL;
	unsigned branch_index = 0;
	uint64_t branch_off = 0;
	bool branch = probebranch_is(spec);
	if (branch && probebranch_split(spec, &branch_at, &branch_index, err, errlen))
		return -1;
	struct spec_parts p;
	if (spec_take_apart(branch ? branch_at : spec, &p, err, errlen)) {
		free(branch_at);
		return -1;
	}
	char *func_at = NULL; /* FUNC of a branch's FUNC+0xOFF */
	if (branch && !p.line_file) {
		const char *plus = strrchr(p.func, '+');
		char *end = NULL;
		if (plus && plus > p.func && plus[1] == '0' && (plus[2] == 'x' || plus[2] == 'X'))
			branch_off = strtoull(plus + 3, &end, 16);
		if (!end || end == plus + 3 || *end) {
			errbuf_set(err, errlen,
				   "bad branch probe '%s': expected branch [BINARY:]FILE:LINE[#K] or "
				   "branch [BINARY:]FUNC+0xOFF",
				   spec);
			free(p.bin_part);
			free(branch_at);
			return -1;
		}
		func_at = strndup(p.func, (size_t)(plus - p.func));
	}
	char *path = spec_binary(spec, p.bin_part, scope, err, errlen);
	struct opened_binary b;
	if (!path || binary_open(&b, path, err, errlen)) {
		free(p.line_file);
		free(func_at);
		free(branch_at);
		return -1;
	}
	struct resolving r = {.func = p.func,
			      .glob = probes_is_glob(p.func),
			      .scope = scope,
			      .b = &b,
			      .safety = safety_of(b.elf, b.fd, &b.dbg, &b.fl),
			      .err = err,
			      .errlen = errlen};
	if (branch) {
		struct branch_query q = {.binary = b.path,
					 .st = &b.st,
					 .spec = spec,
					 .file = p.line_file,
					 .line = p.line_no,
					 .func = func_at,
					 .offset = branch_off,
					 .index = branch_index};
		r.n = resolve_branch(&r.safety, &b.dbg, &q, &r.t, err, errlen);
		free(p.line_file);
		free(func_at);
		free(branch_at);
		r.refused = r.n < 0;
	} else if (p.line_file) {
		struct line_query q = {.binary = b.path,
				       .st = &b.st,
				       .spec = spec,
				       .file = p.line_file,
				       .line = p.line_no};
		r.n = resolve_line(&r.safety, &b.dbg, &q, &r.t, err, errlen);
		free(p.line_file);
		r.refused = r.n < 0;
	} else {
		match_functions(&r);
	}
	free(r.unsafe_offs);
	safety_end(&r.safety);
	if (r.nskipped && note && notelen)
		snprintf(note, notelen,
			 "not traced: %d function%s '%s' names that a probe would break or cannot "
			 "reach: %s",
			 r.nskipped, r.nskipped == 1 ? "" : "s", r.func, r.skipped);
	if (r.refused) {
		probes_free(r.t, r.n);
		r.t = NULL;
		r.n = -1;
	} else if (r.n == 0) {
		explain_no_match(&r);
		r.n = -1;
	}
	binary_close(&b);
	if (r.n < 0) {
		probes_free(r.t, 0);
		return -1;
	}
	out->t = r.t;
	return r.n;
}
