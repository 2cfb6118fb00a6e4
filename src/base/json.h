/* json — the few helpers sonde's JSON writers share. */
#ifndef SONDE_JSON_H
#define SONDE_JSON_H

#include <stdio.h>

/* Writes s as a JSON string literal (quotes, escapes, control characters as
 * \u00XX; bytes that are not valid UTF-8 become U+FFFD). */
void json_write_string(FILE *f, const char *s);

#endif
