#define _GNU_SOURCE
#include "flamechart.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "errbuf.h"
#include "flame.h"
#include "flamesvg.h"
#include "order.h"
#include "util.h"
#include "view.h"
#include "xml.h"

/* ---- XML text --------------------------------------------------------- */

/* ---- functions: merging, labels, colours ------------------------------ */

void flamechart_funcs_init(struct flamechart_funcs *ff, const struct frame_table *frames)
{
	memset(ff, 0, sizeof(*ff));
	ff->frames = frames;
	ff->root_rgb[0] = ff->root_rgb[1] = ff->root_rgb[2] = 200;
}

void flamechart_funcs_free(struct flamechart_funcs *ff)
{
	strpool_free(&ff->names);
	hashmap_free(&ff->index);
	free(ff->name);
	free(ff->kind);
	free(ff->rgb);
	free(ff->of_frame);
	memset(ff, 0, sizeof(*ff));
}

uint32_t flamechart_funcs_intern(struct flamechart_funcs *ff, const char *name,
				 enum frame_kind kind)
{
	if (!name)
		name = "";
	uint32_t name_id = strpool_id(&ff->names, name, strlen(name));
	bool added;
	uint64_t *fn = hashmap_put(&ff->index, (uint64_t)name_id << 32 | (uint32_t)kind, &added);
	if (!added)
		return (uint32_t)*fn;
	if (ff->n == ff->cap) {
		ff->cap = ff->cap ? ff->cap * 2 : 64;
		ff->name = xrealloc(ff->name, ff->cap * sizeof(*ff->name));
		ff->kind = xrealloc(ff->kind, ff->cap * sizeof(*ff->kind));
	}
	uint32_t i = (uint32_t)ff->n++;
	ff->name[i] = strpool_str(&ff->names, name_id);
	ff->kind[i] = kind;
	*fn = i;
	return i;
}

uint32_t flamechart_funcs_of_frame(struct flamechart_funcs *ff, uint32_t frame)
{
	if (frame >= ff->nof_frame) {
		size_t n = frames_count(ff->frames) + 1;
		if (n <= frame)
			n = (size_t)frame + 1;
		ff->of_frame = xrealloc(ff->of_frame, n * sizeof(*ff->of_frame));
		memset(ff->of_frame + ff->nof_frame, 0, (n - ff->nof_frame) * sizeof(*ff->of_frame));
		ff->nof_frame = n;
	}
	if (!ff->of_frame[frame]) {
		const struct frame *f = frames_get(ff->frames, frame);
		ff->of_frame[frame] = 1 + flamechart_funcs_intern(ff, f ? f->name : "[unknown]",
								   f ? f->kind : FRAME_UNKNOWN);
	}
	return ff->of_frame[frame] - 1;
}

char *flamechart_funcs_label(const struct flamechart_funcs *ff, uint32_t fn)
{
	return xasprintf("%s%s", ff->name[fn], frames_kind_suffix(ff->kind[fn]));
}

/* The colours are flamesvg's own, so a function looks the same in every view. */
void flamechart_funcs_colorize(struct flamechart_funcs *ff)
{
	ff->rgb = xrealloc(ff->rgb, (ff->n ? ff->n : 1) * sizeof(*ff->rgb));
	for (size_t i = 0; i < ff->n; i++)
		flamesvg_color(ff->name[i], ff->kind[i], ff->rgb[i]);
	flamesvg_color(NULL, FRAME_USER, ff->root_rgb);
}

/* ---- the chart -------------------------------------------------------- */

enum {
	DEFAULT_WIDTH = 1200,
	MIN_WIDTH = 200,
	FRAME_HEIGHT = 16,
	FONT_SIZE = 12,
	TITLE_FONT_SIZE = 17,
	MARGIN_X = 10,
	TITLE_BAND = 3 * FONT_SIZE,
	SUBTITLE_BAND = 18,
	AXIS_BAND = 26,
	DETAIL_BAND = 2 * FONT_SIZE + 10,
	MIN_TICK_PX = 90,
};
#define CHAR_WIDTH (0.6 * FONT_SIZE)
#define LABEL_PAD 3.0
#define MIN_LABEL_CHARS 3
#define FALLBACK_INTERVAL_NS 10000000ULL /* 10 ms, when nothing tells the rate */


