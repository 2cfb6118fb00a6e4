/* pyruntime — what sonde must know of a CPython interpreter to walk its
 * threads' Python frames: the file that holds it (a python executable
 * linked statically, or libpython), its version, where its _PyRuntime is,
 * and the layout of the structures from there to each frame's code object
 * and instruction.
 *
 * The layout comes from the interpreter itself where it publishes it
 * (_Py_DebugOffsets at the start of _PyRuntime, 3.13 and later, read from
 * the file's initialized data), else from the file's DWARF (pyenv's builds
 * keep it), else from sonde's table of each version's facts (docs/python.md
 * says where each fact comes from). Versions 3.10 to 3.13 are known; a file
 * without _PyRuntime is not an interpreter (0), one of another version is
 * refused with one line (-1). x86-64 layouts. */
#ifndef SONDE_PYRUNTIME_H
#define SONDE_PYRUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A field the version does not have. */
#define PY_NO_FIELD UINT32_MAX

enum py_layout_source {
	PY_FROM_DEBUG_OFFSETS, /* _Py_DebugOffsets in the file */
	PY_FROM_DWARF,         /* the file's own debug info */
	PY_FROM_TABLE,         /* sonde's facts of the version */
};

/* How a frame says where it is in its code. */
enum py_instr_kind {
	PY_INSTR_INDEX,   /* an int: the code unit (2 bytes) last run (3.10's f_lasti) */
	PY_INSTR_POINTER, /* a pointer into the code object's own bytecode
			   * (co_code_adaptive): 3.11, 3.12's prev_instr, 3.13's instr_ptr */
};

/* Byte offsets of the fields on the way from _PyRuntime to a frame's code
 * and instruction, and of what names a code object. */
struct py_layout {
	unsigned major, minor;
	int micro; /* -1 when the file does not say (3.10) */
	uint64_t runtime_vaddr;       /* _PyRuntime's address in the file */
	enum py_layout_source source;
	/* _PyRuntime.interpreters.head: the first (main) interpreter. */
	uint32_t runtime_interpreters_head;
	/* The interpreter's first thread state; a thread state's next one. */
	uint32_t interp_threads_head, tstate_next;
	/* pthread_self() of its thread (the fs base on x86-64), its kernel
	 * thread id (PY_NO_FIELD before 3.11). */
	uint32_t tstate_thread_id, tstate_native_thread_id;
	/* The current frame: the field of the thread state holding it, or
	 * (cframe_current_frame set: 3.11, 3.12) a pointer to a struct that
	 * holds it at cframe_current_frame. */
	uint32_t tstate_frame, cframe_current_frame;
	/* A frame: its caller's frame, its code object, where it is. */
	uint32_t frame_previous, frame_code, frame_instr;
	enum py_instr_kind instr_kind;
	/* Where one run of the C evaluation loop begins (mixed stacks): 3.11's
	 * is_entry (a byte, nonzero), 3.12's and later's owner (a byte,
	 * PY_OWNED_BY_CSTACK for the loop's own entry frame); PY_NO_FIELD in
	 * 3.10, where every frame is one run. */
	uint32_t frame_is_entry, frame_owner;
	/* The code object: file, name, qualified name (PY_NO_FIELD in 3.10),
	 * first line, line table (a bytes object), and its bytecode: inline at
	 * code_code (3.11 on), or in the bytes object code_code points to. */
	uint32_t code_filename, code_name, code_qualname, code_firstlineno, code_linetable;
	uint32_t code_code;
	/* Strings: a compact ASCII str's characters begin ascii_data bytes in;
	 * a bytes object's at bytes_data, its length at var_size. */
	uint32_t ascii_data, bytes_data, var_size;
	/* What a py: probe reads of a call (probepy.h): the thread state
	 * holding the GIL (_PyRuntime.gilstate.tstate_current, 3.10 and 3.11;
	 * PY_NO_FIELD later), a frame's locals (localsplus, 3.11 on) and the
	 * code object's names of them (co_localsplusnames, a tuple), a tuple's
	 * items, a type's tp_flags and tp_name, an int's digits (ob_digit, in
	 * long_value from 3.12), and a compact non-ASCII str's UTF-8 copy
	 * (utf8) and characters (after the PyCompactUnicodeObject). */
	uint32_t runtime_tstate_current, frame_localsplus, code_localsplusnames, tuple_items;
	uint32_t type_flags, type_name, long_digits, compact_utf8, compact_data;
	/* Why the table was used (PY_FROM_TABLE): "no DWARF", or the field
	 * the file's DWARF lacks. */
	char why_table[96];
	/* The code `-X perf` copies for each Python function (3.12 on):
	 * _Py_trampoline_func_start's address in the file, its size and bytes
	 * (trampoline_size 0: the file has none). */
	uint64_t trampoline_vaddr;
	uint32_t trampoline_size;
	uint8_t trampoline_code[16];
	/* py_trampoline_evaluator's address in the file (0: the file has no
	 * such symbol): what every Python call of a process with -X perf goes
	 * through, where py: probes go (probepy.h). */
	uint64_t evaluator_vaddr;
};

#define PY_OWNED_BY_CSTACK 3

/* What the interpreter in the ELF file at path is. Returns 1 with *out,
 * 0 when the file defines no _PyRuntime (not an interpreter), or -1 with
 * one line in err (a version sonde does not know, a file it cannot read). */
int pyruntime_read(const char *path, struct py_layout *out, char *err, size_t errlen);

/* The interpreter a program runs: the executable itself when it defines
 * _PyRuntime (a static python, as Debian's), else the first library the
 * dynamic loader loads for it that does (libpython, as pyenv's builds).
 * Returns 1 with *out and that file's path in *path (malloc'd), 0 when
 * none does (not a Python program), or -1 with one line in err. */
int pyruntime_find(const char *executable, struct py_layout *out, char **path, char *err,
		   size_t errlen);

/* The first field where l and sonde's table for l's version differ
 * ("_ts.thread_id: 136, the table says 152"), in buf; "" when they agree.
 * Returns whether they agree. */
bool pyruntime_matches_table(const struct py_layout *l, char *buf, size_t size);

/* The same, from sonde's table alone for major.minor (what is used when the
 * file has neither _Py_DebugOffsets nor DWARF): 0, or -1 for a version the
 * table does not hold. runtime_vaddr is 0, micro -1. */
int pyruntime_table(unsigned major, unsigned minor, struct py_layout *out);

/* "debug offsets", "DWARF", "table". */
const char *pyruntime_source_name(enum py_layout_source s);

#endif
