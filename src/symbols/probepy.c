/* probepy — a Python function's calls as a span probe. See probepy.h. */
#define _GNU_SOURCE
#include "probepy.h"

#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errbuf.h"
#include "probebinary.h"
#include "probesyms.h"
#include "probeusdt.h"
#include "procmaps.h"
#include "pyruntime.h"
#include "sonde_abi.h"
#include "util.h"

/* The evaluator -X perf installs (Python/perf_trampoline.c): a local
 * symbol, kept by builds that keep .symtab. */
#define PY_EVALUATOR "py_trampoline_evaluator"

bool probepy_is(const char *spec)
{
	return strncmp(spec, "py:", 3) == 0;
}

static int add_way(const char *spec, struct sonde_py_match *m, const char *file, size_t file_len,
		   const char *qual, size_t qual_len, char *err, size_t errlen)
{
	if (file_len >= SONDE_PY_MATCH_TEXT || qual_len >= SONDE_PY_MATCH_TEXT)
		return errbuf_set(err, errlen,
				  "bad probe '%s': a file or qualified name of more than %d characters",
				  spec, SONDE_PY_MATCH_TEXT - 1);
	struct sonde_py_way *w = &m->way[m->n++];
	memset(w, 0, sizeof(*w));
	memcpy(w->file, file, file_len);
	memcpy(w->qual, qual, qual_len);
	w->file_len = (__u8)file_len;
	w->qual_len = (__u8)qual_len;
	return 0;
}

int probepy_ways(const char *spec, const char *text, struct sonde_py_match *m, char *err,
		 size_t errlen)
{
	m->n = 0;
	const char *colon = strrchr(text, ':');
	if (colon) { /* FILE:QUALNAME */
		if (colon == text || !colon[1] || strchr(colon + 1, '/'))
			return errbuf_set(err, errlen,
					  "bad probe '%s': expected py:FILE.py:FUNCTION or "
					  "py:MODULE.FUNCTION",
					  spec);
		return add_way(spec, m, text, (size_t)(colon - text), colon + 1, strlen(colon + 1), err,
			       errlen);
	}
	/* MODULE.QUALNAME, each way its dots split: the module's dots are
	 * directories, its file MODULE.py. */
	const char *dot = strchr(text, '.');
	if (!dot || dot == text || !text[strlen(text) - 1] || text[strlen(text) - 1] == '.' ||
	    strstr(text, "..") || strchr(text, '/'))
		return errbuf_set(err, errlen,
				  "bad probe '%s': expected py:MODULE.FUNCTION (py:app.handle, "
				  "py:app.Server.handle) or py:FILE.py:FUNCTION",
				  spec);
	for (; dot && m->n < SONDE_PY_MATCH_WAYS; dot = strchr(dot + 1, '.')) {
		char file[SONDE_PY_MATCH_TEXT + 8];
		size_t mod_len = (size_t)(dot - text);
		if (mod_len + 3 >= sizeof(file))
			break;
		memcpy(file, text, mod_len);
		for (size_t i = 0; i < mod_len; i++)
			if (file[i] == '.')
				file[i] = '/';
		memcpy(file + mod_len, ".py", 4);
		if (add_way(spec, m, file, mod_len + 3, dot + 1, strlen(dot + 1), err, errlen))
			return -1;
	}
	return 0;
}

/* The interpreter the target runs: its layout and file (malloc'd). */
static int target_interpreter(const struct probe_scope *scope,
			      struct py_layout *l, char **path, char *err, size_t errlen)
{
	char exe[PATH_MAX];
	const char *program = scope->executable;
	if (!program && scope->npids > 0 && procmaps_exe(scope->pids[0], exe, sizeof(exe)) == 0)
		program = exe;
	if (!program)
		return errbuf_set(err, errlen, "there is no target program to find Python in");
	char why[512];
	int r = pyruntime_find(program, l, path, why, sizeof(why));
	if (r < 0)
		return errbuf_set(err, errlen, "%s", why);
	if (r == 0)
		return errbuf_set(err, errlen,
				  "%s is not a Python interpreter (neither it nor a library it loads "
				  "defines _PyRuntime)",
				  display_path(program));
	return 0;
}

/* The file offset of the ELF's entry point (_start), where a uprobe is hit
 * once per process: 0 when it has none in a loaded segment. */
static uint64_t entry_offset(const char *path)
{
	int fd;
	char err[256];
	Elf *elf = probes_open_elf(path, &fd, err, sizeof(err));
	if (!elf)
		return 0;
	GElf_Ehdr eh;
	uint64_t off = 0;
	if (!gelf_getehdr(elf, &eh) || vaddr_to_offset(elf, eh.e_entry, &off))
		off = 0;
	elf_end(elf);
	close(fd);
	return off;
}

/* Python 3.11: the USDT pair function__entry,function__return, kept in the
 * kernel to the way's calls by the code object of the current frame of
 * the thread holding the GIL (its entry fires with that frame current),
 * and the line probe's semaphore held by a uprobe at the entry point (3.11
 * fires function__entry only while a trace function is set or that
 * semaphore is raised). */
