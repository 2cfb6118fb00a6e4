#include "points.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "enginestate.h"
#include "errbuf.h"
#include "insn.h"
#include "slots.h"
#include "sonde.skel.h"
#include "util.h"

/* A branch outcome's condition is symbols' decoding, numbered as the
 * kernel's evaluator reads it. */
_Static_assert(INSN_COND_O == 0 && INSN_COND_E == 4 && INSN_COND_G == 15 &&
		       (int)INSN_COND_RCXZ == (int)SONDE_BRANCH_RCXZ && (int)INSN_COND_ECXZ == (int)SONDE_BRANCH_ECXZ &&
		       (int)INSN_COND_LOOP == (int)SONDE_BRANCH_LOOP && (int)INSN_COND_LOOPE == (int)SONDE_BRANCH_LOOPE &&
		       (int)INSN_COND_LOOPNE == (int)SONDE_BRANCH_LOOPNE,
	       "insn_cond and sonde_branch_cond number conditions alike");
_Static_assert(ENGINE_BRANCH_TAKEN == SONDE_BRANCH_TAKEN, "one taken flag");

/* Takes a run of n free entries of the point probes' programs for slot.
 * Returns 0, or -1 when there is no such run. */
static int take_point_progs(struct engine *e, uint32_t slot, size_t n)
{
	for (size_t first = 0; n && first + n <= SONDE_POINT_PROGS; first++) {
		size_t k = 0;
		while (k < n && !e->point_prog_used[first + k])
			k++;
		if (k < n) {
			first += k;
			continue;
		}
		for (k = 0; k < n; k++)
			e->point_prog_used[first + k] = true;
		e->slots[slot].point_progs_first = (uint16_t)first;
		e->slots[slot].point_progs_n = (uint16_t)n;
		return 0;
	}
	return -1;
}

/* Puts f's program (NULL or f->prog NULL: none) at address `index` of
 * slot's point programs, for the slot's current generation. Returns 0 or
 * -1 (errno). */
static int set_point_fetch(struct engine *e, uint32_t slot, uint32_t index,
			   const struct engine_fetch *f)
{
	struct sonde_fetch_prog p = {0};
	if (f && f->prog) {
		p = *f->prog;
		p.layout = f->layout;
	}
	p.gen = e->slots[slot].gen;
	uint32_t key = SONDE_MAX_PROBES + e->slots[slot].point_progs_first + index;
	return bpf_map_update_elem(bpf_map__fd(e->skel->maps.fetch_progs), &key, &p, BPF_ANY);
}

