#include "spans.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "enginestate.h"
#include "errbuf.h"
#include "points.h"
#include "slots.h"
#include "sonde.skel.h"
#include "procmaps.h"
#include "util.h"

void engine_detach_span(struct engine *e, struct engine_probe_ref probe)
{
	int slot = slot_of_ref(e, probe);
	if (slot >= 0)
		detach_probe(e, (uint32_t)slot, true);
}

void engine_discard_span(struct engine *e, struct engine_probe_ref probe)
{
	int slot = slot_of_ref(e, probe);
	if (slot >= 0)
		detach_probe(e, (uint32_t)slot, false);
}

static uint32_t calibration_probe(int cls)
{
	return ENGINE_CALIBRATION_BASE + (uint32_t)cls;
}

static int attach_spans(struct engine *e, const struct engine_probe_batch *b,
			const uint8_t *classes, char *err, size_t errlen);

static int attach_spans_for_pid(struct engine *e, const struct engine_probe_batch *b, char *err,
				size_t errlen);

static int attach_pair(struct engine *e, const struct engine_probe_batch *b, char *err,
		       size_t errlen);

/* A batch for one process: a point probe's (points.c), a span pair's, or
 * functions'. */
static int attach_for_pid(struct engine *e, const struct engine_probe_batch *b, char *err,
			  size_t errlen)
{
	return b->point_bit  ? attach_point(e, b, err, errlen)
	       : b->nreturns ? attach_pair(e, b, err, errlen)
			     : attach_spans_for_pid(e, b, err, errlen);
}

static int attach_probes(struct engine *e, const struct engine_probe_batch *b, char *err,
			 size_t errlen);

int engine_attach_probes(struct engine *e, const struct engine_probe_batch *b, char *err,
			 size_t errlen)
{
	int r = attach_probes(e, b, err, errlen);
	size_t nprobes = engine_batch_probes(b);
	for (size_t i = 0; b->refs && i < nprobes; i++)
		b->refs[i] = ref_of(e, b->probes[i]);
	return r;
}

static int attach_probes(struct engine *e, const struct engine_probe_batch *b, char *err,
			 size_t errlen)
{
	if (b->n == 0)
		return 0;
	if (b->npids == 0)
		return attach_for_pid(e, b, err, errlen);
	size_t placed = 0;
	for (size_t i = 0; i < b->npids; i++) {
		if (i && b->stop && b->stop(b->stop_arg, err, errlen))
			return -1;
		struct engine_probe_batch one = *b;
		one.pid = b->pids[i];
		one.pids = NULL;
		one.npids = 0;
		if (attach_for_pid(e, &one, err, errlen) == 0)
			placed++;
		else if (procmaps_alive(b->pids[i]) ||
			 (b->stop && b->stop(b->stop_arg, err, errlen)))
			return -1; /* a process that refused, or the attach was stopped */
	}
	if (!placed)
		return errbuf_set(err, errlen, "every process of the target has exited");
	return 0;
}

static int attach_spans_for_pid(struct engine *e, const struct engine_probe_batch *b, char *err,
				size_t errlen)
{
	if (refuse_without_spans(e, err, errlen))
		return -1;
	int need = 0;
	for (size_t i = 0; i < b->n; i++) {
		if (is_calibration(b->probes[i])) {
			errbuf_set(err, errlen, "probe id %u is sonde's own", b->probes[i]);
			return -1;
		}
		need += !probe_attached(e, b->probes[i]);
	}
	if (need > engine_probes_available(e)) {
		errbuf_set(err, errlen, "too many traced functions at once (at most %d): untrace some",
			   ENGINE_USER_PROBES);
		return -1;
	}
	/* A probe already attached for this process keeps its attachment: a
	 * second would count each call twice. */
	uint32_t *todo = xcalloc(b->n + 1, sizeof(*todo));
	uint64_t *offs = xcalloc(b->n + 1, sizeof(*offs));
	struct engine_fetch *fetch = xcalloc(b->n + 1, sizeof(*fetch));
	uint8_t *classes = xcalloc(b->n + 1, sizeof(*classes));
	struct engine_span_policy *policies = xcalloc(b->n + 1, sizeof(*policies));
	const struct sonde_py_match **py = xcalloc(b->n + 1, sizeof(*py));
	size_t k = 0;
	for (size_t i = 0; i < b->n; i++)
		if (!attached_for(e, b->probes[i], b->pid)) {
			todo[k] = b->probes[i];
			if (b->fetch)
				fetch[k] = b->fetch[i];
			classes[k] = (uint8_t)insn_class_of_trap(b->traps ? b->traps[i] : -1);
			if (b->policies)
				policies[k] = b->policies[i];
			if (b->py)
				py[k] = b->py[i];
			offs[k++] = b->file_offsets[i];
		}
	struct engine_probe_batch left = {.probes = todo,
					 .file_offsets = offs,
					 .fetch = fetch,
					 .n = k,
					 .binary = b->binary,
					 .pid = b->pid,
					 .policies = policies,
					 .py = py,
					 .stop = b->stop,
					 .stop_arg = b->stop_arg};
	int r = k ? attach_spans(e, &left, classes, err, errlen) : 0;
	free(todo);
	free(offs);
	free(fetch);
	free(classes);
	free(policies);
	free(py);
	return r;
}

