/* liveview — freeing a live view and its text snapshot (see liveview.h).
 *
 * The snapshot is meant to be read by people and split by scripts: it starts
 * with a "--- sonde top at <elapsed>s ---" line, every table has a header
 * row, and every ordering is total (ties are broken by name, then by frame
 * id), so two views with the same content print the same text. */
#define _GNU_SOURCE
#include "liveview.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "printable.h"
#include "util.h"

#define STACK_SHOW 8     /* leaf-most functions shown per hot stack */
#define LABEL_MAX 512

void live_view_free(struct live_view *v)
{
	if (!v)
		return;
	if (v->flame)
		flame_free(v->flame);
	free(v->hot);
	free(v->lines);
	for (size_t i = 0; i < v->nprobes; i++) {
		free((char *)v->probes[i].name);
		free(v->probes[i].buckets);
		free(v->probes[i].in_calls);
		free(v->probes[i].predicate);
		free(v->probes[i].spec);
		free(v->probes[i].values);
	}
	free(v->probes);
	free(v);
}

static double share(double w, double total)
{
	return total > 0 ? 100.0 * w / total : 0;
}

/* A frame as shown: names come from the target's binaries, shown as text
 * (printable.h), never obeyed by the terminal. */
static void label(const struct live_view *v, uint32_t frame, char *buf, size_t size)
{
	char raw[LABEL_MAX];
	if (v->flame)
		flame_frame_label(v->flame, frame, true, raw, sizeof(raw));
	else
		snprintf(raw, sizeof(raw), "frame %u", (unsigned)frame);
	printable_copy(buf, size, raw);
}

const char *live_slow_call_split(const struct live_view *v, const struct live_slow_call *c,
				 char *buf, size_t size)
{
	if (size)
		buf[0] = 0;
	if (!c->split.off_ns || !v->flame || size < 64)
		return buf;
	char on[64];
	int n = snprintf(buf, size, "%s ", call_split_on_text(&c->split, on, sizeof(on)));
	if (n > 0 && (size_t)n < size)
		call_split_off_text(&c->split, v->flame->frames, 3, buf + n, size - (size_t)n);
	return buf;
}

static const char *bytes_text(size_t n, char *buf, size_t size)
{
	if (n >= (size_t)1 << 30)
		snprintf(buf, size, "%.1f GiB", (double)n / (double)(1u << 30));
	else if (n >= (size_t)1 << 20)
		snprintf(buf, size, "%.1f MiB", (double)n / (double)(1u << 20));
	else if (n >= 1024)
		snprintf(buf, size, "%.1f KiB", (double)n / 1024.0);
	else
		snprintf(buf, size, "%zu B", n);
	return buf;
}

/* ---- header ------------------------------------------------------------------ */

static void print_header(FILE *out, const struct live_view *v)
{
	const struct live_status *st = &v->status;
	char mem[32];
	/* process names, commands, functions and filters as typed */
	struct printable keep = {0};
	fprintf(out, "--- sonde top at %.1fs ---\n", st->elapsed_s);
	fprintf(out, "target:   %s\n", printable(&keep, st->target));
	fprintf(out, "sampling: %s\n", printable(&keep, st->sampling));
	if (v->fractional)
		fprintf(out, "window:   %s (decayed weights: shares and rates only)\n", st->window);
	else if (st->time != VIEW_ON_CPU)
		fprintf(out, "window:   %s, %s of %s time in view\n", st->window,
			duration_format((uint64_t)v->total, mem, sizeof(mem)),
			st->time == VIEW_OFF_CPU ? "off-CPU" : "wall-clock");
	else if (st->window_weight > 0)
		fprintf(out, "window:   %s, %.0f of %.0f samples in view (%.1f%%)\n", st->window,
			v->total, st->window_weight, 100.0 * v->total / st->window_weight);
	else
		fprintf(out, "window:   %s, %.0f samples in view\n", st->window, v->total);
	fprintf(out, "view:     %s\n", printable(&keep, st->view));
	fprintf(out, "filter:   %s\n", printable(&keep, st->filter));
	printable_free(&keep);
	fprintf(out, "elapsed:  %.1f s\n", st->elapsed_s);
	fprintf(out, "rates:    %.1f samples/s, %.1f calls/s (last 5 s)\n", st->samples_per_s,
		st->calls_per_s);
	fprintf(out, "received: %llu samples, %llu calls\n", (unsigned long long)st->samples,
		(unsigned long long)st->calls);
	if (st->drops)
		fprintf(out, "drops:    %llu%s%s\n", (unsigned long long)st->drops,
			st->drops_detail[0] ? " " : "", st->drops_detail);
	else
		fprintf(out, "drops:    0\n");
	fprintf(out, "held:     %.1f s of raw data, %s\n", st->held_s,
		bytes_text(st->memory_bytes, mem, sizeof(mem)));
}

