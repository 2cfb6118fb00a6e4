/* probebinary — the file a probe spec's BINARY or LIB part names, found
 * as the target finds it (probes.h says how), and how paths are shown. */
#ifndef SONDE_PROBEBINARY_H
#define SONDE_PROBEBINARY_H

#include <stddef.h>

#include "probes.h"

/* The part of a path after its last '/'. */
const char *file_base_name(const char *path);

/* A path as the user knows it: without the /proc/PID/root prefix sonde
 * opens a running target's files through. */
const char *display_path(const char *path);

/* The file `part` names in scope sc (malloc'd): a path as given, the
 * executable by any of its names; in running targets a program they run
 * (program_in_targets), then a library they map (library_in_maps); before
 * the target runs, a library as the dynamic loader finds it (ldso_find);
 * last a program in PATH (probes_which). NULL with one line in err. */
char *find_binary(const char *part, const struct probe_scope *sc, char *err, size_t errlen);

typedef struct Elf Elf;

/* Opens the binary at path for reading its symbols: its ELF (mapped), the
 * fd in *fd. NULL with one line in err ("... is not an ELF binary sonde can
 * read", and why it could not be opened) and nothing left open. */
Elf *probes_open_elf(const char *path, int *fd, char *err, size_t errlen);

#endif
