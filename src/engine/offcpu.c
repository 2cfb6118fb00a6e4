#include "offcpu.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "drain.h"
#include "enginestate.h"
#include "errbuf.h"
#include "events.h"
#include "offcpucut.h"
#include "sonde.skel.h"
#include "tracefs.h"
#include "tstate.h"
#include "util.h"

/* A tracepoint a program needs: attached, or -1 with one line naming it
 * (`what` says what needs it). */
static struct bpf_link *attach_tracepoint(struct bpf_program *prog, const char *category,
					  const char *name, const char *what, char *err,
					  size_t errlen)
{
	char why[256];
	if (tracefs_tracepoint_id(category, name, why, sizeof(why)) < 0) {
		errbuf_set(err, errlen, "%s needs tracepoint %s:%s: %s", what, category, name, why);
		return NULL;
	}
	struct bpf_link *l = bpf_program__attach(prog);
	if (!l)
		errbuf_set(err, errlen, "cannot attach to tracepoint %s:%s for %s: %s", category, name,
			   what, strerror(errno));
	return l;
}

/* The system-call tracepoints, attached while off-CPU intervals or thread
 * states need them (want), detached when neither does. */
static int syscalls_follow(struct engine *e, bool want, const char *what, char *err,
			   size_t errlen)
{
	if (!want) {
		for (int i = 0; i < 2; i++) {
			bpf_link__destroy(e->sys_links[i]);
			e->sys_links[i] = NULL;
		}
		return 0;
	}
	struct bpf_program *progs[2] = {e->skel->progs.tstate_sys_enter,
					e->skel->progs.tstate_sys_exit};
	static const char *const names[2] = {"sys_enter", "sys_exit"};
	for (int i = 0; i < 2; i++) {
		if (e->sys_links[i])
			continue;
		e->sys_links[i] = attach_tracepoint(progs[i], "raw_syscalls", names[i], what, err,
						    errlen);
		if (!e->sys_links[i])
			return -1;
	}
	return 0;
}

/* Empties a hash map keyed by thread id. */
static void clear_tid_map(int fd)
{
	uint32_t key, next;
	while (bpf_map_get_next_key(fd, NULL, &next) == 0) {
		key = next;
		if (bpf_map_delete_elem(fd, &key))
			break;
	}
}

/* The switch-out's stacks (offcpu_switch), kept while off-CPU intervals
 * or thread states want them, dropped when neither does. */
static int stash_follow(struct engine *e, bool want, const char *what, char *err, size_t errlen)
{
	if (want) {
		if (!e->offcpu_links[0])
			e->offcpu_links[0] = attach_tracepoint(e->skel->progs.offcpu_switch, "sched",
							       "sched_switch", what, err, errlen);
		return e->offcpu_links[0] ? 0 : -1;
	}
	if (!e->offcpu_links[0])
		return 0;
	bpf_link__destroy(e->offcpu_links[0]);
	e->offcpu_links[0] = NULL;
	/* Nothing keeps the entries any more: free them. */
	clear_tid_map(bpf_map__fd(e->skel->maps.offcpu_stash));
	return 0;
}

static void offcpu_detach(struct engine *e)
{
	/* Threads switched out meanwhile are not switched in under watch:
	 * offcpu_since_ns keeps an interval that began now from being sent
	 * once intervals are on again. */
	e->skel->bss->offcpu_intervals = 0;
	char ignored[8];
	bool tstates = e->tstate_links[0] != NULL;
	stash_follow(e, tstates, NULL, ignored, sizeof(ignored));
	syscalls_follow(e, tstates, NULL, ignored, sizeof(ignored));
	bpf_link__destroy(e->wakers_link);
	e->wakers_link = NULL;
	e->skel->bss->offcpu_wakers = 0;
}

