#define _GNU_SOURCE
#include "heatmap.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "flamechart.h"
#include "json.h"
#include "util.h"
#include "xml.h"

#define NS_PER_S 1000000000ULL

/* ---- idle samples ------------------------------------------------------ */

/* FlameScope's idle test: a swapper (CPU idle task) sample whose stack is in
 * one of the kernel's idle loops. */
static const char *const IDLE_FUNCTIONS[] = {
	"cpuidle", "cpu_idle", "cpu_bringup_and_idle", "native_safe_halt",
	"xen_hypercall_sched_op", "xen_hypercall_vcpu_op",
};

struct idle_check {
	const struct profile *p;
	uint8_t *frame; /* frame id -> 0 unknown, 1 not idle, 2 idle */
	size_t nframe;
};

static void idle_init(struct idle_check *ic, const struct profile *p)
{
	ic->p = p;
	ic->nframe = frames_count(p->frames) + 1;
	ic->frame = xcalloc(ic->nframe, 1);
}

static bool frame_is_idle(struct idle_check *ic, uint32_t id)
{
	if (id >= ic->nframe)
		return false;
	if (!ic->frame[id]) {
		const struct frame *f = frames_get(ic->p->frames, id);
		bool idle = false;
		for (size_t i = 0; f && !idle && i < sizeof(IDLE_FUNCTIONS) / sizeof(*IDLE_FUNCTIONS); i++)
			idle = strstr(f->name, IDLE_FUNCTIONS[i]) != NULL;
		ic->frame[id] = idle ? 2 : 1;
	}
	return ic->frame[id] == 2;
}

static bool sample_is_idle(struct idle_check *ic, const struct sample *s)
{
	const struct profile *p = ic->p;
	if (s->thread >= p->nthreads)
		return false;
	const char *comm = p->threads[s->thread].comm;
	if (!comm || strncmp(comm, "swapper", 7) != 0)
		return false;
	for (uint32_t n = s->stack; n && n < p->nnodes; n = p->nodes[n].parent)
		if (frame_is_idle(ic, p->nodes[n].frame))
			return true;
	return false;
}

bool heatmap_sample_idle(const struct profile *p, const struct sample *s)
{
	if (s->thread >= p->nthreads || !p->threads[s->thread].comm ||
	    strncmp(p->threads[s->thread].comm, "swapper", 7) != 0)
		return false;
	struct idle_check ic;
	idle_init(&ic, p);
	bool idle = sample_is_idle(&ic, s);
	free(ic.frame);
	return idle;
}

/* ---- the map ------------------------------------------------------------ */

/* FlameScope's arithmetic, in doubles as it does it (time_ns / 1e9 is the
 * double nearest the printed perf timestamp, so the cells are the same). */
static double sample_seconds(const struct sample *s)
{
	return (double)s->time_ns / 1e9;
}

static int sample_col(double ts, double start_s)
{
	return (int)floor(ts - start_s);
}

static int sample_row(double ts, int rows)
{
	return rows - (int)floor((double)rows * fmod(ts, 1.0)) - 1;
}

int heatmap_build(const struct profile *p, const struct view *f, int rows,
		  struct heatmap *out)
{
	memset(out, 0, sizeof(*out));
	if (rows <= 0)
		rows = HEATMAP_DEFAULT_ROWS;
	if (rows > HEATMAP_MAX_ROWS) {
		errno = EINVAL;
		return -1;
	}
	out->rows = rows;
	if (f)
		out->filter = *f;

