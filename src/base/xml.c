#include "xml.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "utf8.h"


/* Decodes one UTF-8 sequence from s (n > 0 bytes available) into *cp and
 * returns its length. Anything malformed (stray continuation byte, overlong
 * form, surrogate, > U+10FFFF, cut short) decodes as one U+FFFD per byte, so
 * arbitrary bytes from symbol tables can never break the document. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char b = s[0];
	size_t len;
	uint32_t c, min;
	if (b < 0x80) {
		*cp = b;
		return 1;
	}
	if (b >= 0xc2 && b <= 0xdf) {
		len = 2, c = b & 0x1f, min = 0x80;
	} else if (b >= 0xe0 && b <= 0xef) {
		len = 3, c = b & 0x0f, min = 0x800;
	} else if (b >= 0xf0 && b <= 0xf4) {
		len = 4, c = b & 0x07, min = 0x10000;
	} else {
		*cp = 0xfffd;
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		if (i >= n || (s[i] & 0xc0) != 0x80) {
			*cp = 0xfffd;
			return 1;
		}
		c = c << 6 | (s[i] & 0x3f);
	}
	bool valid = c >= min && c <= 0x10ffff && !(c >= 0xd800 && c <= 0xdfff);
	*cp = valid ? c : 0xfffd;
	return valid ? len : 1;
}

/* What a code point is drawn as: control characters (which XML forbids or
 * which would garble a one-line label) become '?', XML's non-characters
 * U+FFFE/U+FFFF become U+FFFD. */
static uint32_t drawable_char(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return '?';
	if (cp == 0xfffe || cp == 0xffff)
		return 0xfffd;
	return cp;
}

static void put_utf8(FILE *out, uint32_t cp)
{
	char b[4];
	fwrite(b, 1, utf8_encode(cp, b), out);
}

/* Escaping all five specials makes the text safe in attributes and content. */
static void put_xml_char(FILE *out, uint32_t cp)
{
	switch (cp) {
	case '<': fputs("&lt;", out); break;
	case '>': fputs("&gt;", out); break;
	case '&': fputs("&amp;", out); break;
	case '"': fputs("&quot;", out); break;
	case '\'': fputs("&apos;", out); break;
	default: put_utf8(out, drawable_char(cp));
	}
}

/* Writes the first max_chars characters of s (all of it for SIZE_MAX) as
 * escaped XML text. */
void xml_put_text_prefix(FILE *out, const char *s, size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);
	for (size_t written = 0; left > 0 && written < max_chars; written++) {
		uint32_t cp;
		size_t len = utf8_decode(p, left, &cp);
		put_xml_char(out, cp);
		p += len;
		left -= len;
	}
}

void xml_put_text(FILE *out, const char *s)
{
	xml_put_text_prefix(out, s ? s : "", SIZE_MAX);
}

/* Length in characters, counted the way xml_put_text_prefix counts them. */
size_t xml_text_length(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s), chars = 0;
	while (left > 0) {
		uint32_t cp;
		size_t len = utf8_decode(p, left, &cp);
		p += len;
		left -= len;
		chars++;
	}
	return chars;
}

void xml_put_fitted(FILE *out, const char *s, size_t room, size_t min_chars)
{
	if (room < min_chars || room < 2)
		return;
	if (xml_text_length(s) <= room) {
		xml_put_text(out, s);
		return;
	}
	xml_put_text_prefix(out, s, room - 2);
	fputs("..", out);
}
