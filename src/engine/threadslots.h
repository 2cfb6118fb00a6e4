/* threadslots — the map `threads`, mapped into sonde: each thread's calls
 * in flight and sonde's own time charged to it, read (and a thread's state
 * forgotten) without a system call. Implements engine_for_each_open_span,
 * engine_thread_own_ns and engine_forget_thread (engine.h). */
#ifndef SONDE_THREADSLOTS_H
#define SONDE_THREADSLOTS_H

#endif
