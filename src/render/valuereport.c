/* valuereport — captured values as text and JSON (see valuereport.h). */
#include "valuereport.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "json.h"
#include "util.h"
#include "values.h"

static void json_value(FILE *out, const struct profile *p, const struct hit_value *v)
{
	const struct probe_capture *c = &p->captures[v->capture];
	char buf[128];
	if (c->kind == CAPTURE_BOOL)
		fprintf(out, "%s", v->num ? "true" : "false");
	else if (c->kind == CAPTURE_SIGNED)
		fprintf(out, "%" PRId64, (int64_t)v->num);
	else if (c->kind == CAPTURE_UNSIGNED)
		fprintf(out, "%" PRIu64, v->num);
	else
		json_write_string(out, values_format(p, v, buf, sizeof(buf)));
}

static void json_number(FILE *out, const struct probe_capture *c, int64_t v)
{
	if (c->kind == CAPTURE_UNSIGNED)
		fprintf(out, "%" PRIu64, (uint64_t)v);
	else
		fprintf(out, "%" PRId64, v);
}

static const char *number_text(const struct probe_capture *c, int64_t v, char *buf, size_t size)
{
	if (c->kind == CAPTURE_UNSIGNED)
		snprintf(buf, size, "%" PRIu64, (uint64_t)v);
	else
		snprintf(buf, size, "%" PRId64, v);
	return buf;
}

void valuereport_text(FILE *out, const struct profile *p, uint32_t probe, struct printable *keep)
{
	const struct probe_info *pi = &p->probes[probe];
	bool any = pi->predicate || pi->hits;
	for (size_t c = 0; c < p->ncaptures && !any; c++)
		any = p->captures[c].probe == probe;
	if (!any)
		return;
	fprintf(out, "  hits with values: %" PRIu64, pi->hits);
	if (pi->predicate)
		fprintf(out, " (only those where %s)", printable(keep, pi->predicate));
	fprintf(out, "\n");
	for (size_t c = 0; c < p->ncaptures; c++) {
		const struct probe_capture *cap = &p->captures[c];
		if (cap->probe != probe)
			continue;
		struct value_stats st;
		values_stats(p, (uint32_t)c, NULL, NULL, VALUEREPORT_TOP, &st);
		fprintf(out, "  %s (%s): %" PRIu64 " read", printable(keep, cap->name),
			printable(keep, cap->type), st.count);
		if (st.unread[CAPTURE_OPTIMIZED_OUT])
			fprintf(out, ", %" PRIu64 " optimized out", st.unread[CAPTURE_OPTIMIZED_OUT]);
		if (st.unread[CAPTURE_UNAVAILABLE])
			fprintf(out, ", %" PRIu64 " %s", st.unread[CAPTURE_UNAVAILABLE],
				cap->kind == CAPTURE_PYTHON
					? "where the function has no argument or local of that name"
					: "not available at this address");
		if (st.unread[CAPTURE_FAULT])
			fprintf(out, ", %" PRIu64 " read errors", st.unread[CAPTURE_FAULT]);
		char a[32], b[32];
		if (st.number && st.count)
			fprintf(out, "; min %s, max %s, sum %.0f", number_text(cap, st.min, a, 32),
				number_text(cap, st.max, b, 32), st.sum);
		fprintf(out, "\n");
		if (st.ntop) {
			fprintf(out, "    top:");
			for (size_t t = 0; t < st.ntop; t++) {
				char buf[128];
				const char *text = values_format(p, st.top[t].value, buf, sizeof(buf));
				if (cap->kind == CAPTURE_STRING)
					fprintf(out, "%s \"%s\" x%" PRIu64, t ? "," : "",
						printable(keep, text), st.top[t].count);
				else
					fprintf(out, "%s %s x%" PRIu64, t ? "," : "", printable(keep, text),
						st.top[t].count);
			}
			fprintf(out, "\n");
		}
		values_stats_free(&st);
	}
}

/* The "values" object; each variable after `indent` (report: on a line of
 * its own). */
