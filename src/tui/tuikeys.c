/* tuikeys — the keys of `sonde top`. The contract is in tuikeys.h. */
#define _GNU_SOURCE
#include "tuikeys.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "tuiexplore.h"
#include "tuioverlay.h"
#include "tuiprompt.h"

/* ---- keys: the call tree, the lists ------------------------------------------ */

static int page_rows(const struct rect *r)
{
	return r->h > 4 ? r->h - 3 : 1;
}

static void tree_key(struct tui *t, int ch)
{
	struct tuitree *tt = tuistate_tree(t);
	long page = page_rows(&t->lay.flame);
	switch (ch) {
	case KEY_UP: case 'k': tuitree_move(tt, -1); break;
	case KEY_DOWN: case 'j': tuitree_move(tt, 1); break;
	case KEY_PPAGE: tuitree_move(tt, -page); break;
	case KEY_NPAGE: tuitree_move(tt, page); break;
	case KEY_HOME: case 'g': tuitree_select(tt, 0); break;
	case KEY_END: case 'G': tuitree_select(tt, (long)tuitree_nrows(tt) - 1); break;
	case KEY_RIGHT: case '+': case 'l':
		if (!tuitree_expand(tt))
			tuitree_select_first_child(tt);
		break;
	case KEY_LEFT: case '-': case 'h':
		if (!tuitree_collapse(tt))
			tuitree_select_parent(tt);
		break;
	case '\n': case '\r': case KEY_ENTER: case ' ':
		if (!tuitree_expand(tt))
			tuitree_collapse(tt);
		break;
	}
}

/* Moves a list cursor by a key; false when the key is not a move. */
static bool list_key(int ch, size_t n, size_t page, size_t *sel)
{
	if (!n)
		return ch == KEY_UP || ch == KEY_DOWN;
	size_t s = *sel;
	switch (ch) {
	case KEY_UP: case 'k': s = s ? s - 1 : 0; break;
	case KEY_DOWN: case 'j': s = s + 1 < n ? s + 1 : n - 1; break;
	case KEY_PPAGE: s = s > page ? s - page : 0; break;
	case KEY_NPAGE: s = s + page < n ? s + page : n - 1; break;
	case KEY_HOME: case 'g': s = 0; break;
	case KEY_END: case 'G': s = n - 1; break;
	default: return false;
	}
	*sel = s;
	return true;
}

static void hot_enter(struct tui *t)
{
	const struct live_view *v = t->view;
	if (!v || t->hot_sel >= v->nhot)
		return;
	char lab[LABEL_MAX];
	if (v->flame)
		flame_frame_label(v->flame, v->hot[t->hot_sel].frame, true, lab, sizeof(lab));
	else
		return;
	tuistate_search_set(t, lab, true);
	t->focus = FOCUS_FLAME;
	t->search_wrapped = false;
	if (tuitree_search_first(tuistate_tree(t)) < 0)
		tuistate_no_match(t);
}

static void hot_key(struct tui *t, int ch)
{
	const struct live_view *v = t->view;
	size_t n = v ? v->nhot : 0;
	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		hot_enter(t);
		return;
	}
	if (list_key(ch, n, (size_t)page_rows(&t->lay.hot), &t->hot_sel))
		tuistate_cursors_commit(t);
}

static void probes_key(struct tui *t, int ch)
{
	size_t n = t->view ? t->view->nprobes : 0;
	if (list_key(ch, n, 1, &t->probe_sel))
		tuistate_cursors_commit(t);
}

/* ---- keys: overlays and the rest --------------------------------------------- */

static void overlay_key(struct tui *t, int ch)
{
	size_t page = (size_t)tuioverlay_body_height();
	size_t most = t->nolines > page ? t->nolines - page : 0;
	switch (ch) {
	case 'q': case KEY_ESC: case '\n': case '\r': case KEY_ENTER: case '?':
		tuioverlay_close(t);
		break;
	case KEY_UP: case 'k': t->otop = t->otop ? t->otop - 1 : 0; break;
	case KEY_DOWN: case 'j': t->otop = t->otop < most ? t->otop + 1 : most; break;
	case KEY_PPAGE: t->otop = t->otop > page ? t->otop - page : 0; break;
	case KEY_NPAGE: case ' ': t->otop = t->otop + page < most ? t->otop + page : most; break;
	case KEY_HOME: case 'g': t->otop = 0; break;
	case KEY_END: case 'G': t->otop = most; break;
	case ':':
		tuioverlay_close(t);
		tuiprompt_open(t, PROMPT_COMMAND);
		break;
	}
}

