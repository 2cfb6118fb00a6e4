/* flamedelta: a client that applies the messages to its own copy of the
 * tree ends up with exactly the tree (every node's name, kind, parent,
 * total and self) after each of a series of changes: nodes growing, new
 * stacks, stacks going away and coming back; unchanged trees send nothing;
 * a reset sends everything; the id table is started over (a full message)
 * when dead ids pile up, so a client's memory follows the tree's size. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "flamedelta.h"
#include "flamesvg.h"
#include "frames.h"
#include "json.h"
#include "util.h"

#define MAXN 4096

/* The client's copy: nodes by id. */
struct cnode {
	bool live;
	long parent;
	char name[64];
	char kind[16];
	double total, self;
};
static struct cnode cl[MAXN];
static bool last_full;

static double num(const struct json_value *v)
{
	cr_assert_eq(v->type, JSON_NUMBER);
	return v->number;
}

static size_t apply(const char *msg)
{
	char err[256];
	struct json_value *m = json_parse(msg, strlen(msg), err, sizeof(err));
	cr_assert_not_null(m, "%s: %s", err, msg);
	last_full = json_get(m, "full")->type == JSON_BOOL && json_get(m, "full")->boolean;
	if (last_full)
		memset(cl, 0, sizeof(cl));
	const struct json_value *rm = json_get(m, "removed"), *add = json_get(m, "added"),
				*ch = json_get(m, "changed");
	for (size_t i = 0; i < rm->n; i++) {
		size_t id = (size_t)num(&rm->items[i]);
		cr_assert(cl[id].live, "removed %zu, which the client does not have", id);
		cl[id].live = false;
	}
	for (size_t i = 0; i < add->n; i++) {
		const struct json_value *a = &add->items[i];
		size_t id = (size_t)num(&a->items[0]);
		cr_assert_lt(id, MAXN);
		cr_assert(!cl[id].live, "added %zu twice", id);
		long parent = (long)num(&a->items[1]);
		cr_assert(parent == -1 ? id == 0 : cl[parent].live, "parent %ld of %zu unknown",
			  parent, id);
		cl[id] = (struct cnode){.live = true, .parent = parent};
		snprintf(cl[id].name, sizeof(cl[id].name), "%s", a->items[2].string);
		snprintf(cl[id].kind, sizeof(cl[id].kind), "%s", a->items[3].string);
		cl[id].total = num(&a->items[4]);
		cl[id].self = num(&a->items[5]);
		/* the colour is the SVG renderer's for this name and kind */
		static const enum frame_kind kinds[] = {FRAME_USER, FRAME_KERNEL, FRAME_INLINED,
							FRAME_JIT, FRAME_UNKNOWN, FRAME_PROCESS};
		enum frame_kind k = FRAME_USER;
		for (size_t j = 0; j < sizeof(kinds) / sizeof(*kinds); j++)
			if (strcmp(frames_kind_name(kinds[j]), cl[id].kind) == 0)
				k = kinds[j];
		unsigned char rgb[3];
		flamesvg_color(id == 0 ? NULL : cl[id].name, k, rgb);
		char want[8];
		snprintf(want, sizeof(want), "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
		cr_assert_eq(a->n, 7, "added row of %zu items", a->n);
		cr_assert_str_eq(a->items[6].string, want, "colour of %s (%s)", cl[id].name,
				 cl[id].kind);
	}
	for (size_t i = 0; i < ch->n; i++) {
		const struct json_value *c = &ch->items[i];
		size_t id = (size_t)num(&c->items[0]);
		cr_assert(cl[id].live, "changed %zu, which the client does not have", id);
		cl[id].total = num(&c->items[1]);
		cl[id].self = num(&c->items[2]);
	}
	size_t n = rm->n + add->n + ch->n;
	json_free(m);
	return n;
}

/* The client's tree, as "path total self kind" lines sorted, and the
 * server's the same way. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *client_path(size_t id)
{
	if (cl[id].parent < 0)
		return xstrdup(cl[id].name);
	char *up = client_path((size_t)cl[id].parent);
	char *p = xasprintf("%s;%s", up, cl[id].name);
	free(up);
	return p;
}

static char *client_dump(void)
{
	char *lines[MAXN];
	size_t n = 0;
	for (size_t id = 0; id < MAXN; id++) {
		if (!cl[id].live)
			continue;
		char *p = client_path(id);
		lines[n++] = xasprintf("%s %g %g %s", p, cl[id].total, cl[id].self, cl[id].kind);
		free(p);
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	char *out = xstrdup("");
	for (size_t i = 0; i < n; i++) {
		char *o = xasprintf("%s%s\n", out, lines[i]);
		free(out);
		free(lines[i]);
		out = o;
	}
	return out;
}

struct dump {
	const struct flame_tree *t;
	char *path[256];
	char *lines[MAXN];
	size_t n;
};

static int dump_node(const struct flame_node *n, int depth, void *arg)
{
	struct dump *d = arg;
	char label[128];
	if (depth)
		flame_frame_label(d->t, n->frame, false, label, sizeof(label));
	else
		snprintf(label, sizeof(label), "all");
	free(d->path[depth]);
	d->path[depth] = depth ? xasprintf("%s;%s", d->path[depth - 1], label) : xstrdup(label);
	const struct frame *f = depth ? frames_get(d->t->frames, n->frame) : NULL;
	d->lines[d->n++] = xasprintf("%s %g %g %s", d->path[depth], (double)n->total,
				     (double)n->self,
				     frames_kind_name(f ? f->kind : FRAME_USER));
	return 0;
}

static char *server_dump(const struct flame_tree *t)
{
	struct dump d = {.t = t};
	flame_walk(t, dump_node, &d);
	qsort(d.lines, d.n, sizeof(*d.lines), cmp_str);
	char *out = xstrdup("");
	for (size_t i = 0; i < d.n; i++) {
		char *o = xasprintf("%s%s\n", out, d.lines[i]);
		free(out);
		free(d.lines[i]);
		out = o;
	}
	for (size_t i = 0; i < 256; i++)
		free(d.path[i]);
	return out;
}

static size_t send_and_check(struct flamedelta *fd, const struct flame_tree *t)
{
	char *msg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&msg, &len);
	size_t changes = flamedelta_write(fd, t, false, f);
	fclose(f);
	cr_assert_eq(apply(msg) + (last_full ? 1 : 0), changes, "%s", msg);
	char *want = server_dump(t), *got = client_dump();
	cr_assert_str_eq(got, want, "client's tree differs after %s", msg);
	free(want);
	free(got);
	free(msg);
	return changes;
}

static struct frame_table *ft;
static uint32_t fr[8];

static struct flame_tree *tree(const char *const *stacks, const uint64_t *counts, size_t n)
{
	struct flame_tree *t = flame_new(ft);
	for (size_t i = 0; i < n; i++) {
		uint32_t ids[16];
		size_t depth = 0;
		for (const char *c = stacks[i]; *c; c++)
			ids[depth++] = fr[*c - 'a'];
		flame_add(t, ids, depth, counts[i]);
	}
	return t;
}

static void setup(void)
{
	ft = frames_new();
	const char *names[] = {"main", "run", "parse", "slow", "read", "sys_read", "jit", "x"};
	enum frame_kind kinds[] = {FRAME_USER,	  FRAME_USER,	FRAME_INLINED, FRAME_USER,
				   FRAME_USER,	  FRAME_KERNEL, FRAME_JIT,     FRAME_UNKNOWN};
	for (int i = 0; i < 8; i++)
		fr[i] = frames_intern(ft, names[i], "m", "", 0, kinds[i]);
	memset(cl, 0, sizeof(cl));
}

Test(flamedelta, follows_the_tree, .init = setup)
{
	struct flamedelta *fd = flamedelta_new();
	const char *s1[] = {"abc", "abd"};
	uint64_t c1[] = {5, 2};
	struct flame_tree *t = tree(s1, c1, 2);
	cr_assert_eq(send_and_check(fd, t), 5 + 1); /* all, main, run, parse, slow; full */
	cr_assert(last_full);
	/* Unchanged: nothing to send. */
	cr_assert_eq(send_and_check(fd, t), 0);
	cr_assert(!last_full);
	flame_free(t);
	/* Grown, one new stack through the kernel. */
	const char *s2[] = {"abc", "abd", "abef"};
	uint64_t c2[] = {6, 2, 3};
	t = tree(s2, c2, 3);
	size_t n = send_and_check(fd, t);
	cr_assert_eq(n, 3 + 3 + 0); /* changed: all, main, run, parse(6); added read, sys_read */
	flame_free(t);
	/* A stack goes away, and comes back. */
	const char *s3[] = {"abc", "abef"};
	uint64_t c3[] = {6, 3};
	t = tree(s3, c3, 2);
	send_and_check(fd, t);
	flame_free(t);
	t = tree(s2, c2, 3);
	send_and_check(fd, t);
	/* A reset: everything again. */
	flamedelta_reset(fd);
	send_and_check(fd, t);
	cr_assert(last_full);
	flame_free(t);
	/* An empty tree (no samples in the window). */
	t = flame_new(ft);
	send_and_check(fd, t);
	flame_free(t);
	flamedelta_free(fd);
	frames_free(ft);
}

/* Stacks that churn (new frames each round, the old ones gone): dead ids
 * pile up until the table starts over with a full message; the client
 * follows, and the ids given stay within a few times the tree's size. */
Test(flamedelta, bounded_ids, .init = setup)
{
	struct flamedelta *fd = flamedelta_new();
	int fulls = 0;
	for (int round = 0; round < 600; round++) {
		uint32_t ids[5] = {fr[0]};
		for (int i = 1; i < 5; i++) {
			char name[32];
			snprintf(name, sizeof(name), "f%d_%d", round, i);
			ids[i] = frames_intern(ft, name, "m", "", 0, FRAME_USER);
		}
		struct flame_tree *t = flame_new(ft);
		flame_add(t, ids, 5, 1);
		size_t changes = send_and_check(fd, t);
		cr_assert_leq(changes, 13);
		fulls += last_full;
		flame_free(t);
	}
	cr_assert_gt(fulls, 1, "the id table never started over");
	flamedelta_free(fd);
	frames_free(ft);
}
