#define _GNU_SOURCE
#include "folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "infile.h"
#include "printable.h"
#include "registry.h"
#include "hashmap.h"
#include "util.h"
#include "viewtree.h"

struct folded_lines {
	const struct flame_tree *t;
	unsigned kinds; /* FOLDED_ANNOTATE_* */
	uint64_t div;   /* counts are self / div, rounded (1, or 1000: ns -> us) */
	char **lines;
	size_t n, cap;
	char *path; /* the current path, ';'-joined */
	size_t path_cap;
	size_t *offsets; /* path length at each depth */
	size_t offsets_cap;
};

static void append_label(struct folded_lines *fl, size_t *len, uint32_t frame)
{
	const struct frame *f = frames_get(fl->t->frames, frame);
	unsigned bit = !f ? 0
		       : f->kind == FRAME_KERNEL ? FOLDED_ANNOTATE_KERNEL
		       : f->kind == FRAME_INLINED ? FOLDED_ANNOTATE_INLINED
		       : f->kind == FRAME_JIT	   ? FOLDED_ANNOTATE_JIT
						   : 0;
	/* The whole name, however long (C++ names can be kilobytes): two
	 * long names that differ near their end stay two frames. */
	char small_raw[1024], small_label[1024];
	char *raw = small_raw, *label = small_label;
	size_t need = flame_frame_label(fl->t, frame, (fl->kinds & bit) != 0, raw, sizeof(small_raw));
	if (need >= sizeof(small_raw)) {
		raw = xmalloc(need + 1);
		flame_frame_label(fl->t, frame, (fl->kinds & bit) != 0, raw, need + 1);
	}
	/* one line per stack, whatever the names hold (printable.h: an escape
	 * is at most 4 bytes a byte) */
	size_t label_size = 4 * need + 1;
	if (label_size > sizeof(small_label))
		label = xmalloc(label_size);
	else
		label_size = sizeof(small_label);
	printable_copy(label, label_size, raw);
	for (char *c = label; *c; c++)
		if (*c == ';')
			*c = ':';
	size_t n = strlen(label);
	need = *len + n + 2;
	if (need > fl->path_cap) {
		fl->path_cap = need * 2;
		fl->path = xrealloc(fl->path, fl->path_cap);
	}
	if (*len)
		fl->path[(*len)++] = ';';
	memcpy(fl->path + *len, label, n + 1);
	*len += n;
	if (raw != small_raw)
		free(raw);
	if (label != small_label)
		free(label);
}

