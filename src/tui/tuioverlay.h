/* tuioverlay — the box of text over the screen: the keys' help (?) or a
 * command's answer longer than the message line, one line of text a row
 * (tabs made spaces, control characters '?'), scrolled by t->otop. Only one
 * at a time: opening one closes the other. Drawn by tuidraw, its keys are
 * tuikeys'. */
#ifndef SONDE_TUIOVERLAY_H
#define SONDE_TUIOVERLAY_H

#include "tuistate.h"

/* Shows text (lines split at '\n') under a title. */
void tuioverlay_open_text(struct tui *t, const char *title, const char *text);
/* Shows the keys' help. */
void tuioverlay_open_help(struct tui *t);
/* Closes the overlay (none open: nothing to do) and frees its lines. */
void tuioverlay_close(struct tui *t);
/* Rows of text the overlay shows at once on this terminal. */
int tuioverlay_body_height(void);

#endif
