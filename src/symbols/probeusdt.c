#define _GNU_SOURCE
#include "probeusdt.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "errbuf.h"
#include "insn.h"
#include "probebinary.h"
#include "usdt.h"
#include "util.h"

bool probeusdt_is(const char *spec)
{
	return strncmp(spec, "usdt:", 5) == 0;
}

/* The names a binary's probes go by, "p:a, p:b, ...", into buf. */
static void names_of(const struct usdt_probe *p, int n, char *buf, size_t size)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < n && off + 1 < size; i++) {
		bool seen = false;
		for (int j = 0; j < i && !seen; j++)
			seen = !strcmp(p[i].provider, p[j].provider) && !strcmp(p[i].name, p[j].name);
		if (!seen)
			off += (size_t)snprintf(buf + off, size - off, "%s%s:%s", off ? ", " : "",
						p[i].provider, p[i].name);
	}
}

/* Whether note p is one the spec's provider and name select. */
static bool selected(const struct usdt_probe *p, const char *provider, const char *name)
{
	return (probes_is_glob(provider) ? fnmatch(provider, p->provider, 0) == 0
				  : !strcmp(provider, p->provider)) &&
	       (probes_is_glob(name) ? fnmatch(name, p->name, 0) == 0 : !strcmp(name, p->name));
}

/* Whether notes a and b are sites of one probe. */
static bool same_probe(const struct usdt_probe *a, const struct usdt_probe *b)
{
	return !strcmp(a->provider, b->provider) && !strcmp(a->name, b->name);
}

/* What a spec asks for: its binary part as written (NULL: none), its
 * provider, and its probe's name (or the entry's of a pair), the return's
 * name for a pair (NULL: not one). */
struct usdt_spec {
	char *bin_part, *provider, *name, *ret;
};

static void spec_free(struct usdt_spec *u)
{
	free(u->bin_part);
	free(u->provider);
	free(u->name);
	free(u->ret);
}

static int spec_parse(const char *spec, struct usdt_spec *u, char *err, size_t errlen)
{
	memset(u, 0, sizeof(*u));
	/* usdt:[BINARY:]PROVIDER:NAME: NAME and PROVIDER are the last two parts. */
	const char *rest = spec + 5;
	const char *c2 = strrchr(rest, ':');
	const char *c1 = c2 ? memrchr(rest, ':', (size_t)(c2 - rest)) : NULL;
	const char *provider = c1 ? c1 + 1 : rest;
	if (!c2 || c2 == provider || !c2[1])
		return errbuf_set(err, errlen,
				  "bad probe '%s': expected usdt:BINARY:PROVIDER:NAME (sonde probe -e "
				  "BINARY --usdt lists them)",
				  spec);
	u->bin_part = c1 ? strndup(rest, (size_t)(c1 - rest)) : NULL;
	u->provider = strndup(provider, (size_t)(c2 - provider));
	const char *comma = strchr(c2 + 1, ',');
	u->name = comma ? strndup(c2 + 1, (size_t)(comma - c2 - 1)) : xstrdup(c2 + 1);
	u->ret = comma ? xstrdup(comma + 1) : NULL;
	if (u->ret && (!*u->name || !*u->ret || strchr(u->ret, ',') || probes_is_glob(u->provider) ||
		       probes_is_glob(u->name) || probes_is_glob(u->ret))) {
		errbuf_set(err, errlen,
			   "bad probe '%s': a span pair is usdt:BINARY:PROVIDER:ENTRY,RETURN, two "
			   "probe names without globs",
			   spec);
		spec_free(u);
		return -1;
	}
	return 0;
}

/* Appends to t (at *k) the sites of the notes the provider and name
 * select, each probe's sites together (the notes' order of their first
 * sites); a glob's probes each go by their own spec. */
