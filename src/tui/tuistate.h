/* tuistate — the state of `sonde top`'s screen (struct tui: the view
 * drawn, the two call trees' states, focus and list cursors, search,
 * prompt, message, overlay and layout), private to the tui layer, and what
 * changes it the same way wherever it is changed from (drawing, keys, the
 * prompt, a new view):
 *   - the call tree shown: the callees' tree or, inverted, the callers'
 *     (built from the view only while it is shown);
 *   - the search: set, highlighted as it is typed, jumped to;
 *   - the message line's one message, which answers the last key only;
 *   - the hot and probe cursors, kept on their function / probe by name
 *     when a new view reorders the lists.
 * curses stays out of this header (tests/layers.sh): SCREEN is named by
 * its struct. */
#ifndef SONDE_TUISTATE_H
#define SONDE_TUISTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flame.h"
#include "liverun.h"
#include "liveview.h"
#include "tuitree.h"

#define REFRESH_MIN_S 0.1
#define REFRESH_MAX_S 60.0
#define HISTORY_MAX 32
#define EDIT_MAX 1024
#define LABEL_MAX 512
#define MSG_MAX 512
/* Keys curses has no name for. */
#define KEY_ESC 27
#define KEY_CTRL(c) ((c) & 0x1f)

enum focus { FOCUS_FLAME, FOCUS_HOT, FOCUS_PROBES, FOCUS_COUNT };
enum prompt { PROMPT_NONE, PROMPT_SEARCH, PROMPT_COMMAND };
enum overlay { OVERLAY_NONE, OVERLAY_HELP, OVERLAY_TEXT };
enum msg_kind { MSG_NONE, MSG_INFO, MSG_ERROR };

struct rect {
	int y, x, h, w;
};

struct layout {
	struct rect status, flame, hot, probes, msg;
	int vsep_x, vsep_y, vsep_h;     /* a vertical separator (x < 0: none) */
	int vsep2_x, vsep2_y, vsep2_h;
};

struct lineedit {
	char buf[EDIT_MAX];
	size_t len, cur;
};

struct tui {
	/* Runs a command line (tui_exec_fn, tui.h): the options' exec, or
	 * liverun_exec once attached. */
	int (*exec)(void *arg, const char *line, FILE *out);
	void *exec_arg;
	struct screen *screen;        /* curses' SCREEN */
	bool colors;
	double refresh_s;
	bool paused;
	bool refresh_wanted;
	const struct live_view *view;  /* kept until the next tui_draw */
	struct liverun *run;           /* attached to (tui_attach), or NULL */
	struct live_view *owned;       /* attached: the view drawn, built by us */

	/* call tree: [0] callees (normal), [1] inverted (callers) */
	struct tuitree *tree[2];
	bool inverted;
	struct flame_tree *inv;        /* inverted tree of `view`, owned */

	enum focus focus;
	size_t hot_sel, hot_top;
	uint32_t hot_sel_frame;        /* keeps the hot cursor on its function */
	size_t probe_sel, probe_top;
	char probe_sel_name[128];

	char *search;                  /* NULL: no search */
	bool search_exact;
	char *search_saved;            /* restored when the prompt is cancelled */
	bool search_saved_exact;
	bool search_wrapped;

	enum prompt prompt;
	struct lineedit edit;
	char *history[HISTORY_MAX];    /* oldest first */
	size_t nhistory;
	size_t hist_pos;               /* == nhistory: the line being typed */
	char hist_stash[EDIT_MAX];

	enum msg_kind msg_kind;
	char msg[MSG_MAX];

	enum overlay overlay;
	char **olines;
	size_t nolines, otop;
	char otitle[96];

	struct layout lay;

	struct tuiexplore *explore;    /* the explorer pane (tuiexplore.h), NULL: closed */
	const char *source_dir;        /* where it looks for source first, or NULL */
};

/* The tree shown (inverted or not), and its flame tree (NULL: none yet). */
struct tuitree *tuistate_tree(const struct tui *t);
const struct flame_tree *tuistate_flame(const struct tui *t);

/* Gives the trees of t->view to the tree states (the inverted one only
 * while it is shown). */
void tuistate_sync_trees(struct tui *t);

/* Marks the matches of a pattern in both trees (NULL: none), as the user
 * types; does not change t->search. */
void tuistate_search_apply(struct tui *t, const char *pattern, bool exact);
/* Sets (a copy of) the search, NULL or "" clearing it, and marks it. */
void tuistate_search_set(struct tui *t, const char *pattern, bool exact);
/* Selects the next (dir 1) or previous (-1) match; dir 0: the first match
 * from the selection on (the selection itself when it matches). Says so
 * when there is none. */
void tuistate_search_jump(struct tui *t, int dir);
/* The message that the search has no match (under the zoom, if zoomed). */
void tuistate_no_match(struct tui *t);

/* The message line's text until the next key. */
void tuistate_set_msg(struct tui *t, enum msg_kind k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A frame's label as shown (printable), "#ID" without a flame tree. */
void tuistate_frame_label(const struct live_view *v, uint32_t frame, char *buf, size_t size);

/* After a new view: the hot and probe cursors back on the function and
 * probe they were on (or the last row). */
void tuistate_cursors_follow(struct tui *t);
/* Remembers which function and probe the cursors are on. */
void tuistate_cursors_commit(struct tui *t);

#endif
