/* assets: every embedded asset is its file byte for byte, placeholders are
 * filled (and only placeholders), and the SVG elements wrap them exactly. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "filebuf.h"

static void embedded_is_file(const char *embedded, const char *name)
{
	char path[512], err[256];
	snprintf(path, sizeof(path), "%s/src/render/assets/%s", SRC_DIR, name);
	struct filebuf b;
	cr_assert_eq(filebuf_read(path, &b, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(strlen(embedded), b.len, "%s: %zu bytes embedded, %zu in the file", name,
		     strlen(embedded), b.len);
	cr_assert_eq(memcmp(embedded, b.data, b.len), 0, "%s differs from its file", name);
	filebuf_free(&b);
}

Test(assets, embedded_byte_for_byte)
{
	embedded_is_file(asset_flame_css, "flame.css");
	embedded_is_file(asset_flamecontrols_js, "flamecontrols.js");
	embedded_is_file(asset_flame_js, "flame.js");
	embedded_is_file(asset_flamechart_css, "flamechart.css");
	embedded_is_file(asset_flamechart_js, "flamechart.js");
	embedded_is_file(asset_heatmap_svg_css, "heatmap_svg.css");
	embedded_is_file(asset_heatmap_html, "heatmap.html");
	embedded_is_file(asset_heatmap_css, "heatmap.css");
	embedded_is_file(asset_heatmap_js, "heatmap.js");
}

/* Knows NAME (writes "<name>") and N (writes 42); nothing else. */
static bool fill_test(FILE *out, const char *name, void *arg)
{
	int *calls = arg;
	++*calls;
	if (strcmp(name, "NAME") == 0)
		fputs("<name>", out);
	else if (strcmp(name, "N") == 0)
		fputs("42", out);
	else
		return false;
	return true;
}

static char *filled(const char *text, assets_fill_fn fill, int *calls)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	cr_assert_not_null(f);
	assets_write(f, text, fill, calls);
	cr_assert_eq(fclose(f), 0);
	return buf;
}

static void expect_filled(const char *text, const char *want, int want_calls)
{
	int calls = 0;
	char *got = filled(text, fill_test, &calls);
	cr_assert_str_eq(got, want, "\"%s\" -> \"%s\"", text, got);
	cr_assert_eq(calls, want_calls, "\"%s\": %d calls", text, calls);
	free(got);
}

Test(assets, placeholders)
{
	expect_filled("", "", 0);
	expect_filled("plain", "plain", 0);
	expect_filled("@NAME@", "<name>", 1);
	expect_filled("a @NAME@ b @N@@N@.", "a <name> b 4242.", 3);
	expect_filled("x@@NAME@", "x@<name>", 1);   /* "@@" names nothing */
	expect_filled("@OTHER@ @N@", "@OTHER@ 42", 2); /* unknown: as it stands */
	expect_filled("@OTHER@N@", "@OTHER@N@", 1);
	expect_filled("@name@ @Na@ @N-1@", "@name@ @Na@ @N-1@", 0); /* capitals, digits, '_' */
	expect_filled("@media @N", "@media @N", 0);   /* never closed */
	expect_filled("tail @", "tail @", 0);
	/* 33 characters is longer than any name */
	expect_filled("@AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA@", "@AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA@", 0);
	expect_filled("\xe2\x80\x93@N@\xe2\x80\x93", "\xe2\x80\x93" "42\xe2\x80\x93", 1);

	char *same = filled("@N@ stays", NULL, NULL); /* no fill: a verbatim copy */
	cr_assert_str_eq(same, "@N@ stays");
	free(same);
}

Test(assets, integer_placeholders)
{
	struct assets_int v[] = {{"FONT_SIZE", 12}, {"BIG", -9000000000LL}, {NULL, 0}};
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	assets_write(f, "@FONT_SIZE@px @BIG@ @SIZE@", assets_fill_ints, v);
	fclose(f);
	cr_assert_str_eq(buf, "12px -9000000000 @SIZE@");
	free(buf);
}

Test(assets, svg_elements)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	struct assets_int v[] = {{"N", 7}, {NULL, 0}};
	assets_svg_style(f, (const char *const[]){"a { b: @N@px; }\n", "c {}\n", NULL},
			 assets_fill_ints, v);
	assets_svg_script(f, (const char *const[]){"var A = 1;\n", "go(CFG, A);\n", NULL},
			  "var CFG = {x: %.2f, n: %d};\n", 1.5, 3);
	fclose(f);
	cr_assert_str_eq(buf, "<style type=\"text/css\"><![CDATA[\na { b: 7px; }\nc {}\n]]></style>\n"
			      "<script type=\"text/ecmascript\"><![CDATA[\n"
			      "var CFG = {x: 1.50, n: 3};\nvar A = 1;\ngo(CFG, A);\n]]></script>\n");
	free(buf);
}