int engine_set_wakers(struct engine *e, bool on, char *err, size_t errlen)
{
	if (!on) {
		bpf_link__destroy(e->wakers_link);
		e->wakers_link = NULL;
		e->skel->bss->offcpu_wakers = 0;
		return 0;
	}
	if (!engine_offcpu_on(e)) {
		errbuf_set(err, errlen, "wakers are kept only with off-CPU recording (--off-cpu)");
		return -1;
	}
	if (e->opt.fixed && !e->opt.wakers) { /* its program was not loaded */
		errbuf_set(err, errlen, "%s", fixed_refusal);
		return -1;
	}
	if (e->wakers_link)
		return 0;
	char why[256];
	if (tracefs_tracepoint_id("sched", "sched_waking", why, sizeof(why)) < 0) {
		errbuf_set(err, errlen, "--wakers needs tracepoint sched:sched_waking: %s", why);
		return -1;
	}
	e->wakers_link = bpf_program__attach(e->skel->progs.offcpu_wakeup);
	if (!e->wakers_link) {
		errbuf_set(err, errlen, "cannot attach to tracepoint sched:sched_waking for --wakers: %s",
			   strerror(errno));
		return -1;
	}
	e->skel->bss->offcpu_wakers = 1;
	return 0;
}

void engine_end_offcpu(struct engine *e, uint64_t end_ns)
{
	__atomic_store_n(&e->skel->bss->offcpu_until_ns, end_ns, __ATOMIC_RELEASE);
}

uint64_t engine_cut_offcpu(struct engine *e)
{
	uint64_t until = e->skel->bss->offcpu_until_ns;
	if (!until || !engine_offcpu_on(e) || !e->offcpu_links[0])
		return 0;
	struct offcpu_cut c = {.stash_fd = bpf_map__fd(e->skel->maps.offcpu_stash),
			       .since_ns = e->skel->bss->offcpu_since_ns,
			       .until_ns = until,
			       .min_ns = e->skel->data->offcpu_min_ns};
	struct offcpu_cut_counts n;
	offcpu_cut_open(&c, deliver_cut, e, &n);
	e->offcpu_cut_below += n.below;
	return n.cut;
}

bool engine_offcpu_on(const struct engine *e)
{
	return e->skel->bss->offcpu_intervals != 0;
}

int engine_set_offcpu(struct engine *e, bool on, uint64_t min_ns, char *err, size_t errlen)
{
	e->skel->data->offcpu_min_ns = min_ns;
	if (!on) {
		offcpu_detach(e);
		return 0;
	}
	if (engine_offcpu_on(e))
		return 0;
	if (!e->state_programs) {
		errbuf_set(err, errlen, "%s", fixed_refusal);
		return -1;
	}
	if (e->offcpu_unavailable[0]) {
		errbuf_set(err, errlen, "%s", e->offcpu_unavailable);
		return -1;
	}
	const char *what = "off-CPU recording";
	if (stash_follow(e, true, what, err, errlen) || syscalls_follow(e, true, what, err, errlen)) {
		offcpu_detach(e);
		return -1;
	}
	e->skel->bss->offcpu_since_ns = monotonic_ns();
	e->skel->bss->offcpu_intervals = 1;
	return 0;
}

static void threads_detach(struct engine *e)
{
	bpf_link__destroy(e->tstate_pass);
	e->tstate_pass = NULL;
	if (e->tstate_fd >= 0)
		close(e->tstate_fd);
	e->tstate_fd = -1;
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(e->tstate_links[i]);
		e->tstate_links[i] = NULL;
	}
	char ignored[8];
	stash_follow(e, engine_offcpu_on(e), NULL, ignored, sizeof(ignored));
	syscalls_follow(e, engine_offcpu_on(e), NULL, ignored, sizeof(ignored));
}

/* The threads that exist already: seeded from /proc (tstate.h), the
 * targets' or, system-wide, every process's. */
