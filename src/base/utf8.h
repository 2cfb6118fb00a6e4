/* utf8 — code points to UTF-8, the one encoder: for XML text (xml.c), for
 * the names and values read out of a Python process (its str objects keep
 * their characters as 1, 2 or 4 bytes each, and their UTF-8 is read up to
 * a byte limit). Pure. */
#ifndef SONDE_UTF8_H
#define SONDE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Code point cp (<= 0x10ffff) as UTF-8 into out: its length, 1 to 4. */
size_t utf8_encode(uint32_t cp, char out[4]);

/* n characters of `width` bytes each (1: Latin-1, 2: UCS-2, 4: UCS-4,
 * little-endian) at raw, as UTF-8 into out (size bytes, NUL-terminated):
 * as many whole characters as fit; a code point past 0x10ffff or a
 * surrogate is U+FFFD. Returns the characters written. */
size_t utf8_from_units(const uint8_t *raw, size_t n, unsigned width, char *out, size_t size);

/* Characters (not bytes) in UTF-8 text s. */
size_t utf8_count(const char *s);

/* Cuts off s's last character when its bytes end before it does (a UTF-8
 * text read up to a byte limit). */
void utf8_trim_cut(char *s);

#endif
