/* procmaps — see procmaps.h. */
#include "procmaps.h"
#include "util.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const char deleted_suffix[] = " (deleted)";

/* Cuts a " (deleted)" suffix off; true when there was one. */
static bool cut_deleted(char *path)
{
	size_t len = strlen(path), slen = sizeof(deleted_suffix) - 1;
	if (len <= slen || strcmp(path + len - slen, deleted_suffix) != 0)
		return false;
	path[len - slen] = '\0';
	return true;
}

bool procmaps_parse_line(char *line, struct procmaps_entry *e)
{
	unsigned long long start, end, offset, inode;
	unsigned int major, minor;
	char perms[8] = "";
	int pathpos = 0;
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &offset, &major,
		   &minor, &inode, &pathpos) < 7)
		return false;
	char *path = pathpos > 0 ? line + pathpos : line + strlen(line);
	path[strcspn(path, "\n")] = '\0';
	*e = (struct procmaps_entry){
		.start = start, .end = end, .offset = offset,
		.dev = makedev(major, minor), .inode = inode,
		.exec = perms[2] == 'x',
		.deleted = cut_deleted(path),
		.path = path,
	};
	return true;
}

int procmaps_each(pid_t pid, int (*fn)(const struct procmaps_entry *e, void *arg), void *arg)
{
	char path[64];
	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;
	while (ret == 0 && getline(&line, &cap, f) > 0) {
		struct procmaps_entry e;
		if (procmaps_parse_line(line, &e))
			ret = fn(&e, arg);
	}
	free(line);
	fclose(f);
	return ret;
}

int procmaps_comm(pid_t pid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	bool ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int procmaps_words(pid_t pid, const char *what, char **buf, char ***words)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	size_t len = 0;
	*buf = NULL;
	*words = NULL;
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t cap = 0;
	for (;;) {
		grow_array((void **)buf, &cap, len + 4097, 1);
		size_t got = fread(*buf + len, 1, 4096, f);
		len += got;
		if (got == 0)
			break;
	}
	fclose(f);
	(*buf)[len] = 0;
	int n = 0;
	size_t wcap = 0;
	for (size_t i = 0; i < len; i += strlen(*buf + i) + 1) {
		grow_array((void **)words, &wcap, (size_t)n + 1, sizeof(**words));
		(*words)[n++] = *buf + i;
	}
	return n;
}

int procmaps_exe(pid_t pid, char *buf, size_t size)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, buf, size - 1);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	cut_deleted(buf);
	return 0;
}

/* The line of /proc/PID/status that starts with key, into line: 1, 0 when
 * there is none, -1 when the file cannot be read. */
static int status_line(pid_t pid, const char *key, char *line, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int found = 0;
	size_t klen = strlen(key);
	while (!found && fgets(line, (int)size, f))
		found = strncmp(line, key, klen) == 0;
	fclose(f);
	return found;
}

pid_t procmaps_nspid(pid_t pid)
{
	char line[512];
	pid_t ns = pid;
	int got = status_line(pid, "NSpid:", line, sizeof(line));
	if (got < 0)
		return -1;
	if (got > 0) {
		/* "NSpid:\t4242\t7": the outermost first, the innermost last */
		char *save = NULL;
		for (char *tok = strtok_r(line + 6, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			ns = (pid_t)strtol(tok, NULL, 10);
	}
	return ns > 0 ? ns : pid;
}

pid_t procmaps_tgid(pid_t tid)
{
	char line[128];
	if (status_line(tid, "Tgid:", line, sizeof(line)) <= 0)
		return -1;
	return (pid_t)strtol(line + 5, NULL, 10);
}

bool procmaps_comm_names(const char *comm, const char *name)
{
	if (strcmp(comm, name) == 0)
		return true;
	return strlen(comm) == PROC_COMM_MAX && strlen(name) > PROC_COMM_MAX &&
	       strncmp(comm, name, PROC_COMM_MAX) == 0;
}

char *procmaps_root_path(pid_t pid, const char *path)
{
	char *through_root = xasprintf("/proc/%d/root%s", (int)pid, path);
	struct stat ours, theirs;
	if (stat(path, &ours) == 0 && stat(through_root, &theirs) == 0 &&
	    ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino) {
		free(through_root);
		return xstrdup(path);
	}
	return through_root;
}

int procmaps_open_mapped(pid_t pid, const struct procmaps_entry *e)
{
	char buf[PATH_MAX + 64];
	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	int fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || e->deleted)
		return fd;
	snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)pid, e->path);
	const char *candidates[] = { buf, e->path };
	for (size_t i = 0; i < 2; i++) {
		struct stat st;
		fd = open(candidates[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_ino == e->inode)
			return fd;
		close(fd);
	}
	return -1;
}

int procmaps_stat(pid_t pid, pid_t tid, char *comm, size_t commlen, char *state, pid_t *ppid)
{
	char path[96], buf[512];
	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	char st;
	int pp;
	if (!open || !close || close < open || sscanf(close + 1, " %c %d", &st, &pp) != 2)
		return -1;
	if (comm && commlen) {
		size_t len = (size_t)(close - open - 1);
		if (len >= commlen)
			len = commlen - 1;
		memcpy(comm, open + 1, len);
		comm[len] = 0;
	}
	if (state)
		*state = st;
	if (ppid)
		*ppid = (pid_t)pp;
	return 0;
}

bool procmaps_state_alive(char state)
{
	return state != 'Z' && state != 'X' && state != 'x';
}

bool procmaps_alive(pid_t pid)
{
	char state;
	return procmaps_stat(pid, 0, NULL, 0, &state, NULL) == 0 && procmaps_state_alive(state);
}
