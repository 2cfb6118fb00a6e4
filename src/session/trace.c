#define _GNU_SOURCE
#include "trace.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "errbuf.h"
#include "pyperf.h"
#include "sessionstate.h"
#include "util.h"

static void refresh_point_calls(struct session *s, uint32_t point);
static void keep_point_calls(struct session *s, uint32_t probe);
static bool update_span_policy(struct session *s, uint32_t probe);
static struct engine_span_policy span_policy_for(const struct session *s, uint32_t probe);
static void note_spec(struct session *s, uint32_t probe, const char *spec);
static int attach_branch_spec(struct session *s, const char *spec, struct probe_plan *r,
			      int *count, char *err, size_t errlen);

/* A probe is named by its function, or BINARY:FUNC when the name is taken. */
static char *probe_display_name(const struct profile *p, const struct probe_target *t)
{
	if (profile_probe_find(p, t->function) < 0)
		return xstrdup(t->function);
	const char *base = strrchr(t->binary, '/');
	return xasprintf("%s:%s", base ? base + 1 : t->binary, t->function);
}

/* The probe already on this function, or -1: two specs naming one function
 * (libc:getppid and getppid, or a glob and a name) share one probe, since
 * two uprobe pairs on one function would garble the thread's span stack. */
static int probe_at(const struct session *s, const struct probe_target *t)
{
	const struct profile *p = s->prof;
	for (size_t i = 0; i < p->nprobes && i < SESSION_MAX_PROBES; i++)
		if (p->probes[i].offset == t->offset && s->probes[i].dev == t->dev &&
		    s->probes[i].ino == t->ino &&
		    /* py: probes share the evaluator: each function is its own */
		    (!t->py || !strcmp(p->probes[i].name, t->function)))
			return (int)i;
	return -1;
}

/* engine_probe_batch.stop: a signal came (session_interrupted). */
static bool stop_on_signal(void *arg, char *why, size_t whylen)
{
	return session_interrupted(arg, why, whylen);
}

/* Puts the uprobes of a batch of fresh probes (its pid aside) on every
 * process probe_pids names: all or none, but for a process that exits
 * meanwhile (a target that runs once traced can be done before its second
 * probe is placed: the kernel then refuses it with "No such process"),
 * which is passed over as long as another process takes them. Their refs
 * go to batch->refs (which must be given). Returns 0, or -1 with err and
 * nothing of these probes left attached. */
static int attach_uprobes(struct session *s, const struct engine_probe_batch *batch, char *err,
			  size_t errlen)
{
	pid_t *pids;
	int npids = discovery_probe_pids(s, &pids, err, errlen);
	if (npids < 0)
		return -1;
	struct engine_probe_batch b = *batch;
	b.pids = pids;
	b.npids = (size_t)npids;
	b.stop = stop_on_signal;
	b.stop_arg = s;
	int r = engine_attach_probes(s->eng, &b, err, errlen);
	size_t nprobes = engine_batch_probes(batch);
	for (size_t k = 0; r && k < nprobes; k++) {
		engine_discard_span(s->eng, batch->refs[k]);
		batch->refs[k] = (struct engine_probe_ref){0};
	}
	free(pids);
	return r;
}

/* -1 with err when spec would be a new probe (id < 0) past the session's
 * room for probes. */
static int refuse_new_probe(const struct session *s, int id, const char *spec, char *err,
			    size_t errlen)
{
	if (id >= 0 || s->prof->nprobes < SESSION_MAX_PROBES)
		return 0;
	return errbuf_set(err, errlen, "trace %s: a session traces at most %d different probes",
			  spec, SESSION_MAX_PROBES);
}

/* A new probe named spec, in target t's file: its id. */
static int probe_add(struct session *s, const char *spec, const struct probe_target *t)
{
	int id = (int)profile_probe_add(s->prof, spec, t->binary, t->offset);
	s->probes[id].dev = t->dev;
	s->probes[id].ino = t->ino;
	return id;
}

/* The sites of a point probe or a span pair: its targets' file offsets
 * and USDT semaphores (ref_ctrs NULL when none has one). */
static struct point_sites sites_of(const struct probe_target *t, int n, size_t nentries)
{
	struct point_sites ps = {.offsets = xmalloc((size_t)n * sizeof(*ps.offsets)),
				 .n = (size_t)n,
				 .nentries = nentries};
	uint64_t *refs = xcalloc((size_t)n, sizeof(*refs));
	bool any = false;
	for (int i = 0; i < n; i++) {
		ps.offsets[i] = t[i].offset;
		refs[i] = t[i].ref_ctr_offset;
		any |= refs[i] != 0;
		ps.nholds += t[i].usdt_hold;
	}
	if (any)
		ps.ref_ctrs = refs;
	else
		free(refs);
	return ps;
}

static void sites_free(struct point_sites *ps)
{
	free(ps->offsets);
	free(ps->ref_ctrs);
	free(ps->branch);
	memset(ps, 0, sizeof(*ps));
}

/* Probe id's sites from now on: a later process gets the same. */
static void keep_sites(struct session *s, int id, struct point_sites ps)
{
	sites_free(&s->probes[id].sites);
	s->probes[id].sites = ps;
}

/* A line probe (spec [BINARY:]FILE:LINE, written as `full` with its
 * captures): one probe, named by the spec, with a uprobe at each of its n
 * addresses, all or none, and with captures (plan, translated for these
 * addresses by probe_plan_make) a fetch program at each. Or (outcome 1:
 * taken, 0: not taken; -1: a line) one outcome of a branch probe's jump,
 * at each copy of the jump. Takes t. Returns its probe id, or -1 with
 * err. */
