/* ifunc — the implementation a GNU indirect function (STT_GNU_IFUNC)
 * resolved to in a running process.
 *
 * An IFUNC symbol's address is its resolver, which the dynamic loader
 * calls once, at load time, to choose the implementation for this CPU
 * (libc's strlen -> __strlen_avx2); no call reaches the symbol's address
 * after that, so a probe there counts nothing. The choice is in the
 * process's memory, in the GOT slots the loader filled: the library's own
 * R_X86_64_IRELATIVE slots whose addend is the resolver (its internal
 * calls), else the executable's JUMP_SLOT/GLOB_DAT slots naming the symbol
 * (filled at load time with BIND_NOW, else by the first call). In sonde's
 * own process the loader answers itself (dlsym of the loaded file). */
#ifndef SONDE_IFUNC_H
#define SONDE_IFUNC_H

#include <stdint.h>
#include <sys/types.h>

typedef struct Elf Elf;

/* An IFUNC symbol: `elf` is the library's file (dev/ino: how a process's
 * maps name it), `name` and `resolver` the symbol's name and value. */
struct ifunc_symbol {
	Elf *elf;
	uint64_t dev, ino;
	const char *name;
	uint64_t resolver;
};

/* What sym resolved to in process pid. Returns 0 with the implementation's
 * virtual address in sym's file, or -1 when the process does not map the
 * file or no slot for the symbol is filled. */
int ifunc_resolve(const struct ifunc_symbol *sym, pid_t pid, uint64_t *impl);

#endif
