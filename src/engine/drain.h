/* drain — the ring buffers' consumers: records go to the caller's
 * on_record under its probe ids (recordids.h), after the unwind tables
 * have seen them. Implements engine_poll, engine_ring_fd and
 * engine_discard_pending (engine.h). */
#ifndef SONDE_DRAIN_H
#define SONDE_DRAIN_H

#include <stddef.h>

/* libbpf ring-buffer callbacks; ctx is the struct engine. The unwind
 * tables' requests (a miss, an exec), read before every record of the main
 * ring buffer, so a load does not wait behind samples being symbolized. */
int on_unwind_request(void *ctx, void *data, size_t size);
/* A record of the main ring buffer. */
int on_ringbuf(void *ctx, void *data, size_t size);
/* A record made in user space (an off-CPU interval cut at the end,
 * offcpucut.h): delivered as the ring buffer's are. */
int deliver_cut(void *ctx, const void *data, size_t size);

#endif
