/* probepy — a Python function's calls as a span probe. See probepy.h. */
#define _GNU_SOURCE
#include "probepy.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errbuf.h"
#include "probebinary.h"
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
	if (!program && scope->npids > 0) {
		char link[64];
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)scope->pids[0]);
		ssize_t n = readlink(link, exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = 0;
			program = exe;
		}
	}
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
	if (l.major == 3 && l.minor < 12) {
		errbuf_set(err, errlen,
			   "%s is Python %u.%u, which has no -X perf trampolines (3.12 on): its "
			   "calls are timed only through its USDT probes "
			   "(usdt:...:python:function__entry,function__return), not by py: yet",
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
	char *fn_spec = xasprintf("%s:%s", interp, PY_EVALUATOR);
	struct probes_found found = {0};
	char why[512];
	int n = probes_resolve(fn_spec, scope, &found, why, sizeof(why));
	free(fn_spec);
	if (n != 1) {
		if (n > 1)
			probes_free(found.t, n);
		errbuf_set(err, errlen,
			   "%s has no %s to trace (a build without perf trampolines, or without its "
			   "symbol table): %s",
			   display_path(interp), PY_EVALUATOR, n < 0 ? why : "several");
		free(interp);
		return -1;
	}
	free(interp);
	struct probe_target *t = found.t;
	m.frame_code = l.frame_code;
	m.code_filename = l.code_filename;
	m.code_qualname = l.code_qualname;
	m.ascii_data = l.ascii_data;
	t->py = xmalloc(sizeof(*t->py));
	*t->py = m;
	free(t->function);
	t->function = xstrdup(spec);
	free(t->location);
	t->location = xstrdup(spec);
	*out = t;
	return 1;
}
