/* heatmap: FlameScope's cell arithmetic (exact cells for chosen times, idle
 * dropping, the column count), the selection -> time range round trip, and
 * the SVG and HTML documents. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heatmap.h"
#include "profile.h"
#include "unitkit.h"
#include "viewtree.h"

#define S(sec) ((uint64_t)((sec) * 1000000ULL + 0.5) * 1000ULL) /* seconds, µs precision */

/* One sample at t ns for (comm, tid, with pid tid) with the stack given root first. */
static void add_at(struct profile *p, uint64_t t, const char *comm, uint32_t tid,
		   const uint32_t *frames, size_t n)
{
	unit_sample(p, profile_thread_intern(p, tid, tid, comm), t,
		    profile_stack_intern(p, frames, n), 1);
}


static void add_user(struct profile *p, uint64_t t, const char *leaf)
{
	uint32_t f[2] = {unit_frame(p, "main", FRAME_USER), unit_frame(p, leaf, FRAME_USER)};
	add_at(p, t, "java", 8192, f, 2);
}

static void add_idle(struct profile *p, uint64_t t)
{
	uint32_t f[3] = {unit_frame(p, "start_secondary", FRAME_KERNEL), unit_frame(p, "default_idle", FRAME_KERNEL),
			 unit_frame(p, "native_safe_halt", FRAME_KERNEL)};
	add_at(p, t, "swapper", 0, f, 3);
}

static char *to_string(int (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	cr_assert_not_null(f);
	cr_assert_eq(fn(f, arg), 0);
	fclose(f);
	return buf;
}

/* ---- cells -------------------------------------------------------------- */

/* The five stacks of FlameScope's examples/perf.test01 (its timestamps, its
 * idle samples): FlameScope puts them in these cells. */
static struct profile *flamescope_test01(void)
{
	struct profile *p = profile_new();
	add_user(p, S(5076.100000), "STACK-1");
	add_idle(p, S(5076.836353));
	add_idle(p, S(5077.040428));
	add_user(p, S(5086.200000), "STACK-2");
	add_user(p, S(5096.300000), "STACK-3");
	add_idle(p, S(5097.999999));
	add_user(p, S(5106.400000), "STACK-4");
	add_user(p, S(5116.500000), "STACK-5");
	add_idle(p, S(5117.999999));
	return p;
}

Test(heatmap, flamescope_test01_cells)
{
	struct profile *p = flamescope_test01();
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, NULL, 0, &h), 0);
	cr_assert_eq(h.rows, 50);
	cr_assert_eq(h.cols, 42, "ceil(5117.999999) - floor(5076.1) = 42, got %d", h.cols);
	cr_assert_eq(h.start_s, 5076.0);
	cr_assert_eq(h.idle_dropped, 4);
	cr_assert_eq(h.total, 5);
	cr_assert_eq(h.max, 1);
	/* Python: 5076.1 % 1 = 0.10000000000036 -> row 44; 5086.2 % 1 =
	 * 0.19999999999982 -> floor(9.99..) = 9 -> row 40 (not 39). */
	int want[5][2] = {{0, 44}, {10, 40}, {20, 34}, {30, 30}, {40, 24}};
	uint64_t sum = 0;
	for (int i = 0; i < 5; i++)
		cr_assert_eq(heatmap_cell(&h, want[i][0], want[i][1]), 1, "cell (%d,%d)", want[i][0],
			     want[i][1]);
	for (size_t i = 0; i < (size_t)h.cols * h.rows; i++)
		sum += h.cells[i];
	cr_assert_eq(sum, 5);
	heatmap_free(&h);
	profile_free(p);
}

