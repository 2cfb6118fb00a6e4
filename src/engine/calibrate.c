#define _GNU_SOURCE
#include "calibrate.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errbuf.h"
#include "events.h"
#include "order.h"
#include "procmaps.h"
#include "sonde_abi.h"
#include "util.h"

#define CALIB_CALLS 200 /* single timed calls per class */
#define SAMPLE_HZ 999                /* as `record -F 999` */
#define SPIN_SAMPLED_NS 300000000ull /* ~300 samples */

void sonde_calibration_target(void);

#if !defined(__x86_64__)
/* An ordinary function with a short body; elsewhere than x86-64 there is
 * one class only. */
__attribute__((noinline, used)) void sonde_calibration_target(void)
{
	volatile int slot = 0;
	for (int i = 0; i < 100; i++)
		slot = slot + 1;
}
#endif

#if defined(__x86_64__)
/* One empty function per kind of first instruction the kernel may handle
 * its own way: a frame-pointer push (the usual prologue, emulated), endbr64
 * (CET builds), a multi-byte nop (patchable entries), and one it must
 * single-step (a RIP-relative load). Written in assembly so that no
 * compiler or sanitizer changes their first instruction. */
void sonde_calibration_endbr(void);
void sonde_calibration_nop(void);
void sonde_calibration_sstep(void);
/* Each does ~100 loop iterations after its first instruction, like a short
 * function body: back-to-back traps (entry, then return) cost more than
 * traps separated by real work, and real calls have work in them. */
__asm__(".text\n"
	".globl sonde_calibration_target\n.type sonde_calibration_target, @function\n"
	"sonde_calibration_target:\n\tpush %rbp\n\tmov %rsp, %rbp\n\tmovl $100, %ecx\n"
	"0:\tdecl %ecx\n\tjnz 0b\n\tpop %rbp\n\tret\n"
	".size sonde_calibration_target, .-sonde_calibration_target\n"
	".globl sonde_calibration_endbr\n.type sonde_calibration_endbr, @function\n"
	"sonde_calibration_endbr:\n\tendbr64\n\tmovl $100, %ecx\n"
	"1:\tdecl %ecx\n\tjnz 1b\n\tret\n"
	".size sonde_calibration_endbr, .-sonde_calibration_endbr\n"
	".globl sonde_calibration_nop\n.type sonde_calibration_nop, @function\n"
	"sonde_calibration_nop:\n\tnopl 0(%rax)\n\tmovl $100, %ecx\n"
	"2:\tdecl %ecx\n\tjnz 2b\n\tret\n"
	".size sonde_calibration_nop, .-sonde_calibration_nop\n"
	".globl sonde_calibration_sstep\n.type sonde_calibration_sstep, @function\n"
	"sonde_calibration_sstep:\n\tmovq sonde_calibration_word(%rip), %rax\n"
	"\tmovl $100, %ecx\n3:\tdecl %ecx\n\tjnz 3b\n\tret\n"
	".size sonde_calibration_sstep, .-sonde_calibration_sstep\n");
volatile unsigned long sonde_calibration_word;
#endif

/* One empty function per instruction class (engine_insn_class order). */
static void (*const class_fns[INSN_CLASSES])(void) = {
	sonde_calibration_target,
#if defined(__x86_64__)
	sonde_calibration_endbr,
	sonde_calibration_nop,
	sonde_calibration_sstep,
#endif
};

struct code_search {
	uintptr_t addr;
	char *path;
	size_t pathlen;
	uint64_t offset;
};

/* 1: the mapping holds the address in a file; -1: it holds it but not in a
 * file whose path fits; 0: not this mapping. */
static int code_mapping(const struct procmaps_entry *e, void *arg)
{
	struct code_search *cs = arg;
	if (cs->addr < e->start || cs->addr >= e->end)
		return 0;
	if (e->path[0] != '/' || strlen(e->path) >= cs->pathlen)
		return -1;
	strcpy(cs->path, e->path);
	cs->offset = cs->addr - e->start + e->offset;
	return 1;
}

/* The file and file offset of a function of this process, from its maps. */
static int own_code_location(const void *fn, char *path, size_t pathlen, uint64_t *offset)
{
	struct code_search cs = {.addr = (uintptr_t)fn, .path = path, .pathlen = pathlen};
	if (procmaps_each(0, code_mapping, &cs) != 1)
		return -1;
	*offset = cs.offset;
	return 0;
}