static int collect(const struct flame_node *n, int depth, void *arg)
{
	struct folded_lines *fl = arg;
	if (depth == 0)
		return 0; /* the root is the whole profile, not a frame */
	grow_array((void **)&fl->offsets, &fl->offsets_cap, (size_t)depth + 1, sizeof(size_t));
	size_t len = depth > 1 ? fl->offsets[depth - 1] : 0;
	append_label(fl, &len, n->frame);
	fl->offsets[depth] = len;
	uint64_t count = fl->div > 1 ? (n->self + fl->div / 2) / fl->div : n->self;
	if (count) {
		grow_array((void **)&fl->lines, &fl->cap, fl->n + 1, sizeof(*fl->lines));
		fl->lines[fl->n++] = xasprintf("%.*s %llu", (int)len, fl->path,
					       (unsigned long long)count);
	}
	return 0;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int folded_write(FILE *out, const struct flame_tree *t, bool annotate)
{
	return folded_write_kinds(out, t, annotate ? FOLDED_ANNOTATE_ALL : 0);
}

int folded_write_kinds(FILE *out, const struct flame_tree *t, unsigned kinds)
{
	return folded_write_scaled(out, t, kinds, 1);
}

int folded_write_view(FILE *out, const struct flame_tree *t, bool annotate, const struct view *v)
{
	return folded_write_scaled(out, t, annotate ? FOLDED_ANNOTATE_ALL : 0,
				   view_counts_time(v) ? 1000 : 1);
}

int folded_write_scaled(FILE *out, const struct flame_tree *t, unsigned kinds, uint64_t div)
{
	struct folded_lines fl = {.t = t, .kinds = kinds, .div = div};
	flame_walk(t, collect, &fl);
	if (fl.n)
		qsort(fl.lines, fl.n, sizeof(*fl.lines), line_cmp);
	int rc = 0;
	for (size_t i = 0; i < fl.n; i++) {
		if (fprintf(out, "%s\n", fl.lines[i]) < 0)
			rc = -1;
		free(fl.lines[i]);
	}
	free(fl.lines);
	free(fl.path);
	free(fl.offsets);
	return rc;
}

/* --- reading ------------------------------------------------------------- */

static enum frame_kind strip_kind_suffix(char *name)
{
	size_t n = strlen(name);
	static const struct {
		const char *suffix;
		enum frame_kind kind;
	} suffixes[] = {{"_[k]", FRAME_KERNEL}, {"_[i]", FRAME_INLINED}, {"_[j]", FRAME_JIT}};
	/* All of them "_[?]": one look at the tail (no strcmp a suffix, whose
	 * cost follows where the linker put the literals). */
	if (n <= 4 || memcmp(name + n - 4, "_[", 2) != 0 || name[n - 1] != ']')
		return FRAME_USER;
	for (size_t i = 0; i < 3; i++) {
		if (memcmp(name + n - 4, suffixes[i].suffix, 4) == 0) {
			name[n - 4] = 0;
			return suffixes[i].kind;
		}
	}
	return FRAME_USER;
}

enum count_result { COUNT_OK, COUNT_MISSING, COUNT_TOO_LARGE };

/* Splits "STACK COUNT": NUL-terminates the stack and stores the count. The
 * count is at most PROFILE_MAX_WEIGHT (a profile's sum). */
static enum count_result split_count(char *line, uint64_t *count, const char **digits)
{
	/* An empty stack (" 5") is what the writer makes of a sample with no
	 * frames and no process name; flamegraph.pl reads it too. */
	char *sp = strrchr(line, ' ');
	if (!sp || !sp[1] || sp[1] < '0' || sp[1] > '9')
		return COUNT_MISSING;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(sp + 1, &end, 10);
	if (*end)
		return COUNT_MISSING;
	*sp = 0;
	*digits = sp + 1;
	if (errno == ERANGE || v > PROFILE_MAX_WEIGHT)
		return COUNT_TOO_LARGE;
	*count = v;
	return COUNT_OK;
}

struct profile *folded_read(const char *text, size_t len, char *err, size_t errlen)
{
	struct infile in;
	infile_from_memory(&in, text, len);
	struct profile *p = folded_read_lines(&in, err, errlen);
	infile_close(&in);
	return p;
}

struct profile *folded_read_lines(struct infile *in, char *err, size_t errlen)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "samples");
	profile_meta_set(p, "source_format", "folded");
	size_t cap = 256;
	uint32_t *frames = xmalloc(cap * sizeof(*frames));
	char *line = NULL;
	size_t line_cap = 0;
	struct hashmap seen = {0}; /* (thread, stack) -> its sample */
	const char *text;
	size_t n;
	int got;
	while ((got = infile_line(in, &text, &n, err, errlen)) > 0) {
		size_t lineno = in->lineno;
		if (n + 1 > line_cap) {
			line_cap = n + 1;
			line = xrealloc(line, line_cap);
		}
		memcpy(line, text, n);
		line[n] = 0;
		if (n && line[n - 1] == '\r')
			line[--n] = 0;
		if (n == 0)
			continue;
		if (memchr(line, 0, n)) {
			errbuf_set(err, errlen, "line %zu: a NUL byte: not folded stacks", lineno);
			goto fail;
		}
		uint64_t count = 0;
		const char *digits = NULL;
		enum count_result cr = split_count(line, &count, &digits);
		if (cr == COUNT_MISSING) {
			errbuf_set(err, errlen, "line %zu: expected \"frame;frame;... COUNT\"", lineno);
			goto fail;
		}
		if (cr == COUNT_TOO_LARGE) {
			errbuf_set(err, errlen, "line %zu: count %.40s is too large (at most %" PRIu64 ")",
				   lineno, digits, PROFILE_MAX_WEIGHT);
			goto fail;
		}
		size_t depth = 0;
		const char *comm = NULL;
		char *save = NULL;
		for (char *f = strtok_r(line, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
			if (!comm) {
				comm = f;
				continue;
			}
			if (depth == cap) {
				cap *= 2;
				frames = xrealloc(frames, cap * sizeof(*frames));
			}
			enum frame_kind kind = strip_kind_suffix(f);
			frames[depth++] = frames_intern(p->frames, f, "", "", 0, kind);
		}
		struct sample s = {
			.weight = count,
			.thread = profile_thread_intern(p, 0, 0, comm ? comm : ""),
			.stack = profile_stack_intern(p, frames, depth),
		};
		/* Samples of folded stacks have no time: lines of the same stack
		 * are one sample, so memory follows the distinct stacks however
		 * long the input. */
		uint64_t key = (uint64_t)s.thread << 32 | s.stack;
		uint64_t at;
		if (!count)
			continue;
		int over;
		if (hashmap_get(&seen, key, &at)) {
			over = profile_sample_add_weight(p, (uint32_t)at, count);
		} else {
			hashmap_set(&seen, key, p->nsamples);
			over = profile_add_sample(p, &s, NULL, 0);
		}
		if (over) {
			errbuf_set(err, errlen,
				   "line %zu: the counts add up to more than %" PRIu64
				   " (the most one profile holds)",
				   lineno, PROFILE_MAX_WEIGHT);
			goto fail;
		}
	}
	if (got < 0)
		goto fail;
	free(frames);
	free(line);
	hashmap_free(&seen);
	return p;
fail:
	free(frames);
	free(line);
	hashmap_free(&seen);
	profile_free(p);
	return NULL;
}