static void values_json(FILE *out, const struct profile *p, uint32_t probe, const char *indent)
{
	fprintf(out, "{");
	int n = 0;
	for (size_t c = 0; c < p->ncaptures; c++) {
		const struct probe_capture *cap = &p->captures[c];
		if (cap->probe != probe)
			continue;
		struct value_stats st;
		values_stats(p, (uint32_t)c, NULL, NULL, VALUEREPORT_TOP, &st);
		fprintf(out, "%s%s", n++ ? "," : "", indent);
		json_write_string(out, cap->name);
		fprintf(out, ": {\"type\": ");
		json_write_string(out, cap->type);
		fprintf(out, ", \"count\": %" PRIu64, st.count);
		if (st.number && st.count) {
			fprintf(out, ", \"min\": ");
			json_number(out, cap, st.min);
			fprintf(out, ", \"max\": ");
			json_number(out, cap, st.max);
			fprintf(out, ", \"sum\": %.0f", st.sum);
		}
		fprintf(out, ", \"top\": [");
		for (size_t t = 0; t < st.ntop; t++) {
			fprintf(out, "%s[", t ? ", " : "");
			json_value(out, p, st.top[t].value);
			fprintf(out, ", %" PRIu64 "]", st.top[t].count);
		}
		fprintf(out, "], \"optimized_out\": %" PRIu64 ", \"read_errors\": %" PRIu64
			     ", \"unavailable\": %" PRIu64 "}",
			st.unread[CAPTURE_OPTIMIZED_OUT], st.unread[CAPTURE_FAULT],
			st.unread[CAPTURE_UNAVAILABLE]);
		values_stats_free(&st);
	}
	fprintf(out, "}");
}

void valuereport_json(FILE *out, const struct profile *p, uint32_t probe)
{
	const struct probe_info *pi = &p->probes[probe];
	fprintf(out, ", \"hits\": %" PRIu64 ", \"predicate\": ", pi->hits);
	if (pi->predicate)
		json_write_string(out, pi->predicate);
	else
		fprintf(out, "null");
	fprintf(out, ", \"values\": ");
	values_json(out, p, probe, "\n       ");
}

void valuereport_json_values(FILE *out, const struct profile *p, uint32_t probe)
{
	values_json(out, p, probe, "");
}

/* ---- --by ---------------------------------------------------------------- */

struct by_row {
	const struct hit_value *value; /* NULL: calls with no value (not captured) */
	uint64_t calls, view_calls, samples;
};

struct by_split {
	struct by_row *rows;
	size_t n, cap;
	struct hashmap index; /* value key -> row (hashed keys) */
	struct hashmap spans; /* span id -> hit, for values_of_span */
};

static bool same_value(const struct hit_value *a, const struct hit_value *b)
{
	if (!a || !b)
		return a == b;
	if (a->status != b->status)
		return false;
	if (a->status != CAPTURE_OK)
		return true;
	return a->text || b->text ? a->text == b->text : a->num == b->num;
}

static struct by_row *row_of(struct by_split *s, const struct hit_value *v)
{
	uint64_t key = !v ? 1 : v->status ? 2u + v->status : v->text ? hash_str(v->text, 3) : hash_bytes(&v->num, 8, 5);
	size_t pos;
	for (uint64_t *slot = hashmap_first(&s->index, key, &pos); slot;
	     slot = hashmap_again(&s->index, key, &pos))
		if (same_value(s->rows[*slot].value, v))
			return &s->rows[*slot];
	grow_array((void **)&s->rows, &s->cap, s->n + 1, sizeof(*s->rows));
	s->rows[s->n] = (struct by_row){.value = v};
	hashmap_add(&s->index, key, s->n);
	return &s->rows[s->n++];
}

static int cmp_rows(const void *a, const void *b)
{
	const struct by_row *x = a, *y = b;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->samples > y->samples ? -1 : x->samples < y->samples;
}

