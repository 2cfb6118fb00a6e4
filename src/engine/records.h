/* records — how the engine hands kernel records to its user: one callback,
 * shared by the ring-buffer drain (drain.c) and the off-CPU intervals cut at
 * the end of a recording (offcpucut.c). The layouts are bpf/sonde_abi.h's. */
#ifndef SONDE_RECORDS_H
#define SONDE_RECORDS_H

#include <stddef.h>

/* Called for each record. Returning non-zero stops the current poll. */
typedef int (*engine_record_fn)(void *arg, const void *data, size_t size);

#endif