/* ---- hottest functions --------------------------------------------------------- */

struct hot_row {
	const struct live_hot *h;
	char *label;
};

static int cmp_hot_row(const void *a, const void *b)
{
	const struct hot_row *x = a, *y = b;
	if (x->h->self != y->h->self)
		return x->h->self < y->h->self ? 1 : -1;
	if (x->h->total != y->h->total)
		return x->h->total < y->h->total ? 1 : -1;
	int c = strcmp(x->label, y->label);
	if (c)
		return c;
	return x->h->frame < y->h->frame ? -1 : x->h->frame > y->h->frame;
}

static void print_hot(FILE *out, const struct live_view *v, size_t top_n)
{
	fprintf(out, "\nHOTTEST FUNCTIONS\n");
	fprintf(out, " SELF%%  TOTAL%%  FUNCTION\n");
	if (!v->nhot) {
		fprintf(out, "(none)\n");
		return;
	}
	struct hot_row *rows = xcalloc(v->nhot, sizeof(*rows));
	char buf[LABEL_MAX];
	for (size_t i = 0; i < v->nhot; i++) {
		rows[i].h = &v->hot[i];
		label(v, v->hot[i].frame, buf, sizeof(buf));
		rows[i].label = xstrdup(buf);
	}
	qsort(rows, v->nhot, sizeof(*rows), cmp_hot_row);
	size_t n = top_n && top_n < v->nhot ? top_n : v->nhot;
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%6.1f  %6.1f  %s\n", share(rows[i].h->self, v->total),
			share(rows[i].h->total, v->total), rows[i].label);
	for (size_t i = 0; i < v->nhot; i++)
		free(rows[i].label);
	free(rows);
}

/* ---- hottest stacks ------------------------------------------------------------------ */

/* Frames ranked by label, so that the tree can be walked in name order
 * whatever order its children were added in. */
struct stack_ctx {
	const struct live_view *v;
	uint32_t *rank; /* by frame id; UINT32_MAX for ids outside the table */
	size_t nrank;
	uint32_t *seen; /* distinct frames of the tree */
	size_t nseen, seen_cap;
	char **labels; /* of seen[i] */
	const struct flame_node **leaves; /* nodes with self weight, in name order */
	size_t nleaves, leaves_cap;
};

static int collect_frame(const struct flame_node *n, int depth, void *arg)
{
	(void)depth;
	struct stack_ctx *c = arg;
	if (n->frame == 0 || n->frame >= c->nrank || c->rank[n->frame] == 1)
		return 0;
	c->rank[n->frame] = 1; /* seen; the real rank comes after sorting */
	grow_array((void **)&c->seen, &c->seen_cap, c->nseen + 1, sizeof(*c->seen));
	c->seen[c->nseen++] = n->frame;
	return 0;
}

static int cmp_seen(const void *a, const void *b, void *arg)
{
	const struct stack_ctx *c = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int r = strcmp(c->labels[i], c->labels[j]);
	if (r)
		return r;
	return c->seen[i] < c->seen[j] ? -1 : c->seen[i] > c->seen[j];
}

static uint32_t rank_of(const struct stack_ctx *c, uint32_t frame)
{
	return frame < c->nrank ? c->rank[frame] : UINT32_MAX;
}

