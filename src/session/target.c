#define _GNU_SOURCE
#include "target.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errbuf.h"
#include "procmaps.h"
#include "util.h"

int target_spawn(char *const argv[], const char *output, struct target_cmd *t, char *err,
		 size_t errlen)
{
	int gate[2], status[2];
	memset(t, 0, sizeof(*t));
	int out_fd = -1, null_fd = -1;
	if (output) {
		/* Opened here, so a bad path is sonde's clear error, not the
		 * child's silent exit. */
		out_fd = open(output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (out_fd < 0 || null_fd < 0) {
			errbuf_set(err, errlen, "cannot open %s for the command's output: %s", output,
				   strerror(errno));
			if (out_fd >= 0)
				close(out_fd);
			if (null_fd >= 0)
				close(null_fd);
			return -1;
		}
	}
	pid_t pid = -1;
	if (pipe2(gate, O_CLOEXEC) < 0 || pipe2(status, O_CLOEXEC) < 0) {
		errbuf_set(err, errlen, "cannot create pipes to start the command: %s",
			   strerror(errno));
	} else if ((pid = fork()) < 0) {
		errbuf_set(err, errlen, "cannot fork to start the command: %s", strerror(errno));
	}
	if (pid < 0) {
		if (output) {
			close(out_fd);
			close(null_fd);
		}
		return -1;
	}
	if (pid == 0) {
		close(gate[1]);
		close(status[0]);
		if (output && (dup2(null_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
			       dup2(out_fd, STDERR_FILENO) < 0))
			_exit(127);
		/* If sonde dies during setup, die too rather than run unprofiled. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(127);
		char c = 0;
		ssize_t n;
		/* Wait until the parent has attached: a 'g' means go, EOF without
		 * it means the parent gave up. */
		while ((n = read(gate[0], &c, 1)) < 0 && errno == EINTR)
			;
		if (n != 1 || c != 'g')
			_exit(127);
		close(gate[0]);
		prctl(PR_SET_PDEATHSIG, 0);
		signal(SIGINT, SIG_DFL);
		execvp(argv[0], argv);
		int e = errno;
		if (write(status[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(gate[0]);
	close(status[1]);
	if (output) {
		close(out_fd);
		close(null_fd);
	}
	t->pid = pid;
	t->gate_fd = gate[1];
	t->status_fd = status[0];
	return 0;
}

int target_release(struct target_cmd *t, char *err, size_t errlen)
{
	if (write(t->gate_fd, "g", 1) != 1) {
		errbuf_set(err, errlen, "cannot start the command: %s", strerror(errno));
		close(t->gate_fd);
		t->gate_fd = -1;
		return -1;
	}
	close(t->gate_fd);
	t->gate_fd = -1;
	int e = 0;
	ssize_t n;
	while ((n = read(t->status_fd, &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(t->status_fd);
	t->status_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		waitpid(t->pid, &t->wait_status, 0);
		t->exited = true;
		if (e == ENOENT)
			errbuf_set(err, errlen, "command not found (check the name and PATH)");
		else
			errbuf_set(err, errlen, "cannot run the command: %s", strerror(e));
		return -1;
	}
	return 0;
}

bool target_cmd_exited(struct target_cmd *t)
{
	if (t->exited)
		return true;
	pid_t r = waitpid(t->pid, &t->wait_status, WNOHANG);
	if (r == t->pid)
		t->exited = true;
	return t->exited;
}

void target_cmd_kill(struct target_cmd *t)
{
	if (t->pid <= 0 || t->exited)
		return;
	kill(t->pid, SIGKILL);
	waitpid(t->pid, &t->wait_status, 0);
	t->exited = true;
}

int target_parse_pids(const char *s, pid_t *pids, int max, char *err, size_t errlen)
{
	int n = 0;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v <= 0 || v > INT_MAX || (*end && *end != ',')) {
			errbuf_set(err, errlen, "bad PID list '%s': expected PID[,PID...]", s);
			return -1;
		}
		if (n == max) {
			errbuf_set(err, errlen, "too many PIDs in '%s' (at most %d)", s, max);
			return -1;
		}
		pids[n++] = (pid_t)v;
		p = *end ? end + 1 : end;
	}
	if (n == 0)
		errbuf_set(err, errlen, "empty PID list: expected PID[,PID...]");
	return n ? n : -1;
}

bool target_is_pid_list(const char *s)
{
	return isdigit((unsigned char)*s) != 0;
}

struct proc_entry {
	pid_t pid, ppid;
	char state;
};

/* Every process in /proc with its parent, in PID order. */
static size_t list_processes(struct proc_entry **out)
{
	DIR *d = opendir("/proc");
	struct proc_entry *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		struct proc_entry e = {.pid = (pid_t)pid};
		if (procmaps_stat(e.pid, 0, NULL, 0, &e.state, &e.ppid))
			continue;
		grow_array((void **)&v, &cap, n + 1, sizeof(*v));
		v[n++] = e;
	}
	if (d)
		closedir(d);
	for (size_t i = 1; i < n; i++) /* readdir's order is not PID order */
		for (size_t k = i; k > 0 && v[k - 1].pid > v[k].pid; k--) {
			struct proc_entry t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	*out = v;
	return n;
}

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int target_find_by_name(const char *name, pid_t **out)
{
	struct proc_entry *ps;
	size_t n = list_processes(&ps);
	pid_t *found = NULL;
	size_t nfound = 0, cap = 0;
	pid_t self = getpid();
	for (size_t i = 0; i < n; i++) {
		char comm[64], exe[PATH_MAX];
		if (ps[i].pid == self || !procmaps_state_alive(ps[i].state))
			continue;
		/* Kernel threads have no executable. */
		if (procmaps_exe(ps[i].pid, exe, sizeof(exe)))
			continue;
		bool match = strcmp(base_of(exe), name) == 0;
		if (!match && procmaps_comm(ps[i].pid, comm, sizeof(comm)) == 0)
			match = procmaps_comm_names(comm, name);
		if (!match)
			continue;
		grow_array((void **)&found, &cap, nfound + 1, sizeof(*found));
		found[nfound++] = ps[i].pid;
	}
	free(ps);
	*out = found;
	return (int)nfound;
}

int target_descendants(const pid_t *roots, int nroots, pid_t **out)
{
	struct proc_entry *ps;
	size_t n = list_processes(&ps);
	/* Breadth-first from the roots: a process is taken when its parent is
	 * one of the roots or of those taken before. */
	pid_t *tree = xmalloc(((size_t)nroots + n + 1) * sizeof(*tree));
	size_t ntree = 0;
	for (int i = 0; i < nroots; i++)
		tree[ntree++] = roots[i];
	for (size_t at = 0; at < ntree; at++) {
		for (size_t i = 0; i < n; i++) {
			if (ps[i].ppid != tree[at] || !procmaps_state_alive(ps[i].state))
				continue;
			bool seen = false;
			for (size_t k = 0; k < ntree && !seen; k++)
				seen = tree[k] == ps[i].pid;
			if (!seen)
				tree[ntree++] = ps[i].pid;
		}
	}
	free(ps);
	size_t nd = ntree - (size_t)nroots;
	pid_t *d = NULL;
	if (nd) {
		d = xmalloc(nd * sizeof(*d));
		memcpy(d, tree + nroots, nd * sizeof(*d));
	}
	free(tree);
	*out = d;
	return (int)nd;
}