static int attach_line_spec(struct session *s, const char *full, const struct probe_plan *rs,
			    int outcome, int *count, char *err, size_t errlen)
{
	const char *spec = rs->location;
	const struct capture_plan *plan = &rs->captures;
	struct probe_target *t = rs->t; /* taken: freed here */
	int n = rs->n;
	char why[512];
	int id = profile_probe_find(s->prof, spec);
	int r = -1;
	if (id >= 0 && s->prof->probes[id].point < 0) {
		errbuf_set(err, errlen, "trace %s: a function probe has that name", spec);
		goto out;
	}
	if (id >= 0 && trace_probe_attached(&s->probes[id]) && plan->builds) {
		errbuf_set(err, errlen,
			   "trace %s: %s is traced already: untrace it first to change what it "
			   "captures",
			   full, spec);
		goto out;
	}
	if (id >= 0 && trace_probe_attached(&s->probes[id])) { /* traced already */
		r = id;
		goto done;
	}
	if (id < 0 && s->npoints >= ENGINE_MAX_POINTS) {
		errbuf_set(err, errlen, "trace %s: a session traces at most %d lines", spec,
			   ENGINE_MAX_POINTS);
		goto out;
	}
	if (refuse_new_probe(s, id, spec, err, errlen))
		goto out;
	uint32_t probe = id >= 0 ? (uint32_t)id : (uint32_t)s->prof->nprobes;
	int point = id >= 0 ? s->prof->probes[id].point : s->npoints;
	struct point_sites sites = sites_of(t, n, 0);
	int8_t *traps = xmalloc((size_t)n * sizeof(*traps));
	/* Each address's program goes in with it. */
	struct engine_fetch *fetch = xcalloc((size_t)n, sizeof(*fetch));
	for (int i = 0; i < n; i++) {
		traps[i] = t[i].trap_known ? (int8_t)t[i].trap : -1;
		capture_program(plan, i, s->prof, probe, &fetch[i]);
	}
	/* A branch outcome's jumps, each with its condition */
	if (outcome >= 0) {
		sites.branch = xcalloc((size_t)n, sizeof(*sites.branch));
		for (int i = 0; i < n; i++)
			sites.branch[i] =
				(uint16_t)(t[i].jump.cond | (outcome ? ENGINE_BRANCH_TAKEN : 0));
	}
	struct engine_probe_ref ref = {0};
	struct engine_probe_batch b = sites_batch(&sites, &probe, t[0].binary);
	b.fetch = plan->builds && plan->n > 0 ? fetch : NULL;
	b.traps = traps;
	b.point_bit = (uint32_t)point + 1;
	b.refs = &ref;
	int ok = !session_interrupted(s, why, sizeof(why)) &&
		 attach_uprobes(s, &b, why, sizeof(why)) == 0;
	free(traps);
	free(fetch);
	if (!ok) {
		sites_free(&sites);
		errbuf_set(err, errlen, "trace %s: %s", spec, why);
		goto out;
	}
	if (id < 0) {
		id = probe_add(s, spec, &t[0]);
		s->prof->probes[id].point = s->npoints++;
	}
	s->probes[id].kernel = ref;
	keep_sites(s, id, sites);
	r = id;
	note_spec(s, probe, full);
	capture_name(plan, 0, s->prof, probe);
	for (int i = 0; i < n && s->o->verbose; i++)
		session_note(s->o, "%s: file offset 0x%llx in %s%s", spec, (unsigned long long)t[i].offset,
		      t[i].function, t[i].inlined ? " (inlined)" : "");
done:
	if (count)
		*count = n;
	err[0] = 0;
out:
	probes_free(t, n);
	return r;
}

/* Resolves spec against the target as it is now. Returns 0, or -1 with err
 * ("trace SPEC: why") and nothing to free. */
int trace_spec_resolve(struct session *s, const char *spec, struct probe_plan *r, char *err,
			size_t errlen)
{
	char why[512];
	memset(r, 0, sizeof(*r));
	pid_t *running;
	int nrunning = discovery_running_targets(s, &running);
	const char *names[1] = {s->exe_alias};
	/* A command not started yet gets sonde's environment: its loader reads
	 * LD_LIBRARY_PATH and LD_PRELOAD from there. */
	struct ldso_env env = {getenv("LD_LIBRARY_PATH"), getenv("LD_PRELOAD")};
	struct probe_scope scope = {.executable = s->executable,
				    .exe_names = names,
				    .nexe_names = s->exe_alias ? 1 : 0,
				    .pids = running,
				    .npids = nrunning,
				    .env = &env};
	int rc = probe_plan_make(spec, &scope, r, why, sizeof(why));
	free(running);
	if (rc)
		return errbuf_set(err, errlen, "trace %s: %s", spec, why);
	return 0;
}

/* A function spec's targets t[0..n-1] as probes: ids[i] is t[i]'s, fresh[i]
 * when it is not attached now, fetch[i] its program (prog NULL: none). */
struct spec_functions {
	const struct probe_target *t;
	int n;
	const int *ids;
	const bool *fresh;
	const struct engine_fetch *fetch;
	const struct engine_span_policy *policies; /* each one's, in force from its first call */
	struct engine_probe_ref *refs; /* out: where each fresh one is attached */
};

/* The calls a probe counts are those of one predicate: a spec with
 * captures naming a function traced now is refused (a second program would
 * change mid-run which calls count), and so is one that traces again, with
 * another predicate, a function traced before (its counts go on). Returns
 * 0, or -1 with err. */
static int refuse_other_predicate(struct session *s, const char *spec,
				  const struct capture_plan *plan, const struct spec_functions *f,
				  char *err, size_t errlen)
{
	const char *want = plan->spec.pred_text;
	for (int i = 0; i < f->n; i++) {
		if (f->ids[i] >= (int)s->prof->nprobes)
			continue; /* new */
		const struct probe_info *pi = &s->prof->probes[f->ids[i]];
		if (!f->fresh[i] && plan->builds) {
			errbuf_set(err, errlen,
				   "trace %s: %s is traced already: untrace it first to change what it "
				   "captures",
				   spec, pi->name);
			return -1;
		}
		const char *had = pi->predicate;
		if (f->fresh[i] && (want || had) && (!want || !had || strcmp(want, had) != 0)) {
			if (had)
				errbuf_set(err, errlen,
					   "trace %s: %s was traced with 'if %s' in this session and "
					   "its counts go on: trace it with that predicate again",
					   spec, pi->name, had);
			else
				errbuf_set(err, errlen,
					   "trace %s: %s was traced without a predicate in this "
					   "session and its counts go on: trace it without one again",
					   spec, pi->name);
			return -1;
		}
	}
	return 0;
}