	bool any = false;
	uint64_t lo = 0, hi = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		if (!view_takes(f, p, s))
			continue;
		if (!any || s->time_ns < lo)
			lo = s->time_ns;
		if (!any || s->time_ns > hi)
			hi = s->time_ns;
		any = true;
	}
	if (!any)
		return 0;
	out->first_ns = lo;
	out->last_ns = hi;

	double start = (double)lo / 1e9, end = (double)hi / 1e9;
	out->start_s = floor(start);
	double cols = ceil(end) - out->start_s;
	/* FlameScope's count leaves no column for a last sample on a whole
	 * second (ceil(end) == end); such a sample gets one. */
	if (floor(end) - out->start_s + 1 > cols)
		cols = floor(end) - out->start_s + 1;
	if (cols * rows > (double)HEATMAP_MAX_CELLS) {
		errno = E2BIG;
		return -1;
	}
	out->cols = (int)cols;
	out->cells = xcalloc((size_t)out->cols * (size_t)rows, sizeof(*out->cells));

	struct idle_check ic;
	idle_init(&ic, p);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		if (!view_takes(f, p, s))
			continue;
		if (sample_is_idle(&ic, s)) {
			out->idle_dropped++;
			continue;
		}
		double ts = sample_seconds(s);
		int col = sample_col(ts, out->start_s), row = sample_row(ts, rows);
		/* Rounding can only push these one step out, at the very edges. */
		if (col < 0)
			col = 0;
		if (col >= out->cols)
			col = out->cols - 1;
		if (row < 0)
			row = 0;
		if (row >= rows)
			row = rows - 1;
		uint64_t *cell = &out->cells[(size_t)col * (size_t)rows + (size_t)row];
		if (++*cell > out->max)
			out->max = *cell;
		out->total++;
	}
	free(ic.frame);
	return 0;
}

void heatmap_free(struct heatmap *h)
{
	free(h->cells);
	h->cells = NULL;
	h->cols = 0;
}

void heatmap_cell_range(const struct heatmap *h, int col, int row, double *t0, double *t1)
{
	double second = h->start_s + col;
	*t0 = second + (double)(h->rows - 1 - row) / h->rows;
	*t1 = second + (double)(h->rows - row) / h->rows;
}

/* Cells in time order: k = col * rows + (rows - 1 - row) covers
 * [k / rows, (k + 1) / rows) seconds from the first second. */
static uint64_t cell_k(const struct heatmap *h, int col, int row)
{
	return (uint64_t)col * (uint64_t)h->rows + (uint64_t)(h->rows - 1 - row);
}

static uint64_t base_ns(const struct heatmap *h)
{
	return (uint64_t)h->start_s * NS_PER_S;
}

/* The first and last whole ns of cells k0 .. k1, from the first second. */
static uint64_t k_start_ns(const struct heatmap *h, uint64_t k)
{
	return (k * NS_PER_S + (uint64_t)h->rows - 1) / (uint64_t)h->rows; /* rounded up */
}

static uint64_t k_end_ns(const struct heatmap *h, uint64_t k)
{
	return (k + 1) * NS_PER_S / (uint64_t)h->rows; /* rounded down */
}

int heatmap_range_filter(const struct heatmap *h, int col0, int row0, int col1, int row1,
			 struct view *f)
{
	if (col0 < 0 || col1 < 0 || col0 >= h->cols || col1 >= h->cols || row0 < 0 || row1 < 0 ||
	    row0 >= h->rows || row1 >= h->rows) {
		errno = EINVAL;
		return -1;
	}
	uint64_t a = cell_k(h, col0, row0), b = cell_k(h, col1, row1);
	if (b < a) {
		uint64_t t = a;
		a = b, b = t;
	}
	f->has_range = true;
	f->start_ns = base_ns(h) + k_start_ns(h, a);
	f->end_ns = base_ns(h) + k_end_ns(h, b);
	return 0;
}

/* ---- colours and text --------------------------------------------------- */

/* FlameScope's default scale: white at 0, #FF5032 at max/2, #E50914 at max. */
static void cell_rgb(uint64_t n, uint64_t max, unsigned char rgb[3])
{
	static const unsigned char white[3] = {255, 255, 255}, mid[3] = {255, 80, 50},
				   top[3] = {229, 9, 20};
	if (!n || !max) {
		memcpy(rgb, white, 3);
		return;
	}
	double t = (double)n / (double)max;
	const unsigned char *a = t <= 0.5 ? white : mid, *b = t <= 0.5 ? mid : top;
	double u = t <= 0.5 ? t / 0.5 : (t - 0.5) / 0.5;
	for (int i = 0; i < 3; i++)
		rgb[i] = (unsigned char)lround(a[i] + (b[i] - a[i]) * u);
}

