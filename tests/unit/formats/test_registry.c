/* The formats registry, walked entry by entry: names and aliases are
 * unique, every output name chooses its format, every format that reads
 * and writes round-trips a small profile through a file whose format is
 * detected from the content, and the help and the messages name every
 * entry. A format added to registry.c is checked here without a new test. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filebuf.h"
#include "folded.h"
#include "formats.h"
#include "perfscript.h"
#include "registry.h"

#define EACH(e) \
	for (const struct format_entry *const *e##_p = registry_formats, *e; (e = *e##_p); e##_p++)

/* Every stack kind folded text can say: kernel _[k], inlined _[i]. */
static const char FOLDED[] = "app;main;work;spin 7\n"
			     "app;main;work 2\n"
			     "app;main;read_[k] 3\n"
			     "other;caller;x_[i] 1\n";

static char dir[] = "/tmp/sonde-test-registry-XXXXXX";

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(registry, .init = setup, .fini = teardown);

static char *path_in_dir(const char *name)
{
	char *p;
	cr_assert_neq(asprintf(&p, "%s/%s", dir, name), -1);
	return p;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	cr_assert_geq(fputs(text, f), 0);
	cr_assert_eq(fclose(f), 0);
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of a file, sorted, as one string. */
static char *sorted_lines(const char *path)
{
	struct filebuf b;
	char err[256];
	cr_assert_eq(filebuf_read(path, &b, err, sizeof(err)), 0, "%s", err);
	size_t n = 0, cap = 16;
	char **lines = malloc(cap * sizeof(*lines));
	for (char *save = NULL, *l = strtok_r((char *)b.data, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (n == cap)
			lines = realloc(lines, (cap *= 2) * sizeof(*lines));
		lines[n++] = l;
	}
	qsort(lines, n, sizeof(*lines), line_cmp);
	char *out = calloc(1, b.len + 2);
	for (size_t i = 0; i < n; i++)
		strcat(strcat(out, lines[i]), "\n");
	free(lines);
	filebuf_free(&b);
	return out;
}

Test(registry, names_and_aliases_are_unique_and_found)
{
	size_t n = 0;
	const char *seen[64];
	EACH(e)
	{
		cr_assert(e->name && *e->name && e->what && *e->what, "an entry without a name or what");
		cr_assert(registry_can_read(e) || registry_can_write(e), "%s neither reads nor writes",
			  e->name);
		cr_assert(!(e->read_lines && e->read_whole) && !(e->read_input && e->read_lines) &&
				  !(e->read_input && e->read_whole),
			  "%s: more than one reader", e->name);
		cr_assert(!(e->write && e->save), "%s: more than one writer", e->name);
		cr_assert(!(e->detect && e->detect_whole) && !e->detect_whole == !e->detect_head,
			  "%s: detect, or detect_whole with detect_head", e->name);
		cr_assert(!e->direct || (e->direct_to && e->direct_to->write),
			  "%s: a direct conversion needs a streamed output", e->name);
		cr_assert_eq(registry_find(e->name), e, "%s", e->name);
		cr_assert_lt(n, 64);
		seen[n++] = e->name;
		for (const char *const *a = e->aliases; a && *a; a++) {
			cr_assert_eq(registry_find(*a), e, "alias %s of %s", *a, e->name);
			cr_assert_lt(n, 64);
			seen[n++] = *a;
		}
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			cr_assert_str_neq(seen[i], seen[j], "the name %s is taken twice", seen[i]);
	cr_assert_null(registry_find("svgz"));
	cr_assert_null(registry_find(""));
}

Test(registry, every_output_name_chooses_its_format)
{
	size_t n = 0;
	EACH(e)
	{
		for (const char *const *s = e->suffixes; s && *s; s++) {
			char path[256];
			snprintf(path, sizeof(path), "out/run%s", *s);
			cr_assert_eq(registry_for_output(path), e, "%s does not choose %s", path, e->name);
			cr_assert(registry_can_write(e), "%s: an output name but no writer", e->name);
			n++;
		}
	}
	cr_assert_geq(n, 12, "only %zu output names", n);
	cr_assert_eq(registry_for_output("run.pb.gz"), registry_find("pprof"));
	cr_assert_null(registry_for_output("run.svg"));
	cr_assert_null(registry_for_output("sonde"));
}

/* FOLDED -> a file in format e (named without a suffix: the content must
 * say what it is) -> detected as e -> folded, with every annotation. */
static void round_trip(const struct format_entry *e)
{
	char *in = path_in_dir("in.folded"), *mid = path_in_dir("mid"),
	     *back = path_in_dir("back.folded"), err[512] = "";
	struct folded_modes all = {.kernel = true, .jit = true}; /* folded keeps every _[x] */
	write_text(in, FOLDED);
	unlink(mid);
	cr_assert_eq(formats_convert(&(struct format_conversion){.in = in, .out = mid, .to = e, .modes = &all}, err, sizeof(err)), 0, "%s: %s",
		     e->name, err);
	const struct format_entry *detected = NULL;
	struct profile *p = formats_load(mid, NULL, &detected, err, sizeof(err));
	cr_assert_not_null(p, "%s: %s", e->name, err);
	cr_assert_eq(detected, e, "%s written, %s detected", e->name,
		     detected ? detected->name : "nothing");
	profile_free(p);
	cr_assert_eq(formats_convert(&(struct format_conversion){.in = mid, .out = back, .to = &format_folded, .modes = &all}, err, sizeof(err)), 0,
		     "%s: %s", e->name, err);
	char *want = sorted_lines(in), *got = sorted_lines(back);
	cr_assert_str_eq(got, want, "%s changed the stacks:\n%s", e->name, got);
	free(want);
	free(got);
	free(in);
	free(mid);
	free(back);
}

Test(registry, every_format_that_reads_and_writes_round_trips)
{
	size_t n = 0;
	EACH(e)
	{
		if (registry_can_read(e) && registry_can_write(e)) {
			round_trip(e);
			n++;
		}
	}
	cr_assert_eq(n, 4, "sonde, folded, pprof and nflx read and write (got %zu)", n);
}

Test(registry, a_direct_conversion_is_taken)
{
	/* perf script -> folded by stackcollapse-perf.pl's rules: the comm is
	 * the root, frames outermost first. */
	char *in = path_in_dir("in.perf"), *out = path_in_dir("out.folded"), err[512] = "";
	write_text(in, "prog 123 cpu-clock:\n"
		       "\tffffffff810000 leaf (/bin/prog)\n"
		       "\tffffffff810001 main (/bin/prog)\n\n");
	const struct format_entry *detected = NULL;
	struct profile *p = formats_load(in, NULL, &detected, err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	cr_assert_eq(detected, &format_perfscript);
	profile_free(p);
	cr_assert_eq(formats_convert(&(struct format_conversion){.in = in, .out = out, .to = &format_folded, .modes = NULL}, err, sizeof(err)), 0,
		     "%s", err);
	char *got = sorted_lines(out);
	cr_assert_str_eq(got, "prog;main;leaf 1\n");
	free(got);
	free(in);
	free(out);
}

Test(registry, writer_only_formats_are_refused_as_inputs)
{
	char *in = path_in_dir("in.folded"), *out = path_in_dir("x.folded"), err[512] = "";
	write_text(in, FOLDED);
	EACH(e)
	{
		if (registry_can_read(e))
			continue;
		err[0] = 0;
		cr_assert_null(formats_load(in, e, NULL, err, sizeof(err)));
		char want[512];
		snprintf(want, sizeof(want), "sonde cannot read %s files (%s)", e->name, in);
		cr_assert_str_eq(err, want);
	}
	EACH(e)
	{
		if (registry_can_write(e))
			continue;
		err[0] = 0;
		cr_assert_eq(formats_convert(&(struct format_conversion){.in = in, .out = out, .to = e, .modes = NULL}, err, sizeof(err)), -1);
		cr_assert(strstr(err, "sonde cannot write"), "%s", err);
		cr_assert_eq(access(out, F_OK), -1, "%s left an output", e->name);
	}
	free(in);
	free(out);
}

Test(registry, help_and_messages_name_every_format)
{
	char help[4096], names[512], readable[512];
	registry_describe(help, sizeof(help));
	registry_list_names(names, sizeof(names));
	registry_list_readable(readable, sizeof(readable));
	cr_assert_lt(strlen(help), sizeof(help) - 1, "the help was cut");
	size_t lines = 0;
	for (const char *l = help; (l = strchr(l, '\n')); l++)
		lines++;
	EACH(e)
	{
		char row[64];
		snprintf(row, sizeof(row), "\n  %s ", e->name);
		cr_assert(strstr(help, row), "help lacks a row for %s:\n%s", e->name, help);
		for (const char *const *a = e->aliases; a && *a; a++)
			cr_assert(strstr(help, *a), "help lacks alias %s", *a);
		for (const char *const *s = e->suffixes; s && *s; s++)
			cr_assert(strstr(help, *s), "help lacks output name %s", *s);
		cr_assert(strstr(help, e->what), "help lacks %s", e->what);
		cr_assert(strstr(names, e->name), "names lack %s: %s", e->name, names);
		cr_assert_eq(strstr(readable, e->what) != NULL, registry_can_read(e),
			     "readable list and %s disagree: %s", e->name, readable);
	}
	/* Every line fits a terminal. */
	for (const char *l = help, *nl; (nl = strchr(l, '\n')); l = nl + 1)
		cr_assert_leq(nl - l, 80, "a help line of %d columns", (int)(nl - l));
	cr_assert_str_eq(names, "sonde, perf-script, folded, pprof, nflx, speedscope or chrome");
	cr_assert_str_eq(readable,
			 "sonde recordings, perf script, folded stacks, pprof and nflxprofile");
	cr_assert_geq(lines, 8);
}

Test(registry, unrecognized_input_names_what_sonde_reads)
{
	char *in = path_in_dir("junk"), err[512] = "";
	write_text(in, "hello\n");
	cr_assert_null(formats_load(in, NULL, NULL, err, sizeof(err)));
	char want[512];
	snprintf(want, sizeof(want),
		 "%s: unrecognized format (sonde reads sonde recordings, perf script, folded stacks, "
		 "pprof and nflxprofile; force one with --from)",
		 in);
	cr_assert_str_eq(err, want);
	free(in);
}