/* Attaches the fresh probes of f, a binary at a time: each binary's are
 * one batch (engine_attach_probes: one uprobe_multi link for all, where
 * the kernel has them). Returns 0, or -1 with err and none of them left
 * attached. */
static int attach_functions(struct session *s, const char *spec, const struct spec_functions *f,
			    char *err, size_t errlen)
{
	char why[512];
	int n = f->n, attached = 0;
	uint32_t *batch = xcalloc((size_t)n + 1, sizeof(*batch));
	uint64_t *offsets = xcalloc((size_t)n + 1, sizeof(*offsets));
	int8_t *traps = xcalloc((size_t)n + 1, sizeof(*traps));
	const struct sonde_py_match **py = xcalloc((size_t)n + 1, sizeof(*py));
	struct engine_span_policy *policies = xcalloc((size_t)n + 1, sizeof(*policies));
	struct engine_fetch *fetch = xcalloc((size_t)n + 1, sizeof(*fetch));
	struct engine_probe_ref *refs = xcalloc((size_t)n + 1, sizeof(*refs));
	int *which = xcalloc((size_t)n + 1, sizeof(*which)); /* batch entry -> function */
	bool *done = xcalloc((size_t)n + 1, sizeof(*done));
	for (int i = 0; i < n; i++)
		done[i] = !f->fresh[i];
	for (; attached < n; attached++) {
		if (done[attached])
			continue;
		if (session_interrupted(s, why, sizeof(why))) {
			errbuf_set(err, errlen, "trace %s: %s", spec, why);
			break;
		}
		/* A binary's functions are one batch (without uprobe_multi
		 * links, one link a function: a signal stops it between two). */
		size_t k = 0;
		const char *binary = f->t[attached].binary;
		for (int j = attached; j < n; j++) {
			if (!done[j] && strcmp(f->t[j].binary, binary) == 0) {
				batch[k] = (uint32_t)f->ids[j];
				fetch[k] = f->fetch[j];
				traps[k] = f->t[j].trap_known ? (int8_t)f->t[j].trap : -1;
				policies[k] = f->policies[j];
				py[k] = f->t[j].py;
				which[k] = j;
				offsets[k++] = f->t[j].offset;
				done[j] = true; /* a failed batch is taken back whole */
			}
		}
		struct engine_probe_batch b = {.probes = batch,
					      .file_offsets = offsets,
					      .fetch = fetch,
					      .n = k,
					      .binary = binary,
					      .pid = -1,
					      .traps = traps,
					      .policies = policies,
					      .py = py,
					      .refs = refs};
		int rc = attach_uprobes(s, &b, why, sizeof(why));
		for (size_t m = 0; m < k; m++)
			f->refs[which[m]] = refs[m];
		if (rc) {
			errbuf_set(err, errlen, "trace %s: %s", spec, why);
			break;
		}
	}
	if (attached < n) /* take back what this spec attached */
		for (int i = 0; i < n; i++)
			if (f->fresh[i] && done[i]) {
				engine_discard_span(s->eng, f->refs[i]);
				f->refs[i] = (struct engine_probe_ref){0};
			}
	free(batch);
	free(offsets);
	free(traps);
	free(py);
	free(policies);
	free(fetch);
	free(refs);
	free(which);
	free(done);
	return attached < n ? -1 : 0;
}

/* Says where a spec's entry probes went other than at the first
 * instruction (past one the kernel cannot step), and, with -v, which
 * implementation of an IFUNC is traced. */
static void note_placements(const struct session *s, const char *spec,
			    const struct probe_target *t, int n)
{
	int nmoved = 0;
	for (int i = 0; i < n; i++)
		nmoved += t[i].moved != NULL;
	for (int i = 0; i < n && (nmoved == 1 || s->o->verbose); i++)
		if (t[i].moved)
			session_note(s->o, "trace %s: the entry probe of %s is %s", spec, t[i].function,
				     t[i].moved);
	if (nmoved > 1 && !s->o->verbose)
		session_note(s->o,
			     "trace %s: the entry probes of %d functions are placed past first "
			     "instructions the kernel's uprobes cannot step (AVX code; -v says which)",
			     spec, nmoved);
	for (int i = 0; i < n && s->o->verbose; i++) {
		if (!t[i].ifunc_impl)
			continue;
		char who[64] = "sonde's own process (the same file, CPU and environment)";
		if (t[i].ifunc_asked)
			snprintf(who, sizeof(who), "PID %d", (int)t[i].ifunc_asked);
		session_note(s->o, "%s is an IFUNC in %s: tracing %s, the implementation %s uses",
			     t[i].function, t[i].binary, t[i].ifunc_impl, who);
	}
}

/* Attaches a planned spec (taking what r holds): every function it names,
 * all or none. Returns the first probe id (and their number in *count), or
 * -1 with err (and nothing of the spec attached); on success err holds the
 * spec's note ("" if none: functions a glob named that a probe would
 * break). A function already traced keeps its probe; one traced before and
 * untraced gets its probe id back; new ones get the next ids. */
static struct engine_pair_arg pair_arg_of(const struct usdt_arg *a)
{
	return (struct engine_pair_arg){.kind = a->kind == USDT_ARG_MEM ? ENGINE_PAIR_ARG_MEM
									  : ENGINE_PAIR_ARG_REG,
					.reg = (uint8_t)a->reg,
					.off = a->kind == USDT_ARG_MEM ? (int32_t)a->offset : 0};
}

