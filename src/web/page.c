/* page — serves the page of `sonde serve`. The contract is in page.h. */
#define _GNU_SOURCE
#include "page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "util.h"

/* What the placeholders of page.html stand for. */
static bool fill_page(FILE *out, const char *name, void *arg)
{
	(void)arg;
	if (strcmp(name, "STYLE") == 0) {
		fputs(asset_page_css, out);
		return true;
	}
	if (strcmp(name, "SCRIPT") == 0) {
		/* Each in its own element: a script that fails to parse does
		 * not take the others with it, and the console names which. */
		fputs(asset_d3_min_js, out);
		fputs("\n</script>\n<script>\n", out);
		fputs(asset_d3_flamegraph_umd_min_js, out);
		fputs("\n</script>\n<script>\n", out);
		fputs(asset_dagre_min_js, out);
		fputs("\n</script>\n<script>\n", out);
		fputs(asset_page_js, out);
		return true;
	}
	return false;
}

struct page {
	char *html; /* the whole document, built at the first request */
	size_t len;
};

static void route_page(void *arg, struct http_request *rq)
{
	struct page *p = arg;
	if (!p->html) {
		FILE *f = open_memstream(&p->html, &p->len);
		if (!f) {
			http_reply_error(rq, 500, "out of memory for the page");
			return;
		}
		assets_write(f, asset_page_html, fill_page, NULL);
		fclose(f);
	}
	http_reply(rq, 200, "text/html; charset=utf-8", p->html, p->len);
}

void page_routes(struct http_server *s)
{
	/* One document for the process's life, like the assets it is made of. */
	static struct page page;
	http_server_route(s, "GET", "/", route_page, &page);
}
