/* tuilayout — where the panels go. The contract is in tuilayout.h. */
#include "tuilayout.h"

#include <curses.h>

#define WIDE_COLS 140   /* from this width the tree gets the left 60% */
#define SPLIT_COLS 100  /* stacked: hot and probes side by side from here */

/* Rows the probe panel would like: title, header, one per probe, the
 * focused probe's histogram and slow calls. */
static int probes_wanted(const struct tui *t)
{
	const struct live_view *v = t->view;
	if (!v || !v->nprobes)
		return 3;
	int buckets = 0;
	const struct live_probe_view *pv = &v->probes[t->probe_sel < v->nprobes ? t->probe_sel : 0];
	for (int k = 0; k < LATENCY_HIST_BUCKETS; k++)
		buckets += pv->hist.buckets[k] != 0;
	int slow = pv->nslow ? (int)pv->nslow + 1 : 0;
	return 2 + (int)v->nprobes + 1 + buckets + slow;
}

int tuilayout_clamp(int x, int lo, int hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* Splits `avail` rows between hot (first) and probes. */
static void split_side(const struct tui *t, int avail, int *hot_h, int *probes_h)
{
	int want = probes_wanted(t);
	int most = t->focus == FOCUS_PROBES ? avail * 2 / 3 : avail / 2;
	if (t->focus == FOCUS_HOT)
		most = avail / 3;
	*probes_h = tuilayout_clamp(want, 3, most > 3 ? most : 3);
	if (*probes_h > avail)
		*probes_h = avail;
	*hot_h = avail - *probes_h;
}

void tuilayout_compute(struct tui *t)
{
	struct layout *l = &t->lay;
	int rows = LINES, cols = COLS;
	int sh = rows >= 12 ? 2 : 1;
	l->status = (struct rect){0, 0, sh, cols};
	l->msg = (struct rect){rows - 1, 0, 1, cols};
	int by = sh, bh = rows - sh - 1;
	l->vsep_x = l->vsep2_x = -1;
	if (cols >= WIDE_COLS) {
		int fw = cols * 60 / 100;
		l->flame = (struct rect){by, 0, bh, fw};
		l->vsep_x = fw, l->vsep_y = by, l->vsep_h = bh;
		int hot_h, probes_h;
		split_side(t, bh, &hot_h, &probes_h);
		l->hot = (struct rect){by, fw + 1, hot_h, cols - fw - 1};
		l->probes = (struct rect){by + hot_h, fw + 1, probes_h, cols - fw - 1};
		return;
	}
	/* On a short terminal the focused panel gets the room. */
	int fh = bh * (t->focus == FOCUS_FLAME || bh >= 36 ? 55 : 40) / 100;
	if (fh < 4)
		fh = bh < 4 ? bh : 4;
	int lh = bh - fh, ly = by + fh;
	l->flame = (struct rect){by, 0, fh, cols};
	if (cols >= SPLIT_COLS) {
		/* Without probes their panel only needs its hint. */
		int hw = t->view && t->view->nprobes ? cols * 45 / 100 : cols - 50;
		l->hot = (struct rect){ly, 0, lh, hw};
		l->vsep2_x = hw, l->vsep2_y = ly, l->vsep2_h = lh;
		l->probes = (struct rect){ly, hw + 1, lh, cols - hw - 1};
		return;
	}
	int hot_h, probes_h;
	split_side(t, lh, &hot_h, &probes_h);
	l->hot = (struct rect){ly, 0, hot_h, cols};
	l->probes = (struct rect){ly + hot_h, 0, probes_h, cols};
}
