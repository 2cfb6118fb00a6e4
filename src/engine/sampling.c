#include "sampling.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "enginestate.h"
#include "errbuf.h"
#include "events.h"
#include "slots.h"
#include "sonde.skel.h"
#include "tracefs.h"

int attach_sampler_software(struct engine *e, char *err, size_t errlen)
{
	int cpus[MAX_CPUS];
	int n = events_online_cpus(cpus, MAX_CPUS);
	if (n <= 0) {
		errbuf_set(err, errlen, "cannot read the online CPUs from /sys/devices/system/cpu/online");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int fd = events_open_cpu(&e->opt.event, cpus[i], e->opt.freq, e->opt.period, err,
					 errlen);
		if (fd < 0)
			return -1;
		e->perf_fds[e->ncpus] = fd;
		e->perf_links[e->ncpus] = bpf_program__attach_perf_event(e->skel->progs.sample_perf, fd);
		e->ncpus++;
		if (!e->perf_links[e->ncpus - 1]) {
			errbuf_set(err, errlen, "cannot attach the sampler to %s on CPU %d: %s",
				   e->opt.event.name, cpus[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

int attach_sampler_tracepoint(struct engine *e, char *err, size_t errlen)
{
	/* Resolving the id first gives a clear "unknown tracepoint" message. */
	if (tracefs_tracepoint_id(e->opt.event.category, e->opt.event.tp_name, err, errlen) < 0)
		return -1;
	e->tp_link = bpf_program__attach_tracepoint(e->skel->progs.sample_tp,
						    e->opt.event.category, e->opt.event.tp_name);
	if (!e->tp_link) {
		errbuf_set(err, errlen, "cannot attach to tracepoint %s: %s", e->opt.event.name,
			   strerror(errno));
		return -1;
	}
	return 0;
}

void engine_stop(struct engine *e)
{
	for (int i = 0; i < e->ncpus; i++) {
		bpf_link__destroy(e->perf_links[i]);
		e->perf_links[i] = NULL;
		if (e->perf_fds[i] >= 0)
			close(e->perf_fds[i]);
		e->perf_fds[i] = -1;
	}
	e->ncpus = 0;
	bpf_link__destroy(e->tp_link);
	e->tp_link = NULL;
	/* No more passes; the states stay kept (a final drain sees the last). */
	bpf_link__destroy(e->tstate_pass);
	e->tstate_pass = NULL;
	if (e->tstate_fd >= 0)
		close(e->tstate_fd);
	e->tstate_fd = -1;
}

bool engine_sampling(const struct engine *e)
{
	return e->ncpus > 0 || e->tp_link;
}

int engine_set_sampling(struct engine *e, const struct event_spec *event, uint64_t freq,
			uint64_t period, char *err, size_t errlen)
{
	if (e->opt.fixed) {
		errbuf_set(err, errlen, "%s", fixed_refusal);
		return -1;
	}
	struct engine_options old = e->opt;
	bool was_on = engine_sampling(e);
	engine_stop(e);
	if (!event) {
		e->opt.no_sampler = true;
		return 0;
	}
	e->opt.event = *event;
	e->opt.freq = freq;
	e->opt.period = period;
	e->opt.no_sampler = false;
	int r = event->type == EVENT_TRACEPOINT ? attach_sampler_tracepoint(e, err, errlen)
						 : attach_sampler_software(e, err, errlen);
	if (r == 0)
		return 0;
	/* Put the previous sampler back, so a bad request changes nothing. */
	engine_stop(e);
	e->opt = old;
	if (was_on) {
		char ignored[256];
		if (old.event.type == EVENT_TRACEPOINT)
			attach_sampler_tracepoint(e, ignored, sizeof(ignored));
		else
			attach_sampler_software(e, ignored, sizeof(ignored));
	}
	return -1;
}

struct bpf_link *engine_attach_perf_fd(struct engine *e, int fd, char *err, size_t errlen)
{
	struct bpf_link *l = bpf_program__attach_perf_event(e->skel->progs.sample_perf, fd);
	if (!l)
		errbuf_set(err, errlen, "cannot attach the sampler to a perf event: %s",
			   strerror(errno));
	return l;
}

void engine_detach_fd(struct bpf_link *link)
{
	bpf_link__destroy(link);
}

static int write_sampler_config(struct engine *e)
{
	uint32_t zero = 0;
	return bpf_map_update_elem(bpf_map__fd(e->skel->maps.sampler_cfg), &zero, &e->sampler,
				   BPF_ANY);
}

int engine_set_sampler_filter(struct engine *e, const struct engine_probe_ref *only_in_probe,
			      const struct engine_probe_ref *only_slow_probe, uint64_t only_slow_ns)
{
	int in_slot = only_in_probe ? slot_of_ref(e, *only_in_probe) : -1;
	int slow_slot = only_slow_probe ? slot_of_ref(e, *only_slow_probe) : -1;
	e->sampler.only_in_probe = in_slot >= 0 ? (uint32_t)in_slot + 1 : 0;
	e->sampler.only_slow_probe = slow_slot >= 0 ? (uint32_t)slow_slot + 1 : 0;
	e->sampler.only_slow_ns = only_slow_ns;
	return write_sampler_config(e);
}

int engine_set_sample_when(struct engine *e, const struct engine_probe_ref *point_probe)
{
	int slot = point_probe ? slot_of_ref(e, *point_probe) : -1;
	if (point_probe && (slot < 0 || !e->slots[slot].point_bit)) {
		errno = EINVAL;
		return -1;
	}
	e->sampler.when_points = slot >= 0 ? 1ull << (e->slots[slot].point_bit - 1) : 0;
	return write_sampler_config(e);
}

void engine_set_calibration(struct engine *e, const struct engine_calibration *c)
{
	/* .bss is memory-mapped: the programs see the new values at once. */
	e->skel->bss->calib = (struct sonde_calibration){.sample_unseen_ns = c->sample_unseen_ns,
							 .late_cap_ns = c->late_cap_ns,
							 .exit_cap_ns = c->exit_cap_ns,
							 .calib_tid = c->calib_tid};
}

uint64_t engine_calib_samples(const struct engine *e)
{
	return __atomic_load_n(&e->skel->bss->calib_samples, __ATOMIC_RELAXED);
}

size_t engine_calib_times(const struct engine *e, uint64_t *out, size_t max)
{
	uint64_t n = engine_calib_samples(e);
	if (n > SONDE_CALIB_TIMES)
		n = SONDE_CALIB_TIMES;
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		out[i] = __atomic_load_n(&e->skel->bss->calib_times[i], __ATOMIC_RELAXED);
	return (size_t)n;
}

size_t engine_calib_lateness(const struct engine *e, uint64_t *late, uint64_t *run,
			     uint64_t *exit, size_t max)
{
	uint64_t n = engine_calib_samples(e);
	if (n > SONDE_CALIB_TIMES)
		n = SONDE_CALIB_TIMES;
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++) {
		late[i] = __atomic_load_n(&e->skel->bss->calib_late[i], __ATOMIC_RELAXED);
		run[i] = __atomic_load_n(&e->skel->bss->calib_run[i], __ATOMIC_RELAXED);
		exit[i] = __atomic_load_n(&e->skel->bss->calib_exit[i], __ATOMIC_RELAXED);
	}
	return (size_t)n;
}

void engine_sample_charges(const struct engine *e, struct engine_sample_charges *out)
{
	out->samples = __atomic_load_n(&e->skel->bss->charged_samples, __ATOMIC_RELAXED);
	out->late_ns = __atomic_load_n(&e->skel->bss->charged_late_ns, __ATOMIC_RELAXED);
	out->run_ns = __atomic_load_n(&e->skel->bss->charged_run_ns, __ATOMIC_RELAXED);
	out->exits = __atomic_load_n(&e->skel->bss->charged_exits, __ATOMIC_RELAXED);
	out->exit_ns = __atomic_load_n(&e->skel->bss->charged_exit_ns, __ATOMIC_RELAXED);
}

bool engine_times_sample_exits(const struct engine *e)
{
	return e->tail_links[0] != NULL;
}
