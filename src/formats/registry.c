#define _GNU_SOURCE
#include "registry.h"

#include <stdarg.h>
#include <string.h>

#include "errbuf.h"
#include "util.h"

/* The formats, one line each, in the order detection tries them (a
 * stricter format before a looser one) and --help lists them. Each is
 * defined in its own file. */
#define REGISTRY_FORMATS(X)  \
	X(format_recording)  \
	X(format_perfscript) \
	X(format_folded)     \
	X(format_pprof)      \
	X(format_nflx)       \
	X(format_speedscope) \
	X(format_chrometrace)

#define DECLARE(entry) extern const struct format_entry entry;
REGISTRY_FORMATS(DECLARE)
#define ADDRESS(entry) &entry,
const struct format_entry *const registry_formats[] = {REGISTRY_FORMATS(ADDRESS) NULL};
#define NFORMATS (sizeof(registry_formats) / sizeof(registry_formats[0]) - 1)

bool registry_can_read(const struct format_entry *e)
{
	return e->read_lines || e->read_whole || e->read_input;
}

bool registry_can_write(const struct format_entry *e)
{
	return e->write || e->save;
}

const struct format_entry *registry_find(const char *name)
{
	for (size_t i = 0; i < NFORMATS; i++) {
		const struct format_entry *e = registry_formats[i];
		if (!strcmp(name, e->name))
			return e;
		for (const char *const *a = e->aliases; a && *a; a++)
			if (!strcmp(name, *a))
				return e;
	}
	return NULL;
}

const struct format_entry *registry_for_output(const char *path)
{
	const struct format_entry *best = NULL;
	size_t n = strlen(path), best_len = 0;
	for (size_t i = 0; i < NFORMATS; i++) {
		const struct format_entry *e = registry_formats[i];
		for (const char *const *s = e->suffixes; s && *s; s++) {
			size_t m = strlen(*s);
			if (m > best_len && n >= m && !strcmp(path + n - m, *s)) {
				best = e;
				best_len = m;
			}
		}
	}
	return best;
}

/* Text detection looks at whole lines: a head cut mid-line loses its last. */
static size_t whole_lines(const uint8_t *head, size_t len, bool complete)
{
	if (complete)
		return len;
	const uint8_t *nl = memrchr(head, '\n', len);
	return nl ? (size_t)(nl - head) + 1 : 0;
}

/* Appends to buf (len bytes, *pos of them used), truncating. */
static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	if (*pos >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos = (size_t)n < len - *pos ? *pos + (size_t)n : len;
}

/* "a", "a and b", "a, b and c" (`last` = " and ", " or "). */
static void join(char *buf, size_t len, const char *const *items, size_t n, const char *last)
{
	size_t pos = 0;
	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < n; i++)
		put(buf, len, &pos, "%s%s", i == 0 ? "" : i + 1 == n ? last : ", ", items[i]);
}

/* From the head only, unless a format needs the whole input (a protobuf
 * one, in an input longer than its head) and the head may start one: only
 * then is the input read whole (capped). */
int registry_detect(struct format_input *x, const struct format_entry **found, char *err,
		    size_t errlen)
{
	const uint8_t *data;
	size_t len;
	bool complete;
	char inner[256];
	*found = NULL;
	if (infile_head(&x->in, &data, &len, &complete, inner, sizeof(inner))) {
		errbuf_set(err, errlen, "%s: %s", x->path, inner);
		return -1;
	}
	struct format_head h = {data, len, whole_lines(data, len, complete), complete};
	const struct format_entry *maybe[NFORMATS];
	const char *whats[NFORMATS];
	size_t nmaybe = 0;
	for (size_t i = 0; i < NFORMATS; i++) {
		const struct format_entry *e = registry_formats[i];
		if (e->detect ? e->detect(&h)
			      : e->detect_whole && complete && e->detect_whole(data, len)) {
			*found = e;
			return 0;
		}
		if (e->detect_whole && !complete && e->detect_head(data, len)) {
			whats[nmaybe] = e->what;
			maybe[nmaybe++] = e;
		}
	}
	if (!nmaybe)
		return 0;
	char what[256];
	join(what, sizeof(what), whats, nmaybe, " and ");
	if (filebuf_from_infile(&x->in, what, &x->whole, inner, sizeof(inner))) {
		errbuf_set(err, errlen, "%s: %s", x->path, inner);
		return -1;
	}
	for (size_t i = 0; i < nmaybe; i++) {
		if (maybe[i]->detect_whole(x->whole.data, x->whole.len)) {
			*found = maybe[i];
			break;
		}
	}
	return 0;
}

