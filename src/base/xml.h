/* xml — text for SVG/HTML documents: always escaped, always valid UTF-8.
 *
 * Names come from symbol tables and may hold any bytes. Malformed UTF-8
 * becomes U+FFFD (one per bad byte), control characters '?', and all five
 * XML specials are escaped, so the text is safe in content and attributes
 * and the document always parses. Characters are counted as written, for
 * truncating labels to a box. */
#ifndef SONDE_XML_H
#define SONDE_XML_H

#include <stddef.h>
#include <stdio.h>

/* Writes s (NULL = "") escaped. */
void xml_put_text(FILE *out, const char *s);

/* Writes the first max_chars characters of s escaped. */
void xml_put_text_prefix(FILE *out, const char *s, size_t max_chars);

/* s's length in characters as xml_put_text_prefix counts them. */
size_t xml_text_length(const char *s);

/* A label for a box room characters wide: all of s when it fits, else its
 * start and "..", and nothing when room < min_chars (flame graph rules). */
void xml_put_fitted(FILE *out, const char *s, size_t room, size_t min_chars);

#endif
