/* probepy (private to symbols) — a spec py:FILE:QUALNAME or
 * py:MODULE.QUALNAME resolved to the calls of one Python function: a span
 * probe on the interpreter's trampoline evaluator (py_trampoline_evaluator,
 * which every Python call of a CPython 3.12+ process run with -X perf goes
 * through), with the code objects its calls must run (struct
 * sonde_py_match: the file name's ending and the qualified name, read in
 * the kernel at the interpreter's own layout, pyruntime.h). On 3.11 it is
 * the USDT span pair function__entry,function__return, with the line
 * probe's semaphore held (a usdt_hold site at the entry point: 3.11 fires
 * its entries only while that is raised); there the call's frame is the
 * current frame of the thread holding the GIL (_PyRuntime's
 * gilstate.tstate_current), whose code object is matched as on 3.12.
 * Captures (probepy_captures) are read from the call's frame's locals.
 *
 * py:app.py:handle names the file (app.py, or a path ending in /app.py)
 * and the qualified name (handle, Server.handle). py:pkg.mod.Cls.meth is
 * tried every way its dots split into a module path and a qualified name
 * (pkg.py with mod.Cls.meth, pkg/mod.py with Cls.meth, ...: the first
 * SONDE_PY_MATCH_WAYS). The interpreter is the target's: the executable,
 * or the library it loads that defines _PyRuntime, or a running target's. */
#ifndef SONDE_PROBEPY_H
#define SONDE_PROBEPY_H

#include <stdbool.h>
#include <stddef.h>

#include "capexpr.h"
#include "dwarfvar.h"
#include "probes.h"

/* Whether spec is a Python function's ("py:..."). */
bool probepy_is(const char *spec);

/* Resolves spec (with its "py:") in scope: 1 target in *out (free with
 * probes_free), or -1 with one line in err (a bad spec, no Python
 * interpreter, a version or build without trampolines). */
int probepy_resolve(const char *spec, const struct probe_scope *scope, struct probe_target **out,
		    char *err, size_t errlen);

/* A py: probe's captures (the names of its function's arguments or
 * locals, up to CAPTURE_MAX; no predicate) into m (its names) and b (what
 * the profile calls them: kind CAPTURE_PYTHON; no fetch program, the
 * kernel reads the call's frame). 0, or -1 with one line in err. */
int probepy_captures(const struct cap_spec *spec, const char *location,
		     struct sonde_py_match *m, struct fetch_build *b, char *err, size_t errlen);

/* The ways text (what follows "py:") names a function, into m's ways: 0,
 * or -1 with one line in err. Pure. */
int probepy_ways(const char *spec, const char *text, struct sonde_py_match *m, char *err,
		 size_t errlen);

#endif
