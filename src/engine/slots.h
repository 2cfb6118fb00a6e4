/* slots — the kernel's probe slots: which of the caller's probes is in
 * which slot, its generation, class, policy, config and fetch program, and
 * the uprobe links of its attachments (made and removed through
 * uprobes.h). Implements engine_pause_spans, engine_set_span_policy,
 * engine_set_trap_costs, engine_insn_class_at, engine_insn_class_name,
 * engine_probes_available and engine_forget_process
 * (engine.h). */
#ifndef SONDE_SLOTS_H
#define SONDE_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine.h"
#include "sonde_abi.h"
#include "uprobes.h"

struct engine;
struct engine_fetch;
struct bpf_program;

/* The slot a probe id is attached in, or -1; whether it is attached. */
int slot_of(const struct engine *e, uint32_t probe);
/* The slot a ref names while it is still that attachment's, or -1. */
int slot_of_ref(const struct engine *e, struct engine_probe_ref r);
/* The ref of a probe id's attachment ({0}: none). */
struct engine_probe_ref ref_of(const struct engine *e, uint32_t probe);
/* A fresh attachment in slot: its next generation (never 0, which no ref
 * names). */
void next_generation(struct engine *e, uint32_t slot);
bool probe_attached(const struct engine *e, uint32_t probe);
/* The lowest free slot, or -1. */
int take_slot(const struct engine *e);
/* Whether probe has an attachment for process pid. */
bool attached_for(const struct engine *e, uint32_t probe, pid_t pid);
/* Whether a probe id is one of sonde's calibration probes. */
bool is_calibration(uint32_t probe);
/* The class of a first instruction as symbols/insn decoded it (an enum
 * insn_trap; -1, not known: single-stepped). */
enum engine_insn_class insn_class_of_trap(int trap);
/* -1 with fixed_refusal when the session loaded no uprobe program. */
int refuse_without_spans(const struct engine *e, char *err, size_t errlen);

/* Writes slot's probe_cfg (active, and what the slot's tables say).
 * Returns 0 or -1 (errno). */
int set_probe_config(struct engine *e, uint32_t slot, bool active);
/* Puts f's program with its layout (f or f->prog NULL: none) in slot's
 * place in fetch_progs, for its current generation, and says so in its
 * config. */
int set_fetch(struct engine *e, uint32_t slot, const struct engine_fetch *f);
/* Clears slot's point programs in the kernel and gives their entries back. */
void free_point_progs(struct engine *e, uint32_t slot);

/* Links o's uprobes (uprobes.h; o->multi is the engine's own choice):
 * one uprobe_multi link for each UPROBES_MAX_BATCH of them, or one
 * perf-event link each. fds[i] gets the link of offset i. Returns 0, or -1
 * with err and nothing of this call attached. */
int link_uprobes(struct engine *e, const struct uprobes_attach_opts *o, int *fds, char *err,
		 size_t errlen);
/* Removes the uprobes of these link fds (-1: none; an fd may be named more
 * than once) in the background, but not those of a link that an
 * attachment still in e->spans holds (a uprobe_multi link serving probes
 * that stay). */
void remove_uprobes(struct engine *e, const int *fds, size_t n);
/* Detaches every attachment of slot's probe without waiting for the kernel and
 * frees its slot. deliver: first hand the caller the records of its calls
 * already in the ring buffer (after this, records of the slot no longer
 * name the probe and are dropped). */
void detach_probe(struct engine *e, uint32_t slot, bool deliver);

#endif
