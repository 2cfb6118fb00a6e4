/* tuidraw — the screen of `sonde top` drawn from its state (tuistate.h):
 * in the places tuilayout gives them, the two status lines, the call tree,
 * hottest functions and probe panels (a title bar each, the focused one
 * standing out), the message line or the prompt being typed, and the
 * overlay's box on top.
 * Everything is drawn on stdscr: erase() + draw + refresh() every time, so
 * curses sends only what changed (no clear(), no flicker). Text is clipped
 * to its panel, never wrapped; the bottom-right cell is never written. */
#ifndef SONDE_TUIDRAW_H
#define SONDE_TUIDRAW_H

#include "tuistate.h"

/* Colours when the terminal has them (else plain attributes); once, after
 * curses started. */
void tuidraw_init_colors(struct tui *t);

/* Lays out and draws the whole screen from t (following the terminal's
 * size), and puts the cursor in the prompt while one is open. */
void tuidraw_redraw(struct tui *t);

#endif