/* The engine's form of a pair's key. */
static struct engine_pair_key pair_key_of(const struct usdt_pair_key *k)
{
	struct engine_pair_key e = {0};
	for (int i = 0; i < k->n && i < ENGINE_PAIR_KEYS; i++) {
		e.entry[i] = pair_arg_of(&k->entry[i]);
		e.ret[i] = pair_arg_of(&k->ret[i]);
	}
	return e;
}

/* A USDT span pair (spec usdt:[BINARY:]PROVIDER:ENTRY,RETURN, written as
 * `full` with its captures): one span probe named by the spec, span_enter
 * at each of its entry probe's sites and span_pair_exit at each of its
 * return probe's, all or none, its semaphores raised. Takes rs's targets.
 * Returns its probe id, or -1 with err. */
static int attach_pair_spec(struct session *s, const char *full, const struct probe_plan *rs,
			    int *count, char *err, size_t errlen)
{
	const char *spec = rs->location;
	const struct capture_plan *plan = &rs->captures;
	struct probe_target *t = rs->t; /* taken: freed here */
	int n = rs->n, nentries = rs->nentries;
	int id = profile_probe_find(s->prof, spec);
	int r = -1;
	char why[512];
	if (id >= 0 && trace_probe_attached(&s->probes[id])) {
		if (plan->builds)
			errbuf_set(err, errlen,
				   "trace %s: %s is traced already: untrace it first to change what "
				   "it captures",
				   full, spec);
		else
			r = id;
		goto out;
	}
	if (refuse_new_probe(s, id, spec, err, errlen))
		goto out;
	uint32_t probe = id >= 0 ? (uint32_t)id : (uint32_t)s->prof->nprobes;
	struct point_sites sites = sites_of(t, n, (size_t)nentries);
	int8_t trap = t[0].trap_known ? (int8_t)t[0].trap : -1;
	struct engine_fetch fetch = {0};
	if (plan->builds)
		capture_program(plan, 0, s->prof, probe, &fetch);
	struct engine_span_policy policy = span_policy_for(s, probe);
	struct engine_pair_key key = pair_key_of(&rs->pair_key);
	struct engine_probe_ref ref = {0};
	struct engine_probe_batch b = sites_batch(&sites, &probe, t[0].binary);
	b.pair_key = &key;
	const struct sonde_py_match *py = t[0].py;
	b.py = py ? &py : NULL;
	b.fetch = plan->builds ? &fetch : NULL;
	b.traps = &trap;
	b.policies = &policy;
	b.refs = &ref;
	int ok = !session_interrupted(s, why, sizeof(why)) &&
		 attach_uprobes(s, &b, why, sizeof(why)) == 0;
	if (!ok) {
		sites_free(&sites);
		errbuf_set(err, errlen, "trace %s: %s", spec, why);
		goto out;
	}
	if (id < 0)
		id = probe_add(s, spec, &t[0]);
	s->probes[id].kernel = ref;
	keep_sites(s, id, sites);
	r = id;
	note_spec(s, probe, full);
	capture_name(plan, 0, s->prof, probe);
	s->prof->probes[id].all_calls = s->o->all_calls;
	if (s->o->verbose) {
		char by[64] = "";
		for (int i = 0, off = 0; i < rs->pair_key.n; i++)
			off += snprintf(by + off, sizeof(by) - (size_t)off, " arg%d",
					rs->pair_key.positions[i]);
		session_note(s->o, "%s: a return closes the innermost call %s%s", spec,
			     rs->pair_key.n ? "whose entry had the same" : "in flight (no key)", by);
	}
	for (int i = 0; i < n && s->o->verbose; i++)
		session_note(s->o, "%s: %s site at file offset 0x%llx (%s)", spec,
			     t[i].usdt_hold	? "semaphore"
			     : t[i].usdt_return ? "return"
						: "entry",
			     (unsigned long long)t[i].offset,
			     t[i].function);
out:
	if (r >= 0 && count)
		*count = 1;
	if (r >= 0)
		err[0] = 0;
	probes_free(t, n);
	return r;
}

/* After a spec's probe n failed: its probes 0..n-1 that it attached (not
 * attached before it) go again, as if never traced. */
static void discard_fresh(struct session *s, const int *ids, const bool *was_attached, int n)
{
	for (int k = 0; k < n; k++)
		if (!was_attached[k]) {
			engine_discard_span(s->eng, s->probes[ids[k]].kernel);
			s->probes[ids[k]].kernel = (struct engine_probe_ref){0};
		}
}

/* The number of probes of a point plan: a USDT glob's runs of one
 * location, else 1. */
static int point_groups(const struct probe_plan *r)
{
	int g = r->n > 0;
	for (int i = 1; i < r->n; i++)
		g += strcmp(r->t[i].location, r->t[i - 1].location) != 0;
	return g;
}

/* A USDT glob's probes (r's runs of one location), a point probe each,
 * all or none; ids in order from the first. Takes r's targets. */