static int resolve_usdt(const char *spec, const struct probe_scope *scope,
			struct sonde_py_match *m, const struct py_layout *l, const char *interp,
			struct probe_target **out, char *err, size_t errlen)
{
	if (l->runtime_tstate_current == PY_NO_FIELD || l->cframe_current_frame == PY_NO_FIELD)
		return errbuf_set(err, errlen,
				  "sonde does not know where %s keeps the thread holding the GIL",
				  display_path(interp));
	char *pair = xasprintf("usdt:%s:python:function__entry,function__return", interp);
	char *line = xasprintf("usdt:%s:python:line", interp);
	struct probe_target *t = NULL, *lt = NULL;
	char why[512];
	int n = probeusdt_resolve(pair, scope, &t, why, sizeof(why));
	int nl = n > 0 ? probeusdt_resolve(line, scope, &lt, why, sizeof(why)) : -1;
	free(pair);
	free(line);
	if (n <= 0 || nl <= 0) {
		if (n > 0)
			probes_free(t, n);
		return errbuf_set(err, errlen,
				  "sonde times Python 3.11's calls through its function__entry and "
				  "line USDT probes: %s",
				  why);
	}
	/* _PyRuntime is found from the entry site's own address (below): one
	 * site, as Debian's build has (dtrace_function_entry out of line). */
	int entries = 0;
	for (int i = 0; i < n; i++)
		entries += !t[i].usdt_return;
	if (entries != 1) {
		probes_free(t, n);
		if (nl > 0)
			probes_free(lt, nl);
		return errbuf_set(err, errlen,
				  "%s's function__entry probe has %d sites: sonde finds a call's frame "
				  "from one",
				  display_path(interp), entries);
	}
	/* The line probe's semaphore is held by a uprobe at the entry point,
	 * run once per process, not at the line sites, which every line of
	 * the process would then trap at. */
	uint64_t entry = entry_offset(interp);
	uint64_t line_sema = lt[0].ref_ctr_offset;
	uint64_t dev = lt[0].dev, ino = lt[0].ino;
	probes_free(lt, nl);
	if (!entry || !line_sema) {
		probes_free(t, n);
		return errbuf_set(err, errlen,
				  "%s: its line probe has no semaphore, or the file no entry point, "
				  "to make 3.11 fire function__entry",
				  display_path(interp));
	}
	t = xrealloc(t, (size_t)(n + 1) * sizeof(*t));
	t[n] = (struct probe_target){.function = xstrdup("python:line (its semaphore)"),
				     .binary = xstrdup(t[0].binary),
				     .offset = entry,
				     .dev = dev,
				     .ino = ino,
				     .usdt = true,
				     .usdt_pair = true,
				     .usdt_hold = true,
				     .ref_ctr_offset = line_sema};
	n++;
	for (int i = 0; i < n; i++) {
		free(t[i].location);
		t[i].location = xstrdup(spec);
	}
	/* The entry's frame: _PyRuntime is where the file puts it, relative
	 * to the entry site wherever the file is loaded. */
	m->frame_from_runtime = 1;
	m->runtime_from_site = (int64_t)(l->runtime_vaddr - t[0].usdt_vaddr);
	m->runtime_tstate_current = l->runtime_tstate_current;
	m->tstate_thread_id = l->tstate_thread_id;
	m->tstate_frame = l->tstate_frame;
	m->cframe_current_frame = l->cframe_current_frame;
	t[0].py = xmalloc(sizeof(*t[0].py));
	*t[0].py = *m;
	*out = t;
	return n;
}

/* What the kernel reads of a call and its values, at l's layout. */
static void set_reading(struct sonde_py_match *m, const struct py_layout *l)
{
	m->frame_code = l->frame_code;
	m->code_filename = l->code_filename;
	m->code_qualname = l->code_qualname;
	m->ascii_data = l->ascii_data;
	m->frame_localsplus = l->frame_localsplus;
	m->code_localsplusnames = l->code_localsplusnames;
	m->tuple_items = l->tuple_items;
	m->var_size = l->var_size;
	m->type_flags = l->type_flags;
	m->type_name = l->type_name;
	m->long_digits = l->long_digits;
	m->long_tag = l->minor >= 12;
	m->compact_data = l->compact_data;
	m->compact_utf8 = l->compact_utf8;
}

