/* load — the engine's life: the skeleton opened, configured from
 * engine_options (only the programs a fixed session uses) and loaded (again
 * without the off-CPU and thread-state programs where a kernel refuses
 * them), the ring buffers and the mapped thread states set up, the
 * lifecycle tracepoints and everything engine_options asks for attached at
 * start, and all of it taken down at the end. Implements engine_open,
 * engine_start, engine_add_pid, engine_remove_pid, engine_unwind_preload,
 * engine_unwind_stats, engine_get_stats and engine_close (engine.h). */
#ifndef SONDE_LOAD_H
#define SONDE_LOAD_H

#endif
