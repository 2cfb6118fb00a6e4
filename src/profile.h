/* profile — samples with their stacks and threads, in memory.
 *
 * Stacks are interned in a trie: node 0 is the empty stack, every other node
 * is (parent node, frame id), so a stack is one integer and shared prefixes
 * are stored once (the same layout as the recording's `stacks` table).
 * Threads are interned by (pid, tid, comm). Samples refer to both by index.
 * A profile also carries free-form metadata (key -> value) and the list of
 * sampled event names. Recording files load into and save from this. */
#ifndef SONDE_PROFILE_H
#define SONDE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flame.h"
#include "frames.h"

struct stack_node {
	uint32_t parent; /* node id; 0 = this frame is a stack's outermost */
	uint32_t frame;  /* frame id */
	uint32_t depth;  /* 1 for outermost frames */
};

struct thread_info {
	uint32_t pid, tid;
	const char *comm; /* interned in the profile's frame table */
};

struct sample {
	uint64_t time_ns; /* CLOCK_MONOTONIC */
	uint64_t weight;  /* what the sample counts for (1, or the event period) */
	uint32_t cpu;
	uint32_t thread; /* index into threads */
	uint32_t event;  /* index into events */
	uint32_t stack;  /* stack node id (0 = empty stack) */
};

struct meta_entry {
	char *key, *value;
};

struct profile {
	struct frame_table *frames;
	struct stack_node *nodes; /* nodes[0] is the empty stack */
	size_t nnodes, nodes_cap;
	uint32_t *node_slots; /* hash set over nodes by (parent, frame) */
	size_t nnode_slots;
	struct thread_info *threads;
	size_t nthreads, threads_cap;
	struct sample *samples;
	size_t nsamples, samples_cap;
	char **events;
	size_t nevents, events_cap;
	struct meta_entry *meta;
	size_t nmeta, meta_cap;
};

struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Interns a stack given root first; returns its node id (0 for depth 0). */
uint32_t profile_stack_intern(struct profile *p, const uint32_t *frames_root_first, size_t n);

/* Interns the child (parent, frame) of an existing node; returns its id. */
uint32_t profile_stack_child(struct profile *p, uint32_t parent, uint32_t frame);

/* Writes a stack's frame ids root first into out (at most max) and returns
 * the stack's depth (which may exceed max). */
size_t profile_stack_frames(const struct profile *p, uint32_t node, uint32_t *out, size_t max);

uint32_t profile_thread_intern(struct profile *p, uint32_t pid, uint32_t tid, const char *comm);

/* Index of an event name, added when new. */
uint32_t profile_event_intern(struct profile *p, const char *name);

void profile_add_sample(struct profile *p, const struct sample *s);

void profile_meta_set(struct profile *p, const char *key, const char *value);
const char *profile_meta_get(const struct profile *p, const char *key);

/* Which samples a view takes. Zero-initialised = all samples. */
struct sample_filter {
	bool has_range;
	uint64_t start_ns, end_ns; /* inclusive, CLOCK_MONOTONIC */
	int64_t tid;               /* -1 or 0 = any */
	int64_t pid;               /* -1 or 0 = any */
};

bool profile_sample_matches(const struct profile *p, const struct sample *s,
			    const struct sample_filter *f);

/* How flame trees group their root. */
enum flame_root {
	FLAME_ROOT_COMM,     /* process name (FlameGraph's default) */
	FLAME_ROOT_PID,      /* comm-PID */
	FLAME_ROOT_TID,      /* comm-PID/TID */
	FLAME_ROOT_NONE,     /* no process level */
};

/* Builds the call tree of the samples a filter takes (weights summed). The
 * tree's root frames are interned into the profile's frame table as
 * FRAME_PROCESS frames. The caller frees it with flame_free(). */
struct flame_tree *profile_flame(struct profile *p, const struct sample_filter *f,
				 enum flame_root root);

/* Sum of the weights of all samples a filter takes. */
uint64_t profile_total_weight(const struct profile *p, const struct sample_filter *f);

#endif
