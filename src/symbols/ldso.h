/* ldso — finds a shared library the way glibc's dynamic loader (ld.so) will
 * for a given executable, without running it.
 *
 * The loader loads the executable's DT_NEEDED libraries breadth-first (after
 * LD_PRELOAD and /etc/ld.so.preload), and looks each name up — unless it
 * holds a '/' — in order: the DT_RPATH of the object that needs it and of
 * the objects that loaded that one, up to the executable (only while the
 * needing object has no DT_RUNPATH); LD_LIBRARY_PATH; the needing object's
 * DT_RUNPATH; /etc/ld.so.cache (unless the object is linked -z nodeflib);
 * the system directories. A name already loaded (by soname) is not loaded
 * again. $ORIGIN in RPATH/RUNPATH is the object's directory; $LIB and
 * $PLATFORM are expanded for the machine sonde runs on. Files of another ELF
 * class or machine are skipped, as the loader skips them.
 *
 * Not modelled: glibc-hwcaps and legacy hwcap subdirectories (their cache
 * entries are skipped), and secure-execution (setuid) mode. */
#ifndef SONDE_LDSO_H
#define SONDE_LDSO_H

#include <stdbool.h>
#include <stddef.h>

/* The environment the program will get (what ld.so reads from it). */
struct ldso_env {
	const char *ld_library_path; /* NULL or "": none */
	const char *ld_preload;      /* NULL or "": none */
};

/* Does the file base name `base` name the library `want`? "libc" matches
 * libc.so.6 and libc-2.36.so (a prefix followed by '.' or '-', then ".so"
 * somewhere); "libc.so.6" matches itself. */
bool ldso_name_matches(const char *base, const char *want);

/* Finds the library `want` (a soname such as libsqlite3.so.0, a file name,
 * or a prefix such as libsqlite3) for `executable` (NULL: no executable,
 * e.g. system-wide; then only LD_LIBRARY_PATH, the cache and the system
 * directories are searched):
 *  1. the first library the loader loads for the executable (directly or
 *     through other libraries) whose needed name, soname or file name is
 *     `want`, or that `want` names as a prefix;
 *  2. otherwise what dlopen(`want`) from the executable would find: a file
 *     named `want` — or, for a prefix, `want`.so* / `want`-*.so* — in the
 *     executable's RPATH, LD_LIBRARY_PATH, its RUNPATH, the cache and the
 *     system directories.
 * Returns a malloc'd path, or NULL. `how` (may be NULL) receives where it
 * was found: "needed by X, found through its RUNPATH", "LD_LIBRARY_PATH",
 * "/etc/ld.so.cache", ... */
char *ldso_find(const char *executable, const char *want, const struct ldso_env *env,
		char *how, size_t howlen);

/* Calls fn with the path of the executable, then of every library the
 * loader will load for it (preloads first, then its DT_NEEDED libraries
 * breadth-first), then of its dynamic loader (PT_INTERP), until fn returns
 * non-zero. Returns fn's non-zero value, 0, or -1 when the executable
 * cannot be read as ELF. Libraries that would not be found are left out,
 * as are the ones it dlopens at run time. */
int ldso_each_object(const char *executable, const struct ldso_env *env,
		     int (*fn)(const char *path, void *arg), void *arg);

/* Looks a soname up in an ld.so.cache file (both the glibc 2.32+ format
 * and the older one with the new table appended are read) for objects of
 * the given ELF class and machine (0: any). Returns a malloc'd path or
 * NULL. With `prefix`, `name` matches as ldso_name_matches does. */
char *ldso_cache_lookup(const char *cache_path, const char *name, bool prefix, int elf_class,
			int machine);

#endif
