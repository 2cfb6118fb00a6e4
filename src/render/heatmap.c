#define _GNU_SOURCE
#include "heatmap.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
	fputs("<style type=\"text/css\"><![CDATA[\n"
	      "text { font-family: Verdana, \"DejaVu Sans\", sans-serif; font-size: 11px; fill: #333; }\n"
	      "#title { font-size: 17px; text-anchor: middle; fill: #000; }\n"
	      "#subtitle { text-anchor: middle; fill: #555; font-size: 12px; }\n"
	      ".yl { text-anchor: end; } .xl { text-anchor: middle; }\n"
	      ".c:hover { stroke: #000; stroke-width: 1; }\n"
	      "]]></style>\n",
	      out);
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

static int by_time(const void *a, const void *b, void *arg)
{
	const struct sample *s = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (s[x].time_ns != s[y].time_ns)
		return s[x].time_ns < s[y].time_ns ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void json_rgb(FILE *f, const unsigned char rgb[3])
{
	fprintf(f, "\"#%02x%02x%02x\"", rgb[0], rgb[1], rgb[2]);
}

/* The data the page draws from, as JSON: the map's cells, the functions
 * (labels and flamesvg colours), the used part of the stack trie (renumbered,
 * parents before children) and the samples in time order — delta-coded ns
 * from the map's first second, stack node, process. */
static void write_page_data(FILE *f, const struct profile *p, const struct heatmap *h,
			    const char *title, size_t max_samples)
{
	/* The samples the map counted, in time order, capped. */
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
	qsort_r(idx, n, sizeof(*idx), by_time, p->samples);
	size_t total = n;
	bool capped = n > max_samples;
	if (capped)
		n = max_samples;

	/* Stack nodes in use, and ancestors: renumbered 1.. in id order (a
	 * parent's id is below its children's, so parents come first). */
	uint32_t *renum = xcalloc(p->nnodes ? p->nnodes : 1, sizeof(*renum));
	for (size_t i = 0; i < n; i++)
		for (uint32_t k = p->samples[idx[i]].stack; k && k < p->nnodes && !renum[k];
		     k = p->nodes[k].parent)
			renum[k] = 1;
	uint32_t nused = 0;
	for (size_t k = 1; k < p->nnodes; k++)
		if (renum[k])
			renum[k] = ++nused;

	struct flamechart_funcs ff;
	flamechart_funcs_init(&ff, p->frames);
	uint32_t *fn_of = xmalloc((nused ? nused : 1) * sizeof(*fn_of));
	for (size_t k = 1; k < p->nnodes; k++)
		if (renum[k])
			fn_of[renum[k] - 1] = flamechart_funcs_of_frame(&ff, p->nodes[k].frame);
	/* Processes: the root level, named as profile_flame names it. */
	uint32_t *comm_of_thread = xcalloc(p->nthreads ? p->nthreads : 1, sizeof(*comm_of_thread));
	uint32_t *comm_fn = xmalloc((p->nthreads ? p->nthreads : 1) * sizeof(*comm_fn));
	size_t ncomms = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t th = p->samples[idx[i]].thread;
		if (th >= p->nthreads || comm_of_thread[th])
			continue;
		char *name = xstrdup(p->threads[th].comm ? p->threads[th].comm : "");
		for (char *c = name; *c; c++)
			if (*c == ' ')
				*c = '_';
		uint32_t fn = flamechart_funcs_intern(&ff, name, FRAME_PROCESS);
		free(name);
		size_t j = 0;
		while (j < ncomms && comm_fn[j] != fn)
			j++;
		if (j == ncomms)
			comm_fn[ncomms++] = fn;
		comm_of_thread[th] = (uint32_t)j + 1;
	}
	flamechart_funcs_colorize(&ff);

	uint64_t base = base_ns(h);
	fputs("{\"v\":1,\"title\":", f);
	json_write_string(f, title);
	fprintf(f,
		",\"rows\":%d,\"cols\":%d,\"startS\":%.0f,\"startLabel\":\"%.0f s\",\"max\":%" PRIu64
		",\"total\":%" PRIu64 ",\"idle\":%" PRIu64 ",\"embedded\":%zu,\"samples\":%zu,"
		"\"capped\":%s,\"capEnd\":%" PRId64 ",\n\"cells\":[",
		h->rows, h->cols, h->start_s, h->start_s, h->max, h->total, h->idle_dropped, n, total,
		capped ? "true" : "false",
		n ? (int64_t)(p->samples[idx[n - 1]].time_ns - base) : (int64_t)0);
	size_t ncells = (size_t)h->cols * (size_t)h->rows;
	for (size_t i = 0; i < ncells; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, h->cells[i]);
	fputs("],\n\"names\":[", f);
	for (size_t i = 0; i < ff.n; i++) {
		char *label = flamechart_funcs_label(&ff, (uint32_t)i);
		if (i)
			fputc(',', f);
		json_write_string(f, label);
		free(label);
	}
	fputs("],\n\"colors\":[", f);
	for (size_t i = 0; i < ff.n; i++) {
		if (i)
			fputc(',', f);
		json_rgb(f, ff.rgb[i]);
	}
	fputs("],\"rootColor\":", f);
	json_rgb(f, ff.root_rgb);
	fputs(",\n\"comms\":[", f);
	for (size_t j = 0; j < ncomms; j++)
		fprintf(f, j ? ",%u" : "%u", comm_fn[j]);
	fputs("],\n\"parent\":[", f);
	for (size_t k = 1, w = 0; k < p->nnodes; k++)
		if (renum[k])
			fprintf(f, w++ ? ",%u" : "%u", renum[p->nodes[k].parent]);
	fputs("],\n\"func\":[", f);
	for (uint32_t k = 0; k < nused; k++)
		fprintf(f, k ? ",%u" : "%u", fn_of[k]);
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
		fprintf(f, i ? ",%u" : "%u", st < p->nnodes ? renum[st] : 0);
	}
	fputs("],\n\"c\":[", f);
	for (size_t i = 0; i < n; i++) {
		uint32_t th = p->samples[idx[i]].thread;
		fprintf(f, i ? ",%u" : "%u", th < p->nthreads ? comm_of_thread[th] - 1 : 0);
	}
	fputs("]}", f);

	free(comm_of_thread);
	free(comm_fn);
	free(fn_of);
	flamechart_funcs_free(&ff);
	free(renum);
	free(idx);
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

