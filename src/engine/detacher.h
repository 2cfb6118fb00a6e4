/* detacher — removes uprobes in a helper process that no signal to sonde
 * can interrupt half-way.
 *
 * Why: the kernel removes a uprobe when the last reference to its perf
 * event (here: a BPF link fd) is closed, and that removal writes the
 * original instruction back into every process that has the breakpoint
 * (get_user_pages_remote). If the thread doing it has a fatal signal
 * pending (SIGKILL, or any signal whose default action ends the process),
 * that write fails with -EINTR and the kernel gives up: "uprobe: ...
 * failed to unregister, leaking uprobe" — the breakpoint stays in those
 * processes until they exit. A thread of a process that is being killed
 * always has that signal pending, so a removal in sonde's own threads is
 * unsafe against `kill -9` (measured: 1 leak in 6 kills during a detach).
 *
 * So sonde never closes the last reference itself: detacher_give hands the
 * fds to a helper process forked at engine_open ("sonde-detach", which
 * ignores SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGQUIT), which closes them
 * one by one, in the background. When sonde dies, even of SIGKILL, the
 * helper finishes what it was given, sees the end of its socket and exits;
 * fds sonde still held are closed by sonde's exit, where no signal is
 * pending any more (the kernel drops signals to a process that is exiting),
 * so those removals complete too.
 *
 * Not covered: a SIGKILL aimed at the helper itself (or at sonde's whole
 * process group) during a removal, and a fatal signal to sonde while it is
 * inside an attach (the kernel then fails the attach and leaks the same
 * way). */
#ifndef SONDE_DETACHER_H
#define SONDE_DETACHER_H

#include <stddef.h>
#include <sys/types.h>

struct detacher;

/* Forks the helper. Call it with no other threads running (a forked copy of
 * a multi-threaded process may only do async-signal-safe work, which is all
 * the helper does anyway) and before opening what the helper must not keep:
 * it closes every fd it inherited but its socket, at once. Returns NULL
 * with err when it cannot (then callers close the fds themselves). */
struct detacher *detacher_start(char *err, size_t errlen);

/* Hands fds[0..n) to the helper, which closes them; the caller then closes
 * its own copies (never the last reference, so its close removes nothing).
 * Returns 0, or -1 when the helper is gone (killed): then nothing was
 * handed over and the caller closes the fds itself. Never raises SIGPIPE. */
int detacher_give(struct detacher *d, const int *fds, size_t n);

/* The helper's PID (for tests and messages). */
pid_t detacher_pid(const struct detacher *d);

/* Ends the helper's input and waits until it has closed everything it was
 * given (~0.2 s per uprobe, the kernel's time), then frees d. NULL: no-op. */
void detacher_finish(struct detacher *d);

#endif
