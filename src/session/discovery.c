#define _GNU_SOURCE
#include "discovery.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "errbuf.h"
#include "probes.h"
#include "procmaps.h"
#include "sessionstate.h"
#include "util.h"

char *discovery_executable(const struct session_options *o)
{
	if (o->cmd)
		return probes_which(o->cmd[0]);
	if (o->npids > 0) {
		char path[PATH_MAX];
		if (procmaps_exe(o->pids[0], path, sizeof(path)))
			return NULL;
		/* Through /proc/PID/root when a containerized target's file is
		 * only there. */
		return procmaps_root_path(o->pids[0], path);
	}
	return NULL;
}

/* The name the executable goes by when it is not its file's: the command
 * as typed (redis-server, a symlink to redis-check-rdb), or the running
 * process's command name. */
char *discovery_exe_alias(const struct session_options *o)
{
	if (o->cmd)
		return xstrdup(o->cmd[0]);
	char comm[64];
	if (o->npids > 0 && procmaps_comm(o->pids[0], comm, sizeof(comm)) == 0)
		return xstrdup(comm);
	return NULL;
}

/* The processes of the target that run now, whose maps a probe's library
 * is looked up in: the -p processes or the command once it runs, and their
 * descendants (found again: they change while a live session runs). None
 * before the command runs, and none system-wide. */
int discovery_running_targets(struct session *s, pid_t **out)
{
	const struct session_options *o = s->o;
	*out = NULL;
	pid_t roots[SESSION_MAX_PIDS];
	int nroots = 0;
	if (o->cmd && s->cmd_running && !target_cmd_exited(&s->cmd))
		roots[nroots++] = s->cmd.pid;
	for (int i = 0; i < o->npids; i++)
		if (procmaps_alive(o->pids[i]))
			roots[nroots++] = o->pids[i];
	if (nroots == 0)
		return 0;
	pid_t *desc = NULL;
	int nd = o->no_children ? 0 : target_descendants(roots, nroots, &desc);
	pid_t *all = xmalloc((size_t)(nroots + nd) * sizeof(*all));
	memcpy(all, roots, (size_t)nroots * sizeof(*all));
	if (nd)
		memcpy(all + nroots, desc, (size_t)nd * sizeof(*all));
	free(desc);
	*out = all;
	return nroots + nd;
}

/* The processes a probe's uprobes go on (*pids, malloc'd; -1 alone:
 * every process). Returns how many, or -1 with err. */
int discovery_probe_pids(struct session *s, pid_t **pids, char *err, size_t errlen)
{
	/* Where the uprobes go. The kernel-side target filter decides what is
	 * counted; the attachment decides which processes take the trap. A
	 * session's breakpoints are in its own processes only: one attachment
	 * per target process running now (with its descendants, unless
	 * --no-children); a process the targets create later gets its own
	 * when its fork record arrives (discovery_follow_process), and its calls before
	 * that are not seen (follows_* say how soon that was). The kernel
	 * cannot do better: a uprobe_multi link's PID filter takes one
	 * process, and perf events inherited by children drop their BPF
	 * program from the tracepoint when a child exits (Linux 6.18). -a and
	 * --exact-children put them on the file for every process: each that
	 * runs the code takes the trap, and a child counts from its first
	 * instruction. */
	*pids = NULL;
	if (s->o->system_wide || s->o->exact_children) {
		*pids = xmalloc(sizeof(**pids));
		(*pids)[0] = -1;
		return 1;
	}
	const struct session_options *o = s->o;
	pid_t roots[SESSION_MAX_PIDS + 1];
	int nroots = 0;
	if (o->cmd && !target_cmd_exited(&s->cmd)) /* also while held before its exec */
		roots[nroots++] = s->cmd.pid;
	for (int i = 0; i < o->npids; i++)
		if (procmaps_alive(o->pids[i]))
			roots[nroots++] = o->pids[i];
	if (nroots == 0) {
		errbuf_set(err, errlen, "every process of the target has exited");
		return -1;
	}
	pid_t *desc = NULL;
	int nd = o->no_children ? 0 : target_descendants(roots, nroots, &desc);
	*pids = xmalloc((size_t)(nroots + nd) * sizeof(**pids));
	memcpy(*pids, roots, (size_t)nroots * sizeof(**pids));
	if (nd)
		memcpy(*pids + nroots, desc, (size_t)nd * sizeof(**pids));
	free(desc);
	return nroots + nd;
}

/* Gives process pid, new in the target, the uprobes of every probe
 * attached now (probe_pids says why it needs its own). born_ns: when it
 * was created (CLOCK_MONOTONIC), for the delay. */
