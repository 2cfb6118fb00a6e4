/* flamedelta — a flame tree sent to one client as changes: the first
 * message holds every node, each later one only the nodes that appeared,
 * changed or went away since the previous message to that client. So a page
 * updates its flame graph in place (keeping zoom and search) and a stream
 * of a steady profile costs a few bytes a second.
 *
 * Message (one line of JSON):
 *   {"seq":N,"full":B,"total":T,"fractional":B,
 *    "removed":[ID,...],
 *    "added":[[ID,PARENT,"name","kind",TOTAL,SELF,"#rrggbb"],...],
 *    "changed":[[ID,TOTAL,SELF],...]}
 * Node ids are the client's: stable while a node lives, the root is 0
 * (PARENT -1, name "all"); a parent is added before its children. "full"
 * true means: forget every node you have, these are all of them (the first
 * message, after reset, and whenever the id table had grown to more than
 * FLAMEDELTA_SLACK times the live nodes, which bounds the memory per client
 * by the tree's size). kind is frames_kind_name's: user, kernel, inlined,
 * jit, process, unknown, sonde. TOTAL and SELF are the tree's weights (EWMA trees: scaled
 * by 1000, fractional true); total is the root's total. The colour is the
 * one the SVG flame graphs give the frame (flamesvg_color: by kind, a shade
 * by name), whatever NO_COLOR says. */
#ifndef SONDE_FLAMEDELTA_H
#define SONDE_FLAMEDELTA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "flame.h"

#define FLAMEDELTA_SLACK 4

struct flamedelta;

struct flamedelta *flamedelta_new(void);
void flamedelta_free(struct flamedelta *d);

/* The next message is a full one. */
void flamedelta_reset(struct flamedelta *d);

/* Writes the message that brings the client from what it was last sent to
 * tree t. Returns the number of nodes added, changed or removed, plus one
 * for a full message (0: nothing changed and the message is not full; the
 * caller may skip sending it). */
size_t flamedelta_write(struct flamedelta *d, const struct flame_tree *t, bool fractional,
			FILE *out);

/* Writes flamesvg_color of frame f (NULL: the root) as a JSON string
 * "#rrggbb": the colour every sonde view gives it. */
void flamedelta_write_color(FILE *out, const struct frame *f);

#endif