Test(heatmap, chosen_times_land_in_chosen_cells)
{
	struct profile *p = profile_new();
	add_user(p, S(3.005), "a");  /* col 0, offset 5 ms: bottom row */
	add_user(p, S(3.999), "b");  /* col 0, top row */
	add_user(p, S(4.5), "c");    /* col 1, 500 ms: row 50 - 25 - 1 */
	add_user(p, S(4.5101), "c"); /* same cell */
	add_user(p, S(6.25), "d");   /* col 3, 250 ms: row 50 - 12 - 1 */
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, NULL, 50, &h), 0);
	cr_assert_eq(h.start_s, 3.0);
	cr_assert_eq(h.cols, 4); /* ceil(6.25) - 3 */
	cr_assert_eq(heatmap_cell(&h, 0, 49), 1);
	cr_assert_eq(heatmap_cell(&h, 0, 0), 1);
	cr_assert_eq(heatmap_cell(&h, 1, 24), 2);
	cr_assert_eq(heatmap_cell(&h, 3, 37), 1);
	cr_assert_eq(h.max, 2);
	cr_assert_eq(h.first_ns, S(3.005));
	cr_assert_eq(h.last_ns, S(6.25));
	heatmap_free(&h);

	/* 10 rows of 100 ms */
	cr_assert_eq(heatmap_build(p, NULL, 10, &h), 0);
	cr_assert_eq(heatmap_cell(&h, 0, 9), 1);
	cr_assert_eq(heatmap_cell(&h, 1, 4), 2);
	cr_assert_eq(heatmap_cell(&h, 3, 7), 1);
	heatmap_free(&h);
	profile_free(p);
}

Test(heatmap, column_count)
{
	struct profile *p = profile_new();
	add_user(p, S(3.9), "a");
	add_user(p, S(7.2), "a");
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, NULL, 0, &h), 0);
	cr_assert_eq(h.cols, 5, "ceil(7.2) - floor(3.9)");
	cr_assert_eq(heatmap_cell(&h, 4, 50 - 10 - 1), 1);
	heatmap_free(&h);

	/* Start and end counted over idle samples too, as FlameScope does. */
	add_idle(p, S(9.5));
	cr_assert_eq(heatmap_build(p, NULL, 0, &h), 0);
	cr_assert_eq(h.cols, 7);
	cr_assert_eq(h.total, 2);
	heatmap_free(&h);
	profile_free(p);

	/* A last sample on a whole second still gets a column. */
	p = profile_new();
	add_user(p, S(3.5), "a");
	add_user(p, S(7.0), "a");
	cr_assert_eq(heatmap_build(p, NULL, 0, &h), 0);
	cr_assert_eq(h.cols, 5);
	cr_assert_eq(heatmap_cell(&h, 4, 49), 1);
	heatmap_free(&h);
	profile_free(p);

	/* No samples: no columns. */
	p = profile_new();
	cr_assert_eq(heatmap_build(p, NULL, 0, &h), 0);
	cr_assert_eq(h.cols, 0);
	cr_assert_eq(h.total, 0);
	heatmap_free(&h);
	profile_free(p);
}

Test(heatmap, idle_dropping)
{
	struct profile *p = profile_new();
	uint32_t halt = unit_frame(p, "native_safe_halt", FRAME_KERNEL),
		 cpuidle = unit_frame(p, "intel_idle_cpuidle_enter", FRAME_KERNEL),
		 xen = unit_frame(p, "xen_hypercall_sched_op", FRAME_KERNEL),
		 work = unit_frame(p, "run_timer_softirq", FRAME_KERNEL),
		 main_ = unit_frame(p, "main", FRAME_USER);
	add_at(p, S(1.11), "swapper", 0, (uint32_t[]){work, halt}, 2);    /* idle */
	add_at(p, S(1.21), "swapper/3", 0, (uint32_t[]){cpuidle}, 1);     /* idle: substring */
	add_at(p, S(1.31), "swapper", 0, (uint32_t[]){xen, work}, 2);      /* idle: any frame */
	add_at(p, S(1.41), "swapper", 0, (uint32_t[]){work}, 1);           /* swapper, working */
	add_at(p, S(1.51), "java", 7, (uint32_t[]){main_, halt}, 2);        /* not swapper */
	add_at(p, S(1.61), "myswapper", 7, (uint32_t[]){halt}, 1);          /* comm must start so */
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, NULL, 0, &h), 0);
	cr_assert_eq(h.idle_dropped, 3);
	cr_assert_eq(h.total, 3);
	cr_assert_eq(heatmap_cell(&h, 0, 50 - 20 - 1), 1, "1.41 s kept");
	cr_assert_eq(heatmap_cell(&h, 0, 50 - 25 - 1), 1, "1.51 s kept");
	cr_assert_eq(heatmap_cell(&h, 0, 50 - 30 - 1), 1, "1.61 s kept");
	cr_assert_eq(heatmap_cell(&h, 0, 50 - 5 - 1), 0, "1.11 s dropped");
	bool want[6] = {true, true, true, false, false, false};
	for (size_t i = 0; i < p->nsamples; i++)
		cr_assert_eq(heatmap_sample_idle(p, &p->samples[i]), want[i], "sample %zu", i);
	heatmap_free(&h);
	profile_free(p);
}