/* "12.5" — ms values with at most 3 decimals, no trailing zeros. */
static const char *fmt_ms(double v, char buf[32])
{
	snprintf(buf, 32, "%.3f", v);
	char *e = buf + strlen(buf) - 1;
	while (*e == '0')
		*e-- = '\0';
	if (*e == '.')
		*e = '\0';
	return buf;
}

static int stream_result(FILE *out)
{
	if (fflush(out) == 0 && !ferror(out))
		return 0;
	if (!errno)
		errno = EIO;
	return -1;
}

struct c_numeric {
	locale_t c, prev;
};

static void c_numeric_enter(struct c_numeric *cn)
{
	cn->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	cn->prev = cn->c ? uselocale(cn->c) : (locale_t)0;
}

static void c_numeric_leave(struct c_numeric *cn)
{
	if (cn->c) {
		uselocale(cn->prev);
		freelocale(cn->c);
	}
}

/* ---- SVG ---------------------------------------------------------------- */

enum {
	SVG_LEFT = 64, SVG_TOP = 56, SVG_RIGHT = 20, SVG_BOTTOM = 90,
	TITLE_CELLS_LIMIT = 100000,
};

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int x_label_step(int cw)
{
	static const int steps[] = {1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600};
	for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++)
		if (steps[i] * cw >= 36)
			return steps[i];
	return 7200;
}

