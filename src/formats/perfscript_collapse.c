/* perfscript_collapse — perf script records into folded stacks, as
 * stackcollapse-perf.pl writes them (perfscript_collapse,
 * perfscript_collapse_lines; perfscript.h): each record's root frame and
 * cleaned, annotated frames joined into a key, the keys' counts summed, then
 * written sorted bytewise. */
#define _GNU_SOURCE
#include "perfscript.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "perfscriptscan.h"

struct frag {
	size_t off, len; /* in the frame buffer */
};

/* Orders key ids by their keys' bytes (a shorter prefix first). */
static int key_cmp(const void *a, const void *b, void *arg)
{
	const struct strpool *keys = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	size_t nx = strpool_len(keys, x), ny = strpool_len(keys, y);
	int c = memcmp(strpool_str(keys, x), strpool_str(keys, y), nx < ny ? nx : ny);
	if (c)
		return c;
	return nx < ny ? -1 : nx > ny;
}

int perfscript_collapse(const char *text, size_t len, const struct collapse_options *o, FILE *out,
			char *err, size_t errlen)
{
	struct infile in;
	infile_from_memory(&in, text, len);
	int rc = perfscript_collapse_lines(&in, o, &(struct collapse_output){.out = out}, err, errlen);
	infile_close(&in);
	return rc;
}

/* The collapse's state: the open record's frames, its root frame, and the
 * counts by stack. */
struct collapser {
	const struct collapse_options *o;
	struct table t;
	struct buf pname, frames, key, tmp, filter;
	struct frag *frags;
	size_t nfrags, frags_cap;
	struct group *groups;
	size_t ngroups, groups_cap;
	struct fields fields;
	bool have_filter, skip, java;
	struct count period;
	uint64_t other_events; /* records of events not kept */
};

static int collapse_begin(void *arg, const struct record_head *rh, size_t line, char *err,
			  size_t errlen)
{
	(void)line;
	(void)err;
	(void)errlen;
	struct collapser *c = arg;
	const struct header *h = &rh->h;
	c->frames.n = c->nfrags = c->ngroups = 0;
	c->skip = false;
	struct count period = {.u = 1};
	if (rh->event.n) {
		/* The first event seen, unless asked for one (kept in a buffer of
		 * its own: the line's goes with the next line). */
		if (!c->have_filter) {
			buf_add(&c->filter, rh->event.p, rh->event.n);
			c->have_filter = true;
		} else if (rh->event.n != c->filter.n ||
			   memcmp(rh->event.p, c->filter.p, c->filter.n)) {
			c->skip = true;
			c->other_events++;
			return 0;
		}
		if (rh->period.n && !sv_eq(rh->period, "0"))
			period = perfscript_count_of_digits(rh->period.p, rh->period.n);
	}
	c->period = period;
	c->pname.n = 0;
	buf_add(&c->pname, h->comm.p, h->comm.n);
	if (c->o->tid || c->o->pid) {
		buf_addc(&c->pname, '-');
		if (h->pid.p)
			buf_add(&c->pname, h->pid.p, h->pid.n);
		else
			buf_addc(&c->pname, '?');
		if (c->o->tid) {
			buf_addc(&c->pname, '/');
			buf_add(&c->pname, h->tid.p, h->tid.n);
		}
	}
	for (size_t i = 0; i < c->pname.n; i++)
		if (c->pname.p[i] == ' ')
			c->pname.p[i] = '_';
	c->java = c->pname.n == 4 && memcmp(c->pname.p, "java", 4) == 0;
	return 0;
}

