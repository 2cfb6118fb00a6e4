/* target — the processes a session profiles: a command sonde starts, or
 * existing PIDs.
 *
 * A started command is held between fork and exec until the profiler is
 * attached (target_release), so it is profiled from its first instruction.
 * Exec failure (command not found, not executable) is reported back to the
 * parent through a close-on-exec pipe, so it is a clear error, not a silent
 * child exit.
 *
 * Existing PIDs: a PID list, its descendants, or processes found by name. */
#ifndef SONDE_TARGET_H
#define SONDE_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct target_cmd {
	pid_t pid;
	int gate_fd;   /* write end: closing it lets the child exec */
	int status_fd; /* read end: receives errno if exec fails */
	bool exited;
	int wait_status;
};

/* Forks the command and holds it before exec. `output` NULL: it shares
 * sonde's stdin, stdout and stderr; a path: its stdout and stderr are
 * appended to that file (created mode 0644) and its stdin is /dev/null — for
 * a terminal UI that the command's output would garble and whose keys it
 * must not read. Returns 0, or -1 with err. */
int target_spawn(char *const argv[], const char *output, struct target_cmd *t, char *err,
		 size_t errlen);

/* Lets the held child exec. Returns 0 when exec succeeded, -1 with a message
 * when it failed (e.g. "command not found: foo"). */
int target_release(struct target_cmd *t, char *err, size_t errlen);

/* Non-blocking: true once the child has exited (reaps it). */
bool target_cmd_exited(struct target_cmd *t);

/* Kills (SIGKILL) and reaps a child that is still held or running. */
void target_cmd_kill(struct target_cmd *t);

/* Parses "PID[,PID...]" into pids (at most max). Returns count or -1 with err. */
int target_parse_pids(const char *s, pid_t *pids, int max, char *err, size_t errlen);


/* True when s is meant as a PID list ("123", "1,2,3"; a bad one such as
 * "12x" too: it starts with a digit), not a process name. */
bool target_is_pid_list(const char *s);

/* Processes whose command name (/proc/PID/comm, which the kernel cuts to
 * PROC_COMM_MAX characters: a longer name matches by its first 15) or
 * executable's base name is `name`, in PID order; kernel threads, zombies
 * and sonde itself excluded. Returns their number (0: none) with a malloc'd
 * array in *out (NULL when none). */
int target_find_by_name(const char *name, pid_t **out);

/* Every living descendant of the given processes (children, their
 * children, ...) from the parent PIDs in /proc/PID/stat, in tree order,
 * none of the roots. Returns their number with a malloc'd array in *out
 * (NULL when none). */
int target_descendants(const pid_t *roots, int nroots, pid_t **out);


#endif
