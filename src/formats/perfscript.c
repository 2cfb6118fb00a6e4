/* perfscript — `perf script` text to folded stacks and to profiles.
 *
 * The collapse reproduces the behaviour of FlameGraph's stackcollapse-perf.pl
 * (the revision that wrote the corpus's results in shared/corpus/flamegraph:
 * a14f791). Its
 * regular expressions are re-implemented here as small linear scanners whose
 * results equal what Perl's backtracking would capture; the comments at each
 * scanner say why. Perl character classes on byte strings: \s is
 * [ \t\n\v\f\r], \d is [0-9], \w is [A-Za-z0-9_]. */
#define _GNU_SOURCE
#include "perfscript.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "folded.h"
#include "infile.h"
#include "registry.h"
#include "strpool.h"
#include "util.h"

/* --- character classes and small helpers --------------------------------- */

/* perf records at most 65535 frames a stack (kernel.perf_event_max_stack):
 * a record with far more is text that never ends a record, and its frames
 * would take memory in proportion to the input. */
#define MAX_RECORD_FRAMES ((size_t)1 << 20)
static const char too_deep[] = "a record with more than 1048576 frames: not perf script text";

static inline bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static inline bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_word(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

struct sv {
	const char *p;
	size_t n;
};

static inline bool sv_eq(struct sv a, const char *s)
{
	size_t n = strlen(s);
	return a.n == n && memcmp(a.p, s, n) == 0;
}

/* A growable byte buffer. */
struct buf {
	char *p;
	size_t n, cap;
};

static void buf_reserve(struct buf *b, size_t more)
{
	if (b->n + more > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + more)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
}

static inline void buf_add(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

static inline void buf_addc(struct buf *b, char c)
{
	buf_reserve(b, 1);
	b->p[b->n++] = c;
}

/* --- counts with Perl's number semantics ---------------------------------- */

/* Perl adds counts as unsigned integers while they fit and as doubles
 * (printed "%.15g") once they do not. */
struct count {
	uint64_t u;
	double d;
	bool nv;
};

static struct count count_of_digits(const char *p, size_t n)
{
	struct count c = {0};
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(p[i] - '0');
		if (c.u > (UINT64_MAX - d) / 10) {
			c.nv = true;
			break;
		}
		c.u = c.u * 10 + d;
	}
	if (c.nv) {
		char small[64];
		char *s = n < sizeof(small) ? small : xmalloc(n + 1);
		memcpy(s, p, n);
		s[n] = 0;
		c.d = strtod(s, NULL);
		if (s != small)
			free(s);
	}
	return c;
}

static void count_add(struct count *a, struct count b)
{
	if (!a->nv && !b.nv && a->u <= UINT64_MAX - b.u) {
		a->u += b.u;
		return;
	}
	double x = a->nv ? a->d : (double)a->u;
	double y = b.nv ? b.d : (double)b.u;
	a->nv = true;
	a->d = x + y;
}

/* --- counts by key: keys interned in a strpool, their counts by id ------- */

struct table {
	struct strpool keys;
	struct count *val; /* key id -> its count */
	size_t cap;
};

/* The count of key (added as zero when new). */
static struct count *table_get(struct table *t, const char *key, size_t len, bool *added)
{
	bool is_new;
	uint32_t id = strpool_add(&t->keys, key, len, &is_new);
	if (is_new) {
		grow_array((void **)&t->val, &t->cap, (size_t)id + 1, sizeof(*t->val));
		t->val[id] = (struct count){0};
	}
	if (added)
		*added = is_new;
	return &t->val[id];
}

static void table_free(struct table *t)
{
	strpool_free(&t->keys);
	free(t->val);
}

/* --- the line grammar ------------------------------------------------------ */

struct header {
	struct sv comm;
	struct sv pid; /* p == NULL: "?" */
	struct sv tid;
	size_t rest; /* offset just after the PID/TID number */
	bool has_event;
	struct sv event;
	struct sv period; /* n == 0: none */
};

/* The record header: Perl's /^(\S.+?)\s+(\d+)\/STAR(\d+)*\s+/ (STAR: '*',
 * which cannot follow '/' in a C comment) then, on the whole line,
 * /:\s*(\d+)*\s+(\S+):\s*$/.
 *
 * First regex: for a comm end e (lazy: e = 2, 3, ...), s[e] must be
 * whitespace; \s+ then takes the whole whitespace run (giving some back
 * cannot put a digit next), (\d+) the whole digit run, the slashes, and
 * (\d+)* the digits after them; the match needs whitespace right there, and
 * no shorter choice of any group can produce it. Every e inside one
 * whitespace run leads to the same run end, so only the first is tried. */
static bool parse_header(const char *s, size_t n, struct header *h)
{
	if (n < 5 || is_space((unsigned char)s[0]))
		return false;
	size_t e = 2;
	bool found = false;
	size_t f = 0, g = 0, sl = 0, i = 0;
	while (e < n) {
		if (!is_space((unsigned char)s[e])) {
			e++;
			continue;
		}
		f = e;
		while (f < n && is_space((unsigned char)s[f]))
			f++;
		g = f;
		while (g < n && is_digit((unsigned char)s[g]))
			g++;
		if (g > f) {
			sl = g;
			while (sl < n && s[sl] == '/')
				sl++;
			i = sl;
			while (i < n && is_digit((unsigned char)s[i]))
				i++;
			if (i < n && is_space((unsigned char)s[i])) {
				found = true;
				break;
			}
		}
		e = f;
	}
	if (!found)
		return false;
	memset(h, 0, sizeof(*h));
	h->comm = (struct sv){s, e};
	struct sv pid = {s + f, g - f}, tid = {s + sl, i - sl};
	if (tid.n == 0 || sv_eq(tid, "0")) { /* Perl: not $tid */
		h->tid = pid;
		h->pid = (struct sv){NULL, 0};
	} else {
		h->pid = pid;
		h->tid = tid;
	}
	h->rest = i;

	/* Second regex. (\S+): must be the last whitespace-separated token (it
	 * follows \s+ and only \s* may follow its ':'); between the ':' and it
	 * only whitespace and one digit run may stand, so that ':' is unique. */
	size_t m = n;
	while (m > 0 && is_space((unsigned char)s[m - 1]))
		m--;
	if (m < 2 || s[m - 1] != ':')
		return true;
	size_t ts = m - 1;
	while (ts > 0 && !is_space((unsigned char)s[ts - 1]))
		ts--;
	if (ts == 0 || ts == m - 1)
		return true;
	size_t k = ts;
	while (k > 0 && is_space((unsigned char)s[k - 1]))
		k--;
	size_t d = k;
	while (d > 0 && is_digit((unsigned char)s[d - 1]))
		d--;
	size_t c = d;
	if (d < k)
		while (c > 0 && is_space((unsigned char)s[c - 1]))
			c--;
	if (c == 0 || s[c - 1] != ':')
		return true;
	h->has_event = true;
	h->event = (struct sv){s + ts, m - 1 - ts};
	h->period = (struct sv){s + d, k - d};
	return true;
}

struct stackline {
	struct sv pc, func, mod;
};

/* A stack line: Perl's /^\s*(\w+)\s*(.+) \((\S*)\)/ (unanchored at the end).
 * Greedy (.+) ends at the last " (" whose following non-space run holds a
 * ')' (q below); \S* then reaches the last ')' of that run. That q does not
 * depend on where (.+) starts, so the start a is the first one Perl's
 * backtracking tries (whitespace after the word given back first, then the
 * word's own characters) that leaves (.+) at least one character. */
static bool parse_stackline(const char *s, size_t n, struct stackline *sl)
{
	size_t L = 0;
	while (L < n && is_space((unsigned char)s[L]))
		L++;
	size_t w = L;
	while (w < n && is_word((unsigned char)s[w]))
		w++;
	if (w == L)
		return false;
	size_t ws = w;
	while (ws < n && is_space((unsigned char)s[ws]))
		ws++;
	size_t q = 0, r = 0;
	bool found = false;
	size_t rp = SIZE_MAX; /* last ')' of the non-space run right of i */
	for (size_t i = n; i-- > 0;) {
		unsigned char c = (unsigned char)s[i];
		if (is_space(c)) {
			if (c == ' ' && i + 1 < n && s[i + 1] == '(' && rp != SIZE_MAX) {
				q = i;
				r = rp;
				found = true;
				break;
			}
			rp = SIZE_MAX;
		} else if (c == ')' && rp == SIZE_MAX) {
			rp = i;
		}
	}
	if (!found || q < L + 2)
		return false;
	size_t a = ws < q - 1 ? ws : q - 1;
	sl->pc = (struct sv){s + L, (a >= w ? w : a) - L};
	sl->func = (struct sv){s + a, q - a};
	sl->mod = (struct sv){s + q + 2, r - (q + 2)};
	return true;
}

/* Perl's s/\+0x[\da-f]+$//: only the last "+0x" can be followed by hex
 * digits up to the end. */
static struct sv strip_offset(struct sv f)
{
	size_t j = f.n;
	while (j > 0 && (is_digit((unsigned char)f.p[j - 1]) ||
			 (f.p[j - 1] >= 'a' && f.p[j - 1] <= 'f')))
		j--;
	if (j < f.n && j >= 3 && f.p[j - 1] == 'x' && f.p[j - 2] == '0' && f.p[j - 3] == '+')
		f.n = j - 3;
	return f;
}

static bool sv_has(struct sv s, const char *needle)
{
	return memmem(s.p, s.n, needle, strlen(needle)) != NULL;
}

/* m/(^\[|vmlinux$)/ && !~ /unknown/ */
static bool mod_is_kernel(struct sv mod)
{
	bool k = (mod.n && mod.p[0] == '[') ||
		 (mod.n >= 7 && memcmp(mod.p + mod.n - 7, "vmlinux", 7) == 0);
	return k && !sv_has(mod, "unknown");
}

/* m:/tmp/perf-\d+\.map: */
static bool mod_is_jit(struct sv mod)
{
	const char *p = mod.p, *end = mod.p + mod.n;
	while (p < end) {
		const char *x = memmem(p, (size_t)(end - p), "/tmp/perf-", 10);
		if (!x)
			return false;
		const char *d = x + 10;
		while (d < end && is_digit((unsigned char)*d))
			d++;
		if (d > x + 10 && end - d >= 4 && memcmp(d, ".map", 4) == 0)
			return true;
		p = x + 1;
	}
	return false;
}

/* The cleanups FlameGraph applies to one function name (after "[unknown]"
 * became "[module]"): ';' -> ':'; unless it looks like a Go method
 * (".(" ... ")."), cut at the first '(' that does not open
 * "(anonymous namespace)"; drop quote characters; for comm "java" drop the
 * leading 'L' of names with a '/'. Appends to b. */
static void tidy_append(struct buf *b, struct sv f, bool java)
{
	const char *p = f.p;
	size_t n = f.n;
	bool go = false;
	const char *dp = memmem(p, n, ".(", 2);
	if (dp) {
		size_t off = (size_t)(dp - p) + 2;
		go = memmem(p + off, n - off, ").", 2) != NULL;
	}
	if (!go) {
		static const char anon[] = "anonymous namespace)";
		for (size_t i = 0; i < n; i++) {
			if (p[i] != '(')
				continue;
			if (n - i - 1 >= sizeof(anon) - 1 && memcmp(p + i + 1, anon, sizeof(anon) - 1) == 0)
				continue;
			n = i;
			break;
		}
	}
	size_t start = b->n;
	buf_reserve(b, n);
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c == '"' || c == '\'')
			continue;
		b->p[b->n++] = c == ';' ? ':' : c;
	}
	if (java && b->n > start && b->p[start] == 'L' &&
	    memchr(b->p + start, '/', b->n - start)) {
		memmove(b->p + start, b->p + start + 1, b->n - start - 1);
		b->n--;
	}
}

