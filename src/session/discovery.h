/* discovery — which processes are the session's target: the executable a
 * spec names by default, the processes running it, those a probe goes
 * into (-p, --pid-of, the command, its descendants), and the processes
 * that appear (forks) or go (exits) while the session runs. */
#ifndef SONDE_DISCOVERY_H
#define SONDE_DISCOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sessionstate.h"

/* The target's executable (the command's or the first -p process's);
 * NULL when there is none (-a). The caller frees it. */
char *discovery_executable(const struct session_options *o);
/* Another name of the executable (a symlink given as the command, the
 * process's command name), or NULL. The caller frees it. */
char *discovery_exe_alias(const struct session_options *o);
/* The target's processes running now, into *out (the caller frees it);
 * returns how many. */
int discovery_running_targets(struct session *s, pid_t **out);
/* The processes a probe is placed in (every process of the target, or
 * every process for -a). Returns how many, or -1 with err. */
int discovery_probe_pids(struct session *s, pid_t **pids, char *err, size_t errlen);
/* A fork record: a new process of the target gets its probes. */
void discovery_follow_forks(struct session *s, const void *data, size_t size);
/* Forgets the followed processes that have exited. */
void discovery_forget_exited(struct session *s);
/* --pid-of NAME: every process of that name becomes a -p PID (a note
 * lists them). Returns 0, or -1 with err. */
int discovery_named_processes(struct session_options *o, char *err, size_t errlen);
/* The -p processes' descendants join the target (unless --no-children).
 * Returns 0, or -1 with err. */
int discovery_add_descendants(struct session *s, char *err, size_t errlen);
/* Whether any of the n processes is alive. */
bool discovery_any_alive(const pid_t *pids, int n);

#endif