Test(heatmap, filter_limits_samples)
{
	struct profile *p = profile_new();
	uint32_t m = unit_frame(p, "main", FRAME_USER);
	add_at(p, S(10.1), "a", 1, &m, 1);
	add_at(p, S(12.1), "b", 2, &m, 1);
	add_at(p, S(14.1), "b", 2, &m, 1);
	struct view f = {.tid = 2};
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, &f, 0, &h), 0);
	cr_assert_eq(h.start_s, 12.0);
	cr_assert_eq(h.cols, 3);
	cr_assert_eq(h.total, 2);
	cr_assert_eq(h.filter.tid, 2);
	heatmap_free(&h);
	profile_free(p);
}

Test(heatmap, bad_rows)
{
	struct profile *p = profile_new();
	add_user(p, S(1.5), "a");
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, NULL, HEATMAP_MAX_ROWS + 1, &h), -1);
	/* years between two samples: too many cells */
	add_user(p, S(1.5) + 40000000ULL * 1000000000ULL, "a");
	cr_assert_eq(heatmap_build(p, NULL, 50, &h), -1);
	profile_free(p);
}

/* ---- ranges ------------------------------------------------------------- */

Test(heatmap, cell_range)
{
	struct profile *p = profile_new();
	add_user(p, S(100.5), "a");
	add_user(p, S(103.5), "a");
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, NULL, 50, &h), 0);
	double t0, t1;
	heatmap_cell_range(&h, 2, 0, &t0, &t1); /* top row: the end of second 2 */
	cr_assert_float_eq(t0, 102.98, 1e-9);
	cr_assert_float_eq(t1, 103.0, 1e-9);
	heatmap_cell_range(&h, 0, 49, &t0, &t1); /* bottom row: its beginning */
	cr_assert_float_eq(t0, 100.0, 1e-9);
	cr_assert_float_eq(t1, 100.02, 1e-9);
	/* the cell a sample is counted in contains it */
	heatmap_cell_range(&h, 0, 24, &t0, &t1);
	cr_assert(t0 <= 100.5 && 100.5 < t1);
	cr_assert_eq(heatmap_cell(&h, 0, 24), 1);

	struct view f = {.tid = 5};
	cr_assert_eq(heatmap_range_filter(&h, 0, 24, 0, 24, &f), 0);
	cr_assert(f.has_range);
	cr_assert_eq(f.start_ns, 100500000000ULL);
	cr_assert_eq(f.end_ns, 100520000000ULL);
	cr_assert_eq(f.tid, 5, "other fields left alone");
	/* from the bottom of second 0 to the top of second 2, in either order */
	cr_assert_eq(heatmap_range_filter(&h, 2, 0, 0, 49, &f), 0);
	cr_assert_eq(f.start_ns, 100000000000ULL);
	cr_assert_eq(f.end_ns, 103000000000ULL);
	cr_assert_eq(heatmap_range_filter(&h, 0, 49, 2, 0, &f), 0);
	cr_assert_eq(f.start_ns, 100000000000ULL);
	cr_assert_eq(f.end_ns, 103000000000ULL);
	/* the same column, top cell before bottom cell in time order? no: the
	 * bottom cell is earlier, whichever is clicked first */
	cr_assert_eq(heatmap_range_filter(&h, 1, 0, 1, 49, &f), 0);
	cr_assert_eq(f.start_ns, 101000000000ULL);
	cr_assert_eq(f.end_ns, 102000000000ULL);
	cr_assert_eq(heatmap_range_filter(&h, 4, 0, 0, 0, &f), -1);
	cr_assert_eq(heatmap_range_filter(&h, 0, 50, 0, 0, &f), -1);
	heatmap_free(&h);

	/* rows that do not divide a second: start rounds up, end down */
	cr_assert_eq(heatmap_build(p, NULL, 3, &h), 0);
	cr_assert_eq(heatmap_range_filter(&h, 0, 1, 0, 1, &f), 0); /* 1/3 .. 2/3 */
	cr_assert_eq(f.start_ns, 100333333334ULL);
	cr_assert_eq(f.end_ns, 100666666666ULL);
	heatmap_free(&h);
	profile_free(p);
}