static int attach_point_groups(struct session *s, const char *spec, struct probe_plan *r,
			       int *count, char *err, size_t errlen)
{
	int ngroups = point_groups(r), fresh = 0;
	for (int start = 0, end; start < r->n; start = end) {
		for (end = start + 1; end < r->n && !strcmp(r->t[end].location, r->t[start].location);)
			end++;
		fresh += profile_probe_find(s->prof, r->t[start].location) < 0;
	}
	if (s->npoints + fresh > ENGINE_MAX_POINTS)
		return errbuf_set(err, errlen,
				  "trace %s: names %d USDT probes, %d new, but a session traces at "
				  "most %d lines and USDT probes (%d so far)",
				  spec, ngroups, fresh, ENGINE_MAX_POINTS, s->npoints);
	int *ids = xcalloc((size_t)ngroups, sizeof(*ids));
	bool *was_attached = xcalloc((size_t)ngroups, sizeof(*was_attached));
	int g = 0, first = -1;
	for (int start = 0, end; start < r->n; start = end, g++) {
		for (end = start + 1; end < r->n && !strcmp(r->t[end].location, r->t[start].location);)
			end++;
		int old = profile_probe_find(s->prof, r->t[start].location);
		was_attached[g] = old >= 0 && trace_probe_attached(&s->probes[old]);
		/* This run of targets goes to attach_line_spec, which frees them. */
		struct probe_plan one = {.n = end - start, .line = true, .captures = r->captures};
		one.t = xmalloc((size_t)one.n * sizeof(*one.t));
		memcpy(one.t, r->t + start, (size_t)one.n * sizeof(*one.t));
		memset(r->t + start, 0, (size_t)one.n * sizeof(*one.t));
		char *location = xstrdup(one.t[0].location);
		one.location = location;
		if (r->captures.builds) {
			one.captures.builds = r->captures.builds + start;
			one.captures.n = one.n;
		}
		ids[g] = attach_line_spec(s, spec, &one, -1, NULL, err, errlen);
		free(location);
		if (ids[g] < 0) {
			discard_fresh(s, ids, was_attached, g);
			first = -1;
			goto out;
		}
		if (first < 0)
			first = ids[g];
	}
	if (count)
		*count = ngroups;
	err[0] = 0;
out:
	free(ids);
	free(was_attached);
	return first;
}

/* A copy of t whose fields are its own. */
static struct probe_target target_copy(const struct probe_target *t)
{
	struct probe_target c = *t;
	c.function = t->function ? xstrdup(t->function) : NULL;
	c.binary = t->binary ? xstrdup(t->binary) : NULL;
	c.location = t->location ? xstrdup(t->location) : NULL;
	c.jump.text = t->jump.text ? xstrdup(t->jump.text) : NULL;
	c.jump.source = t->jump.source ? xstrdup(t->jump.source) : NULL;
	c.jump.taken_file = t->jump.taken_file ? xstrdup(t->jump.taken_file) : NULL;
	c.jump.fall_file = t->jump.fall_file ? xstrdup(t->jump.fall_file) : NULL;
	c.moved = c.ifunc_impl = NULL;
	c.usdt_args = NULL;
	c.py = NULL;
	return c;
}

char *trace_branch_name(const char *at, unsigned jump, unsigned jumps, bool taken)
{
	char k[16] = "";
	if (jumps > 1)
		snprintf(k, sizeof(k), "#%u", jump);
	return xasprintf("branch %s%s %s", at, k, taken ? "taken" : "not-taken");
}

/* A branch probe (spec branch LOCATION, r its jumps): for each of its
 * line's jumps (by their index, every instance's copy of one together),
 * two point probes, one counting the jump taken, one not taken, all or
 * none; returns the first's id. Takes r's targets. */
static int attach_branch_spec(struct session *s, const char *spec, struct probe_plan *r,
			      int *count, char *err, size_t errlen)
{
	unsigned jumps = 0;
	for (int i = 0; i < r->n; i++)
		if (r->t[i].jump.count > jumps)
			jumps = r->t[i].jump.count;
	const char *at = r->t[0].location;
	int fresh = 0, ngroups = 0;
	for (unsigned k = 1; k <= jumps; k++)
		for (int i = 0; i < r->n; i++)
			if (r->t[i].jump.index == k) {
				for (int taken = 1; taken >= 0; taken--) {
					char *name = trace_branch_name(at, k, jumps, taken);
					fresh += profile_probe_find(s->prof, name) < 0;
					free(name);
				}
				ngroups += 2;
				break;
			}
	if (s->npoints + fresh > ENGINE_MAX_POINTS)
		return errbuf_set(err, errlen,
				  "trace %s: its %d jump outcome%s (%d new) would pass the %d lines, "
				  "branch outcomes and USDT probes a session traces (%d so far)",
				  spec, ngroups, ngroups == 1 ? "" : "s", fresh, ENGINE_MAX_POINTS,
				  s->npoints);
	int *ids = xcalloc((size_t)ngroups + 1, sizeof(*ids));
	bool *was_attached = xcalloc((size_t)ngroups + 1, sizeof(*was_attached));
	int g = 0, first = -1;
	for (unsigned k = 1; k <= jumps; k++) {
		int n = 0;
		for (int i = 0; i < r->n; i++)
			n += r->t[i].jump.index == k;
		if (!n)
			continue;
		for (int taken = 1; taken >= 0; taken--, g++) {
			struct probe_plan one = {.n = n, .branch = true};
			one.t = xcalloc((size_t)n, sizeof(*one.t));
			int m = 0;
			for (int i = 0; i < r->n; i++)
				if (r->t[i].jump.index == k)
					one.t[m++] = target_copy(&r->t[i]);
			char *name = trace_branch_name(at, k, jumps, taken);
			one.location = name;
			int old = profile_probe_find(s->prof, name);
			was_attached[g] = old >= 0 && trace_probe_attached(&s->probes[old]);
			struct probe_branch pb = {.at = (char *)at,
						  .line = r->t[0].line,
						  .jump = k,
						  .jumps = jumps,
						  .taken = taken,
						  .insn = one.t[0].jump.text,
						  .source = one.t[0].jump.source,
						  .copies = (unsigned)n};
			pb.to_line = taken ? one.t[0].jump.taken_line : one.t[0].jump.fall_line;
			for (int c = 1; c < n; c++)
				pb.mixed |= one.t[c].jump.cond != one.t[0].jump.cond;
			const char *to_file = taken ? one.t[0].jump.taken_file : one.t[0].jump.fall_file;
			/* attach_line_spec frees the targets: the branch keeps copies */
			char *insn = xstrdup(pb.insn ? pb.insn : ""), *source = pb.source ? xstrdup(pb.source) : NULL;
			char *file = to_file ? xstrdup(to_file) : NULL;
			pb.insn = insn;
			pb.source = source;
			pb.to_file = file;
			ids[g] = attach_line_spec(s, spec, &one, taken, NULL, err, errlen);
			if (ids[g] >= 0)
				profile_probe_set_branch(s->prof, (uint32_t)ids[g], &pb);
			free(insn);
			free(source);
			free(file);
			free(name);
			if (ids[g] < 0) {
				discard_fresh(s, ids, was_attached, g);
				first = -1;
				goto out;
			}
			if (first < 0)
				first = ids[g];
		}
	}
	if (count)
		*count = r->n;
	err[0] = 0;
out:
	free(ids);
	free(was_attached);
	return first;
}

