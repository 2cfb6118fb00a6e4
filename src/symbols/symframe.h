/* symframe — one frame as the symbolizer resolves it (see symbols.h):
 * what every module of the symbolizer fills and every user of it reads. */
#ifndef SONDE_SYMFRAME_H
#define SONDE_SYMFRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "frame_kind.h"

/* One resolved frame. For an address inside inlined code, a lookup returns
 * several: the innermost inlined function first (kind FRAME_INLINED), its
 * caller(s) next, the real (out-of-line) function last (kind FRAME_USER). */
struct sym_frame {
	const char *name;   /* function, or "[module+0x...]" when unknown; a C++
			     * or Rust name demangled (demangle_short) */
	const char *system_name; /* the linkage name a demangled name came from
				  * (_ZNK4shop4Cart5totalEi), else NULL */
	const char *module; /* path of the binary, "[kernel.kallsyms]", or "" */
	const char *file;   /* source file ("" when unknown) */
	uint32_t line;      /* source line (0 when unknown) */
	enum frame_kind kind;
	/* DWARF line-table discriminator of the innermost frame's line (0 when
	 * none or for callers); only addr2line-style output shows it. */
	uint32_t discriminator;
	/* FRAME_UNKNOWN only: the address is in a function that has no name,
	 * and `name` is "[module+0xSTART]" of that function's start. */
	bool unnamed_function;
};

#endif