static int collapse_frame(void *arg, const struct stackline *sl, size_t line, char *err,
			  size_t errlen)
{
	struct collapser *c = arg;
	if (c->skip)
		return 0;
	struct sv func = perfscript_strip_offset(sl->func);
	if (func.n && func.p[0] == '(')
		return 0;
	perfscript_split_arrows(func, &c->fields);
	if (c->nfrags + c->fields.n > MAX_RECORD_FRAMES) {
		errbuf_set(err, errlen, "line %zu: %s", line, PERFSCRIPT_TOO_DEEP);
		return -1;
	}
	grow_array((void **)&c->groups, &c->groups_cap, c->ngroups + 1, sizeof(*c->groups));
	c->groups[c->ngroups++] = (struct group){c->nfrags, 0};
	for (size_t i = 0; i < c->fields.n; i++) {
		size_t off = c->frames.n;
		perfscript_clean_append(&c->frames, &c->tmp, c->fields.v[i], sl, c->o->addrs, c->java);
		switch (perfscript_frame_annotation(i, sl->mod, c->o->kernel, c->o->jit)) {
		case ANN_INLINED:
			buf_add(&c->frames, "_[i]", 4);
			break;
		case ANN_KERNEL:
			buf_add(&c->frames, "_[k]", 4);
			break;
		case ANN_JIT:
			buf_add(&c->frames, "_[j]", 4);
			break;
		case ANN_NONE:
			break;
		}
		grow_array((void **)&c->frags, &c->frags_cap, c->nfrags + 1, sizeof(*c->frags));
		c->frags[c->nfrags++] = (struct frag){off, c->frames.n - off};
		c->groups[c->ngroups - 1].n++;
	}
	return 0;
}

static int collapse_end(void *arg, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	struct collapser *c = arg;
	if (c->skip)
		return 0;
	c->key.n = 0;
	buf_add(&c->key, c->pname.p, c->pname.n);
	for (size_t g = c->ngroups; g-- > 0;) {
		for (size_t i = 0; i < c->groups[g].n; i++) {
			const struct frag *fr = &c->frags[c->groups[g].first + i];
			buf_addc(&c->key, ';');
			buf_add(&c->key, c->frames.p + fr->off, fr->len);
		}
	}
	perfscript_count_add(perfscript_table_get(&c->t, c->key.p, c->key.n, NULL), c->period);
	c->frames.n = c->nfrags = c->ngroups = 0;
	return 0;
}

/* The stacks, sorted bytewise, each with its count. */
static int collapse_write(struct collapser *c, FILE *out, char *err, size_t errlen)
{
	errno = 0;
	size_t k = strpool_count(&c->t.keys);
	uint32_t *sorted = xmalloc((k ? k : 1) * sizeof(*sorted));
	for (size_t i = 0; i < k; i++)
		sorted[i] = (uint32_t)i;
	qsort_r(sorted, k, sizeof(*sorted), key_cmp, &c->t.keys);
	for (size_t i = 0; i < k; i++) {
		const struct count *x = &c->t.val[sorted[i]];
		char num[64];
		int nn;
		if (x->nv)
			nn = snprintf(num, sizeof(num), " %.15g\n", x->d);
		else
			nn = snprintf(num, sizeof(num), " %" PRIu64 "\n", x->u);
		fwrite(strpool_str(&c->t.keys, sorted[i]), 1, strpool_len(&c->t.keys, sorted[i]), out);
		fwrite(num, 1, (size_t)nn, out);
	}
	free(sorted);
	if (fflush(out) != 0 || ferror(out)) {
		errbuf_set(err, errlen, "cannot write the folded stacks: %s", strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

int perfscript_collapse_lines(struct infile *in, const struct collapse_options *o,
			      const struct collapse_output *w, char *err, size_t errlen)
{
	char *note = w->note;
	size_t notelen = w->notelen;
	struct collapse_options none = {0};
	struct collapser c = {.o = o ? o : &none};
	if (c.o->event && c.o->event[0]) {
		buf_add(&c.filter, c.o->event, strlen(c.o->event));
		c.have_filter = true;
	}
	struct record_sink k = {&c, collapse_begin, collapse_frame, collapse_end};
	struct scan_counts counts;
	int rc = perfscript_scan_records(in, &k, &counts, err, errlen);
	if (rc == 0)
		rc = collapse_write(&c, w->out, err, errlen);
	if (rc == 0 && note && notelen) {
		input_note_format(counts.skipped_lines, counts.unterminated, note, notelen);
		size_t k = strlen(note);
		if (c.other_events)
			snprintf(note + k, notelen - k,
				 "%s%" PRIu64 " samples of other events than %.*s left out (--event "
				 "picks one)",
				 k ? "; " : "", c.other_events, (int)c.filter.n, c.filter.p);
	}
	perfscript_table_free(&c.t);
	free(c.pname.p);
	free(c.frames.p);
	free(c.key.p);
	free(c.tmp.p);
	free(c.filter.p);
	free(c.frags);
	free(c.groups);
	free(c.fields.v);
	return rc;
}