static void write_svg_doc(FILE *out, const struct heatmap *h, const char *title)
{
	int cols = h->cols > 0 ? h->cols : 1, rows = h->rows;
	int cw = clampi(1100 / cols, 3, 20), ch = clampi(500 / rows, 3, 12);
	int gw = cols * cw, gh = rows * ch;
	int width = SVG_LEFT + gw + SVG_RIGHT;
	if (width < 420)
		width = 420;
	int height = SVG_TOP + gh + SVG_BOTTOM;
	char a[32], b[32];

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out,
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n",
		width, height, width, height);
	static const char *const css[] = {asset_heatmap_svg_css, NULL};
	assets_svg_style(out, css, NULL, NULL);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", width,
		height);
	fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"22\">", width / 2.0);
	xml_put_text(out, title);
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%.1f\" y=\"40\">", width / 2.0);
	fprintf(out,
		"%" PRIu64 " samples in %d s from %.0f s (%" PRIu64 " idle dropped); %d rows of %s ms",
		h->total, h->cols, h->start_s, h->idle_dropped, rows, fmt_ms(1000.0 / rows, a));
	fputs("</text>\n", out);

	/* The grid: every non-empty cell, and empty ones too when there are few
	 * enough cells for their titles to be worth the size. */
	bool all = (uint64_t)h->cols * (uint64_t)rows <= TITLE_CELLS_LIMIT;
	fprintf(out,
		"<g id=\"grid\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fff\" "
		"stroke=\"#888\"/>\n",
		SVG_LEFT, SVG_TOP, gw, gh);
	for (int col = 0; col < h->cols && !ferror(out); col++) {
		for (int row = 0; row < rows; row++) {
			uint64_t n = heatmap_cell(h, col, row);
			if (!n && !all)
				continue;
			unsigned char rgb[3];
			cell_rgb(n, h->max, rgb);
			fprintf(out,
				"<rect class=\"c\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
				"fill=\"rgb(%u,%u,%u)\" data-col=\"%d\" data-row=\"%d\" data-n=\"%" PRIu64
				"\"><title>second %d, offset %s\xe2\x80\x93%s ms: %" PRIu64 " sample%s</title></rect>\n",
				SVG_LEFT + col * cw, SVG_TOP + row * ch, cw, ch, rgb[0], rgb[1], rgb[2], col,
				row, n, col, fmt_ms(1000.0 * (rows - 1 - row) / rows, a),
				fmt_ms(1000.0 * (rows - row) / rows, b), n, n == 1 ? "" : "s");
		}
	}
	fputs("</g>\n", out);

	/* y: offset within the second; row 0 (the end of the second) on top. */
	int ystep = gh >= 250 ? 100 : gh >= 120 ? 200 : 500;
	for (int ms = 0; ms <= 1000; ms += ystep) {
		double y = SVG_TOP + gh * (1 - ms / 1000.0);
		fprintf(out,
			"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#888\"/>"
			"<text class=\"yl\" x=\"%d\" y=\"%.1f\">%d</text>\n",
			SVG_LEFT - 4, y, SVG_LEFT, y, SVG_LEFT - 6, y + 4, ms);
	}
	fprintf(out,
		"<text class=\"xl\" transform=\"translate(16,%d) rotate(-90)\">offset (ms)</text>\n",
		SVG_TOP + gh / 2);
	int xstep = x_label_step(cw);
	for (int s = 0; s < h->cols; s += xstep) {
		double x = SVG_LEFT + (s + 0.5) * cw;
		fprintf(out,
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#888\"/>"
			"<text class=\"xl\" x=\"%.1f\" y=\"%d\">%d</text>\n",
			x, SVG_TOP + gh, x, SVG_TOP + gh + 4, x, SVG_TOP + gh + 16, s);
	}
	fprintf(out, "<text class=\"xl\" x=\"%.1f\" y=\"%d\">time (s) from %.0f s</text>\n",
		SVG_LEFT + gw / 2.0, SVG_TOP + gh + 34, h->start_s);

	/* Legend: the colour ramp from 0 to max. */
	int lx = SVG_LEFT, ly = SVG_TOP + gh + 50, lw = 200;
	fputs("<defs><linearGradient id=\"ramp\" x1=\"0\" y1=\"0\" x2=\"1\" y2=\"0\">"
	      "<stop offset=\"0\" stop-color=\"#ffffff\"/><stop offset=\"0.5\" stop-color=\"#ff5032\"/>"
	      "<stop offset=\"1\" stop-color=\"#e50914\"/></linearGradient></defs>\n",
	      out);
	fprintf(out,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"12\" fill=\"url(#ramp)\" stroke=\"#888\"/>"
		"<text x=\"%d\" y=\"%d\">0</text><text class=\"yl\" x=\"%d\" y=\"%d\">%" PRIu64
		"</text><text x=\"%d\" y=\"%d\">samples per cell</text>\n",
		lx, ly, lw, lx, ly + 26, lx + lw, ly + 26, h->max, lx + lw + 10, ly + 10);
	if (h->cols == 0)
		fprintf(out, "<text x=\"%d\" y=\"%d\">no samples</text>\n", SVG_LEFT + 6,
			SVG_TOP + 16);
	fputs("</svg>\n", out);
}

int heatmap_write_svg(FILE *out, const struct heatmap *h, const char *title)
{
	if (!title || !*title)
		title = "Subsecond Offset Heat Map";
	struct c_numeric cn;
	c_numeric_enter(&cn);
	write_svg_doc(out, h, title);
	c_numeric_leave(&cn);
	return stream_result(out);
}

/* ---- HTML --------------------------------------------------------------- */

static void json_rgb(FILE *f, const unsigned char rgb[3])
{
	fprintf(f, "\"#%02x%02x%02x\"", rgb[0], rgb[1], rgb[2]);
}

/* What the page's data is built from. */
struct page_data {
	uint32_t *idx;  /* the samples embedded, in time order */
	size_t n;       /* how many are embedded */
	size_t total;   /* how many the map counted */
	bool capped;
	uint32_t *renum; /* stack node -> its number in the page (0: unused) */
	uint32_t nused;
	struct flamechart_funcs ff;
	uint32_t *fn_of;          /* the page's node - 1 -> function */
	uint32_t *comm_of_thread; /* thread -> comm index + 1 (0: none yet) */
	uint32_t *comm_fn;        /* comm index -> function */
	size_t ncomms;
};

