/* linesamples — samples per source line of one function, from the frames
 * the sampler's stacks were symbolized to (no probe: sampled, not exact).
 *
 * A sample counts for the function when a frame of it (its name, in a
 * module of that base name) is on its stack; the innermost such frame and
 * the frames inlined into it (kind FRAME_INLINED, just above it) are the
 * function's code there. Each of those frames in the function's file
 * counts the sample once for its line (`total`: the line was running or
 * calling); the innermost one counts it as `self` when it is the stack's
 * leaf (the line itself was running). */
#ifndef SONDE_LINESAMPLES_H
#define SONDE_LINESAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "view.h"

struct line_samples {
	uint64_t self, total;
};

/* What to count: function `func` of the module whose base name is
 * `module`'s, lines lo .. lo + n - 1 of the file whose base name is
 * `file`'s. */
struct line_samples_query {
	const char *func, *module, *file;
	unsigned lo;
	size_t n;
};

/* Fills out[0 .. q->n) with the samples v takes (weights), and returns
 * those with the function on their stack. */
uint64_t line_samples_of(const struct profile *p, const struct view *v,
			 const struct line_samples_query *q, struct line_samples *out);

#endif