static int cmp_child(const void *a, const void *b, void *arg)
{
	const struct stack_ctx *c = arg;
	const struct flame_node *x = *(const struct flame_node *const *)a;
	const struct flame_node *y = *(const struct flame_node *const *)b;
	uint32_t rx = rank_of(c, x->frame), ry = rank_of(c, y->frame);
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* Pre-order, children by name rank, without recursion (a stack may be far
 * deeper than the C stack): a node's sorted children are pushed last child
 * first, so the first is taken next. */
static void collect_leaves(struct stack_ctx *c, const struct flame_node *root)
{
	const struct flame_node **todo = NULL;
	size_t n = 0, cap = 0;
	grow_array((void **)&todo, &cap, 1, sizeof(*todo));
	todo[n++] = root;
	while (n) {
		const struct flame_node *x = todo[--n];
		if (x->self > 0) {
			grow_array((void **)&c->leaves, &c->leaves_cap, c->nleaves + 1,
				   sizeof(*c->leaves));
			c->leaves[c->nleaves++] = x;
		}
		size_t k = x->nchildren;
		if (!k)
			continue;
		grow_array((void **)&todo, &cap, n + k, sizeof(*todo));
		const struct flame_node **kids = todo + n;
		memcpy(kids, x->children, k * sizeof(*kids));
		qsort_r(kids, k, sizeof(*kids), cmp_child, c);
		for (size_t i = 0; i < k / 2; i++) { /* last child on top */
			const struct flame_node *tmp = kids[i];
			kids[i] = kids[k - 1 - i];
			kids[k - 1 - i] = tmp;
		}
		n += k;
	}
	free(todo);
}

/* By self weight, descending; ties keep the name order of the walk (qsort
 * is not stable, so the walk position is the last key). */
struct leaf_row {
	const struct flame_node *n;
	size_t pos;
};

static int cmp_leaf(const void *a, const void *b)
{
	const struct leaf_row *x = a, *y = b;
	if (x->n->self != y->n->self)
		return x->n->self < y->n->self ? 1 : -1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void print_stack(FILE *out, const struct live_view *v, const struct flame_node *n)
{
	size_t depth = 0;
	for (const struct flame_node *p = n; p && p->parent; p = p->parent)
		depth++;
	if (depth == 0) {
		fprintf(out, "[empty stack]\n");
		return;
	}
	size_t show = depth < STACK_SHOW ? depth : STACK_SHOW;
	const struct flame_node *path[STACK_SHOW];
	const struct flame_node *p = n;
	for (size_t i = show; i > 0; i--, p = p->parent)
		path[i - 1] = p;
	if (depth > show)
		fputs("...;", out);
	char buf[LABEL_MAX];
	for (size_t i = 0; i < show; i++) {
		label(v, path[i]->frame, buf, sizeof(buf));
		fprintf(out, "%s%s", i ? ";" : "", buf);
	}
	fputc('\n', out);
}

static void print_stacks(FILE *out, const struct live_view *v, size_t top_n)
{
	fprintf(out, "\nHOTTEST STACKS\n");
	fprintf(out, "SHARE%%  STACK (root first, leaf last)\n");
	if (!v->flame) {
		fprintf(out, "(none)\n");
		return;
	}
	struct stack_ctx c = {.v = v};
	c.nrank = frames_count(v->flame->frames) + 1;
	c.rank = xcalloc(c.nrank, sizeof(*c.rank));
	flame_walk(v->flame, collect_frame, &c);
	c.labels = xcalloc(c.nseen + 1, sizeof(*c.labels));
	size_t *order = xcalloc(c.nseen + 1, sizeof(*order));
	char buf[LABEL_MAX];
	for (size_t i = 0; i < c.nseen; i++) {
		label(v, c.seen[i], buf, sizeof(buf));
		c.labels[i] = xstrdup(buf);
		order[i] = i;
	}
	qsort_r(order, c.nseen, sizeof(*order), cmp_seen, &c);
	for (size_t i = 0; i < c.nseen; i++)
		c.rank[c.seen[order[i]]] = (uint32_t)i + 2; /* 0, 1: unseen, seen */
	collect_leaves(&c, v->flame->root);

	struct leaf_row *rows = xcalloc(c.nleaves + 1, sizeof(*rows));
	for (size_t i = 0; i < c.nleaves; i++)
		rows[i] = (struct leaf_row){.n = c.leaves[i], .pos = i};
	qsort(rows, c.nleaves, sizeof(*rows), cmp_leaf);
	size_t n = top_n && top_n < c.nleaves ? top_n : c.nleaves;
	if (!n)
		fprintf(out, "(none)\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%6.1f  ", share((double)rows[i].n->self, v->total));
		print_stack(out, v, rows[i].n);
	}
	free(rows);
	for (size_t i = 0; i < c.nseen; i++)
		free(c.labels[i]);
	free(c.labels);
	free(order);
	free(c.seen);
	free(c.rank);
	free(c.leaves);
}

/* ---- probes ---------------------------------------------------------------------------- */

static void print_probe(FILE *out, const struct live_view *v, const struct live_probe_view *p)
{
	char a[16], b[16], c[16], d[16], e[16], name[LABEL_MAX];
	fprintf(out, "\nPROBE %s%s\n", printable_copy(name, sizeof(name), p->name ? p->name : "?"),
		p->attached ? "" : " (untraced)");
	if (p->line) {
		fprintf(out, "  line:     %llu hits since tracing began\n",
			(unsigned long long)p->total_calls);
		return;
	}
	if (v->fractional)
		fprintf(out, "  calls:    %.1f/s in window, %llu since tracing began\n",
			p->calls_per_s, (unsigned long long)p->total_calls);
	else
		fprintf(out, "  calls:    %.0f in window (%.1f/s), %llu since tracing began\n",
			p->calls, p->calls_per_s, (unsigned long long)p->total_calls);
	if (p->predicated)
		fprintf(out, "  entered:  %llu since tracing began; the calls above are those where "
			     "its predicate held\n",
			(unsigned long long)p->entered);
	if (p->calls > 0)
		fprintf(out, "  latency:  p50 %s  p90 %s  p95 %s  p99 %s  max %s\n",
			duration_format(p->p50_ns, a, sizeof(a)),
			duration_format(p->p90_ns, b, sizeof(b)),
			duration_format(p->p95_ns, c, sizeof(c)),
			duration_format(p->p99_ns, d, sizeof(d)),
			duration_format(p->max_ns, e, sizeof(e)));
	else
		fprintf(out, "  latency:  no calls in this window\n");
	if (p->slow_threshold_ns)
		fprintf(out, "  slow:     slower than %s%s%s%s\n",
			duration_format(p->slow_threshold_ns, a, sizeof(a)),
			p->slow_threshold_note[0] ? " (" : "", p->slow_threshold_note,
			p->slow_threshold_note[0] ? ")" : "");
	else
		fprintf(out, "  slow:     no threshold yet (no calls in the window)\n");
	size_t nslow = p->nslow < LIVE_SLOW_KEEP ? p->nslow : LIVE_SLOW_KEEP;
	if (!nslow) {
		fprintf(out, "  latest slow calls: none\n");
		return;
	}
	fprintf(out, "  latest slow calls (newest first):\n");
	fprintf(out, "    %10s  %10s  %8s  %7s  %s\n", "DURATION", "ENDED", "TID", "SAMPLES",
		"TOP FUNCTION");
	for (size_t i = 0; i < nslow; i++) {
		const struct live_slow_call *s = &p->slow[i];
		char ago[24], top[LABEL_MAX];
		uint64_t age = v->now_ns > s->end_ns ? v->now_ns - s->end_ns : 0;
		snprintf(ago, sizeof(ago), "%s ago", duration_format(age, a, sizeof(a)));
		if (s->top_frame)
			label(v, s->top_frame, top, sizeof(top));
		else
			snprintf(top, sizeof(top), "-");
		char split[512];
		live_slow_call_split(v, s, split, sizeof(split));
		fprintf(out, "    %10s  %10s  %8u  %7u  %s%s%s\n",
			duration_format(s->duration_ns, b, sizeof(b)), ago, (unsigned)s->tid,
			(unsigned)s->samples, top, split[0] ? "  " : "", split);
	}
}

void live_view_print(FILE *out, const struct live_view *v, size_t top_n)
{
	print_header(out, v);
	if (!(v->total > 0)) {
		fprintf(out, "\nno samples in this window\n");
	} else {
		print_hot(out, v, top_n);
		print_stacks(out, v, top_n);
	}
	for (size_t i = 0; i < v->nprobes; i++)
		print_probe(out, v, &v->probes[i]);
}

/* ---- JSON ------------------------------------------------------------------------ */

static void json_member(FILE *out, const char *name, bool first)
{
	if (!first)
		fputc(',', out);
	json_write_string(out, name);
	fputc(':', out);
}

static void json_string_member(FILE *out, const char *name, const char *value)
{
	json_member(out, name, false);
	json_write_string(out, value);
}

static void json_number_member(FILE *out, const char *name, double value)
{
	json_member(out, name, false);
	json_write_number(out, value);
}

/* A slow call's off-CPU time by state, as call_split_off_text lists it
 * (largest first), and the whole split as the TUI shows it. */
static void write_split_json(FILE *out, const struct live_view *v, const struct live_slow_call *c)
{
	json_member(out, "off_cpu", false);
	fputc('[', out);
	uint32_t order[CALL_SPLIT_STATES];
	call_split_order(&c->split, order);
	for (uint32_t i = 0; v->flame && i < c->split.nstates; i++) {
		const struct frame_table *ft = v->flame->frames;
		uint32_t k = order[i];
		fprintf(out, "%s{\"state\":", i ? "," : "");
		json_write_string(out, frames_get(ft, c->split.off[k].state)->name);
		fprintf(out, ",\"ns\":%llu,\"in\":", (unsigned long long)c->split.off[k].ns);
		if (c->split.off[k].callee)
			json_write_string(out, frames_get(ft, c->split.off[k].callee)->name);
		else
			fputs("null", out);
		fputc('}', out);
	}
	fputc(']', out);
	char text[512];
	json_string_member(out, "split", live_slow_call_split(v, c, text, sizeof(text)));
}

static const char *time_name(enum view_time t)
{
	switch (t) {
	case VIEW_OFF_CPU: return "off-cpu";
	case VIEW_WALL: return "wall";
	case VIEW_WAKERS: return "wakers";
	case VIEW_ON_CPU: break;
	}
	return "on-cpu";
}

static void write_probe_json(FILE *out, const struct live_view *v,
			     const struct live_probe_view *p)
{
	fputc('{', out);
	json_member(out, "name", true);
	json_write_string(out, p->name ? p->name : "?");
	json_member(out, "attached", false);
	fputs(p->attached ? "true" : "false", out);
	json_member(out, "kind", false);
	json_write_string(out, p->line ? "line" : "function");
	json_number_member(out, "calls_in_window", p->calls);
	json_number_member(out, "calls_per_s", p->calls_per_s);
	json_number_member(out, "p50_ns", (double)p->p50_ns);
	json_number_member(out, "p90_ns", (double)p->p90_ns);
	json_number_member(out, "p95_ns", (double)p->p95_ns);
	json_number_member(out, "p99_ns", (double)p->p99_ns);
	json_number_member(out, "max_ns", (double)p->max_ns);
	json_number_member(out, "total_calls", (double)p->total_calls);
	json_number_member(out, "entered", (double)p->entered);
	json_member(out, "slow_threshold_ns", false);
	if (p->slow_threshold_ns == UINT64_MAX || p->slow_threshold_ns == 0)
		fputs("null", out);
	else
		json_write_number(out, (double)p->slow_threshold_ns);
	json_member(out, "slow_threshold_note", false);
	if (p->slow_threshold_note[0])
		json_write_string(out, p->slow_threshold_note);
	else
		fputs("null", out);
	json_member(out, "buckets", false);
	fputc('[', out);
	for (size_t i = 0; i < p->nbuckets; i++) {
		fprintf(out, "%s[%llu,%llu,", i ? "," : "", (unsigned long long)p->buckets[i].lo_ns,
			(unsigned long long)p->buckets[i].hi_ns);
		json_write_number(out, p->buckets[i].calls);
		fputc(']', out);
	}
	fputc(']', out);
	json_member(out, "spec", false);
	if (p->spec)
		json_write_string(out, p->spec);
	else
		fputs("null", out);
	json_member(out, "predicate", false);
	if (p->predicate)
		json_write_string(out, p->predicate);
	else
		fputs("null", out);
	json_member(out, "values", false);
	fputs(p->values ? p->values : "{}", out);
	json_member(out, "in_calls", false);
	fputc('[', out);
	for (size_t k = 0; k < p->nin_calls; k++) {
		const struct line_in_calls *c = &p->in_calls[k];
		const char *fn = c->probe < v->nprobes && v->probes[c->probe].name
					 ? v->probes[c->probe].name
					 : "?";
		fputs(k ? ",{" : "{", out);
		json_member(out, "probe", true);
		json_write_string(out, fn);
		json_number_member(out, "calls", (double)c->calls);
		json_number_member(out, "hit", (double)c->hit);
		json_number_member(out, "share", line_calls_share(c->hit, c->calls) / 100);
		json_member(out, "slow_ns", false);
		if (c->slow_ns)
			json_write_number(out, (double)c->slow_ns);
		else
			fputs("null", out);
		json_number_member(out, "slow_recorded", (double)c->slow);
		json_number_member(out, "slow_hit", (double)c->slow_hit);
		json_number_member(out, "slow_share", line_calls_share(c->slow_hit, c->slow) / 100);
		fputc('}', out);
	}
	fputc(']', out);
	json_member(out, "slow", false);
	fputc('[', out);
	size_t nslow = p->nslow < LIVE_SLOW_KEEP ? p->nslow : LIVE_SLOW_KEEP;
	for (size_t i = 0; i < nslow; i++) {
		const struct live_slow_call *c = &p->slow[i];
		uint64_t ago = v->now_ns > c->end_ns ? v->now_ns - c->end_ns : 0;
		fprintf(out,
			"%s{\"span_id\":%llu,\"duration_ns\":%llu,\"ago_ns\":%llu,\"pid\":%u,"
			"\"tid\":%u,\"samples\":%u,\"on_cpu_ns\":%llu,\"off_cpu_ns\":%llu,\"top\":",
			i ? "," : "", (unsigned long long)c->span_id,
			(unsigned long long)c->duration_ns, (unsigned long long)ago, (unsigned)c->pid,
			(unsigned)c->tid, (unsigned)c->samples, (unsigned long long)c->split.on_ns,
			(unsigned long long)c->split.off_ns);
		if (c->top_frame && v->flame) {
			char raw[LABEL_MAX];
			flame_frame_label(v->flame, c->top_frame, false, raw, sizeof(raw));
			json_write_string(out, raw);
		} else {
			fputs("null", out);
		}
		write_split_json(out, v, c);
		fputc('}', out);
	}
	fputs("]}", out);
}

void live_view_write_json(FILE *out, const struct live_view *v)
{
	const struct live_status *st = &v->status;
	fputc('{', out);
	json_member(out, "target", true);
	json_write_string(out, st->target);
	json_string_member(out, "sampling", st->sampling);
	json_string_member(out, "window", st->window);
	json_string_member(out, "view", st->view);
	json_string_member(out, "filter", st->filter);
	json_string_member(out, "time", time_name(st->time));
	json_number_member(out, "elapsed_s", st->elapsed_s);
	json_number_member(out, "samples", (double)st->samples);
	json_number_member(out, "samples_per_s", st->samples_per_s);
	json_number_member(out, "calls", (double)st->calls);
	json_number_member(out, "calls_per_s", st->calls_per_s);
	json_number_member(out, "drops", (double)st->drops);
	json_string_member(out, "drops_detail", st->drops_detail);
	json_number_member(out, "held_s", st->held_s);
	json_number_member(out, "memory_bytes", (double)st->memory_bytes);
	json_member(out, "probes", false);
	fputc('[', out);
	for (size_t i = 0; i < v->nprobes; i++) {
		if (i)
			fputc(',', out);
		write_probe_json(out, v, &v->probes[i]);
	}
	fputs("]}", out);
}
