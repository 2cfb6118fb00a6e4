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

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* Whether note p is one the spec's provider and name select. */
static bool selected(const struct usdt_probe *p, const char *provider, const char *name)
{
	return (is_glob(provider) ? fnmatch(provider, p->provider, 0) == 0
				  : !strcmp(provider, p->provider)) &&
	       (is_glob(name) ? fnmatch(name, p->name, 0) == 0 : !strcmp(name, p->name));
}

/* Whether notes a and b are sites of one probe. */
static bool same_probe(const struct usdt_probe *a, const struct usdt_probe *b)
{
	return !strcmp(a->provider, b->provider) && !strcmp(a->name, b->name);
}

int probeusdt_resolve(const char *spec, const struct probe_scope *scope, struct probe_target **out,
		      char *err, size_t errlen)
{
	*out = NULL;
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
	char *bin_part = c1 ? strndup(rest, (size_t)(c1 - rest)) : NULL;
	char *provider_s = strndup(provider, (size_t)(c2 - provider));
	const char *name = c2 + 1;
	bool glob = is_glob(provider_s) || is_glob(name);
	char *path = NULL;
	if (bin_part && *bin_part)
		path = find_binary(bin_part, scope, err, errlen);
	else if (scope->executable)
		path = xstrdup(scope->executable);
	else
		errbuf_set(err, errlen, "probe '%s' names no binary and there is no target executable",
			   spec);
	if (!path) {
		free(bin_part);
		free(provider_s);
		return -1;
	}
	struct usdt_probe *p;
	int n = usdt_read(path, &p, err, errlen);
	if (n < 0) {
		free(bin_part);
		free(provider_s);
		free(path);
		return -1;
	}
	struct stat st;
	if (stat(path, &st) != 0)
		memset(&st, 0, sizeof(st));
	struct probe_target *t = xcalloc((size_t)n + 1, sizeof(*t));
	int k = 0;
	/* A glob's probes each go by their own spec, their sites together
	 * (the notes' order of their first sites): a point probe each. */
	bool *taken = xcalloc((size_t)n + 1, sizeof(*taken));
	for (int j = 0; j < n; j++) {
		if (taken[j] || !selected(&p[j], provider_s, name))
			continue;
		for (int i = j; i < n; i++) {
			if (taken[i] || !same_probe(&p[i], &p[j]))
				continue;
			taken[i] = true;
			struct probe_target *x = &t[k++];
			x->function = xasprintf("%s:%s", p[i].provider, p[i].name);
			x->binary = xstrdup(path);
			x->offset = p[i].file_offset;
			x->location = !glob ? xstrdup(spec)
				      : bin_part ? xasprintf("usdt:%s:%s", bin_part, x->function)
						 : xasprintf("usdt:%s", x->function);
			x->dev = (uint64_t)st.st_dev;
			x->ino = (uint64_t)st.st_ino;
			x->usdt = true;
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
	if (k == 0) {
		char names[512];
		names_of(p, n, names, sizeof(names));
		if (n == 0)
			errbuf_set(err, errlen, "%s has no USDT probes (no .note.stapsdt)",
				   display_path(path));
		else
			errbuf_set(err, errlen, "%s has no USDT probe %s%s:%s (it has %s)",
				   display_path(path), glob ? "matching " : "", provider_s, name,
				   names);
		free(t);
		t = NULL;
		k = -1;
	}
	usdt_free(p, n);
	free(bin_part);
	free(provider_s);
	free(path);
	*out = t;
	return k;
}
