#include "json.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "util.h"

/* Length of the valid UTF-8 sequence at s, or 0 when it is not valid. */
static int utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	int n = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
	if (n == 0 || (n == 2 && s[0] < 0xC2))
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

void json_write_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	fputc('"', f);
	while (*s) {
		unsigned char c = *s;
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			s++;
		} else if (c == '\n') {
			fputs("\\n", f);
			s++;
		} else if (c == '\t') {
			fputs("\\t", f);
			s++;
		} else if (c < 0x20 || c == 0x7f) { /* DEL too: old Perfetto parsers reject it raw */
			fprintf(f, "\\u%04x", c);
			s++;
		} else {
			int n = utf8_len(s);
			if (n == 0) {
				fputs("\\ufffd", f);
				s++;
			} else if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
				/* C1 controls (U+009B is a CSI to some terminals) */
				fprintf(f, "\\u%04x", s[1]);
				s += 2;
			} else {
				fwrite(s, 1, (size_t)n, f);
				s += n;
			}
		}
	}
	fputc('"', f);
}

void json_write_number(FILE *f, double v)
{
	if (!isfinite(v))
		fputs("null", f);
	else if (v == floor(v) && fabs(v) <= 9007199254740992.0)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.6g", v);
}

/* --- reading ---------------------------------------------------------------- */

struct reader {
	const char *start, *p, *end;
	char *err;
	size_t errlen;
	int depth;
};

static bool bad(struct reader *r, const char *what)
{
	errbuf_set(r->err, r->errlen, "bad JSON at byte %zu: %s", (size_t)(r->p - r->start), what);
	return false;
}

static void skip_space(struct reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static bool literal(struct reader *r, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
		return bad(r, "expected a value");
	r->p += n;
	return true;
}

static size_t digits(struct reader *r)
{
	size_t n = 0;
	while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
		r->p++;
		n++;
	}
	return n;
}

static bool read_number(struct reader *r, struct json_value *v)
{
	const char *from = r->p;
	if (r->p < r->end && *r->p == '-')
		r->p++;
	const char *int_part = r->p;
	size_t n = digits(r);
	if (n == 0 || (n > 1 && *int_part == '0'))
		return bad(r, "malformed number");
	if (r->p < r->end && *r->p == '.') {
		r->p++;
		if (digits(r) == 0)
			return bad(r, "malformed number");
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (digits(r) == 0)
			return bad(r, "malformed number");
	}
	/* strtod needs a terminated copy: the text need not end here. */
	char buf[64];
	size_t len = (size_t)(r->p - from);
	if (len >= sizeof(buf))
		return bad(r, "number too long");
	memcpy(buf, from, len);
	buf[len] = 0;
	v->type = JSON_NUMBER;
	v->number = strtod(buf, NULL);
	return true;
}

static int hex4(const char *s)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* A \uXXXX escape at r->p (after the backslash and 'u'), with a following
 * low surrogate for a high one. */
