/* pyframes — a running CPython process's Python frames, read from its
 * memory with the layout pyruntime found: every thread's frames innermost
 * first, each named by its code object (qualified name, file) and the
 * source line of the instruction it is at.
 *
 * The reading is what the sampler will do in the kernel, done from user
 * space (process_vm_readv, without stopping the process: a thread that
 * moves meanwhile may show a frame it has just left), and the naming is
 * what user space will do for the sampler's frames: pycode_describe reads
 * one code object and turns an instruction index into its line with the
 * code's own line table (3.10's, or the location table of 3.11 on). */
#ifndef SONDE_PYFRAMES_H
#define SONDE_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pyruntime.h"

/* A running interpreter: its process, layout and where its file is loaded. */
struct py_process {
	pid_t pid;
	struct py_layout layout;
	char *path;     /* the interpreter's file (malloc'd) */
	uint64_t bias;  /* load address - file address */
};

/* Finds the interpreter process pid runs (its executable, else a library
 * it has mapped) and where it is loaded. Returns 1 with *p (free with
 * pyprocess_free), 0 when pid runs none, -1 with one line in err. */
int pyprocess_open(pid_t pid, struct py_process *p, char *err, size_t errlen);
void pyprocess_free(struct py_process *p);

/* One Python frame: its code object's address and the index (in 2-byte
 * code units) of the instruction it is at, -1 when not known. */
struct py_frame {
	uint64_t code;
	int64_t lasti;
};

/* One thread's frames as read (innermost first). */
struct py_thread {
	uint64_t thread_id;        /* pthread_self() */
	uint64_t native_thread_id; /* its kernel id; 0 when the version keeps none */
	struct py_frame *frames;
	size_t n;
	bool cut;                  /* more frames than were read, or a read failed */
};

/* Every thread of the main interpreter, with at most max_frames frames
 * each. Returns the number of threads (*out malloc'd: free with
 * pythreads_free), or -1 with one line in err (the memory could not be
 * read). */
int pyprocess_threads(const struct py_process *p, size_t max_frames, struct py_thread **out,
		      char *err, size_t errlen);
void pythreads_free(struct py_thread *t, int n);

/* What a code object says: its qualified name (its name before 3.11), its
 * file, and the line of instruction `lasti` (its first line when lasti is
 * -1 or the table names none). Strings malloc'd. Returns 0, or -1 when the
 * object cannot be read or is not a code object. */
struct py_code_info {
	char *qualname, *filename;
	int line;
};
int pycode_describe(const struct py_process *p, uint64_t code, int64_t lasti,
		    struct py_code_info *out);
void pycode_info_free(struct py_code_info *c);

/* A code object as read, for naming many frames of it: its names, first
 * line and line table (malloc'd, NULL when it could not be read), and the
 * addresses of its name and file objects, which say whether the memory at
 * its address still holds it (pycode_same). */
struct py_code {
	char *qualname, *filename;
	int first_line;
	uint8_t *table;
	size_t ntable;
	uint64_t name_obj, file_obj;
};
/* Returns 0, or -1 when it cannot be read or is not a code object. */
int pycode_read(const struct py_process *p, uint64_t code, struct py_code *out);
/* Whether code still holds the object c was read from. */
bool pycode_same(const struct py_process *p, uint64_t code, const struct py_code *c);
void pycode_free(struct py_code *c);

/* The code unit index of a frame's instruction as the sampler read it
 * (an index in 3.10; a pointer into the code's bytecode from 3.11), -1 when
 * it is not in the code. */
int64_t pycode_lasti(const struct py_layout *l, uint64_t code, uint64_t instr);

/* The line of code unit `lasti` in a line table (the bytes of
 * co_linetable) of Python 3.minor, starting from first_line: -1 when the
 * table gives that instruction no line. Pure: tested without a process. */
int pycode_line(unsigned minor, const uint8_t *table, size_t n, int first_line, int64_t lasti);

#endif