/* Perl's split /\->/: the fields between "->"s, trailing empty fields
 * removed (so "" and "->" give none). */
struct fields {
	struct sv *v;
	size_t n, cap;
};

static void split_arrows(struct sv f, struct fields *out)
{
	out->n = 0;
	size_t start = 0;
	for (size_t i = 0; i <= f.n; i++) {
		bool arrow = i + 1 < f.n && f.p[i] == '-' && f.p[i + 1] == '>';
		if (!arrow && i < f.n)
			continue;
		grow_array((void **)&out->v, &out->cap, out->n + 1, sizeof(*out->v));
		out->v[out->n++] = (struct sv){f.p + start, i - start};
		if (!arrow)
			break;
		start = i + 2;
		i++;
	}
	while (out->n > 0 && out->v[out->n - 1].n == 0)
		out->n--;
}

/* The suffix the collapse gives one function name; idx is its place in an
 * "a->b" chain (later parts are inlined), mod the stack line's module. */
enum annotate { ANN_NONE, ANN_INLINED, ANN_KERNEL, ANN_JIT };

static enum annotate frame_annotation(size_t idx, struct sv mod, bool kernel, bool jit)
{
	if (idx > 0)
		return ANN_INLINED;
	if (kernel && mod_is_kernel(mod))
		return ANN_KERNEL;
	if (jit && mod_is_jit(mod))
		return ANN_JIT;
	return ANN_NONE;
}