/* The samples the map counted, in time order, capped. */
static void page_samples(struct page_data *d, const struct profile *p, const struct heatmap *h,
			 size_t max_samples)
{
	struct idle_check ic;
	idle_init(&ic, p);
	uint32_t *idx = xmalloc((p->nsamples ? p->nsamples : 1) * sizeof(*idx));
	size_t n = 0;
	for (size_t i = 0; i < p->nsamples && h->cols > 0; i++) {
		const struct sample *s = &p->samples[i];
		if (view_takes(&h->filter, p, s) && !sample_is_idle(&ic, s))
			idx[n++] = (uint32_t)i;
	}
	free(ic.frame);
	qsort_r(idx, n, sizeof(*idx), profile_cmp_sample_index, (void *)p);
	d->idx = idx;
	d->total = n;
	d->capped = n > max_samples;
	if (d->capped)
		n = max_samples;
	d->n = n;
}

/* Stack nodes in use, and ancestors: renumbered 1.. in id order (a
 * parent's id is below its children's, so parents come first). */
static void page_nodes(struct page_data *d, const struct profile *p)
{
	uint32_t *renum = xcalloc(p->nnodes ? p->nnodes : 1, sizeof(*renum));
	for (size_t i = 0; i < d->n; i++)
		for (uint32_t k = p->samples[d->idx[i]].stack; k && k < p->nnodes && !renum[k];
		     k = p->nodes[k].parent)
			renum[k] = 1;
	uint32_t nused = 0;
	for (size_t k = 1; k < p->nnodes; k++)
		if (renum[k])
			renum[k] = ++nused;
	d->renum = renum;
	d->nused = nused;
}

/* The functions of the used nodes, and the processes: the root level,
 * named as viewtree_flame names it; then their colours. */
static void page_functions(struct page_data *d, const struct profile *p)
{
	struct flamechart_funcs *ff = &d->ff;
	const uint32_t *renum = d->renum;
	flamechart_funcs_init(ff, p->frames);
	uint32_t *fn_of = xmalloc((d->nused ? d->nused : 1) * sizeof(*fn_of));
	for (size_t k = 1; k < p->nnodes; k++)
		if (renum[k])
			fn_of[renum[k] - 1] = flamechart_funcs_of_frame(ff, p->nodes[k].frame);
	uint32_t *comm_of_thread = xcalloc(p->nthreads ? p->nthreads : 1, sizeof(*comm_of_thread));
	uint32_t *comm_fn = xmalloc((p->nthreads ? p->nthreads : 1) * sizeof(*comm_fn));
	size_t ncomms = 0;
	for (size_t i = 0; i < d->n; i++) {
		uint32_t th = p->samples[d->idx[i]].thread;
		if (th >= p->nthreads || comm_of_thread[th])
			continue;
		char *name = xstrdup(p->threads[th].comm ? p->threads[th].comm : "");
		for (char *c = name; *c; c++)
			if (*c == ' ')
				*c = '_';
		uint32_t fn = flamechart_funcs_intern(ff, name, FRAME_PROCESS);
		free(name);
		size_t j = 0;
		while (j < ncomms && comm_fn[j] != fn)
			j++;
		if (j == ncomms)
			comm_fn[ncomms++] = fn;
		comm_of_thread[th] = (uint32_t)j + 1;
	}
	flamechart_funcs_colorize(ff);
	d->fn_of = fn_of;
	d->comm_of_thread = comm_of_thread;
	d->comm_fn = comm_fn;
	d->ncomms = ncomms;
}

static void page_data_free(struct page_data *d)
{
	free(d->comm_of_thread);
	free(d->comm_fn);
	free(d->fn_of);
	flamechart_funcs_free(&d->ff);
	free(d->renum);
	free(d->idx);
}

