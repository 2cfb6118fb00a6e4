/* jit — JIT-compiled code, named from its process's perf map
 * (/tmp/perf-PID.map, see perfmap.h).
 *
 * Where a JIT puts code: anonymous executable memory (maybe named with
 * PR_SET_VMA_ANON_NAME), or, once the process's perf map was found, memory
 * that no mapping last read holds (the process exited, or mapped it since).
 * The map is opened on the first such address and kept with the process;
 * what the JIT appended is read on a miss, and every 50 ms anyway (a JIT
 * that rewrites code in place names it anew at the same address). A
 * return address is looked up as addr - 1, as in a binary. A frame from it
 * is of kind FRAME_JIT, module "/tmp/perf-PID.map", named as the map names
 * it. */
#ifndef SONDE_JIT_H
#define SONDE_JIT_H

#include <stdbool.h>
#include <stdint.h>

#include "procs.h"
#include "strpool.h"
#include "symframe.h"

struct perfmap_sym;

/* Whether an address in mapping m (NULL: in none) of p may be JIT code. */
bool may_be_jit(const struct process *p, const struct mapping *m);
/* The perf map's function holding addr, or NULL. */
const struct perfmap_sym *jit_symbol(struct process *p, uint64_t addr, bool is_return);
/* Fills one frame for f; the module path is interned in `strings`. Returns 1. */
int jit_frame(struct strpool *strings, struct process *p, const struct perfmap_sym *f,
	      struct sym_frame *out);

#endif