/* Appends the cleaned name of one field (no annotation); returns whether
 * the field was "[unknown]". */
static bool clean_append(struct buf *b, struct buf *tmp, struct sv field,
			 const struct stackline *sl, bool addrs, bool java)
{
	if (sv_eq(field, "[unknown]")) {
		struct sv base;
		if (!sv_eq(sl->mod, "[unknown]")) {
			const char *slash = memrchr(sl->mod.p, '/', sl->mod.n);
			base = slash ? (struct sv){slash + 1, sl->mod.n - (size_t)(slash + 1 - sl->mod.p)}
				     : sl->mod;
		} else {
			base = (struct sv){"unknown", 7};
		}
		tmp->n = 0;
		buf_addc(tmp, '[');
		buf_add(tmp, base.p, base.n);
		if (addrs) {
			buf_add(tmp, " <", 2);
			buf_add(tmp, sl->pc.p, sl->pc.n);
			buf_addc(tmp, '>');
		}
		buf_addc(tmp, ']');
		tidy_append(b, (struct sv){tmp->p, tmp->n}, java);
		return true;
	}
	tidy_append(b, field, java);
	return false;
}

/* --- the records: one scanner for every reader ----------------------------- */

static uint32_t u32_of(struct sv s)
{
	uint64_t v = 0;
	for (size_t i = 0; i < s.n; i++) {
		v = v * 10 + (unsigned)(s.p[i] - '0');
		if (v > UINT32_MAX)
			return UINT32_MAX;
	}
	return (uint32_t)v;
}

