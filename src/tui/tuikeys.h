/* tuikeys — what a key does, outside the prompts: in an overlay (scroll,
 * close); the keys every panel shares (quit, help, prompts, focus, pause,
 * refresh interval, invert, zoom, expand / collapse all, search next /
 * previous / clear); then the focused panel's own (moving in the call tree
 * and expanding, moving in the lists, Enter on a hottest function finding
 * it in the tree). The keys are listed in tui.h. */
#ifndef SONDE_TUIKEYS_H
#define SONDE_TUIKEYS_H

#include "tuistate.h"

/* One key (a prompt's keys go to tuiprompt); returns 1 to quit, else 0. A
 * terminal resize (KEY_RESIZE) does nothing here: the next draw follows
 * the size. */
int tuikeys_handle(struct tui *t, int ch);

#endif
