/* page — the page of `sonde serve`: one HTML document that holds its
 * stylesheet and scripts (d3, d3-flame-graph, dagre and the page's own), so a
 * browser needs nothing but this server, and no internet.
 *
 *   GET /   the page; like every route it needs the token, which the page
 *           then reads from its own URL and sends on each API call
 *           (X-Sonde-Token) and in the event stream's URL
 *
 * The files are in src/web/page/: page.html (placeholders @STYLE@ and
 * @SCRIPT@), page.css, page.js, and the npm packages of package.json, pinned
 * by package-lock.json and installed by scripts/bootstrap.sh (npm ci); the
 * build embeds them (scripts/embed_assets.cmake) as the strings below. */
#ifndef SONDE_PAGE_H
#define SONDE_PAGE_H

#include "http.h"

extern const char asset_page_html[];		     /* the document: @STYLE@, @SCRIPT@ */
extern const char asset_page_css[];		     /* the page's stylesheet */
extern const char asset_page_js[];		     /* the page: after the two below */
extern const char asset_d3_min_js[];		     /* npm d3: global d3 */
extern const char asset_d3_flamegraph_umd_min_js[]; /* npm d3-flame-graph: global flamegraph */
extern const char asset_dagre_min_js[];	     /* npm @dagrejs/dagre: global dagre (the
						      * explorer's block graph) */

/* Registers GET / on s. */
void page_routes(struct http_server *s);

#endif