static uint64_t u64_sat(struct sv s)
{
	uint64_t v = 0;
	for (size_t i = 0; i < s.n; i++) {
		unsigned d = (unsigned)(s.p[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return UINT64_MAX;
		v = v * 10 + d;
	}
	return v;
}

static bool all_digits(const char *p, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_digit((unsigned char)p[i]))
			return false;
	return true;
}

/* "SECONDS[.FRACTION]:" -> ns (saturating). */
static bool parse_time(struct sv t, uint64_t *ns)
{
	if (t.n < 2 || t.p[t.n - 1] != ':')
		return false;
	const char *dot = memchr(t.p, '.', t.n - 1);
	size_t ni = dot ? (size_t)(dot - t.p) : t.n - 1;
	if (!all_digits(t.p, ni))
		return false;
	size_t nf = dot ? t.n - 1 - ni - 1 : 0;
	if (dot && !all_digits(dot + 1, nf))
		return false;
	uint64_t sec = u64_sat((struct sv){t.p, ni}), frac = 0;
	for (size_t i = 0; i < 9; i++)
		frac = frac * 10 + (i < nf ? (unsigned)(dot[1 + i] - '0') : 0);
	if (sec > (UINT64_MAX - frac) / 1000000000ull)
		*ns = UINT64_MAX;
	else
		*ns = sec * 1000000000ull + frac;
	return true;
}

static struct sv next_token(const char *s, size_t n, size_t *i)
{
	while (*i < n && is_space((unsigned char)s[*i]))
		(*i)++;
	size_t j = *i;
	while (j < n && !is_space((unsigned char)s[j]))
		j++;
	struct sv t = {s + *i, j - *i};
	*i = j;
	return t;
}

/* A record's header, as every reader sees it. */
struct record_head {
	struct header h;
	uint32_t cpu;
	bool has_cpu, has_time;
	uint64_t time_ns;
	struct sv event;  /* n == 0: the line names none ("samples" in a profile) */
	struct sv period; /* n == 0: none (a weight of 1) */
};

/* The header line's fields: COMM PID[/TID] as parse_header reads them, then
 * "[CPU]" and "TIME:" after the PID/TID, and the event with its period: at
 * the end of the line ("[PERIOD] EVENT:", as stackcollapse-perf.pl reads
 * it), else right after the time (a tracepoint's fields follow it). */
static bool parse_record_head(const char *s, size_t n, struct record_head *rh)
{
	memset(rh, 0, sizeof(*rh));
	if (!parse_header(s, n, &rh->h))
		return false;
	size_t i = rh->h.rest;
	struct sv tok = next_token(s, n, &i);
	if (tok.n >= 3 && tok.p[0] == '[' && tok.p[tok.n - 1] == ']' &&
	    all_digits(tok.p + 1, tok.n - 2)) {
		rh->cpu = u32_of((struct sv){tok.p + 1, tok.n - 2});
		rh->has_cpu = true;
		tok = next_token(s, n, &i);
	}
	if (parse_time(tok, &rh->time_ns)) {
		rh->has_time = true;
		tok = next_token(s, n, &i);
	}
	if (rh->h.has_event) {
		rh->event = rh->h.event;
		rh->period = rh->h.period;
		return true;
	}
	if (all_digits(tok.p, tok.n)) {
		size_t j = i;
		struct sv ev = next_token(s, n, &j);
		if (ev.n >= 2 && ev.p[ev.n - 1] == ':') {
			rh->period = tok;
			tok = ev;
		}
	}
	if (tok.n >= 2 && tok.p[tok.n - 1] == ':')
		rh->event = (struct sv){tok.p, tok.n - 1};
	else
		rh->period = (struct sv){NULL, 0};
	return true;
}

/* What a reader does with the records the scanner finds: a header begins
 * one, its stack lines follow (leaf first), and it ends. Each returns 0, or
 * -1 with one line in err to stop. */
struct record_sink {
	void *arg;
	int (*begin)(void *arg, const struct record_head *rh, size_t line, char *err,
		     size_t errlen);
	int (*frame)(void *arg, const struct stackline *sl, size_t line, char *err, size_t errlen);
	int (*end)(void *arg, char *err, size_t errlen);
};

/* The one scanner of perf script text, behind report, convert and every
 * other reader, so that none can count other records than the rest: '#'
 * lines are comments, a trailing '\r' is dropped; a record begins at a
 * header and ends at a blank line or at the next header; one that the end
 * of the input cuts is left out, as stackcollapse-perf.pl leaves it
 * (counted: c->unterminated); its stack lines are those that parse as one;
 * any other line after the first header is skipped (c->skipped_lines).
 * Errors: a NUL byte, a first non-comment line that is not a header.
 * (stackcollapse-perf.pl merges a header's frames into the next record
 * when no blank line ends it, and skips what comes before the first
 * header: perf script ends every record with a blank line, and text that
 * does not begin with a header is not perf script.) */
struct scan_counts {
	uint64_t skipped_lines, unterminated; /* what input_note_format says */
};

static int scan_records(struct infile *in, const struct record_sink *k, struct scan_counts *c,
			char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	bool open = false, seen_header = false;
	const char *s;
	size_t n;
	int got;
	while ((got = infile_line(in, &s, &n, err, errlen)) > 0) {
		if (memchr(s, 0, n)) {
			errbuf_set(err, errlen, "line %zu: a NUL byte: not perf script text", in->lineno);
			return -1;
		}
		if (n && s[n - 1] == '\r')
			n--;
		if (n && s[0] == '#')
			continue;
		if (n == 0) {
			if (open && k->end(k->arg, err, errlen))
				return -1;
			open = false;
			continue;
		}
		struct record_head rh;
		struct stackline sl;
		if (parse_record_head(s, n, &rh)) {
			if (open && k->end(k->arg, err, errlen))
				return -1;
			if (k->begin(k->arg, &rh, in->lineno, err, errlen))
				return -1;
			open = seen_header = true;
		} else if (!seen_header) {
			errbuf_set(err, errlen, "line %zu: expected a perf script record header",
				   in->lineno);
			return -1;
		} else if (open && parse_stackline(s, n, &sl)) {
			if (k->frame(k->arg, &sl, in->lineno, err, errlen))
				return -1;
		} else {
			c->skipped_lines++;
		}
	}
	if (got < 0)
		return -1;
	c->unterminated = open;
	return 0;
}

/* --- collapse -------------------------------------------------------------- */

struct frag {
	size_t off, len; /* in the frame buffer */
};

struct group {
	size_t first, n; /* frags of one stack line */
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
	int rc = perfscript_collapse_lines(&in, o, out, NULL, 0, err, errlen);
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
			period = count_of_digits(rh->period.p, rh->period.n);
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
	struct sv func = strip_offset(sl->func);
	if (func.n && func.p[0] == '(')
		return 0;
	split_arrows(func, &c->fields);
	if (c->nfrags + c->fields.n > MAX_RECORD_FRAMES) {
		errbuf_set(err, errlen, "line %zu: %s", line, too_deep);
		return -1;
	}
	grow_array((void **)&c->groups, &c->groups_cap, c->ngroups + 1, sizeof(*c->groups));
	c->groups[c->ngroups++] = (struct group){c->nfrags, 0};
	for (size_t i = 0; i < c->fields.n; i++) {
		size_t off = c->frames.n;
		clean_append(&c->frames, &c->tmp, c->fields.v[i], sl, c->o->addrs, c->java);
		switch (frame_annotation(i, sl->mod, c->o->kernel, c->o->jit)) {
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
	count_add(table_get(&c->t, c->key.p, c->key.n, NULL), c->period);
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

int perfscript_collapse_lines(struct infile *in, const struct collapse_options *o, FILE *out,
			      char *note, size_t notelen, char *err, size_t errlen)
{
	struct collapse_options none = {0};
	struct collapser c = {.o = o ? o : &none};
	if (c.o->event && c.o->event[0]) {
		buf_add(&c.filter, c.o->event, strlen(c.o->event));
		c.have_filter = true;
	}
	struct record_sink k = {&c, collapse_begin, collapse_frame, collapse_end};
	struct scan_counts counts;
	int rc = scan_records(in, &k, &counts, err, errlen);
	if (rc == 0)
		rc = collapse_write(&c, out, err, errlen);
	if (rc == 0 && note && notelen) {
		input_note_format(counts.skipped_lines, counts.unterminated, note, notelen);
		size_t k = strlen(note);
		if (c.other_events)
			snprintf(note + k, notelen - k,
				 "%s%" PRIu64 " samples of other events than %.*s left out (--event "
				 "picks one)",
				 k ? "; " : "", c.other_events, (int)c.filter.n, c.filter.p);
	}
	table_free(&c.t);
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

/* --- reading into a profile ------------------------------------------------ */

struct record {
	bool open;
	uint32_t pid, tid, cpu, event, thread;
	uint64_t time_ns, weight;
	bool has_time;
	bool weight_too_large; /* its period is more than a profile holds */
	size_t line;           /* of its header */
};

struct reader {
	struct profile *p;
	struct table threads, events; /* key -> index + 1 */
	struct buf name, mod, tmp, key;
	uint32_t *frames; /* of the open record, in perf's order (leaf first) */
	size_t nframes, frames_cap;
	struct group *groups;
	size_t ngroups, groups_cap;
	uint32_t *root_first;
	size_t root_cap;
	struct fields fields;
	struct record rec;
	bool any_time, too_many_events, java;
	uint64_t start_ns, end_ns;
};

/* Real captures have a handful of events; the profile looks names up one by
 * one, so hostile text with millions of them is refused. */
#define MAX_EVENTS 4096

static uint32_t intern_event(struct reader *r, struct sv name)
{
	bool added;
	struct count *x = table_get(&r->events, name.p, name.n, &added);
	if (added) {
		if (r->p->nevents >= MAX_EVENTS) {
			r->too_many_events = true;
			return 0;
		}
		r->tmp.n = 0;
		buf_add(&r->tmp, name.p, name.n);
		buf_addc(&r->tmp, 0);
		x->u = profile_event_intern(r->p, r->tmp.p);
	}
	return (uint32_t)x->u;
}

static uint32_t intern_thread(struct reader *r, uint32_t pid, uint32_t tid, struct sv comm)
{
	r->key.n = 0;
	buf_add(&r->key, &pid, sizeof(pid));
	buf_add(&r->key, &tid, sizeof(tid));
	buf_add(&r->key, comm.p, comm.n);
	bool added;
	struct count *x = table_get(&r->threads, r->key.p, r->key.n, &added);
	if (added) {
		r->tmp.n = 0;
		buf_add(&r->tmp, comm.p, comm.n);
		buf_addc(&r->tmp, 0);
		x->u = profile_thread_intern(r->p, pid, tid, r->tmp.p);
	}
	return (uint32_t)x->u;
}

/* Adds the open record as a sample. Returns 0, or -1 with err when its
 * weight would take the profile past PROFILE_MAX_WEIGHT. */
static int read_end(void *arg, char *err, size_t errlen)
{
	struct reader *r = arg;
	if (!r->rec.open)
		return 0;
	grow_array((void **)&r->root_first, &r->root_cap, r->nframes + 1, sizeof(*r->root_first));
	size_t k = 0;
	for (size_t g = r->ngroups; g-- > 0;)
		for (size_t i = 0; i < r->groups[g].n; i++)
			r->root_first[k++] = r->frames[r->groups[g].first + i];
	struct sample s = {
		.time_ns = r->rec.time_ns,
		.weight = r->rec.weight,
		.cpu = r->rec.cpu,
		.thread = r->rec.thread,
		.event = r->rec.event,
		.stack = profile_stack_intern(r->p, r->root_first, k),
	};
	if (profile_add_sample(r->p, &s, NULL, 0)) {
		errbuf_set(err, errlen,
			   "line %zu: the periods add up to more than %" PRIu64
			   " (the most one profile holds)",
			   r->rec.line, PROFILE_MAX_WEIGHT);
		return -1;
	}
	if (r->rec.has_time) {
		if (!r->any_time || r->rec.time_ns < r->start_ns)
			r->start_ns = r->rec.time_ns;
		if (!r->any_time || r->rec.time_ns > r->end_ns)
			r->end_ns = r->rec.time_ns;
		r->any_time = true;
	}
	r->rec.open = false;
	r->nframes = r->ngroups = 0;
	return 0;
}

static void start_record(struct reader *r, const struct record_head *rh, size_t line)
{
	struct record *rec = &r->rec;
	memset(rec, 0, sizeof(*rec));
	rec->open = true;
	rec->line = line;
	rec->pid = rh->h.pid.p ? u32_of(rh->h.pid) : 0;
	rec->tid = u32_of(rh->h.tid);
	rec->cpu = rh->cpu;
	rec->time_ns = rh->time_ns;
	rec->has_time = rh->has_time;
	rec->weight = 1;
	if (rh->period.n) {
		uint64_t w = u64_sat(rh->period);
		rec->weight = w ? w : 1;
		rec->weight_too_large = w > PROFILE_MAX_WEIGHT;
	}
	rec->event = intern_event(r, rh->event.n ? rh->event : (struct sv){"samples", 7});
	rec->thread = intern_thread(r, rec->pid, rec->tid, rh->h.comm);
}

static void add_stackline(struct reader *r, const struct stackline *sl, bool java)
{
	struct sv func = strip_offset(sl->func);
	if (func.n && func.p[0] == '(')
		return;
	split_arrows(func, &r->fields);
	if (r->fields.n == 0)
		return;
	bool inlined_mod = sv_eq(sl->mod, "inlined");
	r->mod.n = 0;
	if (!sv_eq(sl->mod, "[unknown]") && !inlined_mod)
		buf_add(&r->mod, sl->mod.p, sl->mod.n);
	buf_addc(&r->mod, 0);
	grow_array((void **)&r->groups, &r->groups_cap, r->ngroups + 1, sizeof(*r->groups));
	r->groups[r->ngroups++] = (struct group){r->nframes, 0};
	for (size_t i = 0; i < r->fields.n; i++) {
		r->name.n = 0;
		bool unknown = clean_append(&r->name, &r->tmp, r->fields.v[i], sl, false, java);
		buf_addc(&r->name, 0);
		enum frame_kind kind;
		if (i > 0 || inlined_mod)
			kind = FRAME_INLINED;
		else if (mod_is_kernel(sl->mod))
			kind = FRAME_KERNEL;
		else if (mod_is_jit(sl->mod))
			kind = FRAME_JIT;
		else if (unknown)
			kind = FRAME_UNKNOWN;
		else
			kind = FRAME_USER;
		uint32_t id = frames_intern(r->p->frames, r->name.p, r->mod.p, "", 0, kind);
		grow_array((void **)&r->frames, &r->frames_cap, r->nframes + 1, sizeof(*r->frames));
		r->frames[r->nframes++] = id;
		r->groups[r->ngroups - 1].n++;
	}
}

static void reader_free(struct reader *r)
{
	table_free(&r->threads);
	table_free(&r->events);
	free(r->name.p);
	free(r->mod.p);
	free(r->tmp.p);
	free(r->key.p);
	free(r->frames);
	free(r->groups);
	free(r->root_first);
	free(r->fields.v);
}

struct profile *perfscript_read(const char *text, size_t len, char *err, size_t errlen)
{
	struct infile in;
	infile_from_memory(&in, text, len);
	struct profile *p = perfscript_read_lines(&in, err, errlen);
	infile_close(&in);
	return p;
}

static int read_begin(void *arg, const struct record_head *rh, size_t line, char *err,
		      size_t errlen)
{
	struct reader *r = arg;
	if (read_end(r, err, errlen))
		return -1;
	start_record(r, rh, line);
	if (r->too_many_events) {
		errbuf_set(err, errlen, "line %zu: more than %d distinct event names", line, MAX_EVENTS);
		return -1;
	}
	if (r->rec.weight_too_large) {
		errbuf_set(err, errlen, "line %zu: the period is too large (at most %" PRIu64 ")", line,
			   PROFILE_MAX_WEIGHT);
		return -1;
	}
	r->java = sv_eq(rh->h.comm, "java");
	return 0;
}

static int read_frame(void *arg, const struct stackline *sl, size_t line, char *err,
		      size_t errlen)
{
	struct reader *r = arg;
	add_stackline(r, sl, r->java);
	if (r->nframes > MAX_RECORD_FRAMES) {
		errbuf_set(err, errlen, "line %zu: %s", line, too_deep);
		return -1;
	}
	return 0;
}

struct profile *perfscript_read_lines(struct infile *in, char *err, size_t errlen)
{
	struct reader r = {0};
	r.p = profile_new();
	profile_meta_set(r.p, "source_format", "perf-script");
	struct scan_counts counts;
	struct record_sink k = {&r, read_begin, read_frame, read_end};
	if (scan_records(in, &k, &counts, err, errlen)) {
		reader_free(&r);
		profile_free(r.p);
		return NULL;
	}
	char num[64];
	if (r.p->nevents)
		profile_meta_set(r.p, "event", r.p->events[0]);
	if (r.any_time) {
		snprintf(num, sizeof(num), "%" PRIu64, r.start_ns);
		profile_meta_set(r.p, "start_ns", num);
		snprintf(num, sizeof(num), "%" PRIu64, r.end_ns);
		profile_meta_set(r.p, "end_ns", num);
		snprintf(num, sizeof(num), "%.6f", (double)(r.end_ns - r.start_ns) / 1e9);
		profile_meta_set(r.p, "duration_s", num);
	}
	if (counts.skipped_lines) {
		snprintf(num, sizeof(num), "%" PRIu64, counts.skipped_lines);
		profile_meta_set(r.p, "input_skipped_lines", num);
	}
	if (counts.unterminated)
		profile_meta_set(r.p, "input_unterminated_records", "1");
	reader_free(&r);
	return r.p;
}

/* --- detection ------------------------------------------------------------- */

/* A stack line as perf prints it: [whitespace] HEXADDR whitespace SYMBOL
 * " (MODULE)". */
static bool looks_like_frame(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t a = i;
	while (i < n && (is_digit((unsigned char)s[i]) || (s[i] >= 'a' && s[i] <= 'f') ||
			 (s[i] >= 'A' && s[i] <= 'F')))
		i++;
	if (i == a || i >= n || (s[i] != ' ' && s[i] != '\t'))
		return false;
	struct stackline sl;
	return parse_stackline(s, n, &sl);
}

bool perfscript_detect(const char *text, size_t len)
{
	if (len > ((size_t)1 << 20))
		len = (size_t)1 << 20;
	struct infile in;
	infile_from_memory(&in, text, len);
	const char *s;
	size_t n, total = 0, good = 0, pairs = 0;
	bool after_header = false, plausible = true;
	while (total < 200 && infile_line(&in, &s, &n, NULL, 0) > 0) {
		if (n && s[n - 1] == '\r')
			n--;
		if (n && s[0] == '#')
			continue;
		if (n == 0) {
			after_header = false;
			continue;
		}
		if (memchr(s, 0, n)) {
			plausible = false;
			break;
		}
		total++;
		struct header h;
		if (parse_header(s, n, &h) && memchr(s + h.rest, ':', n - h.rest)) {
			good++;
			after_header = true;
			continue;
		}
		if (total == 1) {
			plausible = false; /* perf script starts with a record header */
			break;
		}
		if (looks_like_frame(s, n)) {
			good++;
			pairs += after_header;
		}
		after_header = false;
	}
	infile_close(&in);
	return plausible && pairs > 0 && good * 10 >= total * 9;
}

/* ========================================================================= */
/* The registry's entry                                                      */
/* ========================================================================= */

static bool detect_perfscript(const struct format_head *h)
{
	return perfscript_detect((const char *)h->data, h->text);
}

static int collapse_to_folded(struct infile *in, FILE *out, const struct folded_modes *m,
			      char *note, size_t notelen, char *err, size_t errlen)
{
	struct collapse_options o = {
		.pid = m->pid, .tid = m->tid, .kernel = m->kernel, .jit = m->jit, .addrs = m->addrs,
		.event = m->event,
	};
	return perfscript_collapse_lines(in, &o, out, note, notelen, err, errlen);
}

const struct format_entry format_perfscript = {
	.name = "perf-script",
	.aliases = (const char *const[]){"perf", NULL},
	.what = "perf script",
	.detect = detect_perfscript,
	.read_lines = perfscript_read_lines,
	.direct_to = &format_folded,
	.direct = collapse_to_folded,
};
