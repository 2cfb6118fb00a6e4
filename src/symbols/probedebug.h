/* probedebug — the separate debug file of a binary (what a -dbgsym
 * package, libc6-dbg or debuginfod installs), and a binary's DWARF: its
 * own or its debug file's. */
#ifndef SONDE_PROBEDEBUG_H
#define SONDE_PROBEDEBUG_H

#include <stdbool.h>

typedef struct Elf Elf;
typedef struct Dwarf Dwarf;


struct debug_file {
	int fd;
	Elf *elf;
};

/* The separate debug file of `binary` (elf): by build-id under
 * /usr/lib/debug/.build-id, then by .gnu_debuglink next to the binary, in
 * its .debug/ and under /usr/lib/debug (a running target's root first),
 * last debuginfod's client cache. True with *d open (the caller ends its
 * elf and closes its fd); false when none is installed. */
bool find_debug_file(Elf *elf, const char *binary, struct debug_file *d);

/* The DWARF of a binary (fd): its own, or its separate debug file's; NULL
 * when neither has any. */
Dwarf *open_dwarf(int fd, const struct debug_file *dbg);

#endif
