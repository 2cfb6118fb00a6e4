/* pytramp — Python's -X perf trampolines (3.12 on), for the unwinder.
 * With perf support on, CPython calls each Python function through a copy
 * of a few instructions of its own (_Py_trampoline_func_start .. _end),
 * laid one after another in anonymous executable arenas, and names each
 * copy in /tmp/perf-PID.map ("py::qualname:file"). The copies have no
 * unwind table, so a walk stopped at the first one. Here: the rows that
 * describe one copy, from the interpreter's own bytes (only the shape
 * CPython's x86-64 asm_trampoline.S has is known: sub $8,%rsp; call *%rcx;
 * add $8,%rsp; ret), and whether an anonymous mapping is such an arena and
 * at which stride its copies are (from the perf map's entries in it), so
 * the unwinder's mapping can say: every copy at (pc - start) % stride. */
#ifndef SONDE_PYTRAMP_H
#define SONDE_PYTRAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfi.h"
#include "perfmap.h"

#define PYTRAMP_ROWS 4

/* The rows of one copy of the n bytes of code (keys: offsets in the copy),
 * into rows[PYTRAMP_ROWS]; *nrows. False for a shape it does not know. */
bool pytramp_rows(const uint8_t *code, uint32_t n, struct cfi_row *rows, uint32_t *nrows);

/* Whether [start, end) holds trampolines by the perf map m (entries named
 * "py::..." of the code's size starting in it), and their stride: the least
 * distance between two of them, every one a multiple of it from start;
 * default_stride when it holds only one. */
bool pytramp_arena(const struct perfmap *m, uint64_t start, uint64_t end, uint32_t size,
		   uint32_t default_stride, uint32_t *stride);

#endif