int trace_spec_attach(struct session *s, const char *spec, struct probe_plan *r,
			   int *count, char *err, size_t errlen)
{
	if (r->pair) {
		int id = attach_pair_spec(s, spec, r, count, err, errlen);
		r->t = NULL; /* taken */
		probe_plan_free(r);
		return id;
	}
	if (r->line && point_groups(r) > 1) {
		int id = attach_point_groups(s, spec, r, count, err, errlen);
		probe_plan_free(r);
		return id;
	}
	if (r->branch) {
		int id = attach_branch_spec(s, spec, r, count, err, errlen);
		probe_plan_free(r);
		return id;
	}
	if (r->line) {
		int id = attach_line_spec(s, spec, r, -1, count, err, errlen);
		r->t = NULL; /* taken */
		probe_plan_free(r);
		return id;
	}
	char why[512];
	if (r->n > 0 && r->t[0].py && pyperf_check(s, why, sizeof(why))) {
		errbuf_set(err, errlen, "trace %s: %s", spec, why);
		probe_plan_free(r);
		return -1;
	}
	for (size_t i = 0; r->n > 0 && r->t[0].py && i < s->prof->nprobes && i < SESSION_MAX_PROBES;
	     i++) {
		const char *other = s->prof->probes[i].name;
		if (trace_probe_attached(&s->probes[i]) && strcmp(other, r->t[0].function) &&
		    probes_py_may_share(other, r->t[0].function)) {
			errbuf_set(err, errlen,
				   "trace %s: %s, traced already, may name the same Python function "
				   "(one probe a function): untrace it first",
				   spec, other);
			probe_plan_free(r);
			return -1;
		}
	}
	struct probe_target *t = r->t;
	int n = r->n;
	struct capture_plan plan = r->captures;
	char note[768];
	snprintf(note, sizeof(note), "%s", r->note);
	free(r->location);
	memset(r, 0, sizeof(*r));
	/* Each function's probe id, and which of them need attaching: counted
	 * before anything is attached, so a pattern naming more functions than
	 * the kernel has room for is refused at once. */
	int *ids = xmalloc((size_t)n * sizeof(*ids));
	bool *fresh = xcalloc((size_t)n, sizeof(*fresh));
	struct engine_probe_ref *refs = xcalloc((size_t)n + 1, sizeof(*refs));
	int need = 0, nnew = 0;
	for (int i = 0; i < n; i++) {
		ids[i] = probe_at(s, &t[i]);
		if (ids[i] < 0)
			ids[i] = (int)s->prof->nprobes + nnew++;
		fresh[i] = ids[i] >= (int)s->prof->nprobes || !trace_probe_attached(&s->probes[ids[i]]);
		need += fresh[i];
	}
	/* Each attached probe (function or line) has a kernel slot. */
	int traced = 0;
	for (size_t i = 0; i < s->prof->nprobes && i < SESSION_MAX_PROBES; i++)
		traced += trace_probe_attached(&s->probes[i]);
	int avail = ENGINE_USER_PROBES - traced;
	int first = -1;
	if (need > avail) {
		errbuf_set(err, errlen,
			   "trace %s: names %d function%s to add, more than sonde can trace at once "
			   "(%d at most, %d traced now): narrow the pattern or untrace some",
			   spec, need, need == 1 ? "" : "s", ENGINE_USER_PROBES,
			   ENGINE_USER_PROBES - avail);
		goto out;
	}
	if (s->prof->nprobes + (size_t)nnew > SESSION_MAX_PROBES) {
		errbuf_set(err, errlen,
			   "trace %s: names %d new function%s, but a session traces at most %d "
			   "different functions (%zu so far)",
			   spec, nnew, nnew == 1 ? "" : "s", SESSION_MAX_PROBES, s->prof->nprobes);
		goto out;
	}
	struct spec_functions fns = {t, n, ids, fresh, NULL, NULL, refs};
	if (refuse_other_predicate(s, spec, &plan, &fns, err, errlen))
		goto out;
	/* Each new probe's program goes in with it. */
	struct engine_fetch *fetch = xcalloc((size_t)n + 1, sizeof(*fetch));
	for (int i = 0; i < n; i++)
		if (fresh[i])
			capture_program(&plan, i, s->prof, (uint32_t)ids[i], &fetch[i]);
	fns.fetch = fetch;
	/* And the calls it sends from its first: a probe traced again keeps
	 * its keep-over threshold and its p99 so far. */
	struct engine_span_policy *policies = xcalloc((size_t)n + 1, sizeof(*policies));
	for (int i = 0; i < n; i++)
		policies[i] = span_policy_for(s, (uint32_t)ids[i]);
	fns.policies = policies;
	int rc = attach_functions(s, spec, &fns, err, errlen);
	free(fetch);
	if (rc) {
		free(policies);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if (ids[i] >= (int)s->prof->nprobes) { /* new: in id order */
			char *name = probe_display_name(s->prof, &t[i]);
			profile_probe_add(s->prof, name, t[i].binary, t[i].offset);
			free(name);
			s->probes[ids[i]].dev = t[i].dev;
			s->probes[ids[i]].ino = t[i].ino;
			struct point_sites *ps = &s->probes[ids[i]].sites;
			ps->offsets = xmalloc(sizeof(*ps->offsets));
			ps->offsets[0] = t[i].offset;
			ps->n = 1;
		}
		if (fresh[i]) { /* its captures named (its policy went in with it) */
			s->probes[ids[i]].kernel = refs[i];
			note_spec(s, (uint32_t)ids[i], spec);
			capture_name(&plan, i, s->prof, (uint32_t)ids[i]);
			s->prof->probes[ids[i]].all_calls = s->o->all_calls;
		}
	}
	free(policies);
	note_placements(s, spec, t, n);
	first = ids[0];
	if (count)
		*count = n;
	errbuf_set(err, errlen, "%s", note); /* what the spec named but left out */
out:
	free(ids);
	free(fresh);
	free(refs);
	capture_plan_free(&plan);
	probes_free(t, n);
	return first;
}

