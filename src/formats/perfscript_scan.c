/* perfscript_scan — perf script text into records: the line grammar (a
 * record header, a stack line) and the one scanner every reader takes its
 * records from (perfscript_scan_records, perfscriptscan.h).
 *
 * The grammar reproduces FlameGraph's stackcollapse-perf.pl (the revision
 * that wrote the corpus's results in shared/corpus/flamegraph: a14f791).
 * Its regular expressions are re-implemented here as small linear scanners
 * whose results equal what Perl's backtracking would capture; the comments
 * at each scanner say why. */
#include "perfscriptscan.h"

#include "errbuf.h"

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
bool perfscript_parse_header(const char *s, size_t n, struct header *h)
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

/* A stack line: Perl's /^\s*(\w+)\s*(.+) \((\S*)\)/ (unanchored at the end).
 * Greedy (.+) ends at the last " (" whose following non-space run holds a
 * ')' (q below); \S* then reaches the last ')' of that run. That q does not
 * depend on where (.+) starts, so the start a is the first one Perl's
 * backtracking tries (whitespace after the word given back first, then the
 * word's own characters) that leaves (.+) at least one character. */
bool perfscript_parse_stackline(const char *s, size_t n, struct stackline *sl)
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

/* The header line's fields: COMM PID[/TID] as perfscript_parse_header reads them, then
 * "[CPU]" and "TIME:" after the PID/TID, and the event with its period: at
 * the end of the line ("[PERIOD] EVENT:", as stackcollapse-perf.pl reads
 * it), else right after the time (a tracepoint's fields follow it). */
static bool parse_record_head(const char *s, size_t n, struct record_head *rh)
{
	memset(rh, 0, sizeof(*rh));
	if (!perfscript_parse_header(s, n, &rh->h))
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

int perfscript_scan_records(struct infile *in, const struct record_sink *k, struct scan_counts *c,
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
		} else if (open && perfscript_parse_stackline(s, n, &sl)) {
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
