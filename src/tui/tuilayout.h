/* tuilayout — where each panel of `sonde top` goes on a terminal of
 * LINES x COLS (t->lay): the status lines at the top (two from 12 rows),
 * the message line at the bottom, and between them the call tree with the
 * most room: the left 60% from 140 columns on (the hottest functions above
 * the probes on the right), else the upper part (55%, or 40% when another
 * panel has the focus on a short terminal) with the hottest functions and
 * the probes below it, side by side from 100 columns. The probe panel asks
 * for the rows its probes, the focused one's histogram and slow calls need,
 * up to a share of the room that grows with its focus. */
#ifndef SONDE_TUILAYOUT_H
#define SONDE_TUILAYOUT_H

#include "tuistate.h"

/* Fills t->lay for the terminal's size now. */
void tuilayout_compute(struct tui *t);

/* x held to lo..hi (for lo <= hi). */
int tuilayout_clamp(int x, int lo, int hi);

#endif
