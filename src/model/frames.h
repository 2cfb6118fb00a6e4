/* frames — the table of distinct stack frames, shared by every profile.
 *
 * A frame is what a flame graph box shows: a function name plus where it
 * lives (module, source file, line) and what kind of code it is. Frames are
 * interned: the same (name, module, file, line, kind) always gets the same id,
 * so stacks are arrays of small integers. Id 0 is never a real frame.
 * All strings are copied into the table and live as long as it. */
#ifndef SONDE_FRAMES_H
#define SONDE_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "frame_kind.h"


struct frame {
	const char *name;   /* function name, never NULL */
	const char *module; /* binary path or "[kernel.kallsyms]", may be "" */
	const char *file;   /* source file, "" when unknown */
	uint32_t line;      /* source line, 0 when unknown */
	enum frame_kind kind;
	/* The linkage name `name` was demangled from (pprof's system_name),
	 * "" when the name is its own. Not part of what makes frames equal:
	 * set once, by frames_set_system_name. */
	const char *system_name;
};

struct frame_table;

struct frame_table *frames_new(void);
void frames_free(struct frame_table *t);

/* Interns a frame and returns its id (>= 1). Returns 0 only when out of
 * memory. NULL strings are treated as "". */
uint32_t frames_intern(struct frame_table *t, const char *name, const char *module,
		       const char *file, uint32_t line, enum frame_kind kind);

/* Gives a frame its linkage name, unless it has one ("" or NULL: none). */
void frames_set_system_name(struct frame_table *t, uint32_t id, const char *system_name);

/* Looks a frame up by id; NULL when the id is not in the table. */
const struct frame *frames_get(const struct frame_table *t, uint32_t id);

/* Number of frames; valid ids are 1..frames_count(t). */
size_t frames_count(const struct frame_table *t);

/* The folded-stack annotation for a kind: "_[k]", "_[i]", "_[j]" or "". */
const char *frames_kind_suffix(enum frame_kind kind);

/* The kind as a word: user, kernel, inlined, jit, process, unknown, sonde
 * (nflxprofile's libtype and the web API use these). */
const char *frames_kind_name(enum frame_kind kind);

/* Interns a string in the table's string pool (for callers that keep
 * names next to frames). Returns NULL only when out of memory. */
const char *frames_strdup(struct frame_table *t, const char *s);

#endif
