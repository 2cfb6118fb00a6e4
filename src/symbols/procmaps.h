/* procmaps — what /proc says about a process: its memory mappings
 * (/proc/PID/maps), its command name and its executable.
 *
 * The one reader of these files: the symbolizer (which binary is mapped
 * where), probe resolution (which library a running target really loaded),
 * IFUNC resolution (where the library is loaded), the unwinder's tables,
 * the targets (alive, by name, descendants) and the calibration (where
 * sonde's own code lives) all parse the same lines here, and open a
 * mapped file the same way (procmaps_open_mapped). */
#ifndef SONDE_PROCMAPS_H
#define SONDE_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The kernel cuts command names (/proc/PID/comm) to this many characters. */
#define PROC_COMM_MAX 15

/* One line of /proc/PID/maps. `path` points into the parsed line (with the
 * newline and a " (deleted)" suffix cut off); "" for anonymous memory, or a
 * pseudo-file such as "[vdso]". */
struct procmaps_entry {
	uint64_t start, end, offset;
	uint64_t dev, inode;
	bool exec;    /* mapped executable */
	bool deleted; /* the file was deleted since it was mapped */
	const char *path;
};

/* Parses one line in place. Returns false when it is not a maps line. */
bool procmaps_parse_line(char *line, struct procmaps_entry *e);

/* Calls fn for each mapping of pid (0: this process) in address order until
 * fn returns non-zero. Returns fn's non-zero value, 0 after the last
 * mapping, -1 when the maps cannot be read (the process is gone, or not
 * ours to read). */
int procmaps_each(pid_t pid, int (*fn)(const struct procmaps_entry *e, void *arg), void *arg);

/* A process's command name, and the path of its executable (readlink of
 * /proc/PID/exe, " (deleted)" removed). Return 0, or -1 (gone, a kernel
 * thread, not permitted). */
int procmaps_comm(pid_t pid, char *buf, size_t size);
int procmaps_exe(pid_t pid, char *buf, size_t size);

/* A NUL-separated file of the process ("cmdline", "environ") as words:
 * their count, the words in *words pointing into *buf (free both); 0 with
 * both NULL when it cannot be read. */
int procmaps_words(pid_t pid, const char *file, char **buf, char ***words);

/* The path to open `path` (as the process's maps or exe name it) of a
 * running process: through /proc/PID/root when the process sees another
 * root (a container), else `path` itself when it is the same file there.
 * The plain path survives the process: a probe attached to it as the
 * process exits still attaches (through /proc/PID/root it would fail with
 * ENOENT). Allocated (free it). */
char *procmaps_root_path(pid_t pid, const char *path);

/* Opens the file of a mapping of pid, even if deleted or inside another
 * mount namespace: /proc/PID/map_files first, then the path in the
 * process's root, then the path as sonde sees it. The last two could be
 * another file by now, so they count only when the inode is the
 * mapping's; a deleted file is reached through map_files alone. Returns an
 * O_RDONLY | O_CLOEXEC fd, or -1. */
int procmaps_open_mapped(pid_t pid, const struct procmaps_entry *e);

/* A process's or thread's /proc stat line (tid 0: /proc/PID/stat, else
 * /proc/PID/task/TID/stat): its command name (into comm, at most
 * commlen - 1 bytes; NULL: not wanted), state letter and parent PID (NULL:
 * not wanted). The name may hold any byte: the fields after it follow its
 * last ')'. Returns 0, or -1 (gone, unreadable). */
int procmaps_stat(pid_t pid, pid_t tid, char *comm, size_t commlen, char *state, pid_t *ppid);

/* Is a state letter of procmaps_stat a living process's (not a zombie, not
 * dead)? */
bool procmaps_state_alive(char state);
/* Whether process pid lives (its stat says so: a zombie does not). */
bool procmaps_alive(pid_t pid);

/* The process's PID in its own (innermost) PID namespace: the last number
 * of NSpid in /proc/PID/status; pid itself on kernels without NSpid.
 * Returns -1 when the process is gone or unreadable. */
pid_t procmaps_nspid(pid_t pid);

/* The process a thread belongs to (Tgid in /proc/TID/status: tid itself
 * for a process's main thread), or -1 when it is gone or unreadable. */
pid_t procmaps_tgid(pid_t tid);

/* Does the command name `comm` name the program `name`: equal, or, where
 * the kernel cut the name to PROC_COMM_MAX characters, its first ones? */
bool procmaps_comm_names(const char *comm, const char *name);

#endif