bool folded_detect(const char *text, size_t len)
{
	size_t lines = 0, good = 0, semis = 0;
	const char *pos = text, *end = text + len;
	while (pos < end && lines < 20) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t n = nl ? (size_t)(nl - pos) : (size_t)(end - pos);
		if (n > 0) {
			lines++;
			const char *sp = memrchr(pos, ' ', n);
			bool digits = sp && sp + 1 < pos + n;
			for (const char *c = sp ? sp + 1 : pos; digits && c < pos + n; c++)
				digits = (*c >= '0' && *c <= '9') || (*c == '\r' && c == pos + n - 1);
			good += digits && pos[0] != ' ' && pos[0] != '\t' && pos[0] != '{';
			semis += memchr(pos, ';', n) != NULL;
		}
		pos += n + 1;
	}
	return lines > 0 && good * 10 >= lines * 9 && semis > 0;
}

/* ========================================================================= */
/* The registry's entry                                                      */
/* ========================================================================= */

/* A first line longer than the head (a stack of 20,000 frames is 1 MiB):
 * the head holds no whole line to judge, only that line's start. It is
 * folded when it begins like one (no blank or '{' first, ';'-joined frames)
 * and holds no NUL byte; its count comes at its end. */
static bool starts_like_folded(const char *text, size_t len)
{
	return len > 0 && text[0] != ' ' && text[0] != '\t' && text[0] != '{' &&
	       !memchr(text, 0, len) && !memchr(text, '\n', len) && memchr(text, ';', len);
}

static bool detect_folded(const struct format_head *h)
{
	if (h->text == 0 && !h->complete)
		return starts_like_folded((const char *)h->data, h->len);
	return folded_detect((const char *)h->data, h->text);
}

/* Roots and annotations as stackcollapse-perf.pl's modes say. */
static int write_folded(FILE *f, struct profile *p, const struct format_write_options *o)
{
	const struct folded_modes *m = o->modes;
	enum flame_root root = m->tid ? FLAME_ROOT_TID : m->pid ? FLAME_ROOT_PID : FLAME_ROOT_COMM;
	struct flame_tree *t = viewtree_flame(p, NULL, root);
	unsigned kinds = FOLDED_ANNOTATE_INLINED;
	if (m->kernel)
		kinds |= FOLDED_ANNOTATE_KERNEL;
	if (m->jit)
		kinds |= FOLDED_ANNOTATE_JIT;
	int rc = folded_write_kinds(f, t, kinds);
	flame_free(t);
	return rc;
}

const struct format_entry format_folded = {
	.name = "folded",
	.aliases = (const char *const[]){"collapsed", NULL},
	.suffixes = (const char *const[]){".folded", ".collapsed", NULL},
	.what = "folded stacks",
	.detect = detect_folded,
	.read_lines = folded_read_lines,
	.write = write_folded,
};