static double loop_ns_per_call(void (*fn)(void), int calls)
{
	void (*volatile call)(void) = fn; /* keeps every call */
	uint64_t t0 = monotonic_ns();
	for (int i = 0; i < calls; i++)
		call();
	return (double)(monotonic_ns() - t0) / calls;
}

/* The least time of one call of fn, timed alone (clock reads included). */
static uint64_t least_call_ns(void (*fn)(void), int tries)
{
	void (*volatile call)(void) = fn;
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < tries; i++) {
		uint64_t t0 = monotonic_ns();
		call();
		uint64_t t = monotonic_ns() - t0;
		best = t < best ? t : best;
	}
	return best;
}

/* The floors of one class: every figure is the least over many single calls.
 * Trap costs have a stable floor and a tail of random extra delay that no
 * constant can predict; subtracting the floor never makes a call shorter
 * than it was. */
struct class_floor {
	uint64_t bare;    /* one call without a probe, clock reads included */
	uint64_t full;    /* the probe's whole cost to the caller */
	uint64_t handler; /* of which the handlers timed themselves */
	uint64_t unseen;  /* least of (whole cost - handlers) */
	uint64_t self;    /* least time the handlers measured, less the body */
};

static int calibrate_calls(struct engine *e, struct calibration_result *out, char *err,
			   size_t errlen)
{
	struct class_floor r[INSN_CLASSES];
	int nclasses = 0;
	uint64_t clock_pair = UINT64_MAX; /* two clock reads back to back */
	for (int i = 0; i < 200; i++) {
		uint64_t a = monotonic_ns(), b = monotonic_ns();
		clock_pair = b - a < clock_pair ? b - a : clock_pair;
	}
	/* The classes whose function is found and starts as expected, all
	 * in sonde's own executable, are attached at once. */
	char path[4096], other[4096];
	uint64_t offsets[INSN_CLASSES];
	int cls[INSN_CLASSES];
	for (int c = 0; c < INSN_CLASSES && class_fns[c]; c++) {
		char *where = c == 0 ? path : other;
		if (own_code_location((const void *)class_fns[c], where, sizeof(path), &offsets[c])) {
			errbuf_set(err, errlen, "cannot find sonde's own code in /proc/self/maps");
			break;
		}
		if ((c > 0 && strcmp(other, path) != 0) ||
		    engine_insn_class_at(path, offsets[c]) != (enum engine_insn_class)c) {
			errbuf_set(err, errlen, "calibration function %d does not start as expected", c);
			break;
		}
		r[c] = (struct class_floor){least_call_ns(class_fns[c], 200), UINT64_MAX, UINT64_MAX,
					    UINT64_MAX, UINT64_MAX};
		cls[c] = c;
		nclasses = c + 1;
	}
	/* Should all of them not attach, the first alone may. */
	struct engine_probe_ref refs[INSN_CLASSES] = {{0}};
	struct engine_calibration_batch all = {cls, (size_t)nclasses, path, offsets, refs};
	struct engine_calibration_batch first = {cls, 1, path, offsets, refs};
	if (nclasses > 1 && engine_attach_calibration(e, &all, err, errlen))
		nclasses = 1;
	if (nclasses == 1 && engine_attach_calibration(e, &first, err, errlen))
		nclasses = 0;
	if (nclasses == 0)
		return -1;
	for (int c = 0; c < nclasses; c++)
		loop_ns_per_call(class_fns[c], 50); /* the first hits set things up */
	/* Classes alternate, so a burst of interference does not fall on one
	 * class only. */
	for (int k = 0; k < CALIB_CALLS; k++) {
		for (int c = 0; c < nclasses; c++) {
			void (*volatile call)(void) = class_fns[c];
			struct engine_probe_stats a, b;
			engine_read_probe_stats(e, refs[c], &a);
			uint64_t t0 = monotonic_ns();
			call();
			uint64_t t = monotonic_ns() - t0;
			engine_read_probe_stats(e, refs[c], &b);
			if (b.completed - a.completed != 1)
				continue;
			uint64_t full = t > r[c].bare ? t - r[c].bare : 0;
			uint64_t h = b.handler_ns - a.handler_ns, raw = b.raw_ns - a.raw_ns;
			r[c].full = full < r[c].full ? full : r[c].full;
			r[c].handler = h < r[c].handler ? h : r[c].handler;
			if (full > h && full - h < r[c].unseen)
				r[c].unseen = full - h;
			r[c].self = raw < r[c].self ? raw : r[c].self;
		}
	}
	/* Detaching waits for the kernel: it goes on in the background. */
	engine_detach_calibration(e);
	for (int c = 0; c < INSN_CLASSES; c++) {
		/* A class that could not be measured takes the push class's
		 * figures (the cheapest: it may under-correct, never over). */
		const struct class_floor *m = c < nclasses && r[c].full != UINT64_MAX ? &r[c] : &r[0];
		if (m->full == UINT64_MAX) {
			errbuf_set(err, errlen, "the calibration probes saw no calls");
			return -1;
		}
		/* The handlers measure from the entry handler's end to the
		 * return handler's start: the body (the bare call less the
		 * clock reads around it) is the only part that is not trap. */
		uint64_t body = m->bare > clock_pair ? m->bare - clock_pair : 0;
		struct engine_trap_costs tc = {
			.call_unseen_ns = m->unseen != UINT64_MAX ? m->unseen : 0,
			.self_unseen_ns = m->self > body ? m->self - body : 0,
		};
		engine_set_trap_costs(e, (enum engine_insn_class)c, &tc);
		out->classes[c] = tc;
		out->class_full_ns[c] = (double)m->full;
		out->class_handler_ns[c] = (double)m->handler;
	}
	out->call_full_ns = out->class_full_ns[INSN_PUSH];
	out->call_handler_ns = out->class_handler_ns[INSN_PUSH];
	return 0;
}