static const char PAGE_STYLE[] =
	"body { font-family: Verdana, \"DejaVu Sans\", sans-serif; font-size: 13px; color: #222;"
	" margin: 12px 16px; background: #fff; }\n"
	"h1 { font-size: 18px; font-weight: normal; margin: 4px 0 8px; }\n"
	"p { margin: 4px 0; }\n"
	".warn { color: #a00; font-weight: bold; }\n"
	"#hmwrap { overflow-x: auto; padding: 4px 0; }\n"
	"#hm { cursor: crosshair; display: block; }\n"
	"#hmdetails, #selinfo { font-family: \"DejaVu Sans Mono\", Menlo, Consolas, monospace;"
	" min-height: 1.3em; margin: 2px 0; }\n"
	"button { font-size: 12px; }\n"
	"#fg text { font-family: \"DejaVu Sans Mono\", Menlo, Consolas, \"Liberation Mono\","
	" monospace; font-size: 12px; fill: #000; }\n"
	"#fg #fgtitle { font-size: 17px; text-anchor: middle; }\n"
	"#fg #fgsub { text-anchor: middle; fill: #555; }\n"
	"#fg #matched, #fg #search, #fg #resetsearch { text-anchor: end; }\n"
	"#fg .ctl { cursor: pointer; fill: #333; }\n"
	"#fg .ctl:hover { fill: #c00; }\n"
	"#fg .f { cursor: pointer; }\n"
	"#fg .f text { pointer-events: none; }\n"
	"#fg .f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	"#fg .f.match rect { fill: rgb(230,0,230); }\n"
	"#fg .f.anc { opacity: 0.5; }\n"
	"#fg .hide { display: none; }\n";

/* The page's script: the heat map on a canvas, selection, and a flame graph
 * of the selected samples drawn like flamesvg's (same geometry, colours from
 * the data, click to zoom, hover for details, regex search). */
