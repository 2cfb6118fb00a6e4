/* utf8 — code points to UTF-8 (see utf8.h). */
#include "utf8.h"

#include <string.h>

size_t utf8_encode(uint32_t cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

size_t utf8_count(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

void utf8_trim_cut(char *s)
{
	size_t n = strlen(s), start = n;
	/* The last character's first byte: at most 3 continuation bytes back. */
	while (start > 0 && n - start < 4 && ((unsigned char)s[start - 1] & 0xc0) == 0x80)
		start--;
	if (start == 0)
		return;
	unsigned char lead = (unsigned char)s[start - 1];
	size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	if (n - (start - 1) < need)
		s[start - 1] = 0;
}

size_t utf8_from_units(const uint8_t *raw, size_t n, unsigned width, char *out, size_t size)
{
	size_t at = 0, i = 0;
	if (!size)
		return 0;
	for (; i < n; i++) {
		uint32_t c = raw[i * width];
		if (width >= 2)
			c |= (uint32_t)raw[i * width + 1] << 8;
		if (width == 4)
			c |= (uint32_t)raw[i * width + 2] << 16 | (uint32_t)raw[i * width + 3] << 24;
		if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			c = 0xfffd;
		char b[4];
		size_t len = utf8_encode(c, b);
		if (at + len + 1 > size)
			break;
		for (size_t k = 0; k < len; k++)
			out[at++] = b[k];
	}
	out[at] = 0;
	return i;
}
