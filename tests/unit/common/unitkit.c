#define _GNU_SOURCE
#include "unitkit.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flame.h"
#include "folded.h"
#include "profile.h"
#include "viewtree.h"

uint32_t unit_frame_at(struct profile *p, const char *name, const char *module, uint32_t line,
		       enum frame_kind k)
{
	return frames_intern(p->frames, name, module, "x.c", line, k);
}

uint32_t unit_frame(struct profile *p, const char *name, enum frame_kind k)
{
	return unit_frame_at(p, name, "/bin/x", 1, k);
}

void unit_add(struct profile *p, struct unit_sample s)
{
	for (uint64_t i = 0; i < (s.count ? s.count : 1); i++) {
		struct sample x = {.time_ns = s.time_ns + 1000 * i,
				   .weight = s.weight ? s.weight : 1,
				   .cpu = s.cpu,
				   .thread = s.thread,
				   .event = s.event,
				   .stack = s.stack};
		profile_add_sample(p, &x, s.links, s.nlinks);
	}
}

void unit_sample(struct profile *p, uint32_t thread, uint64_t time_ns, uint32_t stack,
		 uint64_t weight)
{
	unit_add(p, (struct unit_sample){.thread = thread, .stack = stack, .time_ns = time_ns,
					 .weight = weight});
}

void unit_span(struct profile *p, struct span s)
{
	cr_assert_geq(profile_span_add(p, &s), 0);
}

bool svg_attr(const char *from, const char *to, const char *key, char *buf, size_t size)
{
	char pattern[64];
	snprintf(pattern, sizeof(pattern), " %s=\"", key);
	const char *p = strstr(from, pattern);
	if (!p || p >= to)
		return false;
	p += strlen(pattern);
	const char *end = strchr(p, '"');
	size_t n = (size_t)(end - p) < size - 1 ? (size_t)(end - p) : size - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return true;
}

double svg_attr_num(const char *from, const char *to, const char *key)
{
	char buf[64];
	cr_assert(svg_attr(from, to, key, buf, sizeof(buf)), "missing %s", key);
	return strtod(buf, NULL);
}

void svg_text_between(const char *from, const char *open, const char *close, char *buf,
		      size_t size)
{
	const char *p = strstr(from, open);
	cr_assert_not_null(p);
	p += strlen(open);
	const char *end = strstr(p, close);
	size_t n = (size_t)(end - p) < size - 1 ? (size_t)(end - p) : size - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
}

size_t svg_read_frames(const char *svg, struct svg_frame *out, size_t max)
{
	size_t n = 0;
	for (const char *g = strstr(svg, "<g class=\"f\""); g && n < max;
	     g = strstr(g + 1, "<g class=\"f\"")) {
		const char *end = strstr(g, "</g>");
		struct svg_frame *d = &out[n++];
		cr_assert(svg_attr(g, end, "data-name", d->name, sizeof(d->name)));
		d->total = (unsigned long long)svg_attr_num(g, end, "data-total");
		d->self = (unsigned long long)svg_attr_num(g, end, "data-self");
		svg_text_between(g, "<title>", "</title>", d->title, sizeof(d->title));
		const char *rect = strstr(g, "<rect");
		d->x = svg_attr_num(rect, end, "x");
		d->y = svg_attr_num(rect, end, "y");
		d->width = svg_attr_num(rect, end, "width");
		char fill[64];
		cr_assert(svg_attr(rect, end, "fill", fill, sizeof(fill)));
		cr_assert_eq(sscanf(fill, "rgb(%u,%u,%u)", &d->rgb[0], &d->rgb[1], &d->rgb[2]), 3);
		svg_text_between(rect, "\">", "</text>", d->label, sizeof(d->label));
	}
	return n;
}

const struct svg_frame *svg_find_frame(const struct svg_frame *f, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0)
			return &f[i];
	return NULL;
}

/* A temporary file holding text; its path in path (a mkstemp template). */
static void write_temp(char *path, const char *text)
{
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	size_t len = strlen(text);
	cr_assert_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

void svg_assert_well_formed(const char *doc, const char *flags)
{
	if (!have_tool("xmllint"))
		cr_skip_test("xmllint not installed (Debian: libxml2-utils)");
	char path[] = "/tmp/sonde-unit-XXXXXX";
	write_temp(path, doc);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "xmllint %s --noout %s 2>&1", flags, path);
	FILE *pipe = popen(cmd, "r");
	cr_assert_not_null(pipe);
	char complaint[512] = "";
	size_t got = fread(complaint, 1, sizeof(complaint) - 1, pipe);
	complaint[got] = '\0';
	int rc = pclose(pipe);
	unlink(path);
	cr_assert(rc == 0 && got == 0, "xmllint %s rejected the document: %s", flags, complaint);
}

bool have_tool(const char *name)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

char *folded_of(struct profile *p)
{
	struct flame_tree *t = viewtree_flame(p, NULL, FLAME_ROOT_COMM);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(folded_write(f, t, true), 0);
	fclose(f);
	flame_free(t);
	return buf;
}

char *node_check_file(const char *script, const char *path, int *status)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "node '%s/tests/js/%s' '%s' 2>&1", SRC_DIR, script, path);
	FILE *pipe = popen(cmd, "r");
	cr_assert_not_null(pipe);
	char *out = NULL;
	size_t cap = 0;
	if (getdelim(&out, &cap, '\0', pipe) < 0) {
		free(out);
		out = strdup("");
	}
	int rc = pclose(pipe);
	if (status)
		*status = rc;
	return out;
}

char *node_check_text(const char *script, const char *text)
{
	char path[] = "/tmp/sonde-unit-XXXXXX";
	write_temp(path, text);
	char *out = node_check_file(script, path, NULL);
	unlink(path);
	cr_assert_gt(strlen(out), 0, "%s printed nothing", script);
	return out;
}

void node_check_refuses(const char *script, const char *text, const char *verdict,
			const char *const *reasons)
{
	char *report = node_check_text(script, text);
	if (verdict)
		cr_assert(strstr(report, verdict), "%s: no %s in %s", script, verdict, report);
	for (const char *const *r = reasons; *r; r++)
		cr_assert(strstr(report, *r), "%s: no \"%s\" in %s", script, *r, report);
	free(report);
}

/* Where the value of "key": starts. */
static const char *json_value(const char *json, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *s = strstr(json, pat);
	cr_assert_not_null(s, "no %s in %s", key, json);
	return s + strlen(pat);
}

double json_num(const char *json, const char *key)
{
	return strtod(json_value(json, key), NULL);
}

uint64_t json_u64(const char *json, const char *key)
{
	return strtoull(json_value(json, key), NULL, 10);
}