int engine_attach_calibration(struct engine *e, const struct engine_calibration_batch *c,
			      char *err, size_t errlen)
{
	const int *cls = c->cls;
	size_t n = c->n;
	uint32_t probes[INSN_CLASSES];
	if (n == 0 || n > INSN_CLASSES) {
		errbuf_set(err, errlen, "%zu calibration classes, expected 1 to %d", n, INSN_CLASSES);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (cls[i] < 0 || cls[i] >= INSN_CLASSES) {
			errbuf_set(err, errlen, "no calibration probe for class %d", cls[i]);
			return -1;
		}
		probes[i] = calibration_probe(cls[i]);
	}
	if (refuse_without_spans(e, err, errlen))
		return -1;
	uint8_t classes[INSN_CLASSES];
	for (size_t i = 0; i < n; i++)
		classes[i] = (uint8_t)cls[i]; /* each function is chosen for its class */
	struct engine_probe_batch b = {.probes = probes,
				      .file_offsets = c->file_offsets,
				      .n = n,
				      .binary = c->binary,
				      .pid = getpid()};
	int r = attach_spans(e, &b, classes, err, errlen);
	for (size_t i = 0; c->refs && i < n; i++)
		c->refs[i] = ref_of(e, probes[i]);
	return r;
}

void engine_detach_calibration(struct engine *e)
{
	/* Nothing calls sonde's calibration functions again: no records to
	 * deliver, and the slots come back once the kernel let them go. */
	for (int cls = 0; cls < INSN_CLASSES; cls++) {
		int slot = slot_of(e, calibration_probe(cls));
		if (slot >= 0)
			detach_probe(e, (uint32_t)slot, false);
	}
}

/* A fresh slot for span probe `probe` (a function's, or a pair's: the
 * caller sets pair): a new generation, its first instruction's class as
 * the plan decoded it (symbols/probesafety, once), its policy (NULL:
 * every call sends a record), nothing of the slot's last probe. */
static void begin_span_slot(struct engine *e, uint32_t slot, uint32_t probe, uint8_t cls,
			    const struct engine_span_policy *policy)
{
	next_generation(e, slot);
	struct slot *sl = &e->slots[slot];
	sl->cls = cls < INSN_CLASSES ? cls : (uint8_t)INSN_SSTEP;
	sl->policy = policy ? *policy : (struct engine_span_policy){0};
	sl->point_bit = 0;
	sl->fetch = false;
	sl->pair = false;
	sl->py = false;
	sl->probe = probe;
}

/* Attaches b's function probes for b->pid, each fresh one of class
 * classes[i], with policy b->policies[i] (NULL: zeroed, every call) and
 * the Python function b->py[i] names, if any. */