static int split(const struct profile *p, const struct view *v, const char *var,
		 struct by_split *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	if (v->span_class == SPAN_ANY)
		return errbuf_set(err, errlen, "--by %s needs the function whose calls it splits: "
					       "--in, --slow or --fast FUNC",
				  var);
	if (v->probe < p->nprobes && p->probes[v->probe].point >= 0)
		return errbuf_set(err, errlen,
				  "--by %s: %s is a line, whose values belong to no call: --by splits "
				  "a function's calls by a value at their entry (--trace 'FUNC %s')",
				  var, p->probes[v->probe].name, var);
	int c = values_capture_find(p, v->probe, var);
	if (c < 0) {
		char names[256] = "";
		size_t len = 0;
		for (size_t i = 0; i < p->ncaptures; i++)
			if (p->captures[i].probe == v->probe && len + strlen(p->captures[i].name) + 4 < sizeof(names))
				len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
							len ? ", " : "", p->captures[i].name);
		return errbuf_set(err, errlen, "%s does not capture %s (it captures: %s); trace it with "
					       "--trace '%s %s'",
				  p->probes[v->probe].name, var, len ? names : "nothing",
				  p->probes[v->probe].name, var);
	}
	for (size_t h = 0; h < p->nhits; h++) {
		const struct probe_hit *hit = &p->hits[h];
		if (hit->probe != v->probe || !view_takes_thread_at(v, p, hit->thread, hit->time_ns))
			continue;
		const struct hit_value *val = NULL;
		for (uint32_t i = 0; i < hit->n; i++)
			if (p->hit_values[hit->first + i].capture == (uint32_t)c)
				val = &p->hit_values[hit->first + i];
		row_of(s, val)->calls++;
	}
	for (size_t i = 0; i < p->nspans; i++) {
		const struct span *sp = &p->spans[i];
		if (!view_takes_call(v, p, sp))
			continue;
		row_of(s, values_of_span(p, &s->spans, (uint32_t)c, sp->id))->view_calls++;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *smp = &p->samples[i];
		if (!view_takes(v, p, smp))
			continue;
		uint64_t span_id = profile_sample_call(p, smp, v->probe);
		row_of(s, values_of_span(p, &s->spans, (uint32_t)c, span_id))->samples += smp->weight;
	}
	if (s->n > 1)
		qsort(s->rows, s->n, sizeof(*s->rows), cmp_rows);
	return 0;
}

static void split_free(struct by_split *s)
{
	free(s->rows);
	hashmap_free(&s->index);
	hashmap_free(&s->spans);
}

int valuereport_by_check(const struct profile *p, const struct view *v, const char *var,
			 char *err, size_t errlen)
{
	struct by_split s;
	if (split(p, v, var, &s, err, errlen))
		return -1;
	split_free(&s);
	return 0;
}

static const char *row_text(const struct profile *p, const struct by_row *r, char *buf,
			    size_t size)
{
	if (!r->value) {
		snprintf(buf, size, "<no value>");
		return buf;
	}
	return values_format(p, r->value, buf, size);
}

int valuereport_by_text(FILE *out, const struct valuereport_by *by, struct printable *keep,
			char *err, size_t errlen)
{
	const struct profile *p = by->p;
	const struct view *v = by->v;
	const char *var = by->var;
	struct by_split s;
	if (split(p, v, var, &s, err, errlen))
		return -1;
	fprintf(out, "\nCalls of %s by %s:\n  %-24s %10s %10s %10s\n", printable(keep, p->probes[v->probe].name),
		printable(keep, var), "VALUE", "CALLS", "IN VIEW", "SAMPLES");
	for (size_t i = 0; i < s.n; i++) {
		char buf[128];
		fprintf(out, "  %-24s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
			printable(keep, row_text(p, &s.rows[i], buf, sizeof(buf))), s.rows[i].calls,
			s.rows[i].view_calls, s.rows[i].samples);
	}
	fprintf(out, "  (CALLS: every call of the view's threads with its value at entry; IN VIEW: "
		     "calls with a record the view takes; SAMPLES: samples the view takes inside "
		     "them)\n");
	split_free(&s);
	return 0;
}

int valuereport_by_json(FILE *out, const struct profile *p, const struct view *v,
			const char *var, char *err, size_t errlen)
{
	struct by_split s;
	if (split(p, v, var, &s, err, errlen))
		return -1;
	fprintf(out, "  \"by\": {\"probe\": ");
	json_write_string(out, p->probes[v->probe].name);
	fprintf(out, ", \"var\": ");
	json_write_string(out, var);
	fprintf(out, ", \"rows\": [");
	for (size_t i = 0; i < s.n; i++) {
		fprintf(out, "%s\n    {\"value\": ", i ? "," : "");
		if (s.rows[i].value && s.rows[i].value->status == CAPTURE_OK)
			json_value(out, p, s.rows[i].value);
		else {
			char buf[64];
			json_write_string(out, row_text(p, &s.rows[i], buf, sizeof(buf)));
		}
		fprintf(out, ", \"calls\": %" PRIu64 ", \"view_calls\": %" PRIu64
			     ", \"samples\": %" PRIu64 "}",
			s.rows[i].calls, s.rows[i].view_calls, s.rows[i].samples);
	}
	fprintf(out, "\n  ]},\n");
	split_free(&s);
	return 0;
}
