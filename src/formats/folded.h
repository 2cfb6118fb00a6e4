/* folded — the folded-stack text format (FlameGraph's stackcollapse output):
 * one line per distinct stack, "root;...;leaf COUNT", frames outermost first,
 * lines sorted bytewise, identical stacks summed. */
#ifndef SONDE_FOLDED_H
#define SONDE_FOLDED_H

#include <stdbool.h>
#include <stdio.h>

#include "flame.h"
#include "infile.h"
#include "profile.h"
#include "view.h"

/* Writes every stack of the tree that has self samples. With `annotate`,
 * frames carry their kind suffix (_[k] kernel, _[i] inlined, _[j] JIT).
 * ';' inside a frame name becomes ':' and control characters are escaped
 * (printable.h), so lines stay parseable.
 * Returns 0, or -1 when writing failed. */
int folded_write(FILE *out, const struct flame_tree *t, bool annotate);

/* The same with the annotation chosen per kind (stackcollapse-perf.pl's
 * --kernel and --jit modes annotate one kind each). */
#define FOLDED_ANNOTATE_KERNEL (1u << 0)
#define FOLDED_ANNOTATE_INLINED (1u << 1)
#define FOLDED_ANNOTATE_JIT (1u << 2)
#define FOLDED_ANNOTATE_ALL 0x7u
int folded_write_kinds(FILE *out, const struct flame_tree *t, unsigned kinds);

/* The same with each count divided by div (rounded; stacks that round to 0
 * are left out). */
int folded_write_scaled(FILE *out, const struct flame_tree *t, unsigned kinds, uint64_t div);

/* A view's tree (viewtree_flame with v): off-CPU and wall views (their
 * weights are nanoseconds) count microseconds, as offcputime -f does. */
int folded_write_view(FILE *out, const struct flame_tree *t, bool annotate, const struct view *v);

/* Reads folded stacks ("a;b;c COUNT" per line) into a profile: the first
 * frame is the process name (as FlameGraph writes it), the rest the stack;
 * one sample per distinct stack weighing the COUNTs of its lines (inputs
 * are usually summed already; repeated lines are added); "_[k]", "_[i]",
 * "_[j]" suffixes become frame kinds. STACK may be empty (" 5": a sample
 * without frames or process name, as the writer writes it). Blank lines are
 * skipped; any other line that is not "STACK COUNT" is an error naming the
 * line. Returns NULL with err. */
struct profile *folded_read(const char *text, size_t len, char *err, size_t errlen);

/* The same, line by line from an input (memory holds the profile, not the
 * text); also NULL with err when the input fails (infile_line). */
struct profile *folded_read_lines(struct infile *in, char *err, size_t errlen);

/* Does the text look like folded stacks? (most of its first lines are
 * "frames COUNT" with at least one ';' somewhere) */
bool folded_detect(const char *text, size_t len);

/* The entry of the formats registry (registry.h). */
struct format_entry;
extern const struct format_entry format_folded;

#endif
