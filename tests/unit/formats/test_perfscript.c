/* Unit tests for the perf script reader: FlameGraph's corpus (13 inputs x 6
 * modes of stackcollapse-perf.pl output, compared as line sets), the
 * profile model on a small inline sample, detection, and hostile input. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "filebuf.h"
#include "folded.h"
#include "perfscript.h"
#include "profile.h"
#include "view.h"
#include "viewtree.h"

#define CORPUS SRC_DIR "/../shared/corpus/flamegraph"

static const char *const inputs[] = {
	"perf-cycles-instructions-01", "perf-dd-stacks-01",	    "perf-funcab-cmd-01",
	"perf-funcab-pid-01",	       "perf-iperf-stacks-pidtid-01", "perf-java-faults-01",
	"perf-java-stacks-01",	       "perf-java-stacks-02",	    "perf-js-stacks-01",
	"perf-mirageos-stacks-01",     "perf-numa-stacks-01",	    "perf-rust-Yamakaky-dcpu",
	"perf-vertx-stacks-01",
};
#define NINPUTS (sizeof(inputs) / sizeof(inputs[0]))

/* --- helpers --------------------------------------------------------------- */

static char *collapse_str(const char *text, size_t len, const struct collapse_options *o)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	char err[256] = "";
	int rc = perfscript_collapse(text, len, o, f, err, sizeof(err));
	fclose(f);
	cr_assert_eq(rc, 0, "collapse failed: %s", err);
	return buf;
}

static char *collapse_cstr(const char *text, const struct collapse_options *o)
{
	return collapse_str(text, strlen(text), o);
}

struct lineset {
	char **v;
	size_t n;
	char *storage;
};

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Splits (a copy of) text into sorted lines. */
static struct lineset lines_of(const char *text, size_t len)
{
	struct lineset ls = {0};
	ls.storage = malloc(len + 1);
	memcpy(ls.storage, text, len);
	ls.storage[len] = 0;
	size_t cap = 16;
	ls.v = malloc(cap * sizeof(*ls.v));
	char *p = ls.storage, *end = ls.storage + len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl)
			*nl = 0;
		if (ls.n == cap)
			ls.v = realloc(ls.v, (cap *= 2) * sizeof(*ls.v));
		ls.v[ls.n++] = p;
		p = nl ? nl + 1 : end;
	}
	qsort(ls.v, ls.n, sizeof(*ls.v), strp_cmp);
	return ls;
}

static void lines_free(struct lineset *ls)
{
	free(ls->v);
	free(ls->storage);
}

