#include "slots.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "enginestate.h"
#include "errbuf.h"
#include "insn.h"
#include "sonde.skel.h"
#include "uprobes.h"
#include "util.h"

/* The slot a probe id is attached in, or -1. */
int slot_of(const struct engine *e, uint32_t probe)
{
	for (int s = 0; s < SONDE_MAX_PROBES; s++)
		if (e->slots[s].probe == probe)
			return s;
	return -1;
}

int slot_of_ref(const struct engine *e, struct engine_probe_ref r)
{
	if (r.gen == 0 || r.slot >= SONDE_MAX_PROBES || e->slots[r.slot].probe == NO_PROBE ||
	    e->slots[r.slot].gen != r.gen)
		return -1;
	return (int)r.slot;
}

struct engine_probe_ref ref_of(const struct engine *e, uint32_t probe)
{
	int slot = probe == NO_PROBE ? -1 : slot_of(e, probe);
	if (slot < 0)
		return (struct engine_probe_ref){0};
	return (struct engine_probe_ref){.slot = (uint32_t)slot, .gen = e->slots[slot].gen};
}

void next_generation(struct engine *e, uint32_t slot)
{
	if (++e->slots[slot].gen == 0)
		e->slots[slot].gen = 1;
}

bool probe_attached(const struct engine *e, uint32_t probe)
{
	return probe != NO_PROBE && slot_of(e, probe) >= 0;
}

int set_probe_config(struct engine *e, uint32_t slot, bool active)
{
	e->slots[slot].active = active;
	const struct engine_trap_costs *tc = &e->trap_costs[e->slots[slot].cls];
	const struct engine_span_policy *pol = &e->slots[slot].policy;
	struct sonde_probe_config cfg = {
		.emit_min_ns = pol->emit_min_ns,
		.emit_all = pol->emit_all,
		.call_unseen_ns = tc->call_unseen_ns,
		.self_unseen_ns = tc->self_unseen_ns,
		.active = active && !e->spans_paused,
		.gen = e->slots[slot].gen,
		.point_bit = e->slots[slot].point_bit,
		.fetch = e->slots[slot].fetch,
		.id = e->slots[slot].probe,
		.pair = e->slots[slot].pair,
		.py = e->slots[slot].py,
	};
	if (cfg.py)
		cfg.py_match = e->slots[slot].py_match;
	for (int i = 0; cfg.pair && i < SONDE_PAIR_KEYS; i++) {
		const struct engine_pair_arg *a = &e->slots[slot].pair_key.entry[i];
		const struct engine_pair_arg *r = &e->slots[slot].pair_key.ret[i];
		cfg.pair_entry[i] = (struct sonde_pair_arg){.kind = a->kind, .reg = a->reg, .off = a->off};
		cfg.pair_return[i] = (struct sonde_pair_arg){.kind = r->kind, .reg = r->reg, .off = r->off};
	}
	return bpf_map_update_elem(bpf_map__fd(e->skel->maps.probe_cfg), &slot, &cfg, BPF_ANY);
}

/* Puts prog (NULL: none) in slot's place in fetch_progs, for its current
 * generation, and says so in its config. */
int set_fetch(struct engine *e, uint32_t slot, const struct engine_fetch *f)
{
	struct sonde_fetch_prog p = {0};
	if (f && f->prog) {
		p = *f->prog;
		p.layout = f->layout;
	}
	p.gen = e->slots[slot].gen;
	/* A py: probe has no program (its captures are read from the call's
	 * frame): its records' layout goes in its match. */
	if (e->slots[slot].py)
		e->slots[slot].py_match.layout = p.layout;
	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.fetch_progs), &slot, &p, BPF_ANY))
		return -1;
	/* The entry looks the program up only when its config says there is
	 * one: set after the program is in place, cleared after it is gone. */
	e->slots[slot].fetch = p.nops > 0;
	return set_probe_config(e, slot, e->slots[slot].active);
}

void engine_pause_spans(struct engine *e)
{
	e->spans_paused = true;
	for (uint32_t s = 0; s < SONDE_MAX_PROBES; s++)
		if (e->slots[s].probe != NO_PROBE)
			set_probe_config(e, s, false);
}

int engine_set_span_policy(struct engine *e, struct engine_probe_ref probe,
			   const struct engine_span_policy *p)
{
	int slot = slot_of_ref(e, probe);
	if (slot < 0)
		return -1;
	struct engine_span_policy *had = &e->slots[slot].policy;
	if (had->emit_min_ns == p->emit_min_ns && had->emit_all == p->emit_all)
		return 0; /* the kernel has it: no map write */
	*had = *p;
	return set_probe_config(e, (uint32_t)slot, true);
}