struct chart {
	const struct profile *p;
	struct flamechart_funcs ff;
	uint32_t *samples; /* indices into p->samples, in time order */
	size_t n;
	uint64_t origin;   /* ns of the left edge */
	uint64_t dur;      /* ns the x axis spans */
	uint64_t sampled;  /* ns covered by samples */
	uint64_t interval; /* the cap on a sample's extent */
	const struct span *span;
	uint32_t thread;   /* a thread index of the drawn thread */
	struct flamechart_box *boxes;
	size_t nboxes, boxes_cap;
	uint32_t maxdepth;
	char *root_label;
	/* geometry */
	int width, height, frames_top;
	double x0, span_px;
	const char *title;
	char *subtitle;
};


struct tid_count {
	uint32_t tid;
	uint64_t count;
	uint32_t index; /* a thread index with this tid */
};

static int by_tid(const void *a, const void *b)
{
	const struct tid_count *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Picks the thread (or span) and its samples, in time order. Which samples
 * is the view engine's to say (view.h): a chart is of on-CPU samples (it
 * draws them in time, each a tick), never of off-CPU intervals, wakers or
 * sonde's own cost (unless show_overhead), as any on-CPU view. */
static int chart_select(struct chart *c, const struct flamechart_options *o, char *err,
			size_t errlen)
{
	const struct profile *p = c->p;
	struct view v = {.show_overhead = o->show_overhead};
	int64_t tid = o->tid > 0 ? o->tid : 0;
	if (o->span_id) {
		int64_t idx = profile_span_find(p, o->span_id);
		if (idx < 0) {
			errbuf_set(err, errlen, "no span with id %" PRIu64 " in the profile", o->span_id);
			return -1;
		}
		c->span = &p->spans[idx];
		c->thread = c->span->thread;
		uint32_t span_tid = c->thread < p->nthreads ? p->threads[c->thread].tid : 0;
		if (tid && (uint64_t)tid != span_tid) {
			errbuf_set(err, errlen, "span %" PRIu64 " ran on thread %u, not %" PRId64,
				o->span_id, span_tid, tid);
			return -1;
		}
		v.span_id = o->span_id;
	} else if (tid) {
		bool found = false;
		for (size_t i = 0; i < p->nthreads && !found; i++)
			if (p->threads[i].tid == (uint64_t)tid) {
				c->thread = (uint32_t)i;
				found = true;
			}
		if (!found) {
			errbuf_set(err, errlen, "no thread with tid %" PRId64 " in the profile", tid);
			return -1;
		}
		v.tid = tid;
	} else {
		/* The busiest thread: most samples the view takes, summed over its
		 * (pid, tid, comm) entries; ties go to the lower tid. Tid 0 is
		 * every CPU's idle task (swapper), not a thread: it is only taken
		 * when nothing else ran. */
		size_t nt = p->nthreads;
		struct tid_count *tc = xcalloc(nt ? nt : 1, sizeof(*tc));
		for (size_t i = 0; i < nt; i++)
			tc[i] = (struct tid_count){p->threads[i].tid, 0, (uint32_t)i};
		for (size_t i = 0; i < p->nsamples; i++)
			if (p->samples[i].thread < nt && view_takes(&v, p, &p->samples[i]))
				tc[p->samples[i].thread].count++;
		qsort(tc, nt, sizeof(*tc), by_tid);
		uint64_t best = 0;
		uint32_t best_tid = 0;
		for (size_t i = 0; i < nt;) {
			size_t j = i;
			uint64_t sum = 0;
			for (; j < nt && tc[j].tid == tc[i].tid; j++)
				sum += tc[j].count;
			/* runs ascend by tid, so a tie keeps the lower one */
			bool real = tc[i].tid != 0, best_real = best > 0 && best_tid != 0;
			bool better = real != best_real ? real : sum > best;
			if (sum > 0 && (best == 0 || better)) {
				best = sum;
				best_tid = tc[i].tid;
				c->thread = tc[i].index;
			}
			i = j;
		}
		free(tc);
		if (!best) {
			errbuf_set(err, errlen,
				   p->nsamples ? "the profile has no on-CPU samples, which a flame "
						 "chart draws"
					       : "the profile has no samples");
			return -1;
		}
		v.tid = p->threads[c->thread].tid;
	}

	c->samples = xmalloc((p->nsamples ? p->nsamples : 1) * sizeof(*c->samples));
	for (size_t i = 0; i < p->nsamples; i++)
		if (view_takes(&v, p, &p->samples[i]))
			c->samples[c->n++] = (uint32_t)i;
	qsort_r(c->samples, c->n, sizeof(*c->samples), profile_cmp_sample_index, (void *)p);
	return 0;
}