/* A stretch of time the spinning thread lost: between two clock reads. */
struct gap {
	uint64_t start, end;
};

#define MAX_GAPS 16384

/* Spins reading the clock for `ns` and keeps every gap between two reads
 * longer than gap_min (an interrupt, a sample, a preemption). */
static size_t spin_gaps(uint64_t ns, uint64_t gap_min, struct gap *gaps, size_t max)
{
	uint64_t start = monotonic_ns(), prev = start;
	size_t n = 0;
	for (;;) {
		uint64_t t = monotonic_ns();
		if (t - prev > gap_min && n < max)
			gaps[n++] = (struct gap){prev, t};
		prev = t;
		if (t - start >= ns)
			break;
	}
	return n;
}

static uint64_t typical_iteration(void)
{
	uint64_t best = UINT64_MAX;
	for (int r = 0; r < 50; r++) {
		uint64_t a = monotonic_ns(), b = monotonic_ns();
		best = b - a < best ? b - a : best;
	}
	return best;
}

/* A sample's interrupt exit is charged up to this many times its median
 * (+10 us). */
#define EXIT_CAP_MEDIANS 4

/* The gap that contains time t (gaps are in time order), or NULL. */
static const struct gap *gap_at(const struct gap *g, size_t n, uint64_t t)
{
	size_t lo = ORDER_PARTITION(n, i, g[i].end < t);
	return lo < n && g[lo].start <= t && t <= g[lo].end ? &g[lo] : NULL;
}

/* What the thread saw while it spun sampled: its gaps, and the engine's own
 * time and sample count on it before and after. */
struct sampled_spin {
	struct gap *gaps;
	size_t ngaps;
	uint64_t own0, own1, n0, n1;
};

/* Spins on this thread's CPU, kept there, while the session's kind of
 * sampler runs on it; the thread's affinity is restored after. */