static void discovery_follow_process(struct session *s, pid_t pid, uint64_t born_ns)
{
	const struct profile *p = s->prof;
	size_t n = p->nprobes;
	uint32_t *ids = xcalloc(n + 1, sizeof(*ids));
	uint64_t *offs = xcalloc(n + 1, sizeof(*offs));
	bool *done = xcalloc(n + 1, sizeof(*done));
	char why[512];
	bool any = false, failed = false;
	for (size_t i = 0; i < n && i < SESSION_MAX_PROBES; i++) {
		if (!trace_probe_attached(&s->probes[i]) || done[i])
			continue;
		any = true;
		/* A point probe, or a USDT span pair: its own sites. */
		if (p->probes[i].point >= 0 || s->probes[i].sites.nentries) {
			uint32_t probe = (uint32_t)i;
			struct engine_probe_batch b =
				sites_batch(&s->probes[i].sites, &probe, p->probes[i].binary);
			b.pid = pid;
			b.point_bit = p->probes[i].point >= 0 ? (uint32_t)p->probes[i].point + 1 : 0;
			failed |= engine_attach_probes(s->eng, &b, why, sizeof(why)) != 0;
			done[i] = true;
			continue;
		}
		size_t k = 0; /* this binary's function probes: one batch */
		for (size_t j = i; j < n && j < SESSION_MAX_PROBES; j++)
			if (trace_probe_attached(&s->probes[j]) && !done[j] && p->probes[j].point < 0 &&
			    s->probes[j].sites.n == 1 &&
			    strcmp(p->probes[j].binary, p->probes[i].binary) == 0) {
				ids[k] = (uint32_t)j;
				offs[k++] = s->probes[j].sites.offsets[0];
				done[j] = true;
			}
		/* Attached already: each keeps its fetch program. */
		struct engine_probe_batch b = {.probes = ids,
					      .file_offsets = offs,
					      .n = k,
					      .binary = p->probes[i].binary,
					      .pid = pid};
		failed |= engine_attach_probes(s->eng, &b, why, sizeof(why)) != 0;
	}
	free(ids);
	free(offs);
	free(done);
	if (!any)
		return;
	if (failed) /* it exited meanwhile, most often */
		s->follow_failures++;
	grow_array((void **)&s->followed, &s->followed_cap, s->nfollowed + 1, sizeof(*s->followed));
	s->followed[s->nfollowed++] = pid;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	uint64_t delay = now > born_ns ? now - born_ns : 0;
	s->follows++;
	s->follow_delay_sum_ns += delay;
	if (delay > s->follow_delay_max_ns)
		s->follow_delay_max_ns = delay;
}

/* The uprobes of followed processes that exited go. */
void discovery_forget_exited(struct session *s)
{
	size_t kept = 0;
	for (size_t i = 0; i < s->nfollowed; i++) {
		if (procmaps_alive(s->followed[i]))
			s->followed[kept++] = s->followed[i];
		else
			engine_forget_process(s->eng, s->followed[i]);
	}
	s->nfollowed = kept;
}

/* A fork record of a new process of the target: its probes now, unless
 * they are on every process already. */
void discovery_follow_forks(struct session *s, const void *data, size_t size)
{
	uint32_t tid;
	uint64_t time_ns;
	if (!s->eng || s->o->system_wide || s->o->no_children || s->o->exact_children ||
	    !collector_fork_of(data, size, &tid, &time_ns))
		return;
	bool any = false;
	for (size_t i = 0; i < s->prof->nprobes && i < SESSION_MAX_PROBES && !any; i++)
		any = trace_probe_attached(&s->probes[i]);
	pid_t child = (pid_t)tid;
	if (!any || procmaps_tgid(child) != child) /* a thread: its process has them */
		return;
	discovery_follow_process(s, child, time_ns);
}

/* -p NAME: every process of that name becomes a -p PID, listed in a note. */
int discovery_named_processes(struct session_options *o, char *err, size_t errlen)
{
	if (!o->pid_of)
		return 0;
	pid_t *found;
	int n = target_find_by_name(o->pid_of, &found);
	if (n == 0) {
		errbuf_set(err, errlen,
			   "no process named %s (no running process has that command name or "
			   "executable)",
			   o->pid_of);
		return -1;
	}
	if (n > SESSION_MAX_PIDS) {
		errbuf_set(err, errlen,
			   "%d processes are named %s, more than sonde attaches to at once (%d): give "
			   "their PIDs or a parent's with -p",
			   n, o->pid_of, SESSION_MAX_PIDS);
		free(found);
		return -1;
	}
	memcpy(o->pids, found, (size_t)n * sizeof(*found));
	o->npids = n;
	char list[1024];
	size_t off = 0;
	list[0] = 0;
	for (int i = 0; i < n && off < sizeof(list); i++) {
		int w = snprintf(list + off, sizeof(list) - off, " %d", (int)found[i]);
		off = w < 0 ? sizeof(list) : off + (size_t)w;
	}
	session_note(o, "attaching to %d process%s named %s:%s", n, n == 1 ? "" : "es", o->pid_of, list);
	free(found);
	return 0;
}

/* -p: the processes' existing descendants are targets too (the ones they
 * create from now on are followed in the kernel). Walked again until no new
 * one appears, so a child forked by a descendant while it was being added
 * is not missed. Descendants past SESSION_MAX_PIDS are targets but do not
 * count for "all -p processes have exited". */
int discovery_add_descendants(struct session *s, char *err, size_t errlen)
{
	struct session_options *o = s->o;
	o->nroot_pids = o->npids;
	if (o->no_children || o->npids == 0)
		return 0;
	pid_t *added = NULL;
	size_t nadded = 0, cap = 0;
	for (bool again = true; again;) {
		again = false;
		pid_t *d;
		int n = target_descendants(o->pids, o->nroot_pids, &d);
		for (int i = 0; i < n; i++) {
			bool seen = false;
			for (size_t k = 0; k < nadded && !seen; k++)
				seen = added[k] == d[i];
			if (seen)
				continue;
			if (engine_add_pid(s->eng, d[i], err, errlen)) {
				free(d);
				free(added);
				return -1;
			}
			symbols_note_process(s->syms, d[i]);
			grow_array((void **)&added, &cap, nadded + 1, sizeof(*added));
			added[nadded++] = d[i];
			if (o->npids < SESSION_MAX_PIDS)
				o->pids[o->npids++] = d[i];
			again = true;
		}
		free(d);
	}
	free(added);
	return 0;
}

bool discovery_any_alive(const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		if (procmaps_alive(pids[i]))
			return true;
	return false;
}