/* 1e9 / frequency when the profile says; else the median gap between
 * consecutive samples (the rate they were taken at while on CPU). */
static uint64_t sampling_interval(const struct chart *c)
{
	const char *hz = profile_meta_get(c->p, "frequency_hz");
	uint64_t f = hz ? strtoull(hz, NULL, 10) : 0;
	if (f > 0)
		return 1000000000ULL / f ? 1000000000ULL / f : 1;
	uint64_t *gaps = xmalloc((c->n ? c->n : 1) * sizeof(*gaps));
	size_t ng = 0;
	for (size_t i = 1; i < c->n; i++) {
		uint64_t a = c->p->samples[c->samples[i - 1]].time_ns;
		uint64_t b = c->p->samples[c->samples[i]].time_ns;
		if (b > a)
			gaps[ng++] = b - a;
	}
	uint64_t r = FALLBACK_INTERVAL_NS;
	if (ng) {
		qsort(gaps, ng, sizeof(*gaps), order_u64);
		r = gaps[ng / 2];
	}
	free(gaps);
	return r;
}

static size_t box_add(struct chart *c, uint64_t start, uint64_t end, uint32_t fn, uint32_t depth)
{
	grow_array((void **)&c->boxes, &c->boxes_cap, c->nboxes + 1, sizeof(*c->boxes));
	c->boxes[c->nboxes] = (struct flamechart_box){start, end, fn, depth, 1};
	if (depth > c->maxdepth)
		c->maxdepth = depth;
	return c->nboxes++;
}

/* Stack of sample s as function indices, root first, into *buf (grown). */
static size_t sample_stack(struct chart *c, const struct sample *s, uint32_t **buf, size_t *cap)
{
	const struct profile *p = c->p;
	size_t depth = s->stack < p->nnodes ? p->nodes[s->stack].depth : 0;
	if (depth > *cap) {
		*cap = depth * 2;
		*buf = xrealloc(*buf, *cap * sizeof(**buf));
	}
	size_t n = profile_stack_frames(p, s->stack, *buf, *cap);
	for (size_t i = 0; i < n; i++)
		(*buf)[i] = flamechart_funcs_of_frame(&c->ff, (*buf)[i]);
	return n;
}

/* The classic flame chart: consecutive samples sharing a prefix share its
 * boxes; a gap (a sample cut at the interval) closes every box. */
