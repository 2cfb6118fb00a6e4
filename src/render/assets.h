/* assets — the JavaScript, CSS and HTML of render's outputs.
 *
 * They are files in src/render/assets/, edited as such and checked by
 * tests/assets.sh (node parses every script as a browser would; the
 * stylesheets and the page are checked for balance and for text that would
 * end their element early). The build embeds each one into this library
 * (scripts/embed_assets.cmake writes them as NUL-terminated strings), named
 * asset_ and the file name with '.' and '-' as '_': flame.js -> asset_flame_js.
 * A new asset is a file there and a line here.
 *
 * A stylesheet or the page can hold placeholders, @NAME@ (capitals, digits
 * and '_'), that the writer fills when it copies the asset out: values that
 * also drive the C side's geometry, such as @FONT_SIZE@, and the page's data.
 * Scripts hold none: an SVG's scripts read the CFG object the writer puts
 * before them, the page's script reads the page's JSON data. */
#ifndef SONDE_ASSETS_H
#define SONDE_ASSETS_H

#include <stdbool.h>
#include <stdio.h>

/* what every flame graph script uses: labels, matched share, and the SVGs'
 * hover, search, buttons and keys */
extern const char asset_flamecontrols_js[];
/* flame graphs (flamesvg) and flame charts (flamechart) */
extern const char asset_flame_css[];        /* @FONT_SIZE@, @TITLE_FONT_SIZE@ */
extern const char asset_flame_js[];         /* flamesvg's zoom */
extern const char asset_flamechart_css[];   /* flamechart's axis, after flame.css */
extern const char asset_flamechart_js[];    /* flamechart's zoom in time and axis */
/* heatmaps */
extern const char asset_heatmap_svg_css[];  /* the SVG */
extern const char asset_heatmap_html[];     /* the page: the placeholders of heatmap.c */
extern const char asset_heatmap_css[];      /* the page's stylesheet */
extern const char asset_heatmap_js[];       /* the page's map and flame graph, after
					     * flamecontrols.js */

/* Writes what placeholder `name` (NUL-terminated, without the '@'s) stands
 * for; false when the name is not one it knows, which is then copied as it
 * stands. */
typedef bool (*assets_fill_fn)(FILE *out, const char *name, void *arg);

/* A fill for placeholders that stand for integers: arg is an array of
 * these, ended by one whose name is NULL. */
struct assets_int {
	const char *name;
	long long value;
};
bool assets_fill_ints(FILE *out, const char *name, void *arg);

/* Copies asset text to out, each placeholder replaced by what fill writes;
 * fill may be NULL for an asset without placeholders. */
void assets_write(FILE *out, const char *text, assets_fill_fn fill, void *arg);

/* An SVG's <style> element: the stylesheets of the NULL-ended list, filled,
 * in a CDATA section. */
void assets_svg_style(FILE *out, const char *const css[], assets_fill_fn fill, void *arg);

/* An SVG's <script> element, in a CDATA section: what the printf-style cfg
 * formats (the values the scripts read: "var CFG = {...};\n"), then the
 * scripts of the NULL-ended list, which share one global scope. */
void assets_svg_script(FILE *out, const char *const scripts[], const char *cfg, ...)
	__attribute__((format(printf, 3, 4)));

#endif