static void threads_seed(struct engine *e)
{
	struct tstate_maps m = {
		.now_fd = bpf_map__fd(e->skel->maps.thread_now),
		.tids_fd = bpf_map__fd(e->skel->maps.tstate_tids),
		.next = (uint64_t *)&e->skel->bss->tstate_next,
		.nslots = e->skel->rodata->tstate_slots,
	};
	if (e->opt.system_wide) {
		tstate_seed_all(&m);
		return;
	}
	int targets = bpf_map__fd(e->skel->maps.targets);
	uint32_t key, next;
	bool first = true;
	while (bpf_map_get_next_key(targets, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		tstate_seed_process(&m, (pid_t)key);
	}
}

/* The pass: a cpu-clock event on one CPU at 1/tstate_freq (it ticks
 * whether that CPU is idle or busy), running threads_pass. */
static int pass_attach(struct engine *e, char *err, size_t errlen)
{
	int cpus[1];
	struct event_spec clock;
	if (events_online_cpus(cpus, 1) < 1 || events_parse("cpu-clock", &clock, err, errlen)) {
		if (!err[0])
			errbuf_set(err, errlen, "cannot read the online CPUs from /sys/devices/system/cpu/online");
		return -1;
	}
	e->tstate_fd = events_open_cpu(&clock, cpus[0], 0, 1000000000ull / e->opt.tstate_freq, err,
				       errlen);
	if (e->tstate_fd < 0)
		return -1;
	e->tstate_pass = bpf_program__attach_perf_event(e->skel->progs.threads_pass, e->tstate_fd);
	if (!e->tstate_pass) {
		errbuf_set(err, errlen, "cannot attach the thread-state pass to cpu-clock on CPU %d: %s",
			   cpus[0], strerror(errno));
		close(e->tstate_fd);
		e->tstate_fd = -1;
		return -1;
	}
	return 0;
}

int threads_attach(struct engine *e, char *err, size_t errlen)
{
	if (e->offcpu_unavailable[0]) {
		errbuf_set(err, errlen, "%s", e->offcpu_unavailable);
		return -1;
	}
	const char *what = "thread-state sampling";
	e->tstate_links[0] = attach_tracepoint(e->skel->progs.tstate_switch, "sched", "sched_switch",
					       what, err, errlen);
	if (e->tstate_links[0])
		e->tstate_links[1] = attach_tracepoint(e->skel->progs.tstate_wakeup, "sched",
						       "sched_wakeup", what, err, errlen);
	if (!e->tstate_links[1] || syscalls_follow(e, true, what, err, errlen) ||
	    stash_follow(e, true, what, err, errlen)) {
		threads_detach(e);
		return -1;
	}
	threads_seed(e);
	if (pass_attach(e, err, errlen)) {
		threads_detach(e);
		return -1;
	}
	return 0;
}

/* Every thread's state forgotten (thread states off: nothing keeps them
 * now, and a thread that exits meanwhile would stay). */
static void threads_forget(struct engine *e)
{
	int tids_fd = bpf_map__fd(e->skel->maps.tstate_tids);
	clear_tid_map(bpf_map__fd(e->skel->maps.thread_now));
	uint64_t used = e->skel->bss->tstate_next, zero = 0;
	uint32_t nslots = e->skel->rodata->tstate_slots;
	for (uint32_t i = 0; i < used && i < nslots; i++)
		bpf_map_update_elem(tids_fd, &i, &zero, BPF_ANY);
	e->skel->bss->tstate_next = 0;
}

int engine_set_threads(struct engine *e, uint64_t freq, char *err, size_t errlen)
{
	if (!freq) {
		if (e->tstate_links[0]) {
			threads_detach(e);
			threads_forget(e);
		}
		e->opt.tstate_freq = 0;
		return 0;
	}
	uint64_t old = e->opt.tstate_freq;
	if (!e->thread_programs) {
		errbuf_set(err, errlen, "%s", fixed_refusal);
		return -1;
	}
	e->opt.tstate_freq = freq;
	if (!e->tstate_links[0]) {
		if (threads_attach(e, err, errlen)) {
			e->opt.tstate_freq = 0;
			return -1;
		}
		return 0;
	}
	/* On already: a new rate for the pass. */
	bpf_link__destroy(e->tstate_pass);
	e->tstate_pass = NULL;
	if (e->tstate_fd >= 0)
		close(e->tstate_fd);
	e->tstate_fd = -1;
	if (pass_attach(e, err, errlen)) {
		char ignored[256];
		e->opt.tstate_freq = old;
		if (pass_attach(e, ignored, sizeof(ignored)))
			engine_set_threads(e, 0, ignored, sizeof(ignored));
		return -1;
	}
	return 0;
}