static int spin_sampled(struct engine *e, uint32_t tid, uint64_t gap_min,
			struct sampled_spin *sp, char *err, size_t errlen)
{
	cpu_set_t old_set, one;
	int cpu = sched_getcpu();
	bool pinned = cpu >= 0 && sched_getaffinity(0, sizeof(old_set), &old_set) == 0;
	if (pinned) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		pinned = sched_setaffinity(0, sizeof(one), &one) == 0;
	}
	struct event_spec clock;
	events_parse("cpu-clock", &clock, err, errlen);
	int fd = pinned ? events_open_cpu(&clock, cpu, SAMPLE_HZ, 0, err, errlen) : -1;
	if (fd < 0) {
		if (pinned)
			sched_setaffinity(0, sizeof(old_set), &old_set);
		else
			errbuf_set(err, errlen, "cannot keep sonde's thread on one CPU to calibrate");
		return -1;
	}
	struct bpf_link *link = engine_attach_perf_fd(e, fd, err, errlen);
	if (!link) {
		close(fd);
		sched_setaffinity(0, sizeof(old_set), &old_set);
		return -1;
	}
	struct gap *gaps = xcalloc(MAX_GAPS, sizeof(*gaps));
	uint64_t own0 = engine_thread_own_ns(e, tid), n0 = engine_calib_samples(e);
	size_t ngaps = spin_gaps(SPIN_SAMPLED_NS, gap_min, gaps, MAX_GAPS);
	uint64_t own1 = engine_thread_own_ns(e, tid), n1 = engine_calib_samples(e);
	engine_detach_fd(link);
	close(fd);
	sched_setaffinity(0, sizeof(old_set), &old_set);
	*sp = (struct sampled_spin){.gaps = gaps, .ngaps = ngaps, .own0 = own0, .own1 = own1,
				    .n0 = n0, .n1 = n1};
	return 0;
}

/* Per sample seen in the thread's timeline: its whole cost (the gap), how
 * late its program ran, how long the rest of its interrupt took (when
 * timed), and the rest no program timed. */
struct sample_costs {
	uint64_t *full, *lates, *exits, *rest;
	uint64_t *rest_untimed; /* exit not timed */
	size_t nc, nexits;
};

static void sample_costs_free(struct sample_costs *sc)
{
	free(sc->full);
	free(sc->lates);
	free(sc->exits);
	free(sc->rest);
	free(sc->rest_untimed);
}

/* The sampler's notes on each sample, matched to the gap around its time. */
static void match_samples(struct engine *e, const struct sampled_spin *sp, uint64_t iter,
			  struct sample_costs *sc)
{
	const struct gap *gaps = sp->gaps;
	size_t ngaps = sp->ngaps;
	uint64_t *times = xcalloc(SONDE_CALIB_TIMES, sizeof(*times));
	uint64_t *late = xcalloc(SONDE_CALIB_TIMES, sizeof(*late));
	uint64_t *run = xcalloc(SONDE_CALIB_TIMES, sizeof(*run));
	uint64_t *exit = xcalloc(SONDE_CALIB_TIMES, sizeof(*exit));
	size_t nt = engine_calib_times(e, times, SONDE_CALIB_TIMES);
	size_t nl = engine_calib_lateness(e, late, run, exit, SONDE_CALIB_TIMES);
	nt = nl < nt ? nl : nt;
	uint64_t *full = xcalloc(nt + 1, sizeof(*full));
	uint64_t *lates = xcalloc(nt + 1, sizeof(*lates));
	uint64_t *exits = xcalloc(nt + 1, sizeof(*exits));
	uint64_t *rest = xcalloc(nt + 1, sizeof(*rest));
	uint64_t *rest_untimed = xcalloc(nt + 1, sizeof(*rest_untimed));
	size_t nc = 0, nexits = 0;
	for (size_t i = (size_t)sp->n0; i < nt; i++) {
		const struct gap *g = gap_at(gaps, ngaps, times[i]);
		if (!g)
			continue;
		uint64_t cost = g->end - g->start - iter;
		uint64_t timed = late[i] + run[i] + exit[i], program = late[i] + run[i];
		full[nc] = cost;
		lates[nc] = late[i];
		rest[nc] = cost > timed ? cost - timed : 0;
		rest_untimed[nc] = cost > program ? cost - program : 0;
		if (exit[i])
			exits[nexits++] = exit[i];
		nc++;
	}
	free(times);
	free(late);
	free(run);
	free(exit);
	*sc = (struct sample_costs){.full = full, .lates = lates, .exits = exits, .rest = rest,
				    .rest_untimed = rest_untimed, .nc = nc, .nexits = nexits};
}

/* Medians: a sample's gap has a long tail on a busy machine (the thread
 * preempted at the interrupt's exit, the virtual CPU stalled by its
 * host: 71 us at the 90th percentile where the median was 20), which is
 * not the sample's cost; most samples are not caught by it. What each
 * sample costs beyond the median's constant is measured in the run
 * itself: its program's run time, its lateness (timer_lateness in
 * bpf/sampler.bpf.c), charged up to 3 medians (+2 us), more being the
 * CPU held from the interrupt, and the rest of its interrupt
 * (sample_irq_exit), charged up to EXIT_CAP_MEDIANS medians (+10 us):
 * its tail is the sample's own work (8-30 us interrupts on a virtual
 * machine), more is a stall. Every sample's exit is timed unless the
 * tracepoint missed it (then its median is charged as unseen). */
