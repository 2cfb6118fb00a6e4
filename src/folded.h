/* folded — the folded-stack text format (FlameGraph's stackcollapse output):
 * one line per distinct stack, "root;...;leaf COUNT", frames outermost first,
 * lines sorted bytewise, identical stacks summed. */
#ifndef SONDE_FOLDED_H
#define SONDE_FOLDED_H

#include <stdbool.h>
#include <stdio.h>

#include "flame.h"

/* Writes every stack of the tree that has self samples. With `annotate`,
 * frames carry their kind suffix (_[k] kernel, _[i] inlined, _[j] JIT).
 * ';' inside a frame name becomes ':' so lines stay parseable.
 * Returns 0, or -1 when writing failed. */
int folded_write(FILE *out, const struct flame_tree *t, bool annotate);

#endif