static void chart_boxes(struct chart *c)
{
	const struct profile *p = c->p;
	c->interval = sampling_interval(c);
	uint64_t first = c->n ? p->samples[c->samples[0]].time_ns : 0;
	uint64_t limit = UINT64_MAX; /* absolute ns no sample may extend past */
	if (c->span) {
		c->origin = c->span->start_ns < first || !c->n ? c->span->start_ns : first;
		limit = c->span->start_ns + c->span->duration_ns;
	} else {
		c->origin = first;
	}
	size_t root = box_add(c, 0, 0, UINT32_MAX, 0);
	c->boxes[root].samples = (uint32_t)c->n;

	size_t cap = 64, prev_n = 0;
	uint32_t *prev = xmalloc(cap * sizeof(*prev)), *cur = xmalloc(cap * sizeof(*cur));
	size_t prev_cap = cap, cur_cap = cap;
	size_t *open = NULL, open_cap = 0;
	uint64_t prev_end = 0, last_end = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct sample *s = &p->samples[c->samples[i]];
		uint64_t t = s->time_ns - c->origin;
		uint64_t e = t + c->interval;
		if (i + 1 < c->n) {
			uint64_t next = p->samples[c->samples[i + 1]].time_ns - c->origin;
			if (next < e)
				e = next;
		}
		if (limit != UINT64_MAX && limit >= c->origin && e > limit - c->origin)
			e = limit - c->origin;
		if (e < t)
			e = t;
		size_t n = sample_stack(c, s, &cur, &cur_cap);
		size_t common = 0;
		if (i > 0 && prev_end >= t)
			while (common < prev_n && common < n && prev[common] == cur[common])
				common++;
		grow_array((void **)&open, &open_cap, n + 1, sizeof(*open));
		for (size_t d = 0; d < common; d++) {
			c->boxes[open[d]].end = e;
			c->boxes[open[d]].samples++;
		}
		for (size_t d = common; d < n; d++)
			open[d] = box_add(c, t, e, cur[d], (uint32_t)d + 1);
		c->sampled += e - t;
		prev_end = last_end = e;
		uint32_t *tmp = prev;
		prev = cur, cur = tmp;
		size_t tc = prev_cap;
		prev_cap = cur_cap, cur_cap = tc;
		prev_n = n;
	}
	free(prev);
	free(cur);
	free(open);

	if (c->span) {
		uint64_t span_end = c->span->start_ns + c->span->duration_ns - c->origin;
		c->dur = span_end > last_end ? span_end : last_end;
		c->boxes[root].start = c->span->start_ns - c->origin;
		c->boxes[root].end = span_end;
	} else {
		c->dur = last_end;
		c->boxes[root].end = last_end;
	}
	if (c->dur == 0)
		c->dur = 1;
}

static void chart_labels(struct chart *c, const struct flamechart_options *o)
{
	const struct profile *p = c->p;
	const struct thread_info *th = c->thread < p->nthreads ? &p->threads[c->thread] : NULL;
	const char *comm = th && th->comm ? th->comm : "?";
	double ms = (double)c->dur / 1e6;
	if (c->span) {
		const char *probe = c->span->probe < p->nprobes ? p->probes[c->span->probe].name : "?";
		c->root_label = xasprintf("%s (span %" PRIu64 ")", probe, c->span->id);
		c->subtitle = xasprintf("%s, thread %s %u/%u: %zu samples in %.3f ms%s", probe, comm,
					th ? th->pid : 0, th ? th->tid : 0, c->n,
					(double)c->span->duration_ns / 1e6,
					c->span->open ? " (still running at the end)" : "");
	} else {
		c->root_label = xasprintf("%s (tid %u)", comm, th ? th->tid : 0);
		c->subtitle = xasprintf("thread %s, pid %u, tid %u: %zu samples over %.3f ms", comm,
					th ? th->pid : 0, th ? th->tid : 0, c->n, ms);
	}
	c->title = o->title && *o->title ? o->title : "Flame Chart";
	c->width = o->width > 0 ? o->width : DEFAULT_WIDTH;
	if (c->width < MIN_WIDTH)
		c->width = MIN_WIDTH;
	c->x0 = MARGIN_X;
	c->span_px = c->width - 2 * MARGIN_X;
	c->frames_top = TITLE_BAND + SUBTITLE_BAND + AXIS_BAND;
	c->height = c->frames_top + (int)(c->maxdepth + 1) * FRAME_HEIGHT + DETAIL_BAND;
}

/* The label rule flamesvg uses, so both views read alike. */
static void put_label(FILE *out, const char *name, double width)
{
	double room = floor((width - 2 * LABEL_PAD) / CHAR_WIDTH);
	if (room >= 0)
		xml_put_fitted(out, name, (size_t)room, MIN_LABEL_CHARS);
}

/* Tick spacing: 1, 2 or 5 times a power of ten ns, at least MIN_TICK_PX apart. */
static double tick_step(double dur_ns, double span_px)
{
	double want = dur_ns * MIN_TICK_PX / span_px;
	double mag = pow(10, floor(log10(want > 1 ? want : 1)));
	double steps[] = {1, 2, 5, 10};
	for (int i = 0; i < 4; i++)
		if (steps[i] * mag >= want)
			return steps[i] * mag;
	return 10 * mag;
}

