/* unitkit — what several unit tests need, once: reading sonde's own SVG and
 * HTML back (attributes, text, xmllint's verdict), profiles built by hand
 * (frames, samples, calls), asking for a tool, the folded stacks of a
 * profile, and running a node checker of tests/js.
 * Compiled into every unit test (tests/CMakeLists.txt). Failures are
 * Criterion assertions; a missing tool skips the test that needs it. */
#ifndef SONDE_UNITKIT_H
#define SONDE_UNITKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

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

/* ---- profiles built by hand ------------------------------------------------- */

/* A frame `name` of kind k in `module` at x.c:`line`. */
uint32_t unit_frame_at(struct profile *p, const char *name, const char *module, uint32_t line,
		       enum frame_kind k);
/* The same in /bin/x at x.c:1. */
uint32_t unit_frame(struct profile *p, const char *name, enum frame_kind k);

/* The stack of the frames listed, root first (one or more). */
#define UNIT_STACK(p, ...)                                                                    \
	profile_stack_intern((p), (uint32_t[]){__VA_ARGS__},                                  \
			     sizeof((uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))

/* Samples of one stack on one thread, for unit_add. */
struct unit_sample {
	uint32_t thread;  /* profile_thread_intern's id */
	uint32_t stack;   /* profile_stack_intern's id */
	uint64_t time_ns; /* of the first; each next one 1000 ns later */
	uint64_t count;   /* how many (0: one) */
	uint64_t weight;  /* each (0: 1) */
	uint32_t event, cpu;
	const struct span_link *links; /* the calls in flight, on every sample */
	size_t nlinks;
};
void unit_add(struct profile *p, struct unit_sample s);
/* One sample: unit_add's common case. */
void unit_sample(struct profile *p, uint32_t thread, uint64_t time_ns, uint32_t stack,
		 uint64_t weight);

/* Adds call record s (asserting the profile takes it). */
void unit_span(struct profile *p, struct span s);

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
/* Asserts that a checker refuses `text` (it is not vacuous): its report
 * holds `verdict` (e.g. "\"ok\":false"; NULL: not looked for) and each of
 * the NULL-terminated `reasons`. */
void node_check_refuses(const char *script, const char *text, const char *verdict,
			const char *const *reasons);
/* The number after "key": in a flat JSON report; asserts it is there. */
double json_num(const char *json, const char *key);
uint64_t json_u64(const char *json, const char *key); /* exact to 2^64 */

#endif
