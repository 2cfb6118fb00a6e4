/* pysyms — the Python frames of samples named. Per Python process (a
 * struct py_process the session found), each code object is read once from
 * the process's memory (qualified name, file, first line, line table) and
 * kept by its address; an entry is checked against the process's memory
 * again at most once a second, so a code object freed and another made at
 * its address is named anew. A frame's line comes from its code's table
 * and the instruction it was at.
 *
 * A frame's name is its module and qualified name, "json.encoder.
 * JSONEncoder.encode": the module from the file's path under a lib/python3.X,
 * site-packages or dist-packages directory (its dots), a frozen module's
 * name ("<frozen importlib._bootstrap>"), else the file's name without
 * ".py" (a script: "app"). Kind FRAME_PYTHON, module and file the
 * code's file, line its line. */
#ifndef SONDE_PYSYMS_H
#define SONDE_PYSYMS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pyframes.h"
#include "symframe.h"

/* A Python frame as the sampler read it: its code object, where it is
 * (pycode_lasti's instr), and whether a run of the C evaluation loop began
 * with it (each run takes the place of one _PyEval_EvalFrameDefault
 * frame in the native stack). */
struct pysyms_frame {
	uint64_t code, instr;
	bool run_start;
};

struct pysyms;
struct pysyms *pysyms_new(void);
void pysyms_free(struct pysyms *ps);

/* Takes p (the caller's copy is emptied): process p->pid's frames are named
 * with it, replacing what the process had (an exec). */
void pysyms_add(struct pysyms *ps, struct py_process *p);
/* Whether process pid runs Python as far as ps knows. */
bool pysyms_has(const struct pysyms *ps, pid_t pid);
/* The process exited: its code objects go (names already given stay valid
 * until pysyms_free). */
void pysyms_forget(struct pysyms *ps, pid_t pid);
/* The process was seen gone at now_ns: its entries name the frames of its
 * samples still on their way, unchecked (its memory is gone), until
 * pysyms_sweep forgets it, hold_ns after. So a session that sees many
 * Python processes come and go holds the code objects of the live ones
 * only. */
void pysyms_exited(struct pysyms *ps, pid_t pid, uint64_t now_ns);
void pysyms_sweep(struct pysyms *ps, uint64_t now_ns, uint64_t hold_ns);

/* Names frame f of process pid into *out (strings valid until
 * pysyms_free). A frame whose code cannot be read is named
 * "[unreadable Python code]". Returns false when pid is not a Python
 * process ps knows. */
bool pysyms_name(struct pysyms *ps, pid_t pid, const struct pysyms_frame *f, uint64_t now_ns,
		 struct sym_frame *out);

/* The module name of a Python file's path into buf ("json.encoder",
 * "app"), which it returns. Pure. */
const char *pysyms_module(const char *path, char *buf, size_t size);

/* Counters. */
struct pysyms_stats {
	uint64_t codes_read;   /* code objects read from a process */
	uint64_t codes_reused; /* entries found to hold another code object */
	uint64_t unreadable;   /* frames whose code could not be read */
	uint64_t processes;    /* processes whose code objects are held now */
	uint64_t processes_forgotten; /* exited ones forgotten (pysyms_sweep) */
};
void pysyms_get_stats(const struct pysyms *ps, struct pysyms_stats *out);

#endif
