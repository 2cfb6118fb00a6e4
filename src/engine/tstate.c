#include "tstate.h"

#include <bpf/bpf.h>
#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "procmaps.h"
#include "sonde_abi.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns's clock */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* /proc/PID/task/TID/stat: its comm and state letter. */
static int read_stat(pid_t pid, pid_t tid, struct sonde_thread_now *t)
{
	char state;
	if (procmaps_stat(pid, tid, t->comm, SONDE_COMM_LEN, &state, NULL))
		return -1;
	switch (state) {
	case 'R':
		t->state = SONDE_OFF_NONE;
		break;
	case 'D':
		t->state = SONDE_OFF_UNINTERRUPTIBLE;
		break;
	case 'T':
	case 't':
		t->state = SONDE_OFF_STOPPED;
		break;
	case 'S':
	case 'I':
	case 'P':
		t->state = SONDE_OFF_SLEEPING;
		break;
	default:
		return -1; /* Z, X: it is going */
	}
	return 0;
}

/* /proc/PID/task/TID/syscall: "NR args..." while in a system call,
 * "running" or "-1 ..." when not; SONDE_SYSCALL_UNKNOWN when it cannot be
 * read (a process the kernel does not let even root inspect). */
static int32_t read_syscall(pid_t pid, pid_t tid)
{
	char path[96], buf[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return SONDE_SYSCALL_UNKNOWN;
	int32_t nr = SONDE_SYSCALL_UNKNOWN;
	if (fgets(buf, sizeof(buf), f))
		nr = isdigit((unsigned char)buf[0]) ? (int32_t)strtol(buf, NULL, 10) : -1;
	fclose(f);
	return nr;
}

/* A slot for tid (the BPF side's take_slot), or -1 when all are taken. */
static long take_slot(const struct tstate_maps *m, uint32_t tid)
{
	if (__atomic_load_n(m->next, __ATOMIC_RELAXED) < m->nslots) {
		uint64_t slot = __atomic_fetch_add(m->next, 1, __ATOMIC_RELAXED), owner = tid;
		uint32_t key = (uint32_t)slot;
		if (slot < m->nslots && bpf_map_update_elem(m->tids_fd, &key, &owner, BPF_ANY) == 0)
			return (long)slot;
	}
	/* Every slot was taken once: a free one (a race with the kernel's
	 * claim of the same slot is lost by one; the thread then waits for its
	 * next event). */
	for (uint32_t slot = 0; slot < m->nslots; slot++) {
		uint64_t owner, mine = tid;
		if (bpf_map_lookup_elem(m->tids_fd, &slot, &owner) == 0 && owner == 0 &&
		    bpf_map_update_elem(m->tids_fd, &slot, &mine, BPF_ANY) == 0)
			return slot;
	}
	return -1;
}

int tstate_seed_process(const struct tstate_maps *m, pid_t pid)
{
	/* The targets hold threads too (a thread's creation adds it): their
	 * threads are their process's, with its PID. */
	pid = procmaps_tgid(pid);
	if (pid <= 0)
		return 0;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int added = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);
		struct sonde_thread_now t = {.pid = (uint32_t)pid, .tid = (uint32_t)tid, .syscall = -1};
		if (read_stat(pid, tid, &t))
			continue;
		t.syscall = read_syscall(pid, tid);
		t.state_since_ns = now_ns();
		t.flags = SONDE_TSTATE_SEEDED;
		if (t.syscall >= 0) {
			t.syscall_since_ns = t.state_since_ns;
			t.flags |= SONDE_TSTATE_SYSCALL_SEEDED;
		}
		uint32_t key = (uint32_t)tid;
		if (bpf_map_lookup_elem(m->now_fd, &key, &t) == 0)
			continue; /* the tracepoints know it already */
		long slot = take_slot(m, key);
		if (slot < 0)
			break;
		t.slot = (uint32_t)slot;
		if (bpf_map_update_elem(m->now_fd, &key, &t, BPF_NOEXIST) == 0) {
			added++;
		} else {
			uint32_t s = (uint32_t)slot;
			uint64_t zero = 0;
			bpf_map_update_elem(m->tids_fd, &s, &zero, BPF_ANY);
		}
	}
	closedir(d);
	return added;
}

int tstate_seed_all(const struct tstate_maps *m)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int added = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			added += tstate_seed_process(m, (pid_t)strtol(de->d_name, NULL, 10));
	closedir(d);
	return added;
}