static void invert_toggle(struct tui *t)
{
	t->inverted = !t->inverted;
	tuistate_sync_trees(t);
	tuistate_set_msg(t, MSG_INFO, "%s",
		t->inverted ? "inverted: leaf functions first, their callers below (i: back)"
			    : "call tree: callers first, callees below");
}

static void zoom_key(struct tui *t, bool in)
{
	struct tuitree *tt = tuistate_tree(t);
	if (!in) {
		if (tuitree_zoom_out(tt) < 0)
			tuistate_set_msg(t, MSG_ERROR, "not zoomed");
		return;
	}
	struct tuitree_row row;
	long s = tuitree_selected(tt);
	if (s < 0 || !tuitree_row(tt, (size_t)s, &row))
		return;
	char lab[LABEL_MAX];
	tuistate_frame_label(t->view, row.node->frame, lab, sizeof(lab));
	if (tuitree_zoom_in(tt) < 0)
		tuistate_set_msg(t, MSG_ERROR, "nothing below %s to zoom into", lab);
	else
		tuistate_set_msg(t, MSG_INFO, "zoomed into %s (Z or Backspace: zoom out)", lab);
}

static void refresh_scale(struct tui *t, double f)
{
	double r = t->refresh_s * f;
	t->refresh_s = r < REFRESH_MIN_S ? REFRESH_MIN_S : r > REFRESH_MAX_S ? REFRESH_MAX_S : r;
	tuistate_set_msg(t, MSG_INFO, "refresh every %.1fs", t->refresh_s);
	t->refresh_wanted = true;
}

/* Keys that mean the same whichever panel has the focus; false when not
 * one of them. Sets *quit for q. */
static bool global_key(struct tui *t, int ch, int *quit)
{
	switch (ch) {
	case 'q': *quit = 1; return true;
	case '?': tuioverlay_open_help(t); return true;
	case ':': tuiprompt_open(t, PROMPT_COMMAND); return true;
	case '/': tuiprompt_open(t, PROMPT_SEARCH); return true;
	case '\t': t->focus = (t->focus + 1) % FOCUS_COUNT; return true;
	case KEY_BTAB: t->focus = (t->focus + FOCUS_COUNT - 1) % FOCUS_COUNT; return true;
	case 'p':
		t->paused = !t->paused;
		tuistate_set_msg(t, MSG_INFO, "%s",
			t->paused ? "paused: the display is frozen, data is still gathered (p: resume)"
				  : "resumed");
		t->refresh_wanted = !t->paused;
		return true;
	case '<': refresh_scale(t, 0.5); return true;
	case '>': refresh_scale(t, 2.0); return true;
	case 'i': invert_toggle(t); return true;
	case 'z': zoom_key(t, true); return true;
	case 'Z': case KEY_BACKSPACE: case 127: case 8: zoom_key(t, false); return true;
	case 'e': tuitree_expand_all(tuistate_tree(t)); return true;
	case 'E': tuitree_collapse_all(tuistate_tree(t)); return true;
	case KEY_ESC: tuistate_search_set(t, NULL, false); return true;
	case 'n': case 'N':
		if (!t->search) {
			tuistate_set_msg(t, MSG_ERROR, "no search: / to search");
			return true;
		}
		t->focus = FOCUS_FLAME;
		tuistate_search_jump(t, ch == 'n' ? 1 : -1);
		return true;
	}
	return false;
}

/* One key; returns 1 to quit. */
int tuikeys_handle(struct tui *t, int ch)
{
	if (ch == KEY_RESIZE)
		return 0;
	if (t->overlay != OVERLAY_NONE) {
		overlay_key(t, ch);
		return 0;
	}
	if (t->prompt != PROMPT_NONE)
		return tuiprompt_key(t, ch);
	t->msg_kind = MSG_NONE; /* a message answers the last key only */
	t->search_wrapped = false;
	int quit = 0;
	/* the explorer pane takes its keys first; ? : and the rest go on */
	if (t->explore && tuiexplore_key(t, ch))
		return 0;
	if (t->explore && (ch == ':' || ch == '?' || ch == 'p' || ch == '<' || ch == '>')) {
		global_key(t, ch, &quit);
		return 0;
	}
	if (t->explore)
		return 0;
	if (ch == 'x') {
		tuiexplore_open_selected(t);
		return 0;
	}
	if (global_key(t, ch, &quit))
		return quit;
	switch (t->focus) {
	case FOCUS_FLAME: tree_key(t, ch); break;
	case FOCUS_HOT: hot_key(t, ch); break;
	case FOCUS_PROBES: probes_key(t, ch); break;
	case FOCUS_COUNT: break;
	}
	return 0;
}