static void write_axis(const struct chart *c, FILE *out)
{
	double step = tick_step((double)c->dur, c->span_px);
	double step_ms = step / 1e6;
	int decimals = step_ms >= 1 ? 0 : (int)ceil(-log10(step_ms) - 1e-9);
	int y = TITLE_BAND + SUBTITLE_BAND + AXIS_BAND - 6;
	fputs("<g id=\"axis\">\n", out);
	fprintf(out, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" class=\"axl\"/>\n", c->x0,
		y, c->x0 + c->span_px, y);
	for (double t = 0; t <= (double)c->dur + step * 1e-9; t += step) {
		double x = c->x0 + t / (double)c->dur * c->span_px;
		fprintf(out, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" class=\"axl\"/>", x,
			y - 4, x, y);
		/* labels at the edges are kept inside the image */
		const char *edge = x - c->x0 < 30 ? " axs" : c->x0 + c->span_px - x < 30 ? " axe" : "";
		fprintf(out, "<text x=\"%.2f\" y=\"%d\" class=\"axt%s\">%.*f ms</text>\n", x,
			y - 6, edge, decimals, t / 1e6);
	}
	fputs("</g>\n", out);
}

static void write_box(const struct chart *c, FILE *out, const struct flamechart_box *b)
{
	char *name = b->fn == UINT32_MAX ? xstrdup(c->root_label)
					 : flamechart_funcs_label(&c->ff, b->fn);
	const unsigned char *rgb = b->fn == UINT32_MAX ? c->ff.root_rgb : c->ff.rgb[b->fn];
	double scale = c->span_px / (double)c->dur;
	double x = c->x0 + (double)b->start * scale;
	double w = (double)(b->end - b->start) * scale;
	int y = c->frames_top + (int)b->depth * FRAME_HEIGHT;
	double pct = c->n ? 100.0 * b->samples / (double)c->n : 0;
	fputs("<g class=\"f\" data-name=\"", out);
	xml_put_text(out, name);
	fprintf(out,
		"\" data-start=\"%" PRIu64 "\" data-dur=\"%" PRIu64 "\" data-depth=\"%u\" "
		"data-samples=\"%u\"><title>",
		b->start, b->end - b->start, b->depth, b->samples);
	xml_put_text(out, name);
	fprintf(out, " (%u sample%s, %.2f%%, %.3f ms at +%.3f ms)</title>", b->samples,
		b->samples == 1 ? "" : "s", pct, (double)(b->end - b->start) / 1e6,
		(double)b->start / 1e6);
	fprintf(out,
		"<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%u,%u,%u)\" "
		"rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
		x, y, w, FRAME_HEIGHT - 1, rgb[0], rgb[1], rgb[2], x + LABEL_PAD,
		y + FRAME_HEIGHT - 4.5);
	put_label(out, name, w);
	fputs("</text></g>\n", out);
	free(name);
}