static void take_medians(struct engine *e, const struct sampled_spin *sp,
			 struct sample_costs *sc, struct calibration_result *out)
{
	uint64_t *full = sc->full, *lates = sc->lates, *exits = sc->exits, *rest = sc->rest,
		 *rest_untimed = sc->rest_untimed;
	size_t nc = sc->nc, nexits = sc->nexits;
	uint64_t n = sp->n1 - sp->n0;
	qsort(full, nc, sizeof(*full), order_u64);
	qsort(lates, nc, sizeof(*lates), order_u64);
	qsort(exits, nexits ? nexits : 1, sizeof(*exits), order_u64);
	qsort(rest, nc, sizeof(*rest), order_u64);
	qsort(rest_untimed, nc, sizeof(*rest_untimed), order_u64);
	double handler = n ? (double)(sp->own1 - sp->own0) / (double)n : 0;
	bool exits_timed = engine_times_sample_exits(e) && nexits * 2 >= nc;
	out->samples = (unsigned long)n;
	out->sample_full_ns = (double)full[nc / 2];
	out->sample_handler_ns = handler;
	out->sample_late_ns = (double)lates[nc / 2];
	out->sample_exit_ns = exits_timed ? (double)exits[nexits / 2] : 0;
	out->calib.late_cap_ns = 3 * lates[nc / 2] + 2000;
	out->calib.exit_cap_ns = exits_timed ? EXIT_CAP_MEDIANS * exits[nexits / 2] + 10000 : 0;
	/* Without timed exits, the unseen rest holds them. */
	out->calib.sample_unseen_ns = exits_timed ? rest[nc / 2] : rest_untimed[nc / 2];
}

/* A sample's cost to the thread it interrupts, as that thread sees it: the
 * thread spins reading the clock while the session's kind of sampler (per
 * CPU, by frequency) runs on its CPU; the sampler notes when each sample
 * was taken, and the gap in the thread's clock readings around that time is
 * what the sample cost; the sampler measured how late it ran and how long,
 * the rest is what it cannot time (the medians are kept). */
static int calibrate_samples(struct engine *e, struct calibration_result *out, char *err,
			     size_t errlen)
{
	uint32_t tid = (uint32_t)gettid();
	uint64_t iter = typical_iteration();
	uint64_t gap_min = 4 * iter > 200 ? 4 * iter : 200;

	struct sampled_spin sp;
	if (spin_sampled(e, tid, gap_min, &sp, err, errlen))
		return -1;
	struct sample_costs sc;
	match_samples(e, &sp, iter, &sc);
	free(sp.gaps);
	uint64_t n = sp.n1 - sp.n0;
	if (sc.nc < 20) {
		sample_costs_free(&sc);
		if (n < 20)
			errbuf_set(err, errlen,
				   "only %llu calibration samples were taken while it spun, 20 are "
				   "needed: the machine is busy",
				   (unsigned long long)n);
		else
			errbuf_set(err, errlen,
				   "only %zu of its %llu calibration samples were seen by the "
				   "spinning thread",
				   sc.nc, (unsigned long long)n);
		return -1;
	}
	take_medians(e, &sp, &sc, out);
	sample_costs_free(&sc);
	return 0;
}

int calibrate_run(struct engine *e, bool samples, struct calibration_result *out, char *err,
		  size_t errlen)
{
	memset(out, 0, sizeof(*out));
	pid_t self = getpid();
	uint32_t tid = (uint32_t)gettid();
	if (engine_add_pid(e, self, err, errlen))
		return -1;
	struct engine_calibration zero = {.calib_tid = tid};
	engine_set_calibration(e, &zero);
	/* The calls leave this thread a state, which the samples then charge. */
	int r = calibrate_calls(e, out, err, errlen);
	if (r == 0 && samples)
		r = calibrate_samples(e, out, err, errlen);
	engine_forget_thread(e, tid);
	engine_remove_pid(e, self);
	engine_discard_pending(e); /* the calibration's own samples */
	out->calib.calib_tid = 0;
	engine_set_calibration(e, r == 0 ? &out->calib : &(struct engine_calibration){0});
	return r;
}
