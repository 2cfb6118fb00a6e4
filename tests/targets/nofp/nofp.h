/* The library half of nofp's call chain (libnofp.c). */
#ifndef NOFP_H
#define NOFP_H

/* Calls back(n) from a frame of the library's own and returns its result
 * plus a little work of its own, so the call is not a tail call. */
long nofp_lib_stage(long (*back)(long), long n);

#endif
