#define _GNU_SOURCE
/* values — captures, hits and their summaries (see values.h). */
#include "values.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde_abi.h"
#include "utf8.h"
#include "util.h"

/* The kernel's values record uses capdesc.h's numbers. */
_Static_assert(CAPTURE_MAX == SONDE_CAPTURES, "capture count");
_Static_assert(CAPTURE_STR_MAX == SONDE_CAPTURE_STR, "capture string size");
_Static_assert((int)CAPTURE_OK == (int)SONDE_VAL_OK && (int)CAPTURE_FAULT == (int)SONDE_VAL_FAULT &&
		       (int)CAPTURE_OPTIMIZED_OUT == (int)SONDE_VAL_OPTIMIZED_OUT &&
		       (int)CAPTURE_UNAVAILABLE == (int)SONDE_VAL_UNAVAILABLE,
	       "capture status");

static const char *const kind_names[] = {
	[CAPTURE_SIGNED] = "signed", [CAPTURE_UNSIGNED] = "unsigned", [CAPTURE_BOOL] = "bool",
	[CAPTURE_ENUM] = "enum",     [CAPTURE_POINTER] = "pointer",   [CAPTURE_STRING] = "string",
	[CAPTURE_FLOAT] = "float",   [CAPTURE_PYTHON] = "python",
};
static const char *const status_names[] = {"ok", "read_error", "optimized_out", "unavailable"};

const char *values_kind_name(enum capture_kind k)
{
	return (unsigned)k < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[k] : "signed";
}