static uint64_t lcg(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return *state >> 33;
}

/* Selecting cells A..B gives exactly the samples counted in the cells
 * between them in time order (column by column, bottom to top). */
Test(heatmap, range_filter_round_trip)
{
	struct profile *p = profile_new();
	uint64_t st = 42;
	for (int i = 0; i < 3000; i++) {
		/* times in µs, never on a 20 ms boundary */
		uint64_t us = 7000000 + lcg(&st) % 5000000;
		if (us % 20000 == 0)
			us++;
		add_user(p, us * 1000, "f");
	}
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, NULL, 50, &h), 0);
	cr_assert_eq(h.total, 3000);
	int picks[][4] = {{0, 49, 0, 49}, {0, 49, 4, 0}, {1, 10, 1, 30}, {1, 30, 1, 10},
			  {2, 0, 3, 49}, {0, 0, 3, 25}, {4, 20, 2, 40}};
	for (size_t i = 0; i < sizeof(picks) / sizeof(*picks); i++) {
		int c0 = picks[i][0], r0 = picks[i][1], c1 = picks[i][2], r1 = picks[i][3];
		/* time order: k = col * rows + (rows - 1 - row) */
		int k0 = c0 * 50 + 49 - r0, k1 = c1 * 50 + 49 - r1;
		if (k1 < k0) {
			int t = k0;
			k0 = k1, k1 = t;
		}
		uint64_t want = 0;
		for (int k = k0; k <= k1; k++)
			want += heatmap_cell(&h, k / 50, 49 - k % 50);
		struct view f = {0};
		cr_assert_eq(heatmap_range_filter(&h, c0, r0, c1, r1, &f), 0);
		uint64_t got = viewtree_total_weight(p, &f);
		cr_assert_eq(got, want, "pick %zu: %llu samples in range, %llu in cells", i,
			     (unsigned long long)got, (unsigned long long)want);
	}
	heatmap_free(&h);
	profile_free(p);
}

/* FlameScope's convention: both ends inclusive, so a sample exactly on the
 * end boundary belongs to the range ending there. */
Test(heatmap, range_ends_inclusive)
{
	struct profile *p = profile_new();
	add_user(p, S(5.01), "a");
	add_user(p, S(5.04), "a"); /* exactly the end of cell (0, 48) */
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, NULL, 50, &h), 0);
	struct view f = {0};
	cr_assert_eq(heatmap_range_filter(&h, 0, 49, 0, 48, &f), 0);
	cr_assert_eq(f.start_ns, S(5.0));
	cr_assert_eq(f.end_ns, S(5.04));
	cr_assert_eq(viewtree_total_weight(p, &f), 2);
	heatmap_free(&h);
	profile_free(p);
}

/* ---- documents ---------------------------------------------------------- */

struct doc_args {
	struct profile *p;
	struct heatmap *h;
	const char *title;
	size_t cap;
};

static int svg_fn(FILE *f, void *arg)
{
	struct doc_args *a = arg;
	return heatmap_write_svg(f, a->h, a->title);
}

static int html_fn(FILE *f, void *arg)
{
	struct doc_args *a = arg;
	if (a->cap)
		return heatmap_write_html_capped(f, a->p, a->h, a->title, a->cap);
	return heatmap_write_html(f, a->p, a->h, a->title);
}

Test(heatmap, svg_document)
{
	struct profile *p = flamescope_test01();
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, NULL, 0, &h), 0);
	struct doc_args a = {p, &h, "test01 <&> \xff", 0};
	char *svg = to_string(svg_fn, &a);
	cr_assert_not_null(strstr(svg, "<title>second 0, offset 100\xe2\x80\x93" "120 ms: 1 sample</title>"),
			   "a cell's title");
	cr_assert_not_null(strstr(svg, "<title>second 41, offset 980\xe2\x80\x93" "1000 ms: 0 samples</title>"));
	cr_assert_not_null(strstr(svg, "test01 &lt;&amp;&gt; \xef\xbf\xbd"), "title escaped");
	cr_assert_not_null(strstr(svg, "data-col=\"40\" data-row=\"24\" data-n=\"1\""));
	cr_assert_not_null(strstr(svg, "fill=\"rgb(229,9,20)\""), "max cells are red");
	svg_assert_well_formed(svg, "");
	free(svg);
	heatmap_free(&h);

	/* and an empty one */
	struct profile *e = profile_new();
	cr_assert_eq(heatmap_build(e, NULL, 0, &h), 0);
	a = (struct doc_args){e, &h, NULL, 0};
	svg = to_string(svg_fn, &a);
	cr_assert_not_null(strstr(svg, "no samples"));
	svg_assert_well_formed(svg, "");
	free(svg);
	heatmap_free(&h);
	profile_free(e);
	profile_free(p);
}