static bool corpus_present(void)
{
	struct stat st;
	return stat(CORPUS, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Compares two outputs as line sets; on a difference prints the first lines
 * that differ (labelled) and returns false. */
static bool same_lines(const char *label, const char *got, size_t got_len, const char *want,
		       size_t want_len)
{
	struct lineset g = lines_of(got, got_len), w = lines_of(want, want_len);
	bool same = true;
	size_t i = 0, j = 0, shown = 0;
	while (i < g.n || j < w.n) {
		int c = i == g.n ? 1 : j == w.n ? -1 : strcmp(g.v[i], w.v[j]);
		if (c == 0) {
			i++, j++;
			continue;
		}
		same = false;
		if (shown++ < 3)
			fprintf(stderr, "%s: %s line: %.300s\n", label, c < 0 ? "unexpected" : "missing",
				c < 0 ? g.v[i] : w.v[j]);
		if (c < 0)
			i++;
		else
			j++;
	}
	lines_free(&g);
	lines_free(&w);
	return same;
}

static bool matches_expected(const char *input, const char *mode, const struct collapse_options *o)
{
	char path[512], err[256], label[256];
	struct filebuf in, want;
	snprintf(path, sizeof(path), CORPUS "/%s.txt", input);
	cr_assert_eq(filebuf_read(path, &in, err, sizeof(err)), 0, "%s", err);
	snprintf(path, sizeof(path), CORPUS "/results/%s-collapsed-%s.txt", input, mode);
	cr_assert_eq(filebuf_read(path, &want, err, sizeof(err)), 0, "%s", err);
	char *got = collapse_str((const char *)in.data, in.len, o);
	snprintf(label, sizeof(label), "%s --%s", input, mode);
	bool same = same_lines(label, got, strlen(got), (const char *)want.data, want.len);
	free(got);
	filebuf_free(&in);
	filebuf_free(&want);
	return same;
}

static void check_mode(const char *mode, struct collapse_options o)
{
	if (!corpus_present())
		cr_skip_test("corpus not found at %s", CORPUS);
	char bad[1024] = "";
	size_t nbad = 0;
	for (size_t k = 0; k < NINPUTS; k++) {
		if (!matches_expected(inputs[k], mode, &o)) {
			nbad++;
			strncat(bad, " ", sizeof(bad) - strlen(bad) - 1);
			strncat(bad, inputs[k], sizeof(bad) - strlen(bad) - 1);
		}
	}
	cr_assert_eq(nbad, 0, "--%s: %zu of %zu inputs differ:%s", mode, nbad, NINPUTS, bad);
}

/* --- the corpus ------------------------------------------------------------ */

Test(perfscript_corpus, pid)
{
	check_mode("pid", (struct collapse_options){.pid = true});
}

Test(perfscript_corpus, tid)
{
	check_mode("tid", (struct collapse_options){.tid = true});
}

Test(perfscript_corpus, kernel)
{
	check_mode("kernel", (struct collapse_options){.kernel = true});
}

Test(perfscript_corpus, jit)
{
	check_mode("jit", (struct collapse_options){.jit = true});
}

Test(perfscript_corpus, all)
{
	check_mode("all", (struct collapse_options){.kernel = true, .jit = true});
}

Test(perfscript_corpus, addrs)
{
	check_mode("addrs", (struct collapse_options){.addrs = true});
}

/* --- collapse rules on small inputs ---------------------------------------- */

Test(perfscript_collapse, rules)
{
	const char *text =
		"# comment\n"
		"V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:\n"
		"\t7f00 foo+0x1a (/usr/lib/libfoo.so)\n"
		"\t7f01 [unknown] (/usr/lib/libbar.so)\n"
		"\t7f02 std::vector<int>::push_back(int const&) (/bin/app)\n"
		"\t7f03 \"quoted\";name (/bin/app)\n"
		"\tffff81 schedule ([kernel.kallsyms])\n"
		"\n"
		"V8 WorkerThread 24636/25607 [000] 94564.209216: 100 cycles:\n"
		"\t7f00 foo+0x1a (/usr/lib/libfoo.so)\n"
		"\t7f01 [unknown] (/usr/lib/libbar.so)\n"
		"\t7f02 std::vector<int>::push_back(int const&) (/bin/app)\n"
		"\t7f03 \"quoted\";name (/bin/app)\n"
		"\tffff81 schedule ([kernel.kallsyms])\n"
		"\n"
		"dd 9481 1.0: 5 instructions:\n" /* another event: dropped */
		"\t1 x (/bin/dd)\n"
		"\n"
		"dd 9481 1.5: cycles:\n"
		"\t1 go/pkg.(*T).M (/bin/dd)\n"
		"\t2 ns::(anonymous namespace)::f(int) (/bin/dd)\n"
		"\t3 (skipped) (/bin/dd)\n"
		"\t4 [unknown] ([unknown])\n"
		"\n";
	char *out = collapse_cstr(text, &(struct collapse_options){0});
	cr_assert_str_eq(out, "V8_WorkerThread;schedule;quoted:name;std::vector<int>::push_back;"
			      "[libbar.so];foo 200\n"
			      "dd;[unknown];ns::(anonymous namespace)::f;go/pkg.(*T).M 1\n");
	free(out);
	out = collapse_cstr(text, &(struct collapse_options){.tid = true, .kernel = true, .addrs = true});
	cr_assert_str_eq(out, "V8_WorkerThread-24636/25607;schedule_[k];quoted:name;"
			      "std::vector<int>::push_back;[libbar.so <7f01>];foo 200\n"
			      "dd-?/9481;[unknown <4>];ns::(anonymous namespace)::f;go/pkg.(*T).M 1\n");
	free(out);
	out = collapse_cstr(text, &(struct collapse_options){.pid = true, .event = "instructions"});
	cr_assert_str_eq(out, "dd-?;x 5\n");
	free(out);
}

Test(perfscript_collapse, jit_java_inline)
{
	const char *text = "java 19982 cycles:\n"
			   "\t7f72 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)\n"
			   "\t7f73 outer->inner (/bin/x)\n"
			   "\n";
	char *out = collapse_cstr(text, &(struct collapse_options){.jit = true});
	cr_assert_str_eq(out, "java;outer;inner_[i];java/io/PrintStream:::print_[j] 1\n");
	free(out);
	/* The corpus's revision strips the L only when the root is exactly "java". */
	out = collapse_cstr(text, &(struct collapse_options){.pid = true});
	cr_assert_str_eq(out, "java-?;outer;inner_[i];Ljava/io/PrintStream:::print 1\n");
	free(out);
}

/* The collapse reads the records perfscript_read does (one scanner): the
 * same samples in report and convert. Where stackcollapse-perf.pl differs
 * is text perf script does not write. */
Test(perfscript_collapse, same_records_as_the_reader)
{
	/* No blank line at the end: the last record is left out (as Perl does). */
	char *out = collapse_cstr("ab 1 ev:\n\t1 f (/x)\n\nbc 2 ev:\n\t1 g (/x)\n", NULL);
	cr_assert_str_eq(out, "ab;f 1\n");
	free(out);
	/* A header ends the record before it (Perl would merge their frames). */
	out = collapse_cstr("ab 1 ev:\n\t1 f (/x)\nbc 2 ev:\n\t1 g (/x)\n\n", NULL);
	cr_assert_str_eq(out, "ab;f 1\nbc;g 1\n");
	free(out);
	/* The event after the time, where a tracepoint's fields follow it, is
	 * the record's event too: the other event's record is left out. */
	out = collapse_cstr("ab 1 1.0: sched:a: x=1\n\t1 f (/x)\n\nab 1 2.0: sched:b: y=2\n"
			    "\t1 g (/x)\n\n",
			    NULL);
	cr_assert_str_eq(out, "ab;f 1\n");
	free(out);
	out = collapse_cstr("", NULL);
	cr_assert_str_eq(out, "");
	free(out);
	/* CR line ends are read as LF ones. */
	out = collapse_cstr("ab 12 ev:\r\n\t1 f (/x)\r\n\r\n", NULL);
	cr_assert_str_eq(out, "ab;f 1\n");
	free(out);
}

/* What neither reader takes: text that does not begin with a header, NUL
 * bytes. The collapse refuses them with the reader's line. */
Test(perfscript_collapse, refuses_what_the_reader_refuses)
{
	char err[256] = "";
	FILE *f = tmpfile();
	const char headless[] = "\tabc f (/x)\n\nab 1 ev:\n\t1 f (/x)\n\n";
	cr_assert_eq(perfscript_collapse(headless, sizeof(headless) - 1, NULL, f, err, sizeof(err)),
		     -1);
	cr_assert_str_eq(err, "line 1: expected a perf script record header");
	const char nul[] = "ab 12 ev:\n\t1 f\0g (/x)\n\n";
	cr_assert_eq(perfscript_collapse(nul, sizeof(nul) - 1, NULL, f, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "line 2: a NUL byte: not perf script text");
	fclose(f);
}

Test(perfscript_collapse, write_error)
{
	FILE *f = fopen("/dev/full", "w");
	if (!f)
		cr_skip_test("/dev/full not available");
	char err[256] = "";
	cr_assert_eq(perfscript_collapse("ab 1 ev:\n\t1 f (/x)\n\n", 20, NULL, f, err, sizeof(err)), -1);
	cr_assert(strstr(err, "cannot write"), "%s", err);
	fclose(f);
}

/* --- the profile model ----------------------------------------------------- */

static const char sample_text[] =
	"# ========\n"
	"# cmdline : perf record -g\n"
	"perf 977/978 [001] 7628263.042515: 250 cycles: \n"
	"\tffffffff8104f45a native_write_msr_safe+0x5 ([kernel.kallsyms])\n"
	"\t7f0012 main (/usr/bin/perf)\n"
	"\t7f0013 [unknown] (/usr/lib/libc.so.6)\n"
	"\n"
	"java 19982 7628263.542515: cycles:\n"
	"\t7f72 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)\n"
	"\t7f73 outer->inner (/bin/x)\n"
	"\n"
	"perf 977/978 [002] 7628264.000000: 7 instructions:\n"
	"\t7f0012 main (/usr/bin/perf)\n"
	"\n";

static const char *frame_name(struct profile *p, uint32_t id, enum frame_kind *kind,
			      const char **module)
{
	const struct frame *f = frames_get(p->frames, id);
	cr_assert_not_null(f);
	*kind = f->kind;
	*module = f->module;
	return f->name;
}

Test(perfscript_read, samples_threads_frames)
{
	char err[256] = "";
	struct profile *p = perfscript_read(sample_text, strlen(sample_text), err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	cr_assert_eq(p->nsamples, 3);
	cr_assert_eq(p->nevents, 2);
	cr_assert_str_eq(p->events[0], "cycles");
	cr_assert_str_eq(p->events[1], "instructions");
	cr_assert_str_eq(profile_meta_get(p, "event"), "cycles");
	cr_assert_str_eq(profile_meta_get(p, "source_format"), "perf-script");
	cr_assert_str_eq(profile_meta_get(p, "start_ns"), "7628263042515000");
	cr_assert_str_eq(profile_meta_get(p, "end_ns"), "7628264000000000");
	cr_assert_str_eq(profile_meta_get(p, "duration_s"), "0.957485");

	const struct sample *s = &p->samples[0];
	cr_assert_eq(s->time_ns, 7628263042515000ull);
	cr_assert_eq(s->weight, 250);
	cr_assert_eq(s->cpu, 1);
	cr_assert_eq(s->event, 0);
	const struct thread_info *t = &p->threads[s->thread];
	cr_assert_eq(t->pid, 977);
	cr_assert_eq(t->tid, 978);
	cr_assert_str_eq(t->comm, "perf");
	uint32_t fr[8];
	cr_assert_eq(profile_stack_frames(p, s->stack, fr, 8), 3);
	enum frame_kind k;
	const char *mod;
	cr_assert_str_eq(frame_name(p, fr[0], &k, &mod), "[libc.so.6]", "root first");
	cr_assert_eq(k, FRAME_UNKNOWN);
	cr_assert_str_eq(mod, "/usr/lib/libc.so.6");
	cr_assert_str_eq(frame_name(p, fr[1], &k, &mod), "main");
	cr_assert_eq(k, FRAME_USER);
	cr_assert_str_eq(mod, "/usr/bin/perf");
	cr_assert_str_eq(frame_name(p, fr[2], &k, &mod), "native_write_msr_safe");
	cr_assert_eq(k, FRAME_KERNEL);
	cr_assert_str_eq(mod, "[kernel.kallsyms]");

	s = &p->samples[1];
	cr_assert_eq(s->weight, 1);
	cr_assert_eq(s->cpu, 0);
	cr_assert_eq(s->time_ns, 7628263542515000ull);
	t = &p->threads[s->thread];
	cr_assert_eq(t->pid, 0, "one number is the tid");
	cr_assert_eq(t->tid, 19982);
	cr_assert_str_eq(t->comm, "java");
	cr_assert_eq(profile_stack_frames(p, s->stack, fr, 8), 3);
	cr_assert_str_eq(frame_name(p, fr[0], &k, &mod), "outer");
	cr_assert_eq(k, FRAME_USER);
	cr_assert_str_eq(frame_name(p, fr[1], &k, &mod), "inner");
	cr_assert_eq(k, FRAME_INLINED);
	cr_assert_str_eq(frame_name(p, fr[2], &k, &mod), "java/io/PrintStream:::print");
	cr_assert_eq(k, FRAME_JIT);

	s = &p->samples[2];
	cr_assert_eq(s->event, 1);
	cr_assert_eq(s->weight, 7);
	cr_assert_eq(s->cpu, 2);
	cr_assert_eq(p->samples[0].thread, s->thread);
	cr_assert_eq(profile_stack_frames(p, s->stack, fr, 8), 1);
	profile_free(p);
}

/* The model gives the same folded stacks as the collapse (with annotations
 * and the first event only) on every corpus input. */
Test(perfscript_read, folds_like_the_collapse)
{
	if (!corpus_present())
		cr_skip_test("corpus not found at %s", CORPUS);
	for (size_t k = 0; k < NINPUTS; k++) {
		char path[512], err[256];
		struct filebuf in;
		snprintf(path, sizeof(path), CORPUS "/%s.txt", inputs[k]);
		cr_assert_eq(filebuf_read(path, &in, err, sizeof(err)), 0, "%s", err);
		/* The model also counts a last record with no blank line after
		 * it, the Perl tool does not: end the text with one. */
		char *text = malloc(in.len + 3);
		memcpy(text, in.data, in.len);
		memcpy(text + in.len, "\n\n", 3);
		size_t len = in.len + 2;
		struct profile *p = perfscript_read(text, len, err, sizeof(err));
		cr_assert_not_null(p, "%s: %s", inputs[k], err);
		struct view f = {0};
		/* keep only the first event, as the collapse does */
		size_t w = 0;
		for (size_t i = 0; i < p->nsamples; i++)
			if (p->samples[i].event == 0)
				p->samples[w++] = p->samples[i];
		p->nsamples = w;
		struct flame_tree *t = viewtree_flame(p, &f, FLAME_ROOT_COMM);
		char *buf = NULL;
		size_t n = 0;
		FILE *mf = open_memstream(&buf, &n);
		folded_write(mf, t, true);
		fclose(mf);
		char *want = collapse_str(text, len,
					  &(struct collapse_options){.kernel = true, .jit = true});
		char label[256];
		snprintf(label, sizeof(label), "%s read+fold", inputs[k]);
		cr_expect(same_lines(label, buf, strlen(buf), want, strlen(want)), "%s", inputs[k]);
		free(buf);
		free(want);
		flame_free(t);
		profile_free(p);
		free(text);
		filebuf_free(&in);
	}
}

Test(perfscript_read, errors)
{
	char err[256] = "";
	const char nul[] = "ab 1 ev:\n\t1 f (/x)\n\0\n";
	cr_assert_null(perfscript_read(nul, sizeof(nul) - 1, err, sizeof(err)));
	cr_assert_str_eq(err, "line 3: a NUL byte: not perf script text");
	const char *headless = "# comment\n\n\tffff8100 schedule ([kernel.kallsyms])\n";
	cr_assert_null(perfscript_read(headless, strlen(headless), err, sizeof(err)));
	cr_assert_str_eq(err, "line 3: expected a perf script record header");
	const char *json = "{\"traceEvents\": []}\n";
	cr_assert_null(perfscript_read(json, strlen(json), err, sizeof(err)));
	cr_assert_str_eq(err, "line 1: expected a perf script record header");

	/* Stray lines after the first record are skipped and counted; a last
	 * record no blank line ends is left out, and said. */
	const char *stray = "ab 1 ev:\n\t1 f (/x)\n???\n\n\t2 g (/x)\nbc 2 ev:\n";
	struct profile *p = perfscript_read(stray, strlen(stray), err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	cr_assert_eq(p->nsamples, 1);
	cr_assert_str_eq(profile_meta_get(p, "input_skipped_lines"), "2");
	cr_assert_str_eq(profile_meta_get(p, "input_unterminated_records"), "1");
	char note[256];
	cr_assert(profile_input_note(p, note, sizeof(note)));
	cr_assert_str_eq(note, "2 lines of the input skipped (not part of a record); the last record "
			       "left out: no blank line ends it (a capture cut short; "
			       "stackcollapse-perf.pl leaves it out too)");
	cr_assert_null(profile_meta_get(p, "start_ns"), "no timestamps");
	profile_free(p);

	/* Hostile: thousands of distinct event names. */
	size_t cap = 5000 * 32, off = 0;
	char *many = malloc(cap);
	for (int i = 0; i < 5000; i++)
		off += (size_t)snprintf(many + off, cap - off, "ab 1 1.0: e%d:\n\t1 f (/x)\n\n", i);
	cr_assert_null(perfscript_read(many, off, err, sizeof(err)));
	cr_assert_str_eq(err, "line 12289: more than 4096 distinct event names");
	free(many);

	/* Empty input: an empty profile. */
	p = perfscript_read("", 0, err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	cr_assert_eq(p->nsamples, 0);
	profile_free(p);
}

Test(perfscript_read, enormous_line)
{
	size_t n = 4u << 20;
	char *text = malloc(n + 64);
	strcpy(text, "big 1 1.5: ev:\n\t1 ");
	size_t off = strlen(text);
	memset(text + off, 'x', n);
	strcpy(text + off + n, " (/x)\n\n");
	size_t len = strlen(text);
	char err[256];
	struct profile *p = perfscript_read(text, len, err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	cr_assert_eq(p->nsamples, 1);
	profile_free(p);
	char *out = collapse_str(text, len, NULL);
	cr_assert_eq(strlen(out), 4 + n + 3);
	free(out);
	/* A header-like line with a huge whitespace run stays linear. */
	memset(text, ' ', n);
	text[0] = 'a';
	text[n] = 0;
	p = perfscript_read(text, n, err, sizeof(err));
	cr_assert_null(p);
	free(text);
}

/* --- detection ------------------------------------------------------------- */

Test(perfscript_detect, positives_and_negatives)
{
	cr_assert(perfscript_detect(sample_text, strlen(sample_text)));
	const char *unindented = "java 19983 cycles:\n"
				 "ffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\n"
				 "ffffffff810275f1 intel_pmu_enable_all ([kernel.kallsyms])\n\n";
	cr_assert(perfscript_detect(unindented, strlen(unindented)));
	if (corpus_present()) {
		for (size_t k = 0; k < NINPUTS; k++) {
			char path[512], err[256];
			struct filebuf in;
			snprintf(path, sizeof(path), CORPUS "/%s.txt", inputs[k]);
			cr_assert_eq(filebuf_read(path, &in, err, sizeof(err)), 0, "%s", err);
			cr_expect(perfscript_detect((const char *)in.data, in.len), "%s", inputs[k]);
			char *folded = collapse_str((const char *)in.data, in.len, NULL);
			cr_expect(!perfscript_detect(folded, strlen(folded)), "folded %s", inputs[k]);
			cr_expect(folded_detect(folded, strlen(folded)));
			free(folded);
			filebuf_free(&in);
		}
		struct filebuf d;
		char err[256];
		cr_assert_eq(filebuf_read(CORPUS "/example-dtrace-stacks.txt", &d, err, sizeof(err)), 0);
		cr_expect(!perfscript_detect((const char *)d.data, d.len), "dtrace output");
		filebuf_free(&d);
	}
	const char *negatives[] = {
		"",
		"main;a;b 3\nmain;a 1\n",
		"{\"traceEvents\": [{\"ph\": \"X\", \"pid\": 1 }]}\n",
		"{\n  \"shared\": {\"frames\": []},\n  \"profiles\": []\n}\n",
		"\tffff8100 schedule ([kernel.kallsyms])\n",
		"perf 1 2: cycles:\n", /* a header, but no stack line */
		"hello world\nthis is 1 text: file:\n",
	};
	for (size_t i = 0; i < sizeof(negatives) / sizeof(negatives[0]); i++)
		cr_expect(!perfscript_detect(negatives[i], strlen(negatives[i])), "%s", negatives[i]);
	const char bin[] = "ab 1 ev:\n\t1 f\0 (/x)\n";
	cr_expect(!perfscript_detect(bin, sizeof(bin) - 1));
}