static bool read_escape_u(struct reader *r, uint32_t *cp)
{
	int hi = r->end - r->p >= 4 ? hex4(r->p) : -1;
	if (hi < 0)
		return bad(r, "bad \\u escape");
	r->p += 4;
	*cp = (uint32_t)hi;
	if (hi >= 0xDC00 && hi <= 0xDFFF)
		return bad(r, "lone low surrogate");
	if (hi < 0xD800 || hi > 0xDBFF)
		return true;
	int lo = r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u' ? hex4(r->p + 2) : -1;
	if (lo < 0xDC00 || lo > 0xDFFF)
		return bad(r, "high surrogate without its low half");
	r->p += 6;
	*cp = 0x10000 + (((uint32_t)hi - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
	return true;
}

/* A string at r->p (at its opening quote) into *out (malloc'd) and *outlen. */
static bool read_string(struct reader *r, char **out, size_t *outlen)
{
	r->p++; /* the quote */
	/* Decoded text is never longer than its source. */
	const char *close = r->p;
	while (close < r->end && *close != '"')
		close += *close == '\\' && close + 1 < r->end ? 2 : 1;
	if (close >= r->end)
		return bad(r, "unterminated string");
	char *s = xmalloc((size_t)(close - r->p) + 1);
	size_t n = 0;
	while (*r->p != '"') {
		unsigned char c = (unsigned char)*r->p;
		if (c < 0x20) {
			free(s);
			return bad(r, "control character in a string");
		}
		if (c != '\\') {
			s[n++] = (char)c;
			r->p++;
			continue;
		}
		r->p++;
		char e = *r->p++;
		uint32_t cp;
		switch (e) {
		case '"': s[n++] = '"'; break;
		case '\\': s[n++] = '\\'; break;
		case '/': s[n++] = '/'; break;
		case 'b': s[n++] = '\b'; break;
		case 'f': s[n++] = '\f'; break;
		case 'n': s[n++] = '\n'; break;
		case 'r': s[n++] = '\r'; break;
		case 't': s[n++] = '\t'; break;
		case 'u':
			if (!read_escape_u(r, &cp)) {
				free(s);
				return false;
			}
			if (cp == 0) {
				free(s);
				return bad(r, "\\u0000 in a string");
			}
			n += put_utf8(s + n, cp); /* at most as long as the escape */
			break;
		default:
			r->p--;
			free(s);
			return bad(r, "bad escape in a string");
		}
	}
	r->p++; /* the closing quote */
	s[n] = 0;
	*out = s;
	*outlen = n;
	return true;
}

static bool read_value(struct reader *r, struct json_value *v);

static struct json_value *add_item(struct json_value *v, size_t *cap)
{
	grow_array((void **)&v->items, cap, v->n + 1, sizeof(*v->items));
	struct json_value *it = &v->items[v->n++];
	memset(it, 0, sizeof(*it));
	return it;
}

/* An array or object at r->p (at its opening bracket). */
static bool read_container(struct reader *r, struct json_value *v, bool object)
{
	if (++r->depth > JSON_MAX_DEPTH)
		return bad(r, "nested too deep");
	char close = object ? '}' : ']';
	v->type = object ? JSON_OBJECT : JSON_ARRAY;
	r->p++;
	size_t cap = 0, kcap = 0;
	skip_space(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		r->depth--;
		return true;
	}
	for (;;) {
		skip_space(r);
		char *key = NULL;
		if (object) {
			size_t klen;
			if (r->p >= r->end || *r->p != '"')
				return bad(r, "expected a member name");
			if (!read_string(r, &key, &klen))
				return false;
			skip_space(r);
			if (r->p >= r->end || *r->p != ':') {
				free(key);
				return bad(r, "expected ':' after a member name");
			}
			r->p++;
		}
		struct json_value *item = add_item(v, &cap);
		if (object) { /* keys[i] exists for every item i, so a failure frees all */
			grow_array((void **)&v->keys, &kcap, v->n, sizeof(*v->keys));
			v->keys[v->n - 1] = key;
		}
		if (!read_value(r, item))
			return false;
		skip_space(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == close) {
			r->p++;
			r->depth--;
			return true;
		}
		return bad(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static bool read_value(struct reader *r, struct json_value *v)
{
	skip_space(r);
	if (r->p >= r->end)
		return bad(r, "expected a value");
	switch (*r->p) {
	case '{':
		return read_container(r, v, true);
	case '[':
		return read_container(r, v, false);
	case '"':
		v->type = JSON_STRING;
		return read_string(r, &v->string, &v->len);
	case 't':
		v->type = JSON_BOOL;
		v->boolean = true;
		return literal(r, "true");
	case 'f':
		v->type = JSON_BOOL;
		return literal(r, "false");
	case 'n':
		return literal(r, "null");
	default:
		if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9'))
			return read_number(r, v);
		return bad(r, "expected a value");
	}
}

static void free_contents(struct json_value *v)
{
	free(v->string);
	for (size_t i = 0; i < v->n; i++) {
		free_contents(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
}

struct json_value *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct reader r = {text, text, text + len, err, errlen, 0};
	struct json_value *v = xcalloc(1, sizeof(*v));
	bool ok = read_value(&r, v);
	if (ok) {
		skip_space(&r);
		if (r.p != r.end)
			ok = bad(&r, "more after the value");
	}
	if (!ok) {
		json_free(v);
		return NULL;
	}
	return v;
}

const struct json_value *json_get(const struct json_value *v, const char *key)
{
	if (!v || v->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], key) == 0)
			return &v->items[i];
	return NULL;
}

void json_free(struct json_value *v)
{
	if (!v)
		return;
	free_contents(v);
	free(v);
}

bool json_equal(const struct json_value *a, const struct json_value *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case JSON_NULL:
		return true;
	case JSON_BOOL:
		return a->boolean == b->boolean;
	case JSON_NUMBER:
		return a->number == b->number;
	case JSON_STRING:
		return a->len == b->len && memcmp(a->string, b->string, a->len) == 0;
	case JSON_ARRAY:
	case JSON_OBJECT:
		if (a->n != b->n)
			return false;
		for (size_t i = 0; i < a->n; i++)
			if ((a->keys && strcmp(a->keys[i], b->keys[i]) != 0) ||
			    !json_equal(&a->items[i], &b->items[i]))
				return false;
		return true;
	}
	return false;
}

void json_write_value(FILE *f, const struct json_value *v)
{
	switch (v->type) {
	case JSON_NULL:
		fputs("null", f);
		return;
	case JSON_BOOL:
		fputs(v->boolean ? "true" : "false", f);
		return;
	case JSON_NUMBER:
		json_write_number(f, v->number);
		return;
	case JSON_STRING:
		json_write_string(f, v->string);
		return;
	case JSON_ARRAY:
	case JSON_OBJECT:
		fputc(v->type == JSON_ARRAY ? '[' : '{', f);
		for (size_t i = 0; i < v->n; i++) {
			if (i)
				fputc(',', f);
			if (v->type == JSON_OBJECT) {
				json_write_string(f, v->keys[i]);
				fputc(':', f);
			}
			json_write_value(f, &v->items[i]);
		}
		fputc(v->type == JSON_ARRAY ? ']' : '}', f);
		return;
	}
}