/* The map: its figures and cells. */
static void write_page_map(FILE *f, const struct page_data *d, const struct profile *p,
			   const struct heatmap *h, const char *title)
{
	uint64_t base = base_ns(h);
	size_t n = d->n;
	fputs("{\"v\":1,\"title\":", f);
	json_write_string(f, title);
	fprintf(f,
		",\"rows\":%d,\"cols\":%d,\"startS\":%.0f,\"startLabel\":\"%.0f s\",\"max\":%" PRIu64
		",\"total\":%" PRIu64 ",\"idle\":%" PRIu64 ",\"embedded\":%zu,\"samples\":%zu,"
		"\"capped\":%s,\"capEnd\":%" PRId64 ",\n\"cells\":[",
		h->rows, h->cols, h->start_s, h->start_s, h->max, h->total, h->idle_dropped, n,
		d->total, d->capped ? "true" : "false",
		n ? (int64_t)(p->samples[d->idx[n - 1]].time_ns - base) : (int64_t)0);
	size_t ncells = (size_t)h->cols * (size_t)h->rows;
	for (size_t i = 0; i < ncells; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, h->cells[i]);
}

/* The functions' labels and colours, the processes, and the trie. */
static void write_page_functions(FILE *f, const struct page_data *d, const struct profile *p)
{
	const struct flamechart_funcs *ff = &d->ff;
	fputs("],\n\"names\":[", f);
	for (size_t i = 0; i < ff->n; i++) {
		char *label = flamechart_funcs_label(ff, (uint32_t)i);
		if (i)
			fputc(',', f);
		json_write_string(f, label);
		free(label);
	}
	fputs("],\n\"colors\":[", f);
	for (size_t i = 0; i < ff->n; i++) {
		if (i)
			fputc(',', f);
		json_rgb(f, ff->rgb[i]);
	}
	fputs("],\"rootColor\":", f);
	json_rgb(f, ff->root_rgb);
	fputs(",\n\"comms\":[", f);
	for (size_t j = 0; j < d->ncomms; j++)
		fprintf(f, j ? ",%u" : "%u", d->comm_fn[j]);
	fputs("],\n\"parent\":[", f);
	for (size_t k = 1, w = 0; k < p->nnodes; k++)
		if (d->renum[k])
			fprintf(f, w++ ? ",%u" : "%u", d->renum[p->nodes[k].parent]);
	fputs("],\n\"func\":[", f);
	for (uint32_t k = 0; k < d->nused; k++)
		fprintf(f, k ? ",%u" : "%u", d->fn_of[k]);
}

/* The samples: delta-coded times, stack nodes, processes. */
static void write_page_samples(FILE *f, const struct page_data *d, const struct profile *p,
			       const struct heatmap *h)
{
	uint64_t base = base_ns(h);
	const uint32_t *idx = d->idx;
	size_t n = d->n;
	fputs("],\n\"t\":[", f);
	int64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t t = (int64_t)(p->samples[idx[i]].time_ns - base);
		fprintf(f, i ? ",%" PRId64 : "%" PRId64, t - prev);
		prev = t;
	}
	fputs("],\n\"s\":[", f);
	for (size_t i = 0; i < n; i++) {
		uint32_t st = p->samples[idx[i]].stack;
		fprintf(f, i ? ",%u" : "%u", st < p->nnodes ? d->renum[st] : 0);
	}
	fputs("],\n\"c\":[", f);
	for (size_t i = 0; i < n; i++) {
		uint32_t th = p->samples[idx[i]].thread;
		fprintf(f, i ? ",%u" : "%u", th < p->nthreads ? d->comm_of_thread[th] - 1 : 0);
	}
	fputs("]}", f);
}

/* The data the page draws from, as JSON: the map's cells, the functions
 * (labels and flamesvg colours), the used part of the stack trie (renumbered,
 * parents before children) and the samples in time order — delta-coded ns
 * from the map's first second, stack node, process. */
static void write_page_data(FILE *f, const struct profile *p, const struct heatmap *h,
			    const char *title, size_t max_samples)
{
	struct page_data d = {0};
	page_samples(&d, p, h, max_samples);
	page_nodes(&d, p);
	page_functions(&d, p);
	write_page_map(f, &d, p, h, title);
	write_page_functions(f, &d, p);
	write_page_samples(f, &d, p, h);
	page_data_free(&d);
}

/* Copies JSON into a <script> element: '<' only occurs inside JSON strings,
 * where \u003c means the same, so no "</script>" can end the element early. */
