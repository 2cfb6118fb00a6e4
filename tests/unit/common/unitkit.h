/* unitkit — what several unit tests need, once: reading sonde's own SVG and
 * HTML back (attributes, text, xmllint's verdict), asking for a tool, the
 * folded stacks of a profile, and running a node checker of tests/js.
 * Compiled into every unit test (tests/CMakeLists.txt). Failures are
 * Criterion assertions; a missing tool skips the test that needs it. */
#ifndef SONDE_UNITKIT_H
#define SONDE_UNITKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;

/* ---- markup --------------------------------------------------------------- */

/* Copies the value of attribute `key` (as ` key="value"`) found in
 * [from, to) into buf, cut to its size. False when it is not there. */
bool svg_attr(const char *from, const char *to, const char *key, char *buf, size_t size);
/* The same attribute as a number; asserts it is there. */
double svg_attr_num(const char *from, const char *to, const char *key);
/* Copies the text between the first `open` after `from` and the `close`
 * after it into buf; asserts `open` is there. */
void svg_text_between(const char *from, const char *open, const char *close, char *buf,
		      size_t size);
/* A frame of a flame graph SVG (flamesvg's markup: a <g class="f"> with
 * data-* attributes, a <title>, a <rect> and a label). */
struct svg_frame {
	char name[128]; /* as escaped in the document */
	double x, y, width;
	unsigned rgb[3];
	unsigned long long total, self;
	char title[512];
	char label[128];
};
/* Reads up to max frames in document order; returns how many. */
size_t svg_read_frames(const char *svg, struct svg_frame *out, size_t max);
/* The first frame named `name` (as escaped), or NULL. */
const struct svg_frame *svg_find_frame(const struct svg_frame *f, size_t n, const char *name);
/* Asserts that `xmllint FLAGS --noout` accepts the document and says
 * nothing (--html exits 0 even on errors); skips without xmllint. */
void svg_assert_well_formed(const char *doc, const char *flags);

/* ---- tools and fixtures ------------------------------------------------------ */

/* Whether a command is on PATH. */
bool have_tool(const char *name);

/* The folded stacks of a profile, one line per stack, comm at the root
 * (FLAME_ROOT_COMM): how format round trips compare profiles. */
char *folded_of(struct profile *p);

/* Runs `node SRC_DIR/tests/js/SCRIPT PATH` and returns what it printed
 * (stdout and stderr), and its exit status in *status when given. */
char *node_check_file(const char *script, const char *path, int *status);
/* The same on a temporary file holding `text`; asserts it printed something. */
char *node_check_text(const char *script, const char *text);
/* The number after "key": in a flat JSON report; asserts it is there. */
double json_num(const char *json, const char *key);
uint64_t json_u64(const char *json, const char *key); /* exact to 2^64 */

#endif