void engine_set_trap_costs(struct engine *e, enum engine_insn_class cls,
			   const struct engine_trap_costs *c)
{
	if ((unsigned)cls >= INSN_CLASSES)
		return;
	e->trap_costs[cls] = *c;
	/* Probes already attached take the new figures at once. */
	for (uint32_t s = 0; s < SONDE_MAX_PROBES; s++)
		if (e->slots[s].cls == cls && e->slots[s].probe != NO_PROBE)
			set_probe_config(e, s, true);
}

enum engine_insn_class engine_insn_class_at(const char *binary, uint64_t file_offset)
{
	return insn_class_of_trap((int)insn_trap_at(binary, file_offset));
}

enum engine_insn_class insn_class_of_trap(int trap)
{
	switch (trap) {
	case INSN_TRAP_EMULATED:
		return INSN_PUSH;
	case INSN_TRAP_ENDBR:
		return INSN_ENDBR;
	case INSN_TRAP_NOP:
		return INSN_NOP;
	default: /* stepped, or not known: the kernel's way for what it does not know */
		return INSN_SSTEP;
	}
}

const char *engine_insn_class_name(enum engine_insn_class cls)
{
	static const char *const names[INSN_CLASSES] = {"push/branch", "endbr64", "nop",
							"single-stepped"};
	return (unsigned)cls < INSN_CLASSES ? names[cls] : "?";
}

bool is_calibration(uint32_t probe)
{
	return probe >= ENGINE_CALIBRATION_BASE;
}

static int user_probes_attached(const struct engine *e)
{
	int n = 0;
	for (int s = 0; s < SONDE_MAX_PROBES; s++)
		n += e->slots[s].probe != NO_PROBE && !is_calibration(e->slots[s].probe);
	return n;
}

int engine_probes_available(const struct engine *e)
{
	return ENGINE_USER_PROBES - user_probes_attached(e);
}

static bool attachment_holds(const struct engine *e, int fd)
{
	for (size_t i = 0; i < e->nspans; i++)
		if (e->spans[i].enter == fd || e->spans[i].exit == fd)
			return true;
	return false;
}

/* Removes the uprobes of these link fds (-1: none; an fd may be named more
 * than once) in the background, but not those of a link that an
 * attachment still in e->spans holds (a uprobe_multi link serving probes
 * that stay). */
void remove_uprobes(struct engine *e, const int *fds, size_t n)
{
	int *given = xcalloc(n + 1, sizeof(*given));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool again = false;
		for (size_t j = 0; j < k && !again; j++)
			again = given[j] == fds[i];
		if (fds[i] >= 0 && !again && !attachment_holds(e, fds[i]))
			given[k++] = fds[i];
	}
	uprobes_remove(e->up, given, k);
	free(given);
}

/* The lowest free slot, or -1. */
int take_slot(const struct engine *e)
{
	for (int s = 0; s < SONDE_MAX_PROBES; s++)
		if (e->slots[s].probe == NO_PROBE)
			return s;
	return -1;
}

/* Clears what the kernel counted in a slot, for the next probe in it. */
static void clear_slot_counts(struct engine *e, uint32_t slot)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return;
	struct sonde_probe_counts *zeros = xcalloc((size_t)ncpu, sizeof(*zeros));
	bpf_map_update_elem(bpf_map__fd(e->skel->maps.probe_counts), &slot, zeros, BPF_ANY);
	free(zeros);
	/* The calls of the slot's span probe that hit each point. */
	int pfd = bpf_map__fd(e->skel->maps.point_calls);
	struct sonde_point_calls *zpc = xcalloc((size_t)ncpu, sizeof(*zpc));
	for (uint32_t b = 0; b < SONDE_MAX_POINTS; b++) {
		uint32_t key = slot * SONDE_MAX_POINTS + b;
		bpf_map_update_elem(pfd, &key, zpc, BPF_ANY);
	}
	free(zpc);
}

/* Clears slot's point programs in the kernel and gives their entries back. */
void free_point_progs(struct engine *e, uint32_t slot)
{
	struct sonde_fetch_prog zero = {0};
	for (uint32_t i = 0; i < e->slots[slot].point_progs_n; i++) {
		uint32_t k = e->slots[slot].point_progs_first + i;
		uint32_t key = SONDE_MAX_PROBES + k;
		bpf_map_update_elem(bpf_map__fd(e->skel->maps.fetch_progs), &key, &zero, BPF_ANY);
		e->point_prog_used[k] = false;
	}
	e->slots[slot].point_progs_n = 0;
}

/* Whether probe has an attachment for process pid. */
bool attached_for(const struct engine *e, uint32_t probe, pid_t pid)
{
	for (size_t i = 0; i < e->nspans; i++)
		if (e->spans[i].probe == probe && e->spans[i].pid == pid)
			return true;
	return false;
}

