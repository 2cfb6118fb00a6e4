/* perfscript — whether text is perf script output (perfscript_detect) and
 * the formats registry's entry; the scanner and the two readers are
 * perfscript_scan.c, perfscript_collapse.c and perfscript_read.c
 * (perfscriptscan.h lists the rooms). */
#include "perfscript.h"

#include <string.h>

#include "folded.h"
#include "formats.h"
#include "infile.h"
#include "perfscriptscan.h"
#include "registry.h"

/* A stack line as perf prints it: [whitespace] HEXADDR whitespace SYMBOL
 * " (MODULE)". */
static bool looks_like_frame(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t a = i;
	while (i < n && (is_digit((unsigned char)s[i]) || (s[i] >= 'a' && s[i] <= 'f') ||
			 (s[i] >= 'A' && s[i] <= 'F')))
		i++;
	if (i == a || i >= n || (s[i] != ' ' && s[i] != '\t'))
		return false;
	struct stackline sl;
	return perfscript_parse_stackline(s, n, &sl);
}

bool perfscript_detect(const char *text, size_t len)
{
	if (len > ((size_t)1 << 20))
		len = (size_t)1 << 20;
	struct infile in;
	infile_from_memory(&in, text, len);
	const char *s;
	size_t n, total = 0, good = 0, pairs = 0;
	bool after_header = false, plausible = true;
	while (total < 200 && infile_line(&in, &s, &n, NULL, 0) > 0) {
		if (n && s[n - 1] == '\r')
			n--;
		if (n && s[0] == '#')
			continue;
		if (n == 0) {
			after_header = false;
			continue;
		}
		if (memchr(s, 0, n)) {
			plausible = false;
			break;
		}
		total++;
		struct header h;
		if (perfscript_parse_header(s, n, &h) && memchr(s + h.rest, ':', n - h.rest)) {
			good++;
			after_header = true;
			continue;
		}
		if (total == 1) {
			plausible = false; /* perf script starts with a record header */
			break;
		}
		if (looks_like_frame(s, n)) {
			good++;
			pairs += after_header;
		}
		after_header = false;
	}
	infile_close(&in);
	return plausible && pairs > 0 && good * 10 >= total * 9;
}

/* ========================================================================= */
/* The registry's entry                                                      */
/* ========================================================================= */

static bool detect_perfscript(const struct format_head *h)
{
	return perfscript_detect((const char *)h->data, h->text);
}

static int collapse_to_folded(struct infile *in, FILE *out, const struct format_conversion *c,
			      char *err, size_t errlen)
{
	const struct folded_modes *m = c->modes;
	struct collapse_options o = {
		.pid = m->pid, .tid = m->tid, .kernel = m->kernel, .jit = m->jit, .addrs = m->addrs,
		.event = m->event,
	};
	struct collapse_output w = {.out = out, .note = c->note, .notelen = c->notelen};
	return perfscript_collapse_lines(in, &o, &w, err, errlen);
}

const struct format_entry format_perfscript = {
	.name = "perf-script",
	.aliases = (const char *const[]){"perf", NULL},
	.what = "perf script",
	.detect = detect_perfscript,
	.read_lines = perfscript_read_lines,
	.direct_to = &format_folded,
	.direct = collapse_to_folded,
};
