#include "printable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The length of the printable character at s (1-4), or 0 when its first
 * byte must be escaped: a control character, or not valid UTF-8. */
static size_t char_len(const unsigned char *s)
{
	unsigned char b = s[0];
	if (b < 0x20 || b == 0x7f)
		return 0;
	if (b < 0x80)
		return 1;
	size_t len;
	unsigned cp, min;
	if (b >= 0xc2 && b <= 0xdf)
		len = 2, cp = b & 0x1f, min = 0x80;
	else if (b >= 0xe0 && b <= 0xef)
		len = 3, cp = b & 0x0f, min = 0x800;
	else if (b >= 0xf0 && b <= 0xf4)
		len = 4, cp = b & 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (cp >= 0x80 && cp <= 0x9f) /* C1: U+009B is a CSI to some terminals */
		return 0;
	return len;
}

/* The escape of one byte: "\\n", "\\x1b"... into e (5 bytes + NUL). */
static size_t escape(unsigned char b, char *e)
{
	switch (b) {
	case '\n': return (size_t)snprintf(e, 6, "\\n");
	case '\r': return (size_t)snprintf(e, 6, "\\r");
	case '\t': return (size_t)snprintf(e, 6, "\\t");
	case 0x1b: return (size_t)snprintf(e, 6, "\\e");
	default: return (size_t)snprintf(e, 6, "\\x%02x", b);
	}
}

/* Whether s needs escaping at all (lines: '\n' and '\t' pass). */
static bool clean(const char *s, bool lines)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t n = char_len(p);
		if (!n && !(lines && (*p == '\n' || *p == '\t')))
			return false;
		p += n ? n : 1;
	}
	return true;
}

/* Writes the escaped form of s into buf (size > 0); returns the length the
 * whole escaped form needs (without NUL), as snprintf does. */
static size_t escape_into(char *buf, size_t size, const char *s, bool lines)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t out = 0;
	bool full = false;
	buf[0] = 0;
	while (*p) {
		char e[8];
		size_t n = char_len(p), elen;
		const char *piece;
		if (n) {
			piece = (const char *)p;
			elen = n;
		} else if (lines && (*p == '\n' || *p == '\t')) {
			piece = (const char *)p;
			elen = n = 1;
		} else {
			elen = escape(*p, e);
			piece = e;
			n = 1;
		}
		if (!full && out + elen < size)
			memcpy(buf + out, piece, elen);
		else
			full = true; /* cut at a whole escape or character */
		if (!full)
			buf[out + elen] = 0;
		out += elen;
		p += n;
	}
	return out;
}

char *printable_copy(char *buf, size_t size, const char *s)
{
	if (!size)
		return buf;
	escape_into(buf, size, s ? s : "", false);
	return buf;
}

static const char *keep_escaped(struct printable *keep, const char *s, bool lines)
{
	if (!s || clean(s, lines))
		return s;
	char one[1];
	size_t need = escape_into(one, sizeof(one), s, lines) + 1;
	char *copy = xmalloc(need);
	escape_into(copy, need, s, lines);
	grow_array((void **)&keep->copies, &keep->cap, keep->n + 1, sizeof(*keep->copies));
	keep->copies[keep->n++] = copy;
	return copy;
}

const char *printable(struct printable *keep, const char *s)
{
	return keep_escaped(keep, s, false);
}

const char *printable_text(struct printable *keep, const char *s)
{
	return keep_escaped(keep, s, true);
}

void printable_free(struct printable *keep)
{
	for (size_t i = 0; i < keep->n; i++)
		free(keep->copies[i]);
	free(keep->copies);
	memset(keep, 0, sizeof(*keep));
}