int trace_attach(struct session *s, const char *spec, int *count, char *err,
			     size_t errlen)
{
	struct probe_plan r;
	if (trace_spec_resolve(s, spec, &r, err, errlen))
		return -1;
	return trace_spec_attach(s, spec, &r, count, err, errlen);
}

int session_trace(struct session *s, const char *spec, int *count, char *err, size_t errlen)
{
	if (session_refuse_replay(s, err, errlen))
		return -1;
	return trace_attach(s, spec, count, err, errlen);
}

/* Probes a name selects: a probe's display name, or its function name,
 * matched exactly or as a glob. */
static bool probe_selected(const struct probe_info *pi, const char *pattern)
{
	const char *func = pi->name;
	int colon = probes_split(pi->name);
	if (colon >= 0)
		func = pi->name + colon + 1;
	return fnmatch(pattern, pi->name, 0) == 0 || fnmatch(pattern, func, 0) == 0;
}

/* A probe untrace PATTERN removes: one it selects, or one the spec
 * PATTERN placed (a branch probe's outcomes). */
static bool untrace_selects(const struct session *s, size_t i, const char *pattern)
{
	const char *name = s->prof->probes[i].name;
	size_t n = strlen(pattern);
	/* "branch FILE:LINE": its outcome probes, "branch FILE:LINE[#K] taken" */
	bool outcome = s->prof->probes[i].branch && strncmp(pattern, "branch ", 7) == 0 &&
		       strncmp(name, pattern, n) == 0 && (name[n] == ' ' || name[n] == '#');
	return outcome || probe_selected(&s->prof->probes[i], pattern) ||
	       (s->probes[i].spec && strcmp(s->probes[i].spec, pattern) == 0);
}

int session_untrace(struct session *s, const char *pattern, char *err, size_t errlen)
{
	if (session_refuse_replay(s, err, errlen))
		return -1;
	int n = 0;
	for (size_t i = 0; i < s->prof->nprobes; i++) {
		if (!trace_probe_attached(&s->probes[i]) || !untrace_selects(s, i, pattern))
			continue;
		if ((int)i == s->sample_in_probe || (int)i == s->sample_slow_probe ||
		    (int)i == s->sample_when_probe) {
			errbuf_set(err, errlen,
				   "%s drives the in-kernel sampling filter: run sample-in off, "
				   "sample-slow off or sample-when off first",
				   s->prof->probes[i].name);
			return -1;
		}
	}
	for (size_t i = 0; i < s->prof->nprobes; i++) {
		if (!trace_probe_attached(&s->probes[i]) || !untrace_selects(s, i, pattern))
			continue;
		/* Keep what it counted: detaching clears the kernel's copy. */
		trace_refresh_probe(s, (uint32_t)i);
		struct probe_counts *c = &s->probes[i].counted_before;
		memcpy(c->hist, s->prof->probes[i].hist, sizeof(c->hist));
		c->entered = s->prof->probes[i].entered;
		c->raw_ns = s->prof->probes[i].raw_ns;
		c->own_ns = s->prof->probes[i].own_ns;
		keep_point_calls(s, (uint32_t)i);
		engine_detach_span(s->eng, s->probes[i].kernel);
		s->probes[i].kernel = (struct engine_probe_ref){0};
		n++;
	}
	if (n == 0) {
		char list[256] = "";
		size_t off = 0;
		for (size_t i = 0; i < s->prof->nprobes && off < sizeof(list) - 1; i++)
			if (trace_probe_attached(&s->probes[i]))
				off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
							off ? ", " : "", s->prof->probes[i].name);
		errbuf_set(err, errlen, "no traced function matches '%s' (traced: %s)", pattern,
			   off ? list : "none");
		return -1;
	}
	return n;
}

bool session_probe_attached(const struct session *s, uint32_t probe)
{
	return probe < SESSION_MAX_PROBES && trace_probe_attached(&s->probes[probe]);
}

const char *session_probe_spec(const struct session *s, uint32_t probe)
{
	return probe < SESSION_MAX_PROBES && s->probes ? s->probes[probe].spec : NULL;
}

/* The probe record names the spec that placed it. */
static void note_spec(struct session *s, uint32_t probe, const char *spec)
{
	free(s->probes[probe].spec);
	s->probes[probe].spec = xstrdup(spec);
}

/* The profile's figures of a probe: what earlier attachments counted plus
 * the kernel's counts of the current one. */
void trace_refresh_probe(struct session *s, uint32_t probe)
{
	if (probe >= s->prof->nprobes)
		return;
	struct probe_info *pi = &s->prof->probes[probe];
	const struct probe_counts *c = &s->probes[probe].counted_before;
	uint64_t live[LATENCY_LOGLIN_BUCKETS] = {0};
	struct engine_probe_stats st = {0};
	if (trace_probe_attached(&s->probes[probe]) &&
	    (engine_read_hist(s->eng, s->probes[probe].kernel, live) ||
	     engine_read_probe_stats(s->eng, s->probes[probe].kernel, &st)))
		return; /* keep the last figures read */
	for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++)
		pi->hist[b] = c->hist[b] + live[b];
	pi->entered = c->entered + st.entered;
	pi->raw_ns = c->raw_ns + st.raw_ns;
	pi->own_ns = c->own_ns + st.own_ns;
	if (pi->point >= 0)
		refresh_point_calls(s, probe);
}