static void write_chart(const struct chart *c, FILE *out)
{
	int w = c->width, h = c->height;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out,
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n",
		w, h, w, h);
	struct assets_int sizes[] = {
		{"FONT_SIZE", FONT_SIZE}, {"TITLE_FONT_SIZE", TITLE_FONT_SIZE}, {NULL, 0}};
	static const char *const css[] = {asset_flame_css, asset_flamechart_css, NULL};
	assets_svg_style(out, css, assets_fill_ints, sizes);
	fprintf(out,
		"<defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
		"<stop offset=\"5%%\" stop-color=\"#f4f4f4\"/>"
		"<stop offset=\"95%%\" stop-color=\"#e8e8d8\"/></linearGradient>"
		"<clipPath id=\"chartclip\"><rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"%d\"/>"
		"</clipPath></defs>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#bg)\"/>\n",
		c->x0, c->span_px, h, w, h);
	fprintf(out, "<text id=\"title\" x=\"%.2f\" y=\"%d\">", w / 2.0, 2 * FONT_SIZE);
	xml_put_text(out, c->title);
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%.2f\" y=\"%d\">", w / 2.0,
		2 * FONT_SIZE + SUBTITLE_BAND);
	xml_put_text(out, c->subtitle);
	fputs("</text>\n", out);
	flamesvg_write_controls(out, w, h);
	write_axis(c, out);
	if (c->n == 0)
		fprintf(out, "<text x=\"%.2f\" y=\"%d\" fill=\"#555\">no samples</text>\n",
			c->x0 + LABEL_PAD, c->frames_top + 2 * FRAME_HEIGHT - 4);
	fputs("<g id=\"frames\" clip-path=\"url(#chartclip)\">\n", out);
	for (size_t i = 0; i < c->nboxes && !ferror(out); i++)
		write_box(c, out, &c->boxes[i]);
	fputs("</g>\n", out);
	static const char *const scripts[] = {asset_flamecontrols_js, asset_flamechart_js, NULL};
	assets_svg_script(out, scripts,
			  "var CFG = {x0: %.2f, span: %.2f, dur: %" PRIu64 ", sampled: %" PRIu64
			  ", axisY: %d, minTickPx: %d, charWidth: %.2f, labelPad: %.1f, "
			  "minLabelChars: %d};\n",
			  c->x0, c->span_px, c->dur, c->sampled,
			  TITLE_BAND + SUBTITLE_BAND + AXIS_BAND - 6, MIN_TICK_PX, CHAR_WIDTH, LABEL_PAD,
			  MIN_LABEL_CHARS);
	fputs("</svg>\n", out);
}

int flamechart_write_svg(FILE *out, const struct profile *p, const struct flamechart_options *o,
			 char *err, size_t errlen)
{
	struct flamechart_options defaults = {0};
	if (!o)
		o = &defaults;
	struct chart c = {.p = p};
	flamechart_funcs_init(&c.ff, p->frames);
	int rc = chart_select(&c, o, err, errlen);
	if (rc == 0) {
		chart_boxes(&c);
		flamechart_funcs_colorize(&c.ff);
		chart_labels(&c, o);
		locale_t cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
		locale_t prev = cloc ? uselocale(cloc) : (locale_t)0;
		write_chart(&c, out);
		if (cloc) {
			uselocale(prev);
			freelocale(cloc);
		}
		if (fflush(out) != 0 || ferror(out)) {
			errbuf_set(err, errlen, "writing the flame chart failed: %s",
				strerror(errno ? errno : EIO));
			rc = -1;
		}
	}
	free(c.samples);
	free(c.boxes);
	free(c.root_label);
	free(c.subtitle);
	flamechart_funcs_free(&c.ff);
	return rc;
}

int flamechart_layout(const struct profile *p, const struct flamechart_options *o,
		      struct flamechart_layout *out, char *err, size_t errlen)
{
	struct flamechart_options defaults = {0};
	if (!o)
		o = &defaults;
	memset(out, 0, sizeof(*out));
	struct chart c = {.p = p};
	out->ff = xcalloc(1, sizeof(*out->ff));
	flamechart_funcs_init(out->ff, p->frames);
	c.ff = *out->ff;
	int rc = chart_select(&c, o, err, errlen);
	if (rc == 0) {
		chart_boxes(&c);
		flamechart_funcs_colorize(&c.ff);
		chart_labels(&c, o);
		out->boxes = c.boxes;
		out->nboxes = c.nboxes;
		out->maxdepth = c.maxdepth;
		out->dur_ns = c.dur;
		out->sampled_ns = c.sampled;
		out->nsamples = c.n;
		out->root_label = c.root_label;
		out->subtitle = c.subtitle;
	} else {
		free(c.boxes);
		free(c.root_label);
		free(c.subtitle);
	}
	*out->ff = c.ff; /* the funcs it grew */
	free(c.samples);
	if (rc)
		flamechart_layout_free(out);
	return rc;
}

void flamechart_layout_free(struct flamechart_layout *l)
{
	if (!l)
		return;
	free(l->boxes);
	free(l->root_label);
	free(l->subtitle);
	if (l->ff) {
		flamechart_funcs_free(l->ff);
		free(l->ff);
	}
	memset(l, 0, sizeof(*l));
}
