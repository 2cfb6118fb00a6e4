/* json — the few helpers sonde's JSON writers share, and a small reader
 * (for answers of the control socket, see ctl.h). */
#ifndef SONDE_JSON_H
#define SONDE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes s as a JSON string literal (quotes, escapes, control characters as
 * \u00XX; bytes that are not valid UTF-8 become U+FFFD). */
void json_write_string(FILE *f, const char *s);

/* Writes a number: integers exactly (up to 2^53), others with 6 significant
 * digits; null for NaN and infinities, which JSON cannot hold. */
void json_write_number(FILE *f, double v);

/* --- reading ------------------------------------------------------------ */

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

/* A parsed value; everything in it belongs to it (json_free). */
struct json_value {
	enum json_type type;
	bool boolean;             /* JSON_BOOL */
	double number;            /* JSON_NUMBER */
	char *string;             /* JSON_STRING: decoded (UTF-8), NUL-terminated */
	size_t len;               /* its length in bytes (a \u0000 in it is refused) */
	struct json_value *items; /* JSON_ARRAY: the elements; JSON_OBJECT: the values */
	char **keys;              /* JSON_OBJECT: the keys, item i's key at i */
	size_t n;                 /* elements or members */
};

#define JSON_MAX_DEPTH 64 /* arrays and objects nested deeper are refused */

/* Parses one JSON text (RFC 8259: one value, whitespace around it) of len
 * bytes. Returns the value, or NULL with one line in err saying what is wrong
 * and at which byte. Never reads past len. */
struct json_value *json_parse(const char *text, size_t len, char *err, size_t errlen);

/* The value of the first member named key, or NULL (also when v is not an
 * object). */
const struct json_value *json_get(const struct json_value *v, const char *key);

void json_free(struct json_value *v);

/* Whether a and b are the same value: same type, numbers equal, strings
 * byte for byte, arrays element by element, objects the same members in
 * the same order. */
bool json_equal(const struct json_value *a, const struct json_value *b);

/* Writes v as JSON text (numbers as json_write_number writes them, so a
 * value parsed from that writer's text is written back as it was). */
void json_write_value(FILE *f, const struct json_value *v);

#endif