/* The calls of each function probe that hit line probe `point`: what
 * earlier attachments of the pair counted plus the kernel's count. */
static void refresh_point_calls(struct session *s, uint32_t point)
{
	for (size_t f = 0; f < s->prof->nprobes; f++) {
		if (s->prof->probes[f].point >= 0)
			continue;
		uint64_t key = (uint64_t)point << 32 | f, calls = 0, hit = 0;
		struct engine_point_calls live = {0};
		hashmap_get(&s->point_calls_before, key, &calls);
		hashmap_get(&s->point_hit_before, key, &hit);
		if (trace_probe_attached(&s->probes[point]) && trace_probe_attached(&s->probes[f]) &&
		    engine_read_point_calls(s->eng, s->probes[f].kernel, s->probes[point].kernel, &live))
			continue; /* keep the last figure read */
		if (calls + live.calls)
			profile_point_calls_set(s->prof, point, (uint32_t)f, calls + live.calls,
						hit + live.hit);
	}
}

/* Before a probe is detached (the kernel forgets its pairs): keeps what
 * its pairs with line probes counted. */
static void keep_point_calls(struct session *s, uint32_t probe)
{
	for (size_t i = 0; i < s->prof->nprobes; i++)
		if (s->prof->probes[i].point >= 0)
			refresh_point_calls(s, (uint32_t)i);
	for (size_t i = 0; i < s->prof->npoint_calls; i++) {
		const struct point_calls *pc = &s->prof->point_calls[i];
		if (pc->point_probe == probe || pc->probe == probe) {
			uint64_t key = (uint64_t)pc->point_probe << 32 | pc->probe;
			hashmap_set(&s->point_calls_before, key, pc->calls);
			hashmap_set(&s->point_hit_before, key, pc->hit);
		}
	}
}

/* Calls that need no record stay in the kernel (counted in its histogram):
 * only those a sample landed in and those over the keep threshold cross.
 * The automatic threshold is the p99 so far, once 1000 calls gave one. */
#define KEEP_AUTO_MIN_CALLS 1000
#define KEEP_AUTO_PERCENTILE 99.0

/* The policy probe should have now (one not in the profile yet: a new
 * probe, with no calls so far). */
static struct engine_span_policy span_policy_for(const struct session *s, uint32_t probe)
{
	struct engine_span_policy pol = {.emit_all = s->o->all_calls};
	if (probe < SESSION_MAX_PROBES && s->probes[probe].policy.keep_over_set) {
		pol.emit_min_ns = s->probes[probe].policy.keep_over_ns;
	} else if (probe < s->prof->nprobes) {
		size_t n;
		uint64_t *d = latency_loglin_durations(s->prof->probes[probe].hist, 1u << 16, &n, NULL);
		pol.emit_min_ns = n >= KEEP_AUTO_MIN_CALLS
					  ? latency_percentile(d, n, KEEP_AUTO_PERCENTILE)
					  : UINT64_MAX;
		free(d);
	} else {
		pol.emit_min_ns = UINT64_MAX;
	}
	return pol;
}

/* Gives an attached probe the policy it should have now. Returns false
 * while it waits for its p99 (no --all-calls, no view's threshold). */
static bool update_span_policy(struct session *s, uint32_t probe)
{
	if (probe >= s->prof->nprobes || !trace_probe_attached(&s->probes[probe]))
		return true;
	struct engine_span_policy pol = span_policy_for(s, probe);
	engine_set_span_policy(s->eng, s->probes[probe].kernel, &pol);
	return pol.emit_all || s->probes[probe].policy.keep_over_set || pol.emit_min_ns != UINT64_MAX;
}

int session_keep_calls_over(struct session *s, uint32_t probe, uint64_t ns)
{
	if (probe >= SESSION_MAX_PROBES)
		return -1;
	s->probes[probe].policy.keep_over_ns = ns;
	s->probes[probe].policy.keep_over_set = true;
	update_span_policy(s, probe);
	return 0;
}

bool session_refresh_calls(struct session *s)
{
	bool settled = true;
	for (size_t i = 0; i < s->prof->nprobes; i++) {
		trace_refresh_probe(s, (uint32_t)i);
		settled &= update_span_policy(s, (uint32_t)i);
	}
	return settled;
}

int session_probe_hist(struct session *s, uint32_t probe, uint64_t *buckets)
{
	if (probe >= s->prof->nprobes)
		return -1;
	trace_refresh_probe(s, probe);
	memcpy(buckets, s->prof->probes[probe].hist, sizeof(s->prof->probes[probe].hist));
	return 0;
}

uint64_t session_probe_entered(struct session *s, uint32_t probe)
{
	if (probe >= s->prof->nprobes)
		return 0;
	trace_refresh_probe(s, probe);
	return s->prof->probes[probe].entered;
}

int session_probe_hists(struct session *s, uint64_t (*out)[LATENCY_LOGLIN_BUCKETS])
{
	size_t n = s->prof->nprobes;
	memset(out, 0, n * sizeof(*out)); /* a replay: the recording's counts */
	for (size_t i = 0; i < n && s->eng; i++)
		if (engine_read_hist(s->eng, s->probes[i].kernel, out[i]))
			return -1;
	/* Detached probes: the kernel's slots are cleared (their refs read
	 * zeros); what they counted before is kept. */
	for (size_t i = 0; i < n; i++)
		for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++)
			out[i][b] += s->probes[i].counted_before.hist[b];
	return 0;
}

int session_trace_probes(const struct session *s, int i, int *count)
{
	if (i < 0 || i >= s->o->ntraces)
		return -1;
	*count = s->trace_probe_count[i];
	return s->trace_first_probe[i];
}