void registry_list_names(char *buf, size_t len)
{
	const char *names[NFORMATS];
	for (size_t i = 0; i < NFORMATS; i++)
		names[i] = registry_formats[i]->name;
	join(buf, len, names, NFORMATS, " or ");
}

void registry_list_readable(char *buf, size_t len)
{
	const char *whats[NFORMATS];
	size_t n = 0;
	for (size_t i = 0; i < NFORMATS; i++)
		if (registry_can_read(registry_formats[i]))
			whats[n++] = registry_formats[i]->what;
	join(buf, len, whats, n, " and ");
}

#define DESCRIBE_WIDTH 80
#define DESCRIBE_TEXT_COL 29 /* where "what" starts: after "  %-18s %-2s %-3s  " */

/* The words of `text` from column `col`, wrapped at DESCRIBE_WIDTH with
 * continuation lines indented to DESCRIBE_TEXT_COL; ends the line. */
static void put_wrapped(char *buf, size_t len, size_t *pos, size_t col, const char *text)
{
	const char *w = text;
	bool first = true;
	while (*w) {
		size_t n = strcspn(w, " ");
		if (!first && col + 1 + n > DESCRIBE_WIDTH) {
			put(buf, len, pos, "\n%*s", DESCRIBE_TEXT_COL, "");
			col = DESCRIBE_TEXT_COL;
			first = true;
		}
		put(buf, len, pos, "%s%.*s", first ? "" : " ", (int)n, w);
		col += n + !first;
		first = false;
		w += n;
		w += strspn(w, " ");
	}
	put(buf, len, pos, "\n");
}

void registry_describe(char *buf, size_t len)
{
	size_t pos = 0;
	if (len)
		buf[0] = 0;
	put(buf, len, &pos, "  %-18s %-2s %-3s  %s\n", "FORMAT (aliases)", "in", "out",
	    "what: output names that choose it");
	for (size_t i = 0; i < NFORMATS; i++) {
		const struct format_entry *e = registry_formats[i];
		char names[64], text[512];
		size_t npos = 0, tpos = 0;
		names[0] = 0;
		put(names, sizeof(names), &npos, "%s", e->name);
		for (const char *const *a = e->aliases; a && *a; a++)
			put(names, sizeof(names), &npos, "%s%s", a == e->aliases ? " (" : ", ", *a);
		if (e->aliases && e->aliases[0])
			put(names, sizeof(names), &npos, ")");
		text[0] = 0;
		put(text, sizeof(text), &tpos, "%s", e->what);
		if (e->about)
			put(text, sizeof(text), &tpos, " (%s)", e->about);
		for (const char *const *s = e->suffixes; s && *s; s++)
			put(text, sizeof(text), &tpos, "%s%s", s == e->suffixes ? ": " : " ", *s);
		put(buf, len, &pos, "  %-18s %-2s %-3s  ", names, registry_can_read(e) ? "in" : "",
		    registry_can_write(e) ? "out" : "");
		size_t wide = strlen(names) > 18 ? strlen(names) - 18 : 0;
		put_wrapped(buf, len, &pos, DESCRIBE_TEXT_COL + wide, text);
	}
}