Test(heatmap, html_document)
{
	struct profile *p = flamescope_test01();
	/* a name that would end the script element if copied raw */
	uint32_t evil[2] = {unit_frame(p, "main", FRAME_USER), unit_frame(p, "</script><b>x", FRAME_USER)};
	add_at(p, S(5110.75), "java", 8192, evil, 2);
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, NULL, 0, &h), 0);
	struct doc_args a = {p, &h, "perf.test01", 0};
	char *html = to_string(html_fn, &a);
	cr_assert_not_null(strstr(html, "<!DOCTYPE html>"));
	cr_assert_not_null(strstr(html, "\"rows\":50,\"cols\":42,\"startS\":5076"));
	cr_assert_not_null(strstr(html, "\"STACK-3\""), "function names embedded");
	cr_assert_not_null(strstr(html, "\"java\""), "process names embedded");
	cr_assert_not_null(strstr(html, "\\u003c/script>\\u003cb>x"), "'<' escaped in the data");
	cr_assert_null(strstr(html, "</script><b>"));
	cr_assert_null(strstr(html, "native_safe_halt"), "idle samples are not embedded");
	cr_assert_not_null(strstr(html, "\"embedded\":6,\"samples\":6,\"capped\":false"));
	cr_assert_null(strstr(html, "capnote"));
	cr_assert_null(strstr(html, "src=\""), "no external resources");
	cr_assert_null(strstr(html, "href=\""));
	cr_assert_null(strstr(html, "<link"));
	/* sample times: delta-coded ns from second 5076, in time order */
	cr_assert_not_null(strstr(html, "\"t\":[100000000,10100000000,10100000000,"));
	svg_assert_well_formed(html, "--html");
	free(html);

	/* capped */
	a.cap = 2;
	html = to_string(html_fn, &a);
	cr_assert_not_null(strstr(html, "\"embedded\":2,\"samples\":6,\"capped\":true"));
	cr_assert_not_null(strstr(html, "id=\"capnote\""));
	cr_assert_not_null(strstr(html, "only the first 2 of 6 samples"));
	cr_assert_null(strstr(html, "STACK-3"), "samples past the cap are left out");
	svg_assert_well_formed(html, "--html");
	free(html);
	heatmap_free(&h);
	profile_free(p);
}

/* When node is around, check that the embedded data parses as JSON and
 * holds what the map counted. */
Test(heatmap, html_data_parses)
{
	if (!have_tool("node"))
		cr_skip_test("node not installed");
	struct profile *p = flamescope_test01();
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, NULL, 0, &h), 0);
	struct doc_args a = {p, &h, "t", 0};
	char *html = to_string(html_fn, &a);
	char path[] = "/tmp/heatmap-html-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, html, strlen(html)), (ssize_t)strlen(html));
	close(fd);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "node -e '"
		 "const s = require(\"fs\").readFileSync(\"%s\", \"utf8\");"
		 "const m = /<script id=\"data\" type=\"application\\/json\">([^]*?)<\\/script>/.exec(s);"
		 "const d = JSON.parse(m[1]);"
		 "let t = 0; const ts = d.t.map(x => t += x);"
		 "const sum = d.cells.reduce((a, b) => a + b, 0);"
		 "if (sum !== 5 || ts.length !== 5 || d.s.length !== 5 || d.c.length !== 5) process.exit(2);"
		 "if (ts[4] !== 40500000000) process.exit(3);"
		 "if (d.names.length !== d.colors.length) process.exit(4);"
		 "if (d.parent.length !== d.func.length) process.exit(5);"
		 "'",
		 path);
	int rc = system(cmd);
	unlink(path);
	cr_assert_eq(rc, 0, "node check failed (%d)", rc);
	free(html);
	heatmap_free(&h);
	profile_free(p);
}
