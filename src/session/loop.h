/* loop — the one event loop of a session: every run (`record`, `lat`,
 * `slow`, `top` with the UI or -b, a web frontend) waits here.
 *
 * One epoll instance holds the file descriptors things wait on: the BPF ring
 * buffer (the engine's epoll fd), the control socket's listening and client
 * sockets, a frontend's fds (the terminal's stdin, an HTTP server's sockets).
 * Timers (refreshes, the end of -d, the 10-a-second wake that takes in
 * calls the BPF side does not wake the reader for) set how long a wait may
 * last. SIGINT, SIGTERM, SIGHUP and SIGPIPE arrive through a self-pipe, so
 * they are handled in the loop, never in a signal handler (and never end
 * the process while it attaches or removes probes: see engine/uprobes.h).
 *
 * One step: wait (until an fd is ready, a timer is due or a signal came),
 * then run the wake hooks (every wake, in the order they were added: the
 * session drains the ring buffer, the live state takes it in), then the
 * callbacks of the ready fds, then the callbacks of the due timers. So fd and
 * timer callbacks see what was just taken in. A wait interrupted by another
 * signal (SIGWINCH: a terminal resize) is a wake too.
 *
 * Callbacks may add and remove fds and timers and call loop_stop; an fd
 * removed during a step gets no callback later in that step. A step runs to
 * its end after loop_stop (what was due then is still done); loop_run
 * returns after it. Not thread-safe. Errors: -1 with one line in err. */
#ifndef SONDE_LOOP_H
#define SONDE_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loop;

typedef void (*loop_fn)(void *arg);

struct loop *loop_new(char *err, size_t errlen);

/* Restores the signal dispositions loop_catch_signals changed and frees
 * the loop (not the fds registered: their owners close them). NULL is
 * allowed. */
void loop_free(struct loop *lp);

/* Wakes the loop when fd is readable (level-triggered: until it is read)
 * and then calls fn(arg) (fn NULL: only wakes it; a wake hook does the
 * work). An fd is added once. Returns 0, or -1 with err. */
int loop_add_fd(struct loop *lp, int fd, loop_fn fn, void *arg, char *err, size_t errlen);

/* Stops watching fd (nothing when it is not watched). Call it before closing
 * fd. */
void loop_remove_fd(struct loop *lp, int fd);

/* Runs fn(arg) after every wake, before the fd and timer callbacks. */
void loop_on_wake(struct loop *lp, loop_fn fn, void *arg);

/* A timer: created disarmed; once armed, fn(arg) runs once when it is due
 * (re-arm it in fn for a periodic one). Returns its id (>= 0). */
int loop_timer_new(struct loop *lp, loop_fn fn, void *arg);

/* Arms timer id to be due `seconds` from now (<= 0: at this or the next
 * step), replacing any earlier time. */
void loop_timer_in(struct loop *lp, int id, double seconds);

/* Arms timer id to be due at CLOCK_MONOTONIC time due_ns (monotonic_ns). */
void loop_timer_at(struct loop *lp, int id, uint64_t due_ns);

void loop_timer_cancel(struct loop *lp, int id);

/* SIGINT, SIGTERM, SIGHUP and SIGPIPE: from now on each runs fn(arg) in
 * the loop (at the next step) instead of ending the process (a write to a
 * closed pipe fails with EPIPE instead). One loop at a time catches them.
 * Returns 0, or -1 with err. */
int loop_catch_signals(struct loop *lp, loop_fn fn, void *arg, char *err, size_t errlen);

/* True when a caught signal came and the loop has not run its callback yet:
 * for work done before the loop runs (attaching probes) to stop early. */
bool loop_signal_pending(const struct loop *lp);

/* Makes loop_run return after the current step. */
void loop_stop(struct loop *lp);
bool loop_stopped(const struct loop *lp);

/* Reports a failure from a callback: loop_run stops and returns -1 with
 * this message (the first one reported). */
void loop_fail(struct loop *lp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One step, waiting at most max_wait_ms (-1: until something happens).
 * Returns 0, or -1 with err when waiting failed or a callback reported a
 * failure. */
int loop_step(struct loop *lp, int max_wait_ms, char *err, size_t errlen);

/* Steps until loop_stop (then returns 0; a later loop_run runs again) or a
 * failure (-1 with err). */
int loop_run(struct loop *lp, char *err, size_t errlen);

#endif