static void collect(const char *spec, const struct usdt_spec *u, const char *name, bool is_return,
		    const char *path, const struct stat *st, const struct usdt_probe *p, int n,
		    struct probe_target *t, int *k)
{
	bool glob = probes_is_glob(u->provider) || probes_is_glob(name);
	bool *taken = xcalloc((size_t)n + 1, sizeof(*taken));
	for (int j = 0; j < n; j++) {
		if (taken[j] || !selected(&p[j], u->provider, name))
			continue;
		for (int i = j; i < n; i++) {
			if (taken[i] || !same_probe(&p[i], &p[j]))
				continue;
			taken[i] = true;
			struct probe_target *x = &t[(*k)++];
			x->function = xasprintf("%s:%s", p[i].provider, p[i].name);
			x->binary = xstrdup(path);
			x->offset = p[i].file_offset;
			x->location = !glob	   ? xstrdup(spec)
				      : u->bin_part ? xasprintf("usdt:%s:%s", u->bin_part, x->function)
						    : xasprintf("usdt:%s", x->function);
			x->dev = (uint64_t)st->st_dev;
			x->ino = (uint64_t)st->st_ino;
			x->usdt = true;
			x->usdt_pair = u->ret != NULL;
			x->usdt_return = is_return;
			x->ref_ctr_offset = p[i].semaphore_vaddr ? p[i].semaphore_offset : 0;
			x->usdt_vaddr = p[i].vaddr;
			x->usdt_nargs = p[i].nargs;
			if (p[i].nargs > 0) {
				x->usdt_args = xcalloc((size_t)p[i].nargs, sizeof(*x->usdt_args));
				memcpy(x->usdt_args, p[i].args,
				       (size_t)p[i].nargs * sizeof(*x->usdt_args));
			}
			/* The compiler's nop: how the kernel takes it, for its cost. */
			x->trap = insn_trap_at(path, x->offset);
			x->trap_known = true;
		}
	}
	free(taken);
}

/* The line for a name no note has (or a glob none matches). */
static void refuse_name(const char *path, const struct usdt_probe *p, int n, const char *provider,
			const char *name, char *err, size_t errlen)
{
	char names[512];
	names_of(p, n, names, sizeof(names));
	if (n == 0)
		errbuf_set(err, errlen, "%s has no USDT probes (no .note.stapsdt)", display_path(path));
	else
		errbuf_set(err, errlen, "%s has no USDT probe %s%s:%s (it has %s)", display_path(path),
			   probes_is_glob(provider) || probes_is_glob(name) ? "matching " : "", provider, name,
			   names);
}

int probeusdt_resolve(const char *spec, const struct probe_scope *scope, struct probe_target **out,
		      char *err, size_t errlen)
{
	*out = NULL;
	struct usdt_spec u;
	if (spec_parse(spec, &u, err, errlen))
		return -1;
	char *path = NULL;
	if (u.bin_part && *u.bin_part)
		path = find_binary(u.bin_part, scope, err, errlen);
	else if (scope->executable)
		path = xstrdup(scope->executable);
	else
		errbuf_set(err, errlen, "probe '%s' names no binary and there is no target executable",
			   spec);
	struct usdt_probe *p = NULL;
	int n = path ? usdt_read(path, &p, err, errlen) : -1;
	if (n < 0) {
		spec_free(&u);
		free(path);
		return -1;
	}
	struct stat st;
	if (stat(path, &st) != 0)
		memset(&st, 0, sizeof(st));
	struct probe_target *t = xcalloc((size_t)n + 1, sizeof(*t));
	int k = 0;
	collect(spec, &u, u.name, false, path, &st, p, n, t, &k);
	int entries = k;
	if (entries == 0) {
		refuse_name(path, p, n, u.provider, u.name, err, errlen);
	} else if (u.ret) {
		collect(spec, &u, u.ret, true, path, &st, p, n, t, &k);
		if (k == entries)
			refuse_name(path, p, n, u.provider, u.ret, err, errlen);
	}
	if (entries == 0 || (u.ret && k == entries)) {
		probes_free(t, k);
		t = NULL;
		k = -1;
	}
	usdt_free(p, n);
	spec_free(&u);
	free(path);
	*out = t;
	return k;
}