int probepy_captures(const struct cap_spec *spec, const char *location,
		     struct sonde_py_match *m, struct fetch_build *b, char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	if (spec->pred)
		return errbuf_set(err, errlen,
				  "a py: probe takes no predicate yet (if %s): trace '%s' with "
				  "captures alone",
				  spec->pred_text, location);
	for (int i = 0; i < spec->ncaptures; i++) {
		/* A name as capexpr parses one: no member, index or operator. */
		const char *name = spec->texts[i];
		size_t len = strlen(name);
		if (spec->captures[i]->kind != CAP_VAR)
			return errbuf_set(err, errlen,
					  "a py: probe captures its function's arguments and locals "
					  "by name (%s n): '%s' is not a name",
					  location, name);
		if (len >= SONDE_PY_MATCH_TEXT)
			return errbuf_set(err, errlen, "'%s': a name of more than %d characters",
					  name, SONDE_PY_MATCH_TEXT - 1);
		for (int k = 0; k < i; k++)
			if (!strcmp(spec->texts[k], name))
				return errbuf_set(err, errlen, "'%s' is captured twice", name);
	}
	b->prog = xcalloc(1, sizeof(*b->prog)); /* no program: the frame is read */
	m->ncaptures = (__u32)spec->ncaptures;
	for (int i = 0; i < spec->ncaptures; i++) {
		size_t len = strlen(spec->texts[i]);
		memset(m->capture[i], 0, sizeof(m->capture[i]));
		memcpy(m->capture[i], spec->texts[i], len);
		m->capture_len[i] = (__u8)len;
		b->desc[i] = (struct capture_desc){.name = xstrdup(spec->texts[i]),
						   .type = xstrdup("python object"),
						   .kind = CAPTURE_PYTHON,
						   .size = 8,
						   .status = CAPTURE_OK};
	}
	b->ndesc = spec->ncaptures;
	return 0;
}

int probepy_resolve(const char *spec, const struct probe_scope *scope, struct probe_target **out,
		    char *err, size_t errlen)
{
	*out = NULL;
	struct sonde_py_match m = {0};
	if (probepy_ways(spec, spec + 3, &m, err, errlen))
		return -1;
	struct py_layout l;
	char *interp = NULL;
	if (target_interpreter(scope, &l, &interp, err, errlen))
		return -1;
	if (l.major == 3 && l.minor < 11) {
		errbuf_set(err, errlen,
			   "%s is Python %u.%u, which has neither -X perf trampolines (3.12 on) nor "
			   "the function__entry probe sonde times 3.11's calls by",
			   display_path(interp), l.major, l.minor);
		free(interp);
		return -1;
	}
	if (l.frame_code == PY_NO_FIELD || l.code_filename == PY_NO_FIELD ||
	    l.code_qualname == PY_NO_FIELD || l.ascii_data == PY_NO_FIELD) {
		errbuf_set(err, errlen, "sonde does not know where %s keeps a frame's code",
			   display_path(interp));
		free(interp);
		return -1;
	}
	set_reading(&m, &l);
	if (l.major == 3 && l.minor == 11) {
		int n = resolve_usdt(spec, scope, &m, &l, interp, out, err, errlen);
		free(interp);
		return n;
	}
	char *fn_spec = xasprintf("%s:%s", interp, PY_EVALUATOR);
	struct probes_found found = {0};
	char why[512];
	int n = probes_resolve(fn_spec, scope, &found, why, sizeof(why));
	free(fn_spec);
	if (n != 1) {
		if (n > 1) {
			probes_free(found.t, n);
			errbuf_set(err, errlen, "%s has several %s: sonde traces one",
				   display_path(interp), PY_EVALUATOR);
		} else {
			errbuf_set(err, errlen,
				   "%s has no %s to trace: a build without perf trampolines, or "
				   "stripped of its symbol table (.symtab)",
				   display_path(interp), PY_EVALUATOR);
		}
		free(interp);
		return -1;
	}
	free(interp);
	struct probe_target *t = found.t;
	t->py = xmalloc(sizeof(*t->py));
	*t->py = m;
	free(t->function);
	t->function = xstrdup(spec);
	free(t->location);
	t->location = xstrdup(spec);
	*out = t;
	return 1;
}

/* Whether file name a could be b: equal, or one ends the other after '/'. */
static bool files_may_match(const struct sonde_py_way *a, const struct sonde_py_way *b)
{
	const struct sonde_py_way *s = a->file_len <= b->file_len ? a : b;
	const struct sonde_py_way *l = s == a ? b : a;
	size_t at = l->file_len - s->file_len;
	return !memcmp(l->file + at, s->file, s->file_len) && (at == 0 || l->file[at - 1] == '/');
}

bool probes_py_may_share(const char *spec_a, const char *spec_b)
{
	struct sonde_py_match a, b;
	char err[256];
	if (!probepy_is(spec_a) || !probepy_is(spec_b) ||
	    probepy_ways(spec_a, spec_a + 3, &a, err, sizeof(err)) ||
	    probepy_ways(spec_b, spec_b + 3, &b, err, sizeof(err)))
		return false;
	for (__u32 i = 0; i < a.n; i++)
		for (__u32 j = 0; j < b.n; j++)
			if (a.way[i].qual_len == b.way[j].qual_len &&
			    !memcmp(a.way[i].qual, b.way[j].qual, a.way[i].qual_len) &&
			    files_may_match(&a.way[i], &b.way[j]))
				return true;
	return false;
}
