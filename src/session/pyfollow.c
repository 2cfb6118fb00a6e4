#define _GNU_SOURCE
#include "pyfollow.h"

#include <stdlib.h>
#include <string.h>

#include "probebinary.h"
#include "procmaps.h"
#include "pyframes.h"
#include "pysyms.h"
#include "util.h"

/* A process whose executable's name says python but which was found not
 * to run it (its loader not yet done with libpython) is looked at again
 * after PY_LOOK_AGAIN, until PY_LOOK_FOR after it was first seen; any
 * other process is looked at once. In its first PY_LOOK_SOON, while the
 * loader maps libpython (a few ms after its exec), it is looked at again
 * at each of its stacks (such a look takes ~0.1 ms: the executable has no
 * _PyRuntime), and the engine wakes the reader at its next sample, not at
 * the next batch (up to the 100 ms poll timeout, more on a busy machine,
 * all of whose samples would go without their Python frames). Not only
 * after a pause: the collector may hold the reader long over the first
 * stack (reading libpython's symbols: 0.4 s on a busy machine), and the
 * next stack must find libpython then. */
#define PY_LOOK_AGAIN_NS 20000000ull
#define PY_LOOK_FOR_NS 3000000000ull
#define PY_LOOK_SOON_NS 200000000ull

/* An exited process's code objects are kept this long for its samples
 * still in the ring buffer or being read (they come within the reader's
 * 100 ms poll; 10 s leaves room for a busy machine). */
#define PY_EXITED_HOLD_NS 10000000000ull

enum py_found { PY_NOT_YET, PY_RUNS, PY_NEVER };

/* What was found of a process (py_seen: tgid -> its index in py_looks). */
struct py_look {
	uint64_t first_ns, last_ns;
	enum py_found found;
};

/* Looks at process pid once: 1 it runs Python (given its frames), 0 not
 * (yet), -1 never (a version sonde does not read: said once). */
static int look_at(struct session *s, pid_t pid)
{
	char err[256];
	struct py_process p;
	int r = pyprocess_open(pid, &p, err, sizeof(err));
	if (r < 0 && !procmaps_alive(pid))
		return -1; /* gone before it was looked at: nothing to say */
	if (r < 0) {
		session_note(s->o, "process %d: %s%s", (int)pid, err,
			     strstr(err, "stacks stay native") ? "" : " (its stacks stay native)");
		return -1;
	}
	if (r == 0)
		return 0;
	uint64_t runtime = p.bias + p.layout.runtime_vaddr;
	int set = engine_set_python(s->eng, pid, &p.layout, runtime, err, sizeof(err));
	if (set > 0)
		session_note(s->o, "process %d: %s", (int)pid, err);
	if (set < 0) {
		session_note(s->o, "process %d: %s (its stacks stay native)", (int)pid, err);
		pyprocess_free(&p);
		return -1;
	}
	if (s->o->verbose)
		session_note(s->o, "process %d runs Python %u.%u (%s, layout from %s)", (int)pid,
			     p.layout.major, p.layout.minor, p.path,
			     pyruntime_source_name(p.layout.source));
	pysyms_add(symbols_python(s->syms), &p);
	grow_array((void **)&s->py_pids, &s->py_pids_cap, s->npy_pids + 1, sizeof(*s->py_pids));
	s->py_pids[s->npy_pids++] = pid;
	s->py_processes++;
	return 1;
}

/* Whether process pid's executable's name says python. */
static bool named_python(pid_t pid)
{
	char exe[4096];
	return procmaps_exe(pid, exe, sizeof(exe)) == 0 && strstr(file_base_name(exe), "python");
}

/* Looks at process pid if it is due (called for every stack: a process
 * settled costs one lookup, no clock read). */
static void consider(struct session *s, pid_t pid)
{
	uint64_t idx, now_ns;
	struct py_look *l;
	if (hashmap_get(&s->py_seen, (uint64_t)pid, &idx)) {
		l = &s->py_looks[idx];
		if (l->found != PY_NOT_YET)
			return;
		now_ns = monotonic_ns();
		if (now_ns - l->first_ns > PY_LOOK_FOR_NS)
			return;
		if (now_ns - l->first_ns >= PY_LOOK_SOON_NS && now_ns - l->last_ns < PY_LOOK_AGAIN_NS)
			return;
	} else {
		now_ns = monotonic_ns();
		grow_array((void **)&s->py_looks, &s->py_looks_cap, s->npy_looks + 1,
			   sizeof(*s->py_looks));
		hashmap_set(&s->py_seen, (uint64_t)pid, s->npy_looks);
		l = &s->py_looks[s->npy_looks++];
		*l = (struct py_look){.first_ns = now_ns};
	}
	int r = look_at(s, pid);
	l->last_ns = now_ns;
	l->found = r > 0 ? PY_RUNS : r < 0 || !named_python(pid) ? PY_NEVER : PY_NOT_YET;
	if (l->found == PY_NOT_YET && now_ns - l->first_ns < PY_LOOK_SOON_NS)
		engine_wake_at_next_sample(s->eng, pid);
}

void pyfollow_record(struct session *s, const void *data, size_t size)
{
	uint32_t pid;
	uint64_t exec_ns, idx;
	if (s->o->no_python || !s->eng)
		return;
	if (collector_stack_of(data, size, &pid)) {
		if (pid > 0)
			consider(s, (pid_t)pid);
		return;
	}
	if (!collector_exec_of(data, size, &pid, &exec_ns))
		return;
	/* Read late (a busy machine, or a process that exec'd twice in a row):
	 * the last look, after it, saw the program it started. */
	if (hashmap_get(&s->py_seen, (uint64_t)pid, &idx) && s->py_looks[idx].last_ns > exec_ns)
		return;
	hashmap_remove(&s->py_seen, (uint64_t)pid);
	pysyms_forget(symbols_python(s->syms), (pid_t)pid);
	size_t kept = 0;
	for (size_t i = 0; i < s->npy_pids; i++)
		if (s->py_pids[i] != (pid_t)pid)
			s->py_pids[kept++] = s->py_pids[i];
	s->npy_pids = kept;
	/* A new python is looked at now, not at its first batch of samples
	 * (the exec event woke the reader; a static python is all mapped). */
	if (named_python((pid_t)pid))
		consider(s, (pid_t)pid);
}

void pyfollow_forget_exited(struct session *s)
{
	uint64_t now_ns = monotonic_ns();
	size_t kept = 0;
	for (size_t i = 0; i < s->npy_pids; i++) {
		pid_t pid = s->py_pids[i];
		if (procmaps_alive(pid)) {
			s->py_pids[kept++] = pid;
			continue;
		}
		engine_forget_python(s->eng, pid);
		hashmap_remove(&s->py_seen, (uint64_t)pid);
		/* Its code objects name the samples of it still on their
		 * way, for a while. */
		pysyms_exited(symbols_python(s->syms), pid, now_ns);
	}
	s->npy_pids = kept;
	pysyms_sweep(symbols_python(s->syms), now_ns, PY_EXITED_HOLD_NS);
}

void pyfollow_free(struct session *s)
{
	hashmap_free(&s->py_seen);
	free(s->py_looks);
	s->py_looks = NULL;
	free(s->py_pids);
	s->py_pids = NULL;
	s->npy_pids = 0;
}