static int attach_spans(struct engine *e, const struct engine_probe_batch *b,
			const uint8_t *classes, char *err, size_t errlen)
{
	const uint32_t *probes = b->probes;
	const uint64_t *offsets = b->file_offsets;
	const char *binary = b->binary;
	size_t n = b->n;
	pid_t pid = b->pid;
	uint32_t *slots = xcalloc(n + 1, sizeof(*slots));
	uint64_t *cookies = xcalloc(n + 1, sizeof(*cookies));
	bool *fresh = xcalloc(n + 1, sizeof(*fresh));
	int *enter = xcalloc(n + 1, sizeof(*enter));
	int *exit_ = xcalloc(n + 1, sizeof(*exit_));
	int r = -1;
	size_t nslots = 0;
	for (; nslots < n; nslots++) {
		uint32_t probe = probes[nslots];
		int found = slot_of(e, probe);
		fresh[nslots] = found < 0;
		if (fresh[nslots] && (found = take_slot(e)) < 0) {
			errbuf_set(err, errlen, "too many probes (at most %d)", SONDE_MAX_PROBES);
			goto out;
		}
		uint32_t slot = (uint32_t)found;
		slots[nslots] = slot;
		/* A fresh attachment (not one more PID of an attached probe)
		 * starts a new generation: calls entered under an earlier one
		 * never match its returns. Its slot is taken from here on. */
		if (fresh[nslots]) {
			begin_span_slot(e, slot, probe, classes[nslots],
					b->policies ? &b->policies[nslots] : NULL);
			if (b->py && b->py[nslots]) {
				e->slots[slot].py = true;
				e->slots[slot].py_match = *b->py[nslots];
			}
		}
		cookies[nslots] = SONDE_COOKIE(e->slots[slot].gen, slot, 0);
	}
	/* The return probes first: a call that enters between the two attaches
	 * then has no return to miss (a return without an entry is ignored),
	 * instead of staying "in flight" forever. */
	struct uprobes_attach_opts returns = {.prog_fd = bpf_program__fd(e->skel->progs.span_exit),
					      .binary = binary,
					      .file_offsets = offsets,
					      .cookies = cookies,
					      .n = n,
					      .pid = pid,
					      .retprobe = true,
					      .stop = b->stop,
					      .stop_arg = b->stop_arg};
	if (link_uprobes(e, &returns, exit_, err, errlen))
		goto out;
	struct uprobes_attach_opts entries = returns;
	entries.prog_fd = bpf_program__fd(e->skel->progs.span_enter);
	entries.retprobe = false;
	if (link_uprobes(e, &entries, enter, err, errlen)) {
		remove_uprobes(e, exit_, n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		/* A fresh probe's program first: its hits count once it is active. */
		const struct engine_fetch *f = b->fetch && fresh[i] ? &b->fetch[i] : NULL;
		if ((f && f->prog && set_fetch(e, slots[i], f)) ||
		    set_probe_config(e, slots[i], true)) {
			errbuf_set(err, errlen, "cannot configure probe %u: %s", probes[i],
				   strerror(errno));
			for (size_t j = 0; j < i; j++)
				if (fresh[j])
					set_probe_config(e, slots[j], false);
			remove_uprobes(e, enter, n);
			remove_uprobes(e, exit_, n);
			goto out;
		}
	}
	grow_array((void **)&e->spans, &e->spans_cap, e->nspans + n, sizeof(*e->spans));
	for (size_t i = 0; i < n; i++)
		e->spans[e->nspans++] = (struct span_attachment){.probe = probes[i],
								  .slot = slots[i],
								  .pid = pid,
								  .enter = enter[i],
								  .exit = exit_[i]};
	r = 0;
out:
	if (r) /* the slots this call took are free again */
		for (size_t i = 0; i < nslots; i++)
			if (fresh[i])
				e->slots[slots[i]].probe = NO_PROBE;
	free(slots);
	free(cookies);
	free(fresh);
	free(enter);
	free(exit_);
	return r;
}

/* A USDT span pair for one process (engine_probe_batch.nreturns): its
 * returns first, as a function's, then its entries. */
static int attach_pair(struct engine *e, const struct engine_probe_batch *b, char *err,
		       size_t errlen)
{
	uint32_t probe = b->probes[0];
	if (refuse_without_spans(e, err, errlen))
		return -1;
	if (is_calibration(probe))
		return errbuf_set(err, errlen, "probe id %u is sonde's own", probe);
	if (attached_for(e, probe, b->pid)) /* a second would count each call twice */
		return 0;
	int found = slot_of(e, probe);
	bool fresh = found < 0;
	if (fresh && (engine_probes_available(e) <= 0 || (found = take_slot(e)) < 0))
		return errbuf_set(err, errlen, "too many probes at once (at most %d): untrace some",
				  ENGINE_USER_PROBES);
	uint32_t slot = (uint32_t)found;
	if (fresh) {
		begin_span_slot(e, slot, probe,
				(uint8_t)insn_class_of_trap(b->traps ? b->traps[0] : -1),
				b->policies);
		e->slots[slot].pair = true;
		e->slots[slot].pair_key = b->pair_key ? *b->pair_key : (struct engine_pair_key){0};
		if (b->py && b->py[0]) {
			e->slots[slot].py = true;
			e->slots[slot].py_match = *b->py[0];
		}
	}
	size_t n = b->n, nr = b->nreturns;
	uint64_t *cookies = xcalloc(n + nr + 1, sizeof(*cookies));
	for (size_t i = 0; i < n + nr; i++)
		cookies[i] = SONDE_COOKIE(e->slots[slot].gen, slot, 0);
	int *enter = xcalloc(n + 1, sizeof(*enter));
	int *exit_ = xcalloc(nr + 1, sizeof(*exit_));
	size_t nh = b->nholds;
	int *hold = xcalloc(nh + 1, sizeof(*hold));
	uint64_t *hold_cookies = xcalloc(nh + 1, sizeof(*hold_cookies));
	/* Generation 0, which no attachment has: span_enter does nothing. */
	for (size_t i = 0; i < nh; i++)
		hold_cookies[i] = SONDE_COOKIE(0, slot, 0);
	struct uprobes_attach_opts returns = {.prog_fd = bpf_program__fd(e->skel->progs.span_pair_exit),
					      .binary = b->binary,
					      .file_offsets = b->return_offsets,
					      .ref_ctr_offsets = b->return_ref_ctrs,
					      .cookies = cookies,
					      .n = nr,
					      .pid = b->pid,
					      .stop = b->stop,
					      .stop_arg = b->stop_arg};
	struct uprobes_attach_opts entries = returns;
	entries.prog_fd = bpf_program__fd(e->skel->progs.span_enter);
	entries.file_offsets = b->file_offsets;
	entries.ref_ctr_offsets = b->ref_ctr_offsets;
	entries.n = n;
	struct uprobes_attach_opts holds = returns;
	holds.prog_fd = bpf_program__fd(e->skel->progs.span_enter);
	holds.file_offsets = b->hold_offsets;
	holds.ref_ctr_offsets = b->hold_ref_ctrs;
	holds.cookies = hold_cookies;
	holds.n = nh;
	int r = -1;
	if (link_uprobes(e, &returns, exit_, err, errlen))
		goto out;
	if (link_uprobes(e, &entries, enter, err, errlen)) {
		remove_uprobes(e, exit_, nr);
		goto out;
	}
	if (nh && link_uprobes(e, &holds, hold, err, errlen)) {
		remove_uprobes(e, enter, n);
		remove_uprobes(e, exit_, nr);
		goto out;
	}
	/* A fresh probe's program first: its hits count once it is active. */
	const struct engine_fetch *f = b->fetch && fresh ? &b->fetch[0] : NULL;
	if ((f && f->prog && set_fetch(e, slot, f)) || set_probe_config(e, slot, true)) {
		errbuf_set(err, errlen, "cannot configure probe %u: %s", probe, strerror(errno));
		remove_uprobes(e, enter, n);
		remove_uprobes(e, exit_, nr);
		remove_uprobes(e, hold, nh);
		goto out;
	}
	grow_array((void **)&e->spans, &e->spans_cap, e->nspans + n + nr + nh, sizeof(*e->spans));
	for (size_t i = 0; i < nh; i++)
		e->spans[e->nspans++] = (struct span_attachment){
			.probe = probe, .slot = slot, .pid = b->pid, .enter = hold[i], .exit = -1};
	for (size_t i = 0; i < n; i++)
		e->spans[e->nspans++] = (struct span_attachment){
			.probe = probe, .slot = slot, .pid = b->pid, .enter = enter[i], .exit = -1};
	for (size_t i = 0; i < nr; i++)
		e->spans[e->nspans++] = (struct span_attachment){
			.probe = probe, .slot = slot, .pid = b->pid, .enter = -1, .exit = exit_[i]};
	r = 0;
out:
	if (r && fresh) {
		e->slots[slot].pair = false;
		e->slots[slot].probe = NO_PROBE;
	}
	free(cookies);
	free(enter);
	free(exit_);
	free(hold);
	free(hold_cookies);
	return r;
}