static const char PAGE_SCRIPT[] =
	"(function () {\n"
	"\"use strict\";\n"
	"var D = JSON.parse(document.getElementById(\"data\").textContent);\n"
	"var ROWS = D.rows, COLS = D.cols;\n"
	"var NSPS = 1e9; /* ns per second */\n"
	"\n"
	"/* ---- samples: absolute offsets (ns from the map's first second) ---- */\n"
	"var T = new Float64Array(D.t.length);\n"
	"(function () {\n"
	"\tvar acc = 0;\n"
	"\tfor (var i = 0; i < D.t.length; i++) { acc += D.t[i]; T[i] = acc; }\n"
	"})();\n"
	"var NNODES = D.parent.length + 1; /* node 0 is the empty stack */\n"
	"\n"
	"function lowerBound(x) { /* first i with T[i] >= x */\n"
	"\tvar lo = 0, hi = T.length;\n"
	"\twhile (lo < hi) { var mid = (lo + hi) >> 1; if (T[mid] < x) lo = mid + 1; else hi = mid; }\n"
	"\treturn lo;\n"
	"}\n"
	"function upperBound(x) { /* first i with T[i] > x */\n"
	"\tvar lo = 0, hi = T.length;\n"
	"\twhile (lo < hi) { var mid = (lo + hi) >> 1; if (T[mid] <= x) lo = mid + 1; else hi = mid; }\n"
	"\treturn lo;\n"
	"}\n"
	"\n"
	"/* ---- the heat map ---- */\n"
	"var hm = document.createElement(\"canvas\");\n"
	"hm.id = \"hm\";\n"
	"document.getElementById(\"hmwrap\").appendChild(hm);\n"
	"var hmDetails = document.getElementById(\"hmdetails\");\n"
	"var selInfo = document.getElementById(\"selinfo\");\n"
	"var M = {left: 56, top: 12, right: 12, bottom: 44};\n"
	"var avail = Math.max(600, document.documentElement.clientWidth - 40);\n"
	"var CW = Math.max(3, Math.min(20, Math.floor((avail - M.left - M.right) / Math.max(COLS, 1))));\n"
	"var CH = Math.max(3, Math.min(12, Math.floor(500 / ROWS)));\n"
	"var GW = COLS * CW, GH = ROWS * CH;\n"
	"var W = M.left + GW + M.right, H = M.top + GH + M.bottom;\n"
	"var dpr = window.devicePixelRatio || 1;\n"
	"hm.width = Math.round(W * dpr); hm.height = Math.round(H * dpr);\n"
	"hm.style.width = W + \"px\"; hm.style.height = H + \"px\";\n"
	"var ctx = hm.getContext(\"2d\");\n"
	"var base = document.createElement(\"canvas\");\n"
	"base.width = hm.width; base.height = hm.height;\n"
	"\n"
	"function mix(a, b, t) {\n"
	"\treturn [0, 1, 2].map(function (i) { return Math.round(a[i] + (b[i] - a[i]) * t); });\n"
	"}\n"
	"/* FlameScope's scale: white at 0, #FF5032 at max/2, #E50914 at max. */\n"
	"function cellColor(n) {\n"
	"\tif (!(n > 0) || !(D.max > 0)) return \"rgb(255,255,255)\";\n"
	"\tvar t = n / D.max, c;\n"
	"\tif (t <= 0.5) c = mix([255, 255, 255], [255, 80, 50], t / 0.5);\n"
	"\telse c = mix([255, 80, 50], [229, 9, 20], (t - 0.5) / 0.5);\n"
	"\treturn \"rgb(\" + c[0] + \",\" + c[1] + \",\" + c[2] + \")\";\n"
	"}\n"
	"function cellX(col) { return M.left + col * CW; }\n"
	"function cellY(row) { return M.top + row * CH; }\n"
	"function rowOffsetsMs(row) {\n"
	"\treturn [1000 * (ROWS - 1 - row) / ROWS, 1000 * (ROWS - row) / ROWS];\n"
	"}\n"
	"function fmtMs(v) { return (Math.round(v * 1000) / 1000).toString(); }\n"
	"\n"
	"function drawBase() {\n"
	"\tvar b = base.getContext(\"2d\");\n"
	"\tb.setTransform(dpr, 0, 0, dpr, 0, 0);\n"
	"\tb.fillStyle = \"#fff\";\n"
	"\tb.fillRect(0, 0, W, H);\n"
	"\tfor (var col = 0; col < COLS; col++) {\n"
	"\t\tfor (var row = 0; row < ROWS; row++) {\n"
	"\t\t\tvar n = D.cells[col * ROWS + row];\n"
	"\t\t\tif (!n) continue;\n"
	"\t\t\tb.fillStyle = cellColor(n);\n"
	"\t\t\tb.fillRect(cellX(col), cellY(row), CW, CH);\n"
	"\t\t}\n"
	"\t}\n"
	"\tif (D.capped) { /* columns past the embedded samples */\n"
	"\t\tvar k0 = Math.floor(D.capEnd * ROWS / NSPS) + 1;\n"
	"\t\tb.fillStyle = \"rgba(120,120,120,0.35)\";\n"
	"\t\tfor (var k = k0; k < COLS * ROWS; k++) {\n"
	"\t\t\tvar c = Math.floor(k / ROWS), r = ROWS - 1 - (k % ROWS);\n"
	"\t\t\tb.fillRect(cellX(c), cellY(r), CW, CH);\n"
	"\t\t}\n"
	"\t}\n"
	"\tb.strokeStyle = \"#888\";\n"
	"\tb.lineWidth = 1;\n"
	"\tb.strokeRect(M.left - 0.5, M.top - 0.5, GW + 1, GH + 1);\n"
	"\tb.fillStyle = \"#333\";\n"
	"\tb.font = \"11px sans-serif\";\n"
	"\t/* y: offset within the second, 0 ms at the bottom (row 0 is the end). */\n"
	"\tb.textAlign = \"right\";\n"
	"\tb.textBaseline = \"middle\";\n"
	"\tvar ystep = GH >= 250 ? 100 : GH >= 120 ? 200 : 500;\n"
	"\tfor (var ms = 0; ms <= 1000; ms += ystep) {\n"
	"\t\tvar y = M.top + GH * (1 - ms / 1000);\n"
	"\t\tb.fillText(String(ms), M.left - 6, y);\n"
	"\t\tb.fillRect(M.left - 4, Math.round(y) - 0.5, 4, 1);\n"
	"\t}\n"
	"\tb.save();\n"
	"\tb.translate(12, M.top + GH / 2);\n"
	"\tb.rotate(-Math.PI / 2);\n"
	"\tb.textAlign = \"center\";\n"
	"\tb.fillText(\"offset (ms)\", 0, 0);\n"
	"\tb.restore();\n"
	"\t/* x: seconds from the first one. */\n"
	"\tb.textAlign = \"center\";\n"
	"\tb.textBaseline = \"top\";\n"
	"\tvar steps = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600];\n"
	"\tvar xstep = steps[steps.length - 1];\n"
	"\tfor (var i = 0; i < steps.length; i++) if (steps[i] * CW >= 36) { xstep = steps[i]; break; }\n"
	"\tfor (var s = 0; s < COLS; s += xstep) {\n"
	"\t\tvar x = cellX(s) + CW / 2;\n"
	"\t\tb.fillText(String(s), x, M.top + GH + 6);\n"
	"\t\tb.fillRect(Math.round(x) - 0.5, M.top + GH, 1, 4);\n"
	"\t}\n"
	"\tb.fillText(\"time (s) from \" + D.startLabel, M.left + GW / 2, M.top + GH + 24);\n"
	"}\n"
	"\n"
	"/* Cells in time order: k = col * ROWS + (ROWS - 1 - row) covers\n"
	" * [k / ROWS, (k + 1) / ROWS) s from the first second. */\n"
	"function kOf(col, row) { return col * ROWS + (ROWS - 1 - row); }\n"
	"function cellOfK(k) { return [Math.floor(k / ROWS), ROWS - 1 - (k % ROWS)]; }\n"
	"function startNsOfK(k) { return Math.ceil(k * NSPS / ROWS); }\n"
	"function endNsOfK(k) { return Math.floor((k + 1) * NSPS / ROWS); }\n"
	"\n"
	"var sel = null;     /* {k0, k1, t0, t1}: the range the flame graph shows */\n"
	"var pending = null; /* first cell of a selection being made */\n"
	"var hoverK = null, dragging = false;\n"
	"\n"
	"function redraw() {\n"
	"\tctx.setTransform(1, 0, 0, 1, 0, 0);\n"
	"\tctx.drawImage(base, 0, 0);\n"
	"\tctx.setTransform(dpr, 0, 0, dpr, 0, 0);\n"
	"\tvar a = null, b = null;\n"
	"\tif (pending !== null) {\n"
	"\t\ta = pending; b = hoverK !== null ? hoverK : pending;\n"
	"\t} else if (sel) {\n"
	"\t\ta = sel.k0; b = sel.k1;\n"
	"\t}\n"
	"\tif (a === null) return;\n"
	"\tif (b < a) { var t = a; a = b; b = t; }\n"
	"\ta = Math.max(a, 0); b = Math.min(b, COLS * ROWS - 1);\n"
	"\tctx.fillStyle = \"rgba(147,110,181,0.45)\";\n"
	"\tfor (var c = Math.floor(a / ROWS); c <= Math.floor(b / ROWS); c++) {\n"
	"\t\t/* the column's part of [a, b]: rows from low k (bottom) to high k (top) */\n"
	"\t\tvar lo = Math.max(a, c * ROWS), hi = Math.min(b, c * ROWS + ROWS - 1);\n"
	"\t\tvar rTop = ROWS - 1 - (hi - c * ROWS), rBottom = ROWS - 1 - (lo - c * ROWS);\n"
	"\t\tctx.fillRect(cellX(c), cellY(rTop), CW, (rBottom - rTop + 1) * CH);\n"
	"\t}\n"
	"}\n"
	"\n"
	"function cellAt(ev) {\n"
	"\tvar r = hm.getBoundingClientRect();\n"
	"\tvar x = ev.clientX - r.left - M.left, y = ev.clientY - r.top - M.top;\n"
	"\tif (x < 0 || y < 0 || x >= GW || y >= GH) return null;\n"
	"\treturn kOf(Math.floor(x / CW), Math.floor(y / CH));\n"
	"}\n"
	"function cellText(k) {\n"
	"\tvar c = cellOfK(k), off = rowOffsetsMs(c[1]);\n"
	"\tvar n = D.cells[c[0] * ROWS + c[1]];\n"
	"\treturn \"second \" + c[0] + \", offset \" + fmtMs(off[0]) + \"\\u2013\" + fmtMs(off[1]) +\n"
	"\t\t\" ms: \" + n + \" sample\" + (n === 1 ? \"\" : \"s\");\n"
	"}\n"
	"function fmtS(ns) { /* seconds with up to 9 decimals, no trailing zeros */\n"
	"\tvar s = (ns / NSPS).toFixed(9).replace(/0+$/, \"\").replace(/\\.$/, \"\");\n"
	"\treturn s === \"-0\" ? \"0\" : s;\n"
	"}\n"
	"\n"
	"/* The selection's time range, as the C side computes it. */\n"
	"function selectCells(ka, kb) {\n"
	"\tif (kb < ka) { var t = ka; ka = kb; kb = t; }\n"
	"\tselectRange(startNsOfK(ka), endNsOfK(kb), ka, kb);\n"
	"}\n"
	"function selectRange(t0, t1, ka, kb) {\n"
	"\tif (ka === undefined) {\n"
	"\t\tka = Math.max(0, Math.floor(t0 * ROWS / NSPS));\n"
	"\t\tkb = Math.max(ka, Math.ceil(t1 * ROWS / NSPS) - 1);\n"
	"\t}\n"
	"\tsel = {k0: ka, k1: kb, t0: t0, t1: t1};\n"
	"\tpending = null;\n"
	"\tredraw();\n"
	"\tvar h = \"#range=\" + fmtS(t0) + \"-\" + fmtS(t1);\n"
	"\tif (window.location.hash !== h) {\n"
	"\t\ttry { history.replaceState(null, \"\", h); } catch (e) { window.location.hash = h; }\n"
	"\t}\n"
	"\tshowFlame();\n"
	"}\n"
	"function clearPending() { pending = null; dragging = false; redraw(); }\n"
	"\n"
	"hm.addEventListener(\"mousemove\", function (ev) {\n"
	"\tvar k = cellAt(ev);\n"
	"\thoverK = k;\n"
	"\thmDetails.textContent = k === null ? \"\\u00a0\" : cellText(k);\n"
	"\tif (pending !== null) redraw();\n"
	"});\n"
	"hm.addEventListener(\"mouseleave\", function () {\n"
	"\thoverK = null;\n"
	"\thmDetails.textContent = \"\\u00a0\";\n"
	"\tif (pending !== null) redraw();\n"
	"});\n"
	"hm.addEventListener(\"mousedown\", function (ev) {\n"
	"\tvar k = cellAt(ev);\n"
	"\tif (k === null) return;\n"
	"\tev.preventDefault();\n"
	"\tif (pending === null) {\n"
	"\t\tpending = k; hoverK = k; dragging = true;\n"
	"\t\tselInfo.textContent = \"Start: \" + cellText(k) + \" \\u2014 now click (or release on) the end cell.\";\n"
	"\t\tredraw();\n"
	"\t} else {\n"
	"\t\tdragging = false;\n"
	"\t\tselectCells(pending, k);\n"
	"\t}\n"
	"});\n"
	"hm.addEventListener(\"mouseup\", function (ev) {\n"
	"\tif (!dragging) return;\n"
	"\tdragging = false;\n"
	"\tvar k = cellAt(ev);\n"
	"\tif (k !== null && pending !== null && k !== pending) selectCells(pending, k);\n"
	"});\n"
	"window.addEventListener(\"keydown\", function (e) {\n"
	"\tif (e.key === \"Escape\" && pending !== null) {\n"
	"\t\tclearPending();\n"
	"\t\tselInfo.textContent = \"\\u00a0\";\n"
	"\t}\n"
	"});\n"
	"document.getElementById(\"all\").addEventListener(\"click\", function () {\n"
	"\tif (T.length) selectRange(0, COLS * NSPS);\n"
	"});\n"
	"\n"
	"/* ---- the flame graph of a range ---- */\n"
	"var fg = document.createElementNS(\"http://www.w3.org/2000/svg\", \"svg\");\n"
	"fg.id = \"fg\";\n"
	"fg.setAttribute(\"width\", \"0\");\n"
	"fg.setAttribute(\"height\", \"0\");\n"
	"document.getElementById(\"fgwrap\").appendChild(fg);\n"
	"var FH = 16, FONT = 12, CHARW = 0.6 * FONT, PAD = 3, MINW = 0.1, X0 = 10;\n"
	"var tree = null, zoomed = null, lastSearch = \"\", searchRe = null;\n"
	"\n"
	"function esc(s) {\n"
	"\treturn s.replace(/&/g, \"&amp;\").replace(/[<]/g, \"&lt;\").replace(/>/g, \"&gt;\")\n"
	"\t\t.replace(/\"/g, \"&quot;\");\n"
	"}\n"
	"function fitLabel(name, width) {\n"
	"\tvar room = Math.floor((width - 2 * PAD) / CHARW);\n"
	"\tif (room < 3) return \"\";\n"
	"\tif (name.length <= room) return name;\n"
	"\tvar cut = room - 2, last = name.charCodeAt(cut - 1);\n"
	"\tif (last >= 0xd800 && last <= 0xdbff) cut--;\n"
	"\treturn name.substring(0, cut) + \"..\";\n"
	"}\n"
	"\n"
	"function buildTree(i0, i1) {\n"
	"\tvar root = {fn: -1, name: \"all\", total: 0, self: 0, kids: new Map(), parent: null};\n"
	"\tvar memo = new Map();\n"
	"\tfunction child(n, fn) {\n"
	"\t\tvar c = n.kids.get(fn);\n"
	"\t\tif (!c) {\n"
	"\t\t\tc = {fn: fn, name: D.names[fn], total: 0, self: 0, kids: new Map(), parent: n};\n"
	"\t\t\tn.kids.set(fn, c);\n"
	"\t\t}\n"
	"\t\treturn c;\n"
	"\t}\n"
	"\tfunction nodeOf(comm, node) {\n"
	"\t\tvar key = comm * NNODES + node, n = memo.get(key);\n"
	"\t\tif (n) return n;\n"
	"\t\tvar chain = [];\n"
	"\t\tvar cur = node;\n"
	"\t\twhile (cur !== 0) {\n"
	"\t\t\tn = memo.get(comm * NNODES + cur);\n"
	"\t\t\tif (n) break;\n"
	"\t\t\tchain.push(cur);\n"
	"\t\t\tcur = D.parent[cur - 1];\n"
	"\t\t}\n"
	"\t\tif (cur === 0) {\n"
	"\t\t\tn = memo.get(comm * NNODES);\n"
	"\t\t\tif (!n) { n = child(root, D.comms[comm]); memo.set(comm * NNODES, n); }\n"
	"\t\t}\n"
	"\t\tfor (var i = chain.length - 1; i >= 0; i--) {\n"
	"\t\t\tn = child(n, D.func[chain[i] - 1]);\n"
	"\t\t\tmemo.set(comm * NNODES + chain[i], n);\n"
	"\t\t}\n"
	"\t\treturn n;\n"
	"\t}\n"
	"\tfor (var i = i0; i < i1; i++) nodeOf(D.c[i], D.s[i]).self++;\n"
	"\tvar maxDepth = 0;\n"
	"\t(function total(n, depth) {\n"
	"\t\tif (depth > maxDepth) maxDepth = depth;\n"
	"\t\tvar sum = n.self;\n"
	"\t\tvar kids = Array.from(n.kids.values());\n"
	"\t\tkids.sort(function (a, b) { return a.name < b.name ? -1 : a.name > b.name ? 1 : a.fn - b.fn; });\n"
	"\t\tvar start = n.start;\n"
	"\t\tkids.forEach(function (k) { k.start = start; k.depth = depth + 1; start += total(k, depth + 1); sum += k.total; });\n"
	"\t\tn.kids = kids;\n"
	"\t\tn.total = sum;\n"
	"\t\treturn sum;\n"
	"\t})(Object.assign(root, {start: 0, depth: 0}), 0);\n"
	"\troot.levels = maxDepth + 1;\n"
	"\treturn root;\n"
	"}\n"
	"\n"
	"function showFlame() {\n"
	"\tif (!sel) return;\n"
	"\tvar i0 = lowerBound(sel.t0), i1 = upperBound(sel.t1);\n"
	"\ttree = buildTree(i0, i1);\n"
	"\ttree.i0 = i0; tree.i1 = i1;\n"
	"\tzoomed = tree;\n"
	"\tselInfo.textContent = \"Range \" + fmtS(sel.t0) + \" s \\u2013 \" + fmtS(sel.t1) +\n"
	"\t\t\" s from second 0: \" + (i1 - i0) + \" sample\" + (i1 - i0 === 1 ? \"\" : \"s\") +\n"
	"\t\t\" (start \\u2264 t \\u2264 end). Link: \" + window.location.hash;\n"
	"\trenderFlame();\n"
	"}\n"
	"\n"
	"function renderFlame() {\n"
	"\tvar width = Math.max(600, Math.min(document.getElementById(\"fgwrap\").clientWidth, 2400));\n"
	"\tvar span = width - 2 * X0;\n"
	"\tvar top = 3 * FONT + 18, levels = tree.levels;\n"
	"\tvar height = top + levels * FH + 2 * FONT + 10;\n"
	"\tvar z = zoomed, scale = z.total > 0 ? span / z.total : 0;\n"
	"\tvar out = [], matchedSpans = [];\n"
	"\tfunction y(depth) { return top + (levels - 1 - depth) * FH; }\n"
	"\tfunction box(n, x, w, anc) {\n"
	"\t\tvar label = n.fn < 0 ? \"all\" : n.name;\n"
	"\t\tvar color = n.fn < 0 ? D.rootColor : D.colors[n.fn];\n"
	"\t\tvar hit = searchRe && n.fn >= 0 && searchRe.test(label);\n"
	"\t\tif (hit) matchedSpans.push([n.start, n.start + n.total]);\n"
	"\t\tout.push(\"<g class=\\\"f\" + (anc ? \" anc\" : \"\") + (hit ? \" match\" : \"\") + \"\\\" data-id=\\\"\" +\n"
	"\t\t\tnodes.length + \"\\\"><rect x=\\\"\" + x.toFixed(2) + \"\\\" y=\\\"\" + y(n.depth) +\n"
	"\t\t\t\"\\\" width=\\\"\" + w.toFixed(2) + \"\\\" height=\\\"\" + (FH - 1) + \"\\\" fill=\\\"\" + color +\n"
	"\t\t\t\"\\\" rx=\\\"2\\\" ry=\\\"2\\\"/><text x=\\\"\" + (x + PAD).toFixed(2) + \"\\\" y=\\\"\" +\n"
	"\t\t\t(y(n.depth) + FH - 4.5) + \"\\\">\" + esc(fitLabel(label, w)) + \"<\\/text><\\/g>\");\n"
	"\t\tnodes.push(n);\n"
	"\t}\n"
	"\tvar nodes = [];\n"
	"\tfor (var a = z.parent, chain = []; a; a = a.parent) chain.unshift(a);\n"
	"\tchain.forEach(function (n) { box(n, X0, span, true); });\n"
	"\t(function walk(n) {\n"
	"\t\tvar w = n === z ? span : n.total * scale;\n"
	"\t\tif (n !== tree && n !== z && w < MINW) return;\n"
	"\t\tif (n.total === 0 && n !== tree) return;\n"
	"\t\tbox(n, X0 + (n.start - z.start) * scale, w, false);\n"
	"\t\tn.kids.forEach(walk);\n"
	"\t})(z);\n"
	"\tvar title = \"Flame Graph\";\n"
	"\tvar sub = \"range \" + fmtS(sel.t0) + \"\\u2013\" + fmtS(sel.t1) + \" s: \" + tree.total + \" sample\" + (tree.total === 1 ? \"\" : \"s\");\n"
	"\tvar matchedText = \"\\u00a0\";\n"
	"\tif (searchRe) {\n"
	"\t\tmatchedSpans.sort(function (p, q) { return p[0] - q[0] || q[1] - p[1]; });\n"
	"\t\tvar cov = 0, reach = -Infinity;\n"
	"\t\tmatchedSpans.forEach(function (sp) {\n"
	"\t\t\tif (sp[1] <= reach) return;\n"
	"\t\t\tcov += sp[1] - Math.max(sp[0], reach); reach = sp[1];\n"
	"\t\t});\n"
	"\t\tmatchedText = \"Matched: \" + (tree.total ? 100 * cov / tree.total : 0).toFixed(2) + \"%\";\n"
	"\t}\n"
	"\tfg.setAttribute(\"width\", width);\n"
	"\tfg.setAttribute(\"height\", height);\n"
	"\tfg.setAttribute(\"viewBox\", \"0 0 \" + width + \" \" + height);\n"
	"\tfg.innerHTML =\n"
	"\t\t\"<defs><linearGradient id=\\\"bg\\\" x1=\\\"0\\\" y1=\\\"0\\\" x2=\\\"0\\\" y2=\\\"1\\\">\" +\n"
	"\t\t\"<stop offset=\\\"5%\\\" stop-color=\\\"#f4f4f4\\\"/><stop offset=\\\"95%\\\" stop-color=\\\"#e8e8d8\\\"/>\" +\n"
	"\t\t\"<\\/linearGradient><\\/defs><rect x=\\\"0\\\" y=\\\"0\\\" width=\\\"\" + width + \"\\\" height=\\\"\" + height +\n"
	"\t\t\"\\\" fill=\\\"url(#bg)\\\"/>\" +\n"
	"\t\t\"<text id=\\\"fgtitle\\\" x=\\\"\" + width / 2 + \"\\\" y=\\\"\" + 2 * FONT + \"\\\">\" + title + \"<\\/text>\" +\n"
	"\t\t\"<text id=\\\"fgsub\\\" x=\\\"\" + width / 2 + \"\\\" y=\\\"\" + (2 * FONT + 18) + \"\\\">\" + esc(sub) + \"<\\/text>\" +\n"
	"\t\t\"<text id=\\\"unzoom\\\" class=\\\"ctl\" + (zoomed === tree ? \" hide\" : \"\") + \"\\\" x=\\\"\" + X0 +\n"
	"\t\t\"\\\" y=\\\"\" + 2 * FONT + \"\\\">Reset Zoom<\\/text>\" +\n"
	"\t\t\"<text id=\\\"search\\\" class=\\\"ctl\\\" x=\\\"\" + (width - X0) + \"\\\" y=\\\"\" + 2 * FONT + \"\\\">Search<\\/text>\" +\n"
	"\t\t\"<text id=\\\"resetsearch\\\" class=\\\"ctl\" + (searchRe ? \"\" : \" hide\") + \"\\\" x=\\\"\" + (width - X0 - 70) +\n"
	"\t\t\"\\\" y=\\\"\" + 2 * FONT + \"\\\">Reset Search<\\/text>\" +\n"
	"\t\t\"<g id=\\\"frames\\\">\" + out.join(\"\") + \"<\\/g>\" +\n"
	"\t\t\"<text id=\\\"details\\\" x=\\\"\" + X0 + \"\\\" y=\\\"\" + (height - FONT) + \"\\\">\\u00a0<\\/text>\" +\n"
	"\t\t\"<text id=\\\"matched\\\" x=\\\"\" + (width - X0) + \"\\\" y=\\\"\" + (height - FONT) + \"\\\">\" + matchedText + \"<\\/text>\";\n"
	"\tfg.nodesDrawn = nodes;\n"
	"}\n"
	"\n"
	"function frameOf(el) {\n"
	"\twhile (el && el !== fg) {\n"
	"\t\tif (el.classList && el.classList.contains(\"f\")) return el;\n"
	"\t\tel = el.parentNode;\n"
	"\t}\n"
	"\treturn null;\n"
	"}\n"
	"function describe(n) {\n"
	"\tvar label = n.fn < 0 ? \"all\" : n.name;\n"
	"\tvar pct = tree.total ? 100 * n.total / tree.total : 0;\n"
	"\treturn \"Function: \" + label + \" (\" + n.total.toLocaleString(\"en-US\") + \" samples, \" +\n"
	"\t\tpct.toFixed(2) + \"%)\";\n"
	"}\n"
	"function askSearch() {\n"
	"\tvar term = window.prompt(\"Search (regular expression):\", lastSearch);\n"
	"\tif (term === null || term === \"\") return;\n"
	"\ttry { searchRe = new RegExp(term); } catch (err) { return; }\n"
	"\tlastSearch = term;\n"
	"\tif (tree) renderFlame();\n"
	"}\n"
	"fg.addEventListener(\"click\", function (ev) {\n"
	"\tvar t = ev.target;\n"
	"\tif (t.id === \"unzoom\") { zoomed = tree; renderFlame(); return; }\n"
	"\tif (t.id === \"search\") { askSearch(); return; }\n"
	"\tif (t.id === \"resetsearch\") { searchRe = null; renderFlame(); return; }\n"
	"\tvar g = frameOf(t);\n"
	"\tif (!g) return;\n"
	"\tvar n = fg.nodesDrawn[Number(g.getAttribute(\"data-id\"))];\n"
	"\tzoomed = n.total > 0 ? n : tree;\n"
	"\trenderFlame();\n"
	"});\n"
	"fg.addEventListener(\"mouseover\", function (ev) {\n"
	"\tvar g = frameOf(ev.target);\n"
	"\tvar d = document.getElementById(\"details\");\n"
	"\tif (g && d) d.textContent = describe(fg.nodesDrawn[Number(g.getAttribute(\"data-id\"))]);\n"
	"});\n"
	"fg.addEventListener(\"mouseout\", function () {\n"
	"\tvar d = document.getElementById(\"details\");\n"
	"\tif (d) d.textContent = \"\\u00a0\";\n"
	"});\n"
	"window.addEventListener(\"keydown\", function (e) {\n"
	"\tif (!tree) return;\n"
	"\tif ((e.ctrlKey || e.metaKey) && (e.key === \"f\" || e.keyCode === 70)) {\n"
	"\t\te.preventDefault();\n"
	"\t\taskSearch();\n"
	"\t} else if (e.key === \"Escape\" && searchRe) {\n"
	"\t\tsearchRe = null;\n"
	"\t\trenderFlame();\n"
	"\t}\n"
	"});\n"
	"\n"
	"/* ---- start ---- */\n"
	"function fromHash() {\n"
	"\tvar m = /(?:^#|&)range=([0-9.]+)-([0-9.]+)/.exec(window.location.hash);\n"
	"\tif (!m) return false;\n"
	"\tvar t0 = Math.round(parseFloat(m[1]) * NSPS), t1 = Math.round(parseFloat(m[2]) * NSPS);\n"
	"\tif (!(t0 <= t1)) return false;\n"
	"\tselectRange(t0, t1);\n"
	"\treturn true;\n"
	"}\n"
	"drawBase();\n"
	"redraw();\n"
	"if (!fromHash()) selInfo.textContent = \"\\u00a0\";\n"
	"window.addEventListener(\"hashchange\", fromHash);\n"
	"})();\n";

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

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", out);
	xml_put_text(out, title);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", PAGE_STYLE);
	xml_put_text(out, title);
	char a[32];
	fprintf(out,
		"</h1>\n<p id=\"info\">%" PRIu64 " samples over %d s from %.0f s (%" PRIu64
		" idle samples dropped); each column is one second, each row %s ms of it, time "
		"running up each column. Click a start cell and an end cell (or drag from one to the "
		"other) to see the flame graph of that range; Escape cancels. "
		"<button id=\"all\" type=\"button\">Whole profile</button></p>\n",
		h->total, h->cols, h->start_s, h->idle_dropped, fmt_ms(1000.0 / h->rows, a));
	if (embedded < total)
		fprintf(out,
			"<p id=\"capnote\" class=\"warn\">This page holds only the first %zu of %zu "
			"samples (grey cells are past them): flame graphs of later ranges are "
			"incomplete. Use <code>sonde flame --range</code> for those.</p>\n",
			embedded, total);
	if (h->cols == 0)
		fputs("<p class=\"warn\">The profile has no samples.</p>\n", out);
	/* The canvas and the flame graph's <svg> are made by the script. */
	fputs("<div id=\"hmwrap\"></div>\n"
	      "<div id=\"hmdetails\">&#160;</div>\n<div id=\"selinfo\">&#160;</div>\n"
	      "<div id=\"fgwrap\"></div>\n"
	      "<script id=\"data\" type=\"application/json\">",
	      out);
	put_script_json(out, json, json_len);
	free(json);
	fputs("</script>\n<script>\n", out);
	fputs(PAGE_SCRIPT, out);
	fputs("</script>\n</body>\n</html>\n", out);
	c_numeric_leave(&cn);
	return stream_result(out);
}

int heatmap_write_html(FILE *out, const struct profile *p, const struct heatmap *h,
		       const char *title)
{
	return heatmap_write_html_capped(out, p, h, title, HEATMAP_HTML_MAX_SAMPLES);
}