int values_kind_from_name(const char *s)
{
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (s && strcmp(s, kind_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *values_status_name(uint8_t status)
{
	return status < 4 ? status_names[status] : "read_error";
}

int values_status_from_name(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (s && strcmp(s, status_names[i]) == 0)
			return i;
	return -1;
}

bool values_kind_is_number(enum capture_kind k)
{
	return k == CAPTURE_SIGNED || k == CAPTURE_UNSIGNED || k == CAPTURE_BOOL ||
	       k == CAPTURE_FLOAT;
}

uint32_t values_capture_intern(struct profile *p, const struct probe_capture *like)
{
	uint32_t probe = like->probe, nenums = like->nenums;
	const char *name = like->name, *type = like->type;
	enum capture_kind kind = like->kind;
	const struct capture_enumerator *enums = like->enums;
	for (size_t i = 0; i < p->ncaptures; i++) {
		const struct probe_capture *c = &p->captures[i];
		if (c->probe == probe && strcmp(c->name, name) == 0 && strcmp(c->type, type) == 0 &&
		    c->kind == kind)
			return (uint32_t)i;
	}
	grow_array((void **)&p->captures, &p->captures_cap, p->ncaptures + 1, sizeof(*p->captures));
	struct probe_capture *c = &p->captures[p->ncaptures];
	*c = (struct probe_capture){.probe = probe, .name = xstrdup(name), .type = xstrdup(type),
				    .kind = kind};
	if (nenums) {
		c->enums = xmalloc(nenums * sizeof(*c->enums));
		for (uint32_t k = 0; k < nenums; k++) {
			c->enums[k].value = enums[k].value;
			c->enums[k].name = xstrdup(enums[k].name);
		}
		c->nenums = nenums;
	}
	return (uint32_t)p->ncaptures++;
}

uint32_t values_next_layout(const struct profile *p, uint32_t probe)
{
	return probe < p->nprobes ? p->probes[probe].capture_layout + 1 : 1;
}

uint32_t values_set_probe(struct profile *p, uint32_t probe, const uint32_t *captures,
			  uint32_t n, const char *predicate)
{
	if (probe >= p->nprobes)
		return 0;
	struct probe_info *pi = &p->probes[probe];
	if (n > CAPTURE_MAX)
		n = CAPTURE_MAX;
	memcpy(pi->capture_slot, captures, n * sizeof(*captures));
	pi->ncapture_slots = n;
	free(pi->predicate);
	pi->predicate = predicate ? xstrdup(predicate) : NULL;
	pi->capture_layout = values_next_layout(p, probe);
	return pi->capture_layout;
}

uint32_t values_add_hit(struct profile *p, const struct probe_hit *h, const struct hit_value *v,
			uint32_t n)
{
	grow_array((void **)&p->hits, &p->hits_cap, p->nhits + 1, sizeof(*p->hits));
	grow_array((void **)&p->hit_values, &p->hit_values_cap, p->nhit_values + n,
		   sizeof(*p->hit_values));
	struct probe_hit *x = &p->hits[p->nhits];
	*x = *h;
	x->first = (uint32_t)p->nhit_values;
	x->n = n;
	memcpy(&p->hit_values[p->nhit_values], v, n * sizeof(*v));
	p->nhit_values += n;
	if (h->probe < p->nprobes)
		p->probes[h->probe].hits++;
	return (uint32_t)p->nhits++;
}

/* A double as Python's repr writes it: the fewest digits that read back
 * as the same double, positional from 1e-4 to below 1e16 (with ".0" on an
 * integral one), else in exponent form (1e+16, 2.5e-05). */
static void float_repr(double d, char *buf, size_t size)
{
	if (isnan(d) || isinf(d)) {
		snprintf(buf, size, "%s", isnan(d) ? "nan" : d < 0 ? "-inf" : "inf");
		return;
	}
	char e[40];
	int prec = 0;
	for (; prec < 17; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec, d);
		if (strtod(e, NULL) == d)
			break;
	}
	int exp = atoi(strchr(e, 'e') + 1);
	if (exp < -4 || exp >= 16) {
		/* Python's exponent has at least two digits and no '+0' padding
		 * beyond them: 1e+16, 1.5e-05, as C's. */
		char *m = strchr(e, 'e');
		*m = 0;
		snprintf(buf, size, "%se%c%02d", e, exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
		return;
	}
	int decimals = prec - exp > 0 ? prec - exp : 0;
	snprintf(buf, size, "%.*f", decimals, d);
	if (!strchr(buf, '.'))
		snprintf(buf + strlen(buf), size - strlen(buf), ".0");
}

/* A py: probe's value (the kernel's pytype, value word and bytes) as
 * Python's repr shows it, into buf: 42, 'GET', None, True, 2.5, <list
 * object>; a str longer than was read ends in ...; an int past 64 bits
 * is said so. NULL for a value that is not one (no local of that name:
 * *status says so). */
static const char *py_value_text(uint8_t pytype, uint64_t num, const char *raw, char *buf,
				 size_t size, uint8_t *status)
{
	char text[4 * CAPTURE_STR_MAX + 1];
	switch (pytype) {
	case SONDE_PYV_INT:
		snprintf(buf, size, "%" PRId64, (int64_t)num);
		return buf;
	case SONDE_PYV_UINT:
		snprintf(buf, size, "%" PRIu64, num);
		return buf;
	case SONDE_PYV_BIGINT:
		snprintf(buf, size, "<%sint of more than 64 bits>", (int64_t)num < 0 ? "negative " : "");
		return buf;
	case SONDE_PYV_BOOL:
		return num ? "True" : "False";
	case SONDE_PYV_FLOAT: {
		double d;
		memcpy(&d, &num, sizeof(d));
		float_repr(d, buf, size);
		return buf;
	}
	case SONDE_PYV_NONE:
		return "None";
	case SONDE_PYV_UNBOUND:
		return "<unbound>";
	case SONDE_PYV_STR:
	case SONDE_PYV_STR1:
	case SONDE_PYV_STR2:
	case SONDE_PYV_STR4: {
		if (pytype == SONDE_PYV_STR) {
			snprintf(text, sizeof(text), "%s", raw);
		} else {
			unsigned width = pytype == SONDE_PYV_STR1 ? 1 : pytype == SONDE_PYV_STR2 ? 2 : 4;
			size_t units = (CAPTURE_STR_MAX - 4) / width;
			utf8_from_units((const uint8_t *)raw, num < units ? (size_t)num : units, width,
					text, sizeof(text));
		}
		utf8_trim_cut(text);
		size_t at = 0;
		buf[at++] = '\'';
		for (const unsigned char *c = (const unsigned char *)text; *c && at + 6 < size; c++) {
			/* As repr escapes them: quotes, backslashes, control characters. */
			static const char named[] = {['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};
			if (*c == '\'' || *c == '\\') {
				buf[at++] = '\\';
				buf[at++] = (char)*c;
			} else if (*c < sizeof(named) && named[*c]) {
				buf[at++] = '\\';
				buf[at++] = named[*c];
			} else if (*c < 0x20 || *c == 0x7f) {
				at += (size_t)snprintf(buf + at, size - at, "\\x%02x", *c);
			} else {
				buf[at++] = (char)*c;
			}
		}
		buf[at++] = '\'';
		buf[at] = 0;
		if (utf8_count(text) < num)
			snprintf(buf + at, size - at, "...");
		return buf;
	}
	case SONDE_PYV_OTHER:
		snprintf(buf, size, "<%s object>", raw[0] ? raw : "?");
		return buf;
	default:
		*status = CAPTURE_UNAVAILABLE;
		return NULL;
	}
}

/* The text a value keeps (interned), or NULL for a plain number. */
static const char *value_text(struct profile *p, const struct probe_capture *c, uint64_t num,
			      const char *str)
{
	switch (c->kind) {
	case CAPTURE_STRING:
		return frames_strdup(p->frames, str);
	case CAPTURE_BOOL:
		return frames_strdup(p->frames, num ? "true" : "false");
	case CAPTURE_ENUM:
		for (uint32_t k = 0; k < c->nenums; k++)
			if ((uint64_t)c->enums[k].value == num ||
			    (uint32_t)c->enums[k].value == (uint32_t)num)
				return frames_strdup(p->frames, c->enums[k].name);
		return NULL;
	default:
		return NULL;
	}
}

int values_add_record(struct profile *p, const struct sonde_values *r, uint32_t thread)
{
	if (r->probe >= p->nprobes)
		return -1;
	const struct probe_info *pi = &p->probes[r->probe];
	if (r->layout != pi->capture_layout)
		return -2;
	struct hit_value v[CAPTURE_MAX];
	uint32_t n = pi->ncapture_slots < r->nvalues ? pi->ncapture_slots : r->nvalues;
	if (n > CAPTURE_MAX)
		n = CAPTURE_MAX;
	for (uint32_t i = 0; i < n; i++) {
		const struct probe_capture *c = &p->captures[pi->capture_slot[i]];
		char str[CAPTURE_STR_MAX + 1];
		memcpy(str, r->str[i], CAPTURE_STR_MAX);
		str[CAPTURE_STR_MAX] = 0;
		v[i] = (struct hit_value){.capture = pi->capture_slot[i], .status = r->status[i],
					  .num = r->value[i]};
		if (v[i].status == CAPTURE_OK && c->kind == CAPTURE_PYTHON) {
			char buf[4 * CAPTURE_STR_MAX + 64];
			const char *t = py_value_text(r->pytype[i], r->value[i], str, buf, sizeof(buf),
						      &v[i].status);
			v[i].text = t ? frames_strdup(p->frames, t) : NULL;
		} else if (v[i].status == CAPTURE_OK) {
			v[i].text = value_text(p, c, r->value[i], str);
		}
	}
	struct probe_hit h = {.time_ns = r->hdr.time_ns, .span_id = r->span_id, .probe = r->probe,
			      .thread = thread};
	values_add_hit(p, &h, v, n);
	return 0;
}

const char *values_format(const struct profile *p, const struct hit_value *v, char *buf,
			  size_t size)
{
	if (v->status != CAPTURE_OK) {
		snprintf(buf, size, "<%s>",
			 v->status == CAPTURE_OPTIMIZED_OUT ? "optimized out"
			 : v->status == CAPTURE_UNAVAILABLE ? "unavailable here"
							      : "read error");
		return buf;
	}
	const struct probe_capture *c = &p->captures[v->capture];
	if (v->text) {
		snprintf(buf, size, "%s", v->text);
		return buf;
	}
	switch (c->kind) {
	case CAPTURE_UNSIGNED:
		snprintf(buf, size, "%" PRIu64, v->num);
		break;
	case CAPTURE_POINTER:
		snprintf(buf, size, "0x%" PRIx64, v->num);
		break;
	case CAPTURE_FLOAT: {
		double d;
		if (strcmp(c->type, "float") == 0) {
			float f;
			uint32_t b = (uint32_t)v->num;
			memcpy(&f, &b, sizeof(f));
			d = f;
		} else {
			memcpy(&d, &v->num, sizeof(d));
		}
		snprintf(buf, size, "%g", d);
		break;
	}
	default:
		snprintf(buf, size, "%" PRId64, (int64_t)v->num);
	}
	return buf;
}

static double number_of(const struct probe_capture *c, const struct hit_value *v)
{
	return c->kind == CAPTURE_UNSIGNED ? (double)v->num : (double)(int64_t)v->num;
}

static int cmp_top(const void *a, const void *b, void *arg)
{
	const struct value_top *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	const struct profile *p = arg;
	const struct probe_capture *c = &p->captures[x->value->capture];
	if (x->value->text && y->value->text)
		return strcmp(x->value->text, y->value->text);
	if (c->kind == CAPTURE_SIGNED || c->kind == CAPTURE_ENUM)
		return (int64_t)x->value->num < (int64_t)y->value->num ? -1
		       : (int64_t)x->value->num > (int64_t)y->value->num ? 1 : 0;
	return x->value->num < y->value->num ? -1 : x->value->num > y->value->num;
}

void values_stats(const struct profile *p, uint32_t capture, values_hit_filter keep, void *arg,
		  size_t max_top, struct value_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (capture >= p->ncaptures)
		return;
	const struct probe_capture *c = &p->captures[capture];
	out->number = values_kind_is_number(c->kind) && c->kind != CAPTURE_FLOAT;
	/* Distinct values: by text (interned, so its pointer) or number. */
	struct hashmap seen = {0};
	struct value_top *all = NULL;
	size_t nall = 0, cap = 0;
	bool first = true;
	for (size_t h = 0; h < p->nhits; h++) {
		const struct probe_hit *hit = &p->hits[h];
		if (hit->probe != c->probe || (keep && !keep(arg, hit)))
			continue;
		for (uint32_t i = 0; i < hit->n; i++) {
			const struct hit_value *v = &p->hit_values[hit->first + i];
			if (v->capture != capture)
				continue;
			if (v->status != CAPTURE_OK) {
				out->unread[v->status < 4 ? v->status : 1]++;
				continue;
			}
			out->count++;
			if (out->number) {
				int64_t s = (int64_t)v->num;
				bool less, more;
				if (c->kind == CAPTURE_UNSIGNED) {
					less = v->num < (uint64_t)out->min;
					more = v->num > (uint64_t)out->max;
				} else {
					less = s < out->min;
					more = s > out->max;
				}
				if (first || less)
					out->min = s;
				if (first || more)
					out->max = s;
				first = false;
				out->sum += number_of(c, v);
			}
			uint64_t key = v->text ? hash_str(v->text, 0x9e37) : hash_bytes(&v->num, 8, 7);
			size_t pos;
			uint64_t *slot = hashmap_first(&seen, key ? key : 1, &pos);
			bool found = false;
			for (; slot; slot = hashmap_again(&seen, key ? key : 1, &pos)) {
				struct value_top *t = &all[*slot];
				if (v->text ? t->value->text == v->text : (!t->value->text && t->value->num == v->num)) {
					t->count++;
					found = true;
					break;
				}
			}
			if (!found) {
				grow_array((void **)&all, &cap, nall + 1, sizeof(*all));
				all[nall] = (struct value_top){.value = v, .count = 1};
				hashmap_add(&seen, key ? key : 1, nall);
				nall++;
			}
		}
	}
	hashmap_free(&seen);
	if (nall > 1)
		qsort_r(all, nall, sizeof(*all), cmp_top, (void *)p);
	out->top = all;
	out->ntop = nall < max_top ? nall : max_top;
}

void values_stats_free(struct value_stats *s)
{
	free(s->top);
	memset(s, 0, sizeof(*s));
}

int values_capture_find(const struct profile *p, uint32_t probe, const char *name)
{
	for (size_t i = 0; i < p->ncaptures; i++)
		if (p->captures[i].probe == probe && strcmp(p->captures[i].name, name) == 0)
			return (int)i;
	return -1;
}

const struct hit_value *values_of_span(const struct profile *p, struct hashmap *index,
				       uint32_t capture, uint64_t span_id)
{
	if (!span_id || capture >= p->ncaptures)
		return NULL;
	if (hashmap_count(index) == 0)
		for (size_t h = 0; h < p->nhits; h++)
			if (p->hits[h].span_id)
				hashmap_set(index, p->hits[h].span_id, h);
	uint64_t h;
	if (!hashmap_get(index, span_id, &h))
		return NULL;
	const struct probe_hit *hit = &p->hits[h];
	for (uint32_t i = 0; i < hit->n; i++)
		if (p->hit_values[hit->first + i].capture == capture)
			return &p->hit_values[hit->first + i];
	return NULL;
}
