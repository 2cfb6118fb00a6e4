/* pyfollow — which of the target's processes run Python. The process of
 * each sample is looked at when first seen (symbols' pyprocess_open: its
 * executable, else a library it maps, defines _PyRuntime), and again now
 * and then in its first seconds, while its loader may still be mapping
 * libpython. One that runs a version sonde reads gets its threads' Python
 * frames walked in the kernel (engine_set_python) and named
 * (symbols_python); one of another version is said once, and its stacks
 * stay native. --no-python (session_options.no_python): none. */
#ifndef SONDE_PYFOLLOW_H
#define SONDE_PYFOLLOW_H

#include "collector.h"
#include "sessionstate.h"

/* A record of the kernel's, before the collector takes it (which may take
 * long over the first stack of a process: its symbols are read; the look
 * takes well under a millisecond, and the kernel walks the process's
 * Python frames from then on). The process of a stack is looked at; a
 * process that exec'd is looked at again (the kernel dropped its layout;
 * its names go), at once if its executable's name says python, else at
 * its first stack. */
void pyfollow_record(struct session *s, const void *data, size_t size);

/* Forgets the Python processes that exited: their kernel entries go at
 * once, their code objects' names 10 s later (samples of them may still be
 * on their way). */
void pyfollow_forget_exited(struct session *s);

/* Frees what it keeps. */
void pyfollow_free(struct session *s);

#endif
