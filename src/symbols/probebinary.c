/* probebinary — the file a spec's BINARY or LIB names (probebinary.h), and
 * probes_which (probes.h). */
#define _GNU_SOURCE
#include "probebinary.h"

#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errbuf.h"
#include "ldso.h"
#include "procmaps.h"
#include "util.h"


const char *file_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* A path as the user knows it: without the /proc/PID/root prefix sonde
 * opens a running target's files through. */
const char *display_path(const char *path)
{
	int n = 0;
	if (sscanf(path, "/proc/%*d/root%n", &n) == 0 && n > 0 && path[n] == '/')
		return path + n;
	return path;
}

char *probes_which(const char *program)
{
	if (strchr(program, '/'))
		return access(program, X_OK) == 0 ? realpath(program, NULL) : NULL;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	char *copy = xstrdup(path), *save = NULL;
	char *found = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *cand = xasprintf("%s/%s", *dir ? dir : ".", program);
		if (access(cand, X_OK) == 0)
			found = realpath(cand, NULL);
		free(cand);
	}
	free(copy);
	return found;
}

struct library_search {
	const char *want;
	pid_t pid;
	char *found;
};

static int library_mapping(const struct procmaps_entry *e, void *arg)
{
	struct library_search *ls = arg;
	if (e->path[0] != '/' || !ldso_name_matches(file_base_name(e->path), ls->want))
		return 0;
	ls->found = procmaps_root_path(ls->pid, e->path);
	return 1;
}

/* The first file a running target maps whose base name names the library. */
static char *library_in_maps(const struct probe_scope *sc, const char *want)
{
	for (int i = 0; i < sc->npids; i++) {
		struct library_search ls = {.want = want, .pid = sc->pids[i]};
		if (procmaps_each(sc->pids[i], library_mapping, &ls) > 0)
			return ls.found;
	}
	return NULL;
}

/* A running target whose executable or command name is `part`: the path of
 * its executable (through /proc/PID/root), or NULL. */
static char *program_in_targets(const struct probe_scope *sc, const char *part)
{
	for (int i = 0; i < sc->npids; i++) {
		char exe[PATH_MAX], comm[PROC_COMM_MAX + 1];
		if (procmaps_exe(sc->pids[i], exe, sizeof(exe)))
			continue;
		bool named = strcmp(part, file_base_name(exe)) == 0 ||
			     (procmaps_comm(sc->pids[i], comm, sizeof(comm)) == 0 &&
			      procmaps_comm_names(comm, part));
		if (named)
			return procmaps_root_path(sc->pids[i], exe);
	}
	return NULL;
}

static bool looks_like_library(const char *part)
{
	return strncmp(part, "lib", 3) == 0 || strstr(part, ".so") != NULL;
}

static bool is_executable_name(const struct probe_scope *sc, const char *part)
{
	if (!sc->executable)
		return false;
	if (strcmp(file_base_name(sc->executable), part) == 0)
		return true;
	char *real = realpath(sc->executable, NULL);
	bool same = real && strcmp(file_base_name(real), part) == 0;
	free(real);
	for (int i = 0; i < sc->nexe_names && !same; i++)
		same = sc->exe_names[i] && procmaps_comm_names(file_base_name(sc->exe_names[i]), part);
	return same;
}

char *find_binary(const char *part, const struct probe_scope *sc, char *err, size_t errlen)
{
	if (strchr(part, '/')) {
		if (access(part, R_OK) == 0)
			return xstrdup(part);
		errbuf_set(err, errlen, "cannot read %s: %s", part, strerror(errno));
		return NULL;
	}
	if (is_executable_name(sc, part))
		return xstrdup(sc->executable);
	char *found = NULL;
	if (sc->npids > 0) {
		found = program_in_targets(sc, part);
		if (!found)
			found = library_in_maps(sc, part);
	} else {
		found = ldso_find(sc->executable, part, sc->env, NULL, 0);
	}
	if (!found && !looks_like_library(part))
		found = probes_which(part);
	if (found)
		return found;
	if (sc->npids > 0) {
		char others[64] = "";
		if (sc->npids > 1)
			snprintf(others, sizeof(others), " and %d other process%s", sc->npids - 1,
				 sc->npids == 2 ? "" : "es");
		errbuf_set(err, errlen,
			   "no process of the target maps a library or runs a program named '%s' "
			   "(searched PID %d%s): give the library's path to trace it before it is "
			   "loaded",
			   part, (int)sc->pids[0], others);
	} else if (sc->executable) {
		const char *prog = sc->nexe_names > 0 && sc->exe_names[0] ? sc->exe_names[0]
									 : sc->executable;
		errbuf_set(err, errlen,
			   "cannot find the binary or library '%s': %s would not load it (DT_NEEDED, "
			   "RPATH/RUNPATH, LD_LIBRARY_PATH, /etc/ld.so.cache, system directories) and "
			   "no program of that name is in PATH; give its path",
			   part, file_base_name(prog));
	} else {
		errbuf_set(err, errlen,
			   "cannot find the binary or library '%s' (not in LD_LIBRARY_PATH, "
			   "/etc/ld.so.cache, the system directories or PATH): give its path",
			   part);
	}
	return NULL;
}

Elf *probes_open_elf(const char *path, int *fd, char *err, size_t errlen)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = *fd >= 0 ? elf_begin(*fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (elf && elf_kind(elf) == ELF_K_ELF)
		return elf;
	errbuf_set(err, errlen, "%s is not an ELF binary sonde can read%s%s", display_path(path),
		   *fd < 0 ? ": " : "", *fd < 0 ? strerror(errno) : "");
	if (elf)
		elf_end(elf);
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return NULL;
}