/* Detaches every attachment of a probe without waiting for the kernel.
 * The records of its calls already in the ring buffer are handed to the
 * caller first (deliver) or dropped. */
void detach_probe(struct engine *e, uint32_t slot, bool deliver)
{
	uint32_t probe = e->slots[slot].probe;
	if (probe == NO_PROBE)
		return;
	set_probe_config(e, slot, false); /* its programs ignore hits from now on */
	e->discarding = deliver ? NO_PROBE : probe;
	ring_buffer__consume(e->rb);
	e->discarding = NO_PROBE;
	int *links = xcalloc(2 * e->nspans + 1, sizeof(*links));
	size_t n = 0, kept = 0;
	for (size_t i = 0; i < e->nspans; i++) {
		if (e->spans[i].slot == slot) {
			links[n++] = e->spans[i].enter;
			links[n++] = e->spans[i].exit;
		} else {
			e->spans[kept++] = e->spans[i];
		}
	}
	e->nspans = kept;
	if (e->slots[slot].point_bit)
		__atomic_and_fetch(&e->skel->bss->points_active, ~(1ull << (e->slots[slot].point_bit - 1)),
				   __ATOMIC_RELAXED);
	clear_slot_counts(e, slot);
	set_fetch(e, slot, NULL);
	free_point_progs(e, slot);
	e->slots[slot].probe = NO_PROBE;
	e->slots[slot].point_bit = 0;
	e->slots[slot].pair = false;
	e->slots[slot].py = false;
	remove_uprobes(e, links, n);
	free(links);
}

void engine_forget_process(struct engine *e, pid_t pid)
{
	int *links = xcalloc(2 * e->nspans + 1, sizeof(*links));
	size_t n = 0, kept = 0;
	for (size_t i = 0; i < e->nspans; i++) {
		if (e->spans[i].pid == pid && pid >= 0) {
			links[n++] = e->spans[i].enter;
			links[n++] = e->spans[i].exit;
		} else {
			e->spans[kept++] = e->spans[i];
		}
	}
	e->nspans = kept;
	remove_uprobes(e, links, n);
	free(links);
}

/* -1 with fixed_refusal when the session loaded no uprobe program. */
int refuse_without_spans(const struct engine *e, char *err, size_t errlen)
{
	if (!(e->opt.fixed && e->opt.no_spans))
		return 0;
	errbuf_set(err, errlen, "%s", fixed_refusal);
	return -1;
}

/* Links l's uprobes: one uprobe_multi link for each UPROBES_MAX_BATCH of
 * them, or one perf-event link each. fds[i] gets the link of offset i.
 * Returns 0, or -1 with err and nothing of this call attached. */
int link_uprobes(struct engine *e, const struct uprobes_attach_opts *o, int *fds, char *err,
		 size_t errlen)
{
	char why[256];
	size_t n = o->n;
	size_t step = e->multi ? UPROBES_MAX_BATCH : 1;
	for (size_t i = 0; i < n; i++)
		fds[i] = -1;
	for (size_t done = 0; done < n; done += step) {
		size_t k = n - done < step ? n - done : step;
		if (done && o->stop && o->stop(o->stop_arg, why, sizeof(why))) {
			errbuf_set(err, errlen, "%s", why);
			remove_uprobes(e, fds, done);
			for (size_t i = 0; i < n; i++)
				fds[i] = -1;
			return -1;
		}
		struct uprobes_attach_opts part = *o;
		part.file_offsets = o->file_offsets + done;
		part.cookies = o->cookies ? o->cookies + done : NULL;
		part.ref_ctr_offsets = o->ref_ctr_offsets ? o->ref_ctr_offsets + done : NULL;
		part.n = k;
		part.multi = e->multi;
		int fd = uprobes_attach(e->up, &part, why, sizeof(why));
		if (fd < 0) {
			if (k == 1)
				errbuf_set(err, errlen, "cannot attach a %s to %s at offset 0x%llx: %s",
					   o->retprobe ? "return probe" : "uprobe", o->binary,
					   (unsigned long long)o->file_offsets[done], why);
			else
				errbuf_set(err, errlen,
					   "cannot attach %s at %zu offsets of %s (0x%llx...): %s",
					   o->retprobe ? "return probes" : "uprobes", k, o->binary,
					   (unsigned long long)o->file_offsets[done], why);
			remove_uprobes(e, fds, done);
			for (size_t i = 0; i < n; i++)
				fds[i] = -1;
			return -1;
		}
		for (size_t i = done; i < done + k; i++)
			fds[i] = fd;
	}
	return 0;
}