int attach_point(struct engine *e, const struct engine_probe_batch *b, char *err, size_t errlen)
{
	uint32_t probe = b->probes[0], bit = b->point_bit - 1;
	size_t n = b->n;
	pid_t pid = b->pid;
	if (is_calibration(probe) || b->point_bit == 0 || bit >= SONDE_MAX_POINTS) {
		errbuf_set(err, errlen, "bad point probe %u (bit %u)", probe, bit);
		return -1;
	}
	if (refuse_without_spans(e, err, errlen))
		return -1;
	if (b->branch && b->fetch) {
		errbuf_set(err, errlen, "branch probe %u captures nothing", probe);
		return -1;
	}
	if (e->opt.fixed && e->opt.no_points) { /* point_hit was not loaded */
		errbuf_set(err, errlen, "%s", fixed_refusal);
		return -1;
	}
	if (attached_for(e, probe, pid)) /* a second would count each hit twice */
		return 0;
	int found = slot_of(e, probe);
	bool fresh = found < 0;
	if (fresh && (engine_probes_available(e) <= 0 || (found = take_slot(e)) < 0)) {
		errbuf_set(err, errlen, "too many probes at once (at most %d): untrace some",
			   ENGINE_USER_PROBES);
		return -1;
	}
	uint32_t slot = (uint32_t)found;
	/* A fresh probe's programs are the batch's; one attached already (one
	 * more PID) keeps those it has. */
	bool fetch = fresh ? b->fetch != NULL : e->slots[slot].point_progs_n > 0;
	if (!fresh && fetch && e->slots[slot].point_progs_n != n) {
		errbuf_set(err, errlen, "point probe %u has %u programs, not %zu", probe,
			   e->slots[slot].point_progs_n, n);
		return -1;
	}
	if (fresh && fetch && take_point_progs(e, slot, n)) {
		size_t used = 0;
		for (size_t k = 0; k < SONDE_POINT_PROGS; k++)
			used += e->point_prog_used[k];
		errbuf_set(err, errlen,
			   "captures at %zu addresses: the lines traced at once capture at %d addresses "
			   "at most (%zu in use): untrace some",
			   n, SONDE_POINT_PROGS, used);
		return -1;
	}
	if (fresh) {
		next_generation(e, slot);
		e->slots[slot].probe = probe; /* in its config: its records name it */
		e->slots[slot].point_bit = (uint8_t)(bit + 1);
		e->slots[slot].pair = false;
		e->slots[slot].py = false;
		/* Nothing of the slot's last probe stays: a point sends no span
		 * records, and its hits charge no trap cost (its class only names
		 * its first address's kind). */
		e->slots[slot].policy = (struct engine_span_policy){0};
		e->slots[slot].cls = (uint8_t)insn_class_of_trap(b->traps ? b->traps[0] : -1);
		/* The bit's column of calls that hit it starts at zero. */
		int ncpu = libbpf_num_possible_cpus();
		struct sonde_point_calls *zeros = xcalloc(ncpu > 0 ? (size_t)ncpu : 1, sizeof(*zeros));
		for (uint32_t s = 0; s < SONDE_MAX_PROBES; s++) {
			uint32_t key = s * SONDE_MAX_POINTS + bit;
			bpf_map_update_elem(bpf_map__fd(e->skel->maps.point_calls), &key, zeros,
					    BPF_ANY);
		}
		free(zeros);
	}
	uint64_t *cookies = xcalloc(n + 1, sizeof(*cookies));
	int *fds = xcalloc(n + 1, sizeof(*fds));
	for (size_t i = 0; i < n; i++) {
		uint32_t key = fetch ? SONDE_MAX_PROBES + e->slots[slot].point_progs_first + (uint32_t)i : 0;
		/* A branch outcome's cookie holds its jump's condition instead */
		if (b->branch)
			key = b->branch[i] & (SONDE_BRANCH_COND_MASK | SONDE_BRANCH_TAKEN);
		cookies[i] = SONDE_COOKIE(e->slots[slot].gen, slot, key);
	}
	struct bpf_program *prog = b->branch ? e->skel->progs.branch_hit : e->skel->progs.point_hit;
	struct uprobes_attach_opts hits = {.prog_fd = bpf_program__fd(prog),
					   .binary = b->binary,
					   .file_offsets = b->file_offsets,
					   .cookies = cookies,
					   .ref_ctr_offsets = b->ref_ctr_offsets,
					   .n = n,
					   .pid = pid,
					   .stop = b->stop,
					   .stop_arg = b->stop_arg};
	/* The programs go in before the uprobes: a first hit runs its own. */
	bool ok = true;
	for (size_t i = 0; fresh && fetch && i < n && ok; i++)
		if (set_point_fetch(e, slot, (uint32_t)i, &b->fetch[i])) {
			errbuf_set(err, errlen, "cannot store the fetch program of address %zu of probe %u: %s",
				   i, probe, strerror(errno));
			ok = false;
		}
	ok = ok && link_uprobes(e, &hits, fds, err, errlen) == 0;
	if (ok && set_probe_config(e, slot, true)) {
		errbuf_set(err, errlen, "cannot configure probe %u: %s", probe, strerror(errno));
		remove_uprobes(e, fds, n);
		ok = false;
	}
	if (ok) {
		grow_array((void **)&e->spans, &e->spans_cap, e->nspans + n, sizeof(*e->spans));
		for (size_t i = 0; i < n; i++)
			e->spans[e->nspans++] = (struct span_attachment){
				.probe = probe, .slot = slot, .pid = pid, .enter = fds[i], .exit = -1};
		__atomic_or_fetch(&e->skel->bss->points_active, 1ull << bit, __ATOMIC_RELAXED);
	}
	free(cookies);
	free(fds);
	if (!ok) {
		if (fresh) {
			e->slots[slot].point_bit = 0;
			free_point_progs(e, slot);
			e->slots[slot].probe = NO_PROBE;
		}
		return -1;
	}
	return 0;
}