static void put_script_json(FILE *out, const char *json, size_t len)
{
	const char *p = json, *end = json + len;
	while (p < end) {
		const char *lt = memchr(p, '<', (size_t)(end - p));
		size_t run = (size_t)((lt ? lt : end) - p);
		fwrite(p, 1, run, out);
		if (!lt)
			break;
		fputs("\\u003c", out);
		p = lt + 1;
	}
}

/* What the placeholders of heatmap.html stand for. */
struct page {
	const struct heatmap *h;
	const char *title;
	const char *json;
	size_t json_len;
	size_t embedded, total; /* samples in the page, of those the map counted */
};

static bool fill_page(FILE *out, const char *name, void *arg)
{
	const struct page *pg = arg;
	const struct heatmap *h = pg->h;
	char a[32];
	if (strcmp(name, "TITLE") == 0)
		xml_put_text(out, pg->title);
	else if (strcmp(name, "STYLE") == 0)
		fputs(asset_heatmap_css, out);
	else if (strcmp(name, "SAMPLES") == 0)
		fprintf(out, "%" PRIu64, h->total);
	else if (strcmp(name, "SECONDS") == 0)
		fprintf(out, "%d", h->cols);
	else if (strcmp(name, "START") == 0)
		fprintf(out, "%.0f", h->start_s);
	else if (strcmp(name, "IDLE") == 0)
		fprintf(out, "%" PRIu64, h->idle_dropped);
	else if (strcmp(name, "ROW_MS") == 0)
		fputs(fmt_ms(1000.0 / h->rows, a), out);
	else if (strcmp(name, "NOTES") == 0) {
		if (pg->embedded < pg->total)
			fprintf(out,
				"<p id=\"capnote\" class=\"warn\">This page holds only the first %zu "
				"of %zu samples (grey cells are past them): flame graphs of later "
				"ranges are incomplete. Use <code>sonde flame --range</code> for "
				"those.</p>\n",
				pg->embedded, pg->total);
		if (h->cols == 0)
			fputs("<p class=\"warn\">The profile has no samples.</p>\n", out);
	} else if (strcmp(name, "DATA") == 0)
		put_script_json(out, pg->json, pg->json_len);
	else if (strcmp(name, "SCRIPT") == 0) {
		/* makes the canvas and the flame graph's <svg> */
		fputs(asset_flamecontrols_js, out);
		fputs(asset_heatmap_js, out);
	} else
		return false;
	return true;
}

int heatmap_write_html_capped(FILE *out, const struct profile *p, const struct heatmap *h,
			      const char *title, size_t max_samples)
{
	if (!title || !*title)
		title = "Subsecond Offset Heat Map";
	struct c_numeric cn;
	c_numeric_enter(&cn);

	char *json = NULL;
	size_t json_len = 0;
	FILE *mem = open_memstream(&json, &json_len);
	if (!mem) {
		c_numeric_leave(&cn);
		return -1;
	}
	write_page_data(mem, p, h, title, max_samples);
	if (fclose(mem) != 0) {
		free(json);
		c_numeric_leave(&cn);
		errno = ENOMEM;
		return -1;
	}

	size_t embedded = 0, total = 0;
	{
		struct idle_check ic;
		idle_init(&ic, p);
		for (size_t i = 0; i < p->nsamples && h->cols > 0; i++)
			if (view_takes(&h->filter, p, &p->samples[i]) &&
			    !sample_is_idle(&ic, &p->samples[i]))
				total++;
		free(ic.frame);
		embedded = total < max_samples ? total : max_samples;
	}

	struct page pg = {h, title, json, json_len, embedded, total};
	assets_write(out, asset_heatmap_html, fill_page, &pg);
	free(json);
	c_numeric_leave(&cn);
	return stream_result(out);
}

int heatmap_write_html(FILE *out, const struct profile *p, const struct heatmap *h,
		       const char *title)
{
	return heatmap_write_html_capped(out, p, h, title, HEATMAP_HTML_MAX_SAMPLES);
}
