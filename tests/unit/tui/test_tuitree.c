/* tuitree: the path-keyed state of the `sonde top` call tree. Children in
 * total-descending order (ties by label, then frame id), the hot path
 * expanded on the first tree, expand / collapse (all), moving and
 * parent / child selection, state that survives new trees (selection and
 * expansion by path, fallback to the nearest ancestor and back), the zoom
 * stack, search (substring / exact, "k of m", next / previous with wrap,
 * revealing matches, under a zoom) and the scroll position.
 *
 * Trees are built by hand from stacks written "a;b;c N" (root first, N
 * samples), one per line; a frame written "name^k" is a kernel frame (label
 * "name_[k]"). Rows are compared as one string, each row written
 *   [>]DEPTH LABEL [-|+] [*]
 * with '>' on the selected row, '-' expanded, '+' collapsed with children,
 * '*' a search match; e.g. ">0main- 1run+ 0other". */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "frames.h"
#include "tuitree.h"

static struct frame_table *F;
static struct tuitree *T;
static struct flame_tree *trees[32];
static size_t ntrees;

static void setup(void)
{
	F = frames_new();
	T = tuitree_new();
	ntrees = 0;
}

static void teardown(void)
{
	tuitree_free(T);
	for (size_t i = 0; i < ntrees; i++)
		flame_free(trees[i]);
	frames_free(F);
}

TestSuite(tuitree, .init = setup, .fini = teardown);

/* A frame id: "name" is a user frame, "name^k" a kernel frame. */
static uint32_t fid(const char *tok)
{
	char name[1024]; /* room for the long-label test */
	snprintf(name, sizeof(name), "%s", tok);
	enum frame_kind kind = FRAME_USER;
	char *caret = strchr(name, '^');
	if (caret) {
		if (caret[1] == 'k')
			kind = FRAME_KERNEL;
		*caret = '\0';
	}
	uint32_t id = frames_intern(F, name, "/bin/app", "", 0, kind);
	cr_assert_neq(id, 0);
	return id;
}

/* A new tree (freed by the fixture) from "a;b;c N" lines. */
static struct flame_tree *mk(const char *spec)
{
	struct flame_tree *ft = flame_new(F);
	cr_assert_not_null(ft);
	cr_assert_lt(ntrees, sizeof(trees) / sizeof(*trees));
	trees[ntrees++] = ft;
	char *copy = strdup(spec), *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		cr_assert_not_null(sp, "bad stack line '%s'", line);
		*sp = '\0';
		uint64_t count = strtoull(sp + 1, NULL, 10);
		uint32_t st[64];
		size_t n = 0;
		char *s2 = NULL;
		for (char *f = strtok_r(line, ";", &s2); f; f = strtok_r(NULL, ";", &s2))
			st[n++] = fid(f);
		cr_assert_eq(flame_add(ft, st, n, count), 0);
	}
	free(copy);
	return ft;
}

/* The node at a ';'-separated path of frame tokens in a tree, NULL when
 * absent. */
static const struct flame_node *node_at(const struct flame_tree *ft, const char *path)
{
	const struct flame_node *n = ft->root;
	char *copy = strdup(path), *save = NULL;
	for (char *f = strtok_r(copy, ";", &save); f && n; f = strtok_r(NULL, ";", &save)) {
		uint32_t id = fid(f);
		const struct flame_node *next = NULL;
		for (size_t i = 0; i < n->nchildren; i++)
			if (n->children[i]->frame == id)
				next = n->children[i];
		n = next;
	}
	free(copy);
	return n;
}

static const char *label(const struct flame_node *n)
{
	static char buf[4][800];
	static int k;
	char *b = buf[k++ % 4];
	struct flame_tree ft = {.root = NULL, .frames = F};
	flame_frame_label(&ft, n->frame, true, b, sizeof(buf[0]));
	return b;
}

static const char *rows(void)
{
	static char buf[8192];
	size_t len = 0;
	buf[0] = '\0';
	long sel = tuitree_selected(T);
	for (size_t i = 0; i < tuitree_nrows(T); i++) {
		struct tuitree_row r;
		cr_assert(tuitree_row(T, i, &r));
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s%d%s%s%s", i ? " " : "",
					(long)i == sel ? ">" : "", r.depth, label(r.node),
					!r.expandable ? "" : r.expanded ? "-" : "+",
					r.match ? "*" : "");
		cr_assert_lt(len, sizeof(buf));
	}
	return buf;
}

static struct tuitree_row selrow(void)
{
	struct tuitree_row r = {0};
	long s = tuitree_selected(T);
	cr_assert_geq(s, 0, "nothing selected");
	cr_assert(tuitree_row(T, (size_t)s, &r));
	return r;
}

static const char *sel_label(void)
{
	return label(selrow().node);
}

/* "k of m" as a string, "k/m". */
static const char *kofm(void)
{
	static char buf[32];
	size_t k = 99;
	size_t m = tuitree_matches(T, &k);
	snprintf(buf, sizeof(buf), "%zu/%zu", k, m);
	return buf;
}

/* The main test tree: 100 samples; hot path main > run > hot > spin. */
#define T1 \
	"main;run;hot;spin 60\n" \
	"main;run;cold;spin 20\n" \
	"main;init 10\n" \
	"other;x 10\n"
#define T1_AUTO ("0main- 1run- 2hot- >3spin 2cold+ 1init 0other+")

/* ---- order --------------------------------------------------------------------- */

Test(tuitree, children_by_total_then_name)
{
	/* Inserted out of order; ties a/b by name, r before p/q by total. */
	struct flame_tree *ft = mk("z;q 3\nz;p 3\nz;r 4\nc 7\nb 5\na 5\nd 1\n");
	tuitree_set_tree(T, ft);
	/* No child holds more than half of 28: nothing auto-expanded. */
	cr_assert_str_eq(rows(), ">0z+ 0c 0a 0b 0d");
	cr_assert(tuitree_expand(T));
	cr_assert_str_eq(rows(), ">0z- 1r 1p 1q 0c 0a 0b 0d");
	struct tuitree_row r;
	cr_assert(tuitree_row(T, 1, &r));
	cr_assert_eq(r.node, node_at(ft, "z;r"));
	cr_assert_eq(r.node->total, 4);
	cr_assert_eq(r.depth, 1);
	cr_assert_not(r.expandable);
	cr_assert_not(r.expanded);
	cr_assert_not(tuitree_row(T, 8, &r));
}

Test(tuitree, ties_by_label_with_kind_suffix_then_frame_id)
{
	/* Kernel "x" (label "x_[k]") is interned first, so a lower id; the
	 * label "x" < "x_[k]" still puts the user frame first. */
	struct flame_tree *ft = mk("x^k 2\nx 2\n");
	/* Same label "dup" from two modules: the lower frame id first, even
	 * when added last. */
	uint32_t dup1 = frames_intern(F, "dup", "/lib/one.so", "", 0, FRAME_USER);
	uint32_t dup2 = frames_intern(F, "dup", "/lib/two.so", "", 0, FRAME_USER);
	cr_assert_lt(dup1, dup2);
	cr_assert_eq(flame_add(ft, &dup2, 1, 2), 0);
	cr_assert_eq(flame_add(ft, &dup1, 1, 2), 0);
	tuitree_set_tree(T, ft);
	cr_assert_str_eq(rows(), ">0dup 0dup 0x 0x_[k]");
	struct tuitree_row r0, r1;
	cr_assert(tuitree_row(T, 0, &r0));
	cr_assert(tuitree_row(T, 1, &r1));
	cr_assert_eq(r0.node->frame, dup1);
	cr_assert_eq(r1.node->frame, dup2);
}

/* Ties sort by the whole label (name + kind suffix), also when one name is
 * a prefix of the other: kernel "foo" is "foo_[k]", after "foo.cold" ('.' <
 * '_'), though "foo" < "foo.cold" taken alone. */
Test(tuitree, ties_by_full_label_prefix_names)
{
	struct flame_tree *ft = mk("foo^k 2\nfoo.cold 2\n");
	tuitree_set_tree(T, ft);
	cr_assert_str_eq(rows(), ">0foo.cold 0foo_[k]");
}

/* ---- the hot path ----------------------------------------------------------------- */

Test(tuitree, first_tree_expands_hot_path)
{
	struct flame_tree *ft = mk(T1);
	tuitree_set_tree(T, ft);
	cr_assert_eq(tuitree_nrows(T), 7);
	cr_assert_str_eq(rows(), T1_AUTO);
	cr_assert_eq(tuitree_selected(T), 3);
	struct tuitree_row r = selrow();
	cr_assert_eq(r.node, node_at(ft, "main;run;hot;spin"));
	cr_assert_eq(r.depth, 3);
	cr_assert_eq(r.node->total, 60);
	cr_assert_eq(tuitree_display_root(T), ft->root);
	cr_assert_eq(tuitree_zoom_depth(T), 0);
	cr_assert_eq(tuitree_top(T, 20), 0);
}

Test(tuitree, hot_path_stops_at_half_and_last_is_collapsed)
{
	/* a 10 of 11, b 6 of 10, then x and y hold exactly half: b does not
	 * lead on, so it is selected and stays collapsed. */
	tuitree_set_tree(T, mk("a;b;x 3\na;b;y 3\na;c 4\nd 1\n"));
	cr_assert_str_eq(rows(), "0a- >1b+ 1c 0d");
	cr_assert_str_eq(sel_label(), "b");
	cr_assert_eq(selrow().depth, 1);
}

Test(tuitree, no_hot_path_when_no_child_holds_more_than_half)
{
	tuitree_set_tree(T, mk("a;x 5\nb 5\n"));
	cr_assert_str_eq(rows(), ">0a+ 0b");
	cr_assert_eq(tuitree_selected(T), 0);
}

Test(tuitree, hot_path_only_once_and_only_with_samples)
{
	/* An empty tree first: no rows, and it does not use up the hot path. */
	tuitree_set_tree(T, mk(""));
	cr_assert_eq(tuitree_nrows(T), 0);
	cr_assert_eq(tuitree_selected(T), -1);
	cr_assert_not_null(tuitree_display_root(T));
	tuitree_set_tree(T, mk(T1));
	cr_assert_str_eq(rows(), T1_AUTO);
	/* Collapsing everything is kept: the next tree is not auto-expanded. */
	tuitree_collapse_all(T);
	cr_assert_str_eq(rows(), ">0main+ 0other+");
	tuitree_set_tree(T, mk(T1));
	cr_assert_str_eq(rows(), ">0main+ 0other+");
}

Test(tuitree, hot_path_not_applied_to_a_later_tree)
{
	tuitree_set_tree(T, mk("a;x 5\nb 5\n"));
	cr_assert_str_eq(rows(), ">0a+ 0b");
	/* Now a holds 9 of 10, but the first tree with samples was shown. */
	tuitree_set_tree(T, mk("a;x 9\nb 1\n"));
	cr_assert_str_eq(rows(), ">0a+ 0b");
}

/* ---- expand / collapse ------------------------------------------------------------ */

Test(tuitree, expand_and_collapse)
{
	tuitree_set_tree(T, mk(T1));
	tuitree_select(T, 4); /* cold */
	cr_assert_str_eq(sel_label(), "cold");
	cr_assert(tuitree_expand(T));
	cr_assert_str_eq(rows(), "0main- 1run- 2hot- 3spin >2cold- 3spin 1init 0other+");
	cr_assert_not(tuitree_expand(T), "already expanded");
	tuitree_move(T, 1); /* the leaf spin under cold */
	cr_assert_str_eq(sel_label(), "spin");
	cr_assert_not(tuitree_expand(T), "a leaf");
	cr_assert_not(tuitree_collapse(T), "a leaf");
	tuitree_select(T, 1); /* run */
	cr_assert(tuitree_collapse(T));
	cr_assert_str_eq(rows(), "0main- >1run+ 1init 0other+");
	cr_assert_eq(tuitree_nrows(T), 4);
	cr_assert_not(tuitree_collapse(T), "already collapsed");
	/* Expanding again restores what was expanded below. */
	cr_assert(tuitree_expand(T));
	cr_assert_str_eq(rows(), "0main- >1run- 2hot- 3spin 2cold- 3spin 1init 0other+");
}

Test(tuitree, collapse_all_forgets_expansion_and_selects_depth0_ancestor)
{
	tuitree_set_tree(T, mk(T1));
	cr_assert_eq(selrow().depth, 3);
	tuitree_collapse_all(T);
	cr_assert_str_eq(rows(), ">0main+ 0other+");
	cr_assert_str_eq(sel_label(), "main");
	/* Forgotten: expanding main shows run collapsed. */
	cr_assert(tuitree_expand(T));
	cr_assert_str_eq(rows(), ">0main- 1run+ 1init 0other+");
}

Test(tuitree, expand_all_expands_the_selected_subtree_only)
{
	tuitree_set_tree(T, mk(T1));
	tuitree_collapse_all(T);
	cr_assert(tuitree_expand(T)); /* main */
	tuitree_move(T, 1);            /* run */
	cr_assert_str_eq(sel_label(), "run");
	tuitree_expand_all(T);
	cr_assert_str_eq(rows(), "0main- >1run- 2hot- 3spin 2cold- 3spin 1init 0other+");
	tuitree_select(T, 7); /* other */
	tuitree_expand_all(T);
	cr_assert_str_eq(rows(), "0main- 1run- 2hot- 3spin 2cold- 3spin 1init >0other- 1x");
	cr_assert_eq(tuitree_nrows(T), 9);
}

Test(tuitree, expansion_kept_while_a_node_is_absent)
{
	tuitree_set_tree(T, mk(T1));
	tuitree_select(T, 6); /* other */
	cr_assert(tuitree_expand(T));
	tuitree_select(T, 0);
	cr_assert_str_eq(rows(), ">0main- 1run- 2hot- 3spin 2cold+ 1init 0other- 1x");
	tuitree_set_tree(T, mk("main;run;hot;spin 60\nmain;run;cold;spin 20\nmain;init 10\n"));
	cr_assert_str_eq(rows(), ">0main- 1run- 2hot- 3spin 2cold+ 1init");
	tuitree_set_tree(T, mk(T1));
	cr_assert_str_eq(rows(), ">0main- 1run- 2hot- 3spin 2cold+ 1init 0other- 1x");
}

/* ---- moving -------------------------------------------------------------------- */

Test(tuitree, move_and_select_clamp)
{
	tuitree_set_tree(T, mk(T1));
	cr_assert_eq(tuitree_selected(T), 3);
	tuitree_move(T, 1);
	cr_assert_eq(tuitree_selected(T), 4);
	cr_assert_str_eq(sel_label(), "cold");
	tuitree_move(T, 100);
	cr_assert_eq(tuitree_selected(T), 6);
	cr_assert_str_eq(sel_label(), "other");
	tuitree_move(T, -100);
	cr_assert_eq(tuitree_selected(T), 0);
	tuitree_select(T, 99);
	cr_assert_eq(tuitree_selected(T), 6);
	tuitree_select(T, -5);
	cr_assert_eq(tuitree_selected(T), 0);
	tuitree_select(T, 5);
	cr_assert_str_eq(sel_label(), "init");
	cr_assert_eq(selrow().depth, 1);
}

Test(tuitree, select_parent_and_first_child)
{
	struct flame_tree *ft = mk(T1);
	tuitree_set_tree(T, ft);
	/* From spin (depth 3) up to main. */
	cr_assert(tuitree_select_parent(T));
	cr_assert_eq(tuitree_selected(T), 2);
	cr_assert_eq(selrow().node, node_at(ft, "main;run;hot"));
	cr_assert(tuitree_select_parent(T));
	cr_assert_eq(tuitree_selected(T), 1);
	cr_assert(tuitree_select_parent(T));
	cr_assert_eq(tuitree_selected(T), 0);
	cr_assert_str_eq(sel_label(), "main");
	cr_assert_not(tuitree_select_parent(T), "depth 0");
	cr_assert_eq(tuitree_selected(T), 0);
	/* And down again. */
	cr_assert(tuitree_select_first_child(T));
	cr_assert_str_eq(sel_label(), "run");
	cr_assert(tuitree_select_first_child(T));
	cr_assert_str_eq(sel_label(), "hot");
	cr_assert(tuitree_select_first_child(T));
	cr_assert_eq(selrow().node, node_at(ft, "main;run;hot;spin"));
	cr_assert_not(tuitree_select_first_child(T), "a leaf");
	tuitree_select(T, 4); /* cold, collapsed */
	cr_assert_not(tuitree_select_first_child(T), "collapsed");
	cr_assert_eq(tuitree_selected(T), 4);
	cr_assert_str_eq(rows(), "0main- 1run- 2hot- 3spin >2cold+ 1init 0other+");
}

Test(tuitree, no_tree_no_rows)
{
	tuitree_set_tree(T, NULL);
	cr_assert_eq(tuitree_nrows(T), 0);
	cr_assert_eq(tuitree_selected(T), -1);
	cr_assert_null(tuitree_display_root(T));
	struct tuitree_row r;
	cr_assert_not(tuitree_row(T, 0, &r));
	tuitree_move(T, 1);
	tuitree_select(T, 3);
	cr_assert_eq(tuitree_selected(T), -1);
	cr_assert_not(tuitree_select_parent(T));
	cr_assert_not(tuitree_select_first_child(T));
	cr_assert_not(tuitree_expand(T));
	cr_assert_not(tuitree_collapse(T));
	tuitree_expand_all(T);
	tuitree_collapse_all(T);
	cr_assert_eq(tuitree_zoom_in(T), -1);
	cr_assert_eq(tuitree_zoom_out(T), -1);
	tuitree_search(T, "x", false);
	size_t k = 99;
	cr_assert_eq(tuitree_matches(T, &k), 0);
	cr_assert_eq(k, 0);
	bool w = true;
	cr_assert_eq(tuitree_search_next(T, 1, &w), -1);
	cr_assert_not(w);
	cr_assert_eq(tuitree_search_first(T), -1);
	cr_assert_eq(tuitree_top(T, 10), 0);
	/* A tree after no tree still gets the hot path; the search applies
	 * (x under the collapsed other). */
	tuitree_set_tree(T, mk(T1));
	cr_assert_str_eq(rows(), T1_AUTO);
	cr_assert_str_eq(kofm(), "0/1");
	tuitree_free(NULL);
}

/* ---- refreshes -------------------------------------------------------------------- */

/* T1 with spin under cold gone (x there instead) and init heavier. */
#define T2 \
	"main;run;hot;spin 60\n" \
	"main;run;cold;x 20\n" \
	"main;init 30\n" \
	"other;x 10\n"
/* T2 with spin under cold back. */
#define T3 \
	"main;run;hot;spin 60\n" \
	"main;run;cold;spin 5\n" \
	"main;run;cold;x 20\n" \
	"main;init 30\n" \
	"other;x 10\n"

Test(tuitree, refresh_keeps_selection_by_path_falls_back_and_restores)
{
	struct flame_tree *t1 = mk(T1);
	tuitree_set_tree(T, t1);
	tuitree_select(T, 4);
	cr_assert(tuitree_expand(T));
	tuitree_move(T, 1);
	cr_assert_eq(selrow().node, node_at(t1, "main;run;cold;spin"));
	cr_assert_str_eq(rows(), "0main- 1run- 2hot- 3spin 2cold- >3spin 1init 0other+");

	/* cold;spin gone: its parent cold is selected, expansion kept. */
	struct flame_tree *t2 = mk(T2);
	tuitree_set_tree(T, t2);
	cr_assert_str_eq(rows(), "0main- 1run- 2hot- 3spin >2cold- 3x 1init 0other+");
	struct tuitree_row r = selrow();
	cr_assert_eq(r.node, node_at(t2, "main;run;cold"));
	cr_assert_eq(r.depth, 2);
	cr_assert_eq(tuitree_display_root(T), t2->root);
	struct tuitree_row ri;
	cr_assert(tuitree_row(T, 6, &ri));
	cr_assert_eq(ri.node, node_at(t2, "main;init"));
	cr_assert_eq(ri.node->total, 30);

	/* Back: the selection returns to it (the user did not move). */
	struct flame_tree *t3 = mk(T3);
	tuitree_set_tree(T, t3);
	cr_assert_str_eq(rows(), "0main- 1run- 2hot- 3spin 2cold- 3x >3spin 1init 0other+");
	r = selrow();
	cr_assert_eq(r.node, node_at(t3, "main;run;cold;spin"));
	cr_assert_eq(r.node->total, 5);
	cr_assert_eq(r.depth, 3);
}

Test(tuitree, refresh_fallback_then_user_move_sticks)
{
	tuitree_set_tree(T, mk(T1));
	tuitree_select(T, 4);
	cr_assert(tuitree_expand(T));
	tuitree_move(T, 1); /* cold;spin */
	tuitree_set_tree(T, mk(T2));
	cr_assert_str_eq(sel_label(), "cold");
	/* The user moves away and back: cold is now where they are. */
	tuitree_move(T, 1);
	tuitree_move(T, -1);
	cr_assert_str_eq(sel_label(), "cold");
	tuitree_set_tree(T, mk(T3));
	cr_assert_str_eq(rows(), "0main- 1run- 2hot- 3spin >2cold- 3x 3spin 1init 0other+");
}

Test(tuitree, refresh_follows_the_node_when_the_order_changes)
{
	tuitree_set_tree(T, mk(T1));
	tuitree_select(T, 4);
	cr_assert(tuitree_expand(T));
	tuitree_move(T, 1); /* cold;spin, row 5 */
	/* cold now heavier than hot: it comes first. */
	struct flame_tree *t = mk("main;run;hot;spin 10\nmain;run;cold;spin 50\nmain;init 30\n"
				  "other;x 10\n");
	tuitree_set_tree(T, t);
	cr_assert_str_eq(rows(), "0main- 1run- 2cold- >3spin 2hot- 3spin 1init 0other+");
	cr_assert_eq(selrow().node, node_at(t, "main;run;cold;spin"));
	cr_assert_eq(selrow().node->total, 50);
}

Test(tuitree, refresh_fallback_to_depth0_and_to_nothing)
{
	tuitree_set_tree(T, mk(T1));
	/* spin under hot selected; only other left: row 0. */
	tuitree_set_tree(T, mk("other;x 10\n"));
	cr_assert_str_eq(rows(), ">0other+");
	/* No tree, then the path again. */
	tuitree_set_tree(T, NULL);
	cr_assert_eq(tuitree_selected(T), -1);
	tuitree_set_tree(T, mk(T1));
	cr_assert_str_eq(rows(), T1_AUTO);
}

/* The row zoom_in selects (row 0) is followed by path: a refresh that
 * reorders the zoom root's children keeps it selected. */
Test(tuitree, refresh_after_zoom_in_keeps_first_row_node)
{
	tuitree_set_tree(T, mk("a;b;x 10\na;c;y 5\nd 1\n"));
	tuitree_select(T, 0); /* a */
	cr_assert_eq(tuitree_zoom_in(T), 0);
	cr_assert_str_eq(rows(), ">0b- 1x 0c+");
	tuitree_set_tree(T, mk("a;b;x 5\na;c;y 20\nd 1\n"));
	cr_assert_str_eq(rows(), "0c+ >0b- 1x");
}

/* Without a hot path the first tree selects row 0, and a refresh that
 * reorders the top level keeps that node selected. */
Test(tuitree, refresh_keeps_initial_selection_without_hot_path)
{
	tuitree_set_tree(T, mk("a;x 5\nb 5\n"));
	cr_assert_str_eq(rows(), ">0a+ 0b");
	tuitree_set_tree(T, mk("a;x 5\nb 7\n"));
	cr_assert_str_eq(rows(), "0b >0a+");
}

/* ---- zoom ------------------------------------------------------------------------ */

Test(tuitree, zoom_in_and_out)
{
	struct flame_tree *ft = mk(T1);
	tuitree_set_tree(T, ft);
	tuitree_select(T, 1); /* run */
	cr_assert_eq(tuitree_zoom_in(T), 0);
	cr_assert_eq(tuitree_zoom_depth(T), 1);
	cr_assert_eq(tuitree_display_root(T), node_at(ft, "main;run"));
	cr_assert_str_eq(rows(), ">0hot- 1spin 0cold+");
	cr_assert_eq(tuitree_top(T, 2), 0);
	/* Depth 0 under the zoom: no parent to go to. */
	cr_assert_not(tuitree_select_parent(T));
	cr_assert_eq(tuitree_selected(T), 0);

	cr_assert_eq(tuitree_zoom_in(T), 0); /* hot */
	cr_assert_eq(tuitree_zoom_depth(T), 2);
	cr_assert_eq(tuitree_display_root(T), node_at(ft, "main;run;hot"));
	cr_assert_str_eq(rows(), ">0spin");
	cr_assert_eq(tuitree_zoom_in(T), -1, "a leaf");
	cr_assert_eq(tuitree_zoom_depth(T), 2);
	cr_assert_str_eq(rows(), ">0spin");

	cr_assert_eq(tuitree_zoom_out(T), 0);
	cr_assert_eq(tuitree_zoom_depth(T), 1);
	cr_assert_eq(tuitree_display_root(T), node_at(ft, "main;run"));
	cr_assert_str_eq(rows(), ">0hot- 1spin 0cold+");

	cr_assert_eq(tuitree_zoom_out(T), 0);
	cr_assert_eq(tuitree_zoom_depth(T), 0);
	cr_assert_eq(tuitree_display_root(T), ft->root);
	cr_assert_str_eq(rows(), "0main- >1run- 2hot- 3spin 2cold+ 1init 0other+");
	cr_assert_eq(tuitree_zoom_out(T), -1);
}

Test(tuitree, zoom_out_selects_where_the_selection_went)
{
	struct flame_tree *ft = mk(T1);
	tuitree_set_tree(T, ft);
	tuitree_select(T, 1); /* run */
	cr_assert_eq(tuitree_zoom_in(T), 0);
	tuitree_select(T, 2); /* cold */
	cr_assert(tuitree_expand(T));
	tuitree_move(T, 1);
	cr_assert_str_eq(rows(), "0hot- 1spin 0cold- >1spin");
	cr_assert_eq(selrow().depth, 1);
	cr_assert_eq(tuitree_zoom_out(T), 0);
	cr_assert_str_eq(rows(), "0main- 1run- 2hot- 3spin 2cold- >3spin 1init 0other+");
	cr_assert_eq(selrow().node, node_at(ft, "main;run;cold;spin"));
}

Test(tuitree, zoom_out_expands_ancestors_of_the_selection)
{
	tuitree_set_tree(T, mk(T1));
	tuitree_select(T, 1); /* run */
	cr_assert_eq(tuitree_zoom_in(T), 0);
	tuitree_move(T, 1); /* spin under hot */
	/* Forgets all expansion, main and run included; selects hot. */
	tuitree_collapse_all(T);
	cr_assert_str_eq(rows(), ">0hot+ 0cold+");
	cr_assert_eq(tuitree_zoom_out(T), 0);
	cr_assert_str_eq(rows(), "0main- 1run- >2hot+ 2cold+ 1init 0other+");
}

Test(tuitree, zoom_in_needs_children_and_a_selection)
{
	tuitree_set_tree(T, mk(T1));
	tuitree_select(T, 5); /* init, a leaf */
	cr_assert_eq(tuitree_zoom_in(T), -1);
	cr_assert_eq(tuitree_zoom_depth(T), 0);
	cr_assert_eq(tuitree_selected(T), 5);
	tuitree_set_tree(T, mk(""));
	cr_assert_eq(tuitree_zoom_in(T), -1);
	cr_assert_eq(tuitree_zoom_depth(T), 0);
}

Test(tuitree, zoom_survives_refreshes_by_path)
{
	tuitree_set_tree(T, mk(T1));
	tuitree_select(T, 1); /* run */
	cr_assert_eq(tuitree_zoom_in(T), 0);
	tuitree_select(T, 2); /* cold */
	cr_assert(tuitree_expand(T));
	tuitree_move(T, 1); /* cold;spin */

	/* A new tree: the zoom follows run by path. */
	struct flame_tree *t3 = mk(T3);
	tuitree_set_tree(T, t3);
	cr_assert_eq(tuitree_display_root(T), node_at(t3, "main;run"));
	cr_assert_str_eq(rows(), "0hot- 1spin 0cold- 1x >1spin");

	/* run gone: the nearest existing ancestor (main) is shown. */
	struct flame_tree *t4 = mk("main;init 30\nother;x 10\n");
	tuitree_set_tree(T, t4);
	cr_assert_eq(tuitree_zoom_depth(T), 1);
	cr_assert_eq(tuitree_display_root(T), node_at(t4, "main"));
	cr_assert_str_eq(rows(), ">0init");

	/* Back: zoom and selection restored. */
	struct flame_tree *t5 = mk(T3);
	tuitree_set_tree(T, t5);
	cr_assert_eq(tuitree_display_root(T), node_at(t5, "main;run"));
	cr_assert_str_eq(rows(), "0hot- 1spin 0cold- 1x >1spin");
	cr_assert_eq(tuitree_zoom_out(T), 0);
	cr_assert_str_eq(rows(), "0main- 1run- 2hot- 3spin 2cold- 3x >3spin 1init 0other+");
}

/* ---- search ------------------------------------------------------------------------ */

/* 4 "work" nodes, one "idle": main > a > work is the hot path. */
#define TS \
	"main;a;work 30\n" \
	"main;a;b;work 20\n" \
	"main;c;work 25\n" \
	"main;c;idle 5\n" \
	"other;work 20\n"

Test(tuitree, search_substring_exact_and_case)
{
	tuitree_set_tree(T, mk(T1));
	tuitree_search(T, "spin", false);
	cr_assert_str_eq(kofm(), "1/2");
	cr_assert_str_eq(rows(), "0main- 1run- 2hot- >3spin* 2cold+ 1init 0other+");
	tuitree_search(T, "o", false); /* hot, cold, other */
	cr_assert_str_eq(kofm(), "0/3");
	cr_assert_str_eq(rows(), "0main- 1run- 2hot-* >3spin 2cold+* 1init 0other+*");
	tuitree_search(T, "spi", false);
	cr_assert_str_eq(kofm(), "1/2");
	tuitree_search(T, "spi", true);
	cr_assert_str_eq(kofm(), "0/0");
	tuitree_search(T, "spin", true);
	cr_assert_str_eq(kofm(), "1/2");
	tuitree_search(T, "SPIN", false);
	cr_assert_str_eq(kofm(), "0/0");
	tuitree_search(T, "spin", false);
	tuitree_search(T, "", false);
	cr_assert_str_eq(kofm(), "0/0");
	cr_assert_str_eq(rows(), T1_AUTO);
	tuitree_search(T, "spin", false);
	tuitree_search(T, NULL, false);
	cr_assert_str_eq(kofm(), "0/0");
	cr_assert_str_eq(rows(), T1_AUTO);
	cr_assert_eq(tuitree_matches(T, NULL), 0);
}

Test(tuitree, search_matches_label_with_kind_suffix)
{
	tuitree_set_tree(T, mk("app;sched^k 5\napp;sched 3\napp;go 1\n"));
	cr_assert_str_eq(rows(), "0app- >1sched_[k] 1sched 1go");
	tuitree_search(T, "sched", true);
	cr_assert_str_eq(kofm(), "0/1");
	cr_assert_str_eq(rows(), "0app- >1sched_[k] 1sched* 1go");
	tuitree_search(T, "sched_[k]", true);
	cr_assert_str_eq(kofm(), "1/1");
	tuitree_search(T, "_[k]", false);
	cr_assert_str_eq(kofm(), "1/1");
	tuitree_search(T, "sched", false);
	cr_assert_str_eq(kofm(), "1/2");
}

Test(tuitree, search_counts_hidden_matches_and_first_reveals)
{
	tuitree_set_tree(T, mk(T1));
	tuitree_collapse_all(T);
	tuitree_search(T, "spin", false);
	cr_assert_str_eq(kofm(), "0/2");
	cr_assert_str_eq(rows(), ">0main+ 0other+");
	cr_assert_eq(tuitree_search_first(T), 0);
	cr_assert_str_eq(rows(), "0main- 1run- 2hot- >3spin* 2cold+ 1init 0other+");
	cr_assert_str_eq(kofm(), "1/2");
	tuitree_search(T, "x", true);
	cr_assert_eq(tuitree_search_first(T), 0);
	cr_assert_str_eq(rows(), "0main- 1run- 2hot- 3spin 2cold+ 1init 0other- >1x*");
	cr_assert_str_eq(kofm(), "1/1");
	tuitree_search(T, "nothing", false);
	cr_assert_eq(tuitree_search_first(T), -1);
	cr_assert_eq(tuitree_selected(T), 7);
}

Test(tuitree, search_next_previous_wrap_and_reveal)
{
	tuitree_set_tree(T, mk(TS));
	cr_assert_str_eq(rows(), "0main- 1a- >2work 2b+ 1c+ 0other+");
	tuitree_search(T, "work", false);
	cr_assert_str_eq(kofm(), "1/4");
	bool w = true;
	cr_assert_eq(tuitree_search_next(T, 1, &w), 0);
	cr_assert_not(w);
	cr_assert_str_eq(kofm(), "2/4");
	cr_assert_str_eq(rows(), "0main- 1a- 2work* 2b- >3work* 1c+ 0other+");
	cr_assert_eq(tuitree_search_next(T, 1, &w), 0);
	cr_assert_not(w);
	cr_assert_str_eq(kofm(), "3/4");
	cr_assert_str_eq(rows(), "0main- 1a- 2work* 2b- 3work* 1c- >2work* 2idle 0other+");
	cr_assert_eq(tuitree_search_next(T, 1, &w), 0);
	cr_assert_not(w);
	cr_assert_str_eq(kofm(), "4/4");
	cr_assert_str_eq(rows(), "0main- 1a- 2work* 2b- 3work* 1c- 2work* 2idle 0other- >1work*");
	cr_assert_eq(tuitree_nrows(T), 10);
	cr_assert_eq(tuitree_search_next(T, 1, &w), 0);
	cr_assert(w, "wrapped to the first");
	cr_assert_str_eq(kofm(), "1/4");
	cr_assert_eq(tuitree_selected(T), 2);
	cr_assert_eq(tuitree_search_next(T, -1, &w), 0);
	cr_assert(w, "wrapped to the last");
	cr_assert_str_eq(kofm(), "4/4");
	cr_assert_eq(tuitree_selected(T), 9);
	cr_assert_eq(tuitree_search_next(T, -1, &w), 0);
	cr_assert_not(w);
	cr_assert_str_eq(kofm(), "3/4");
	cr_assert_eq(tuitree_selected(T), 6);
	cr_assert_eq(selrow().depth, 2);
	/* From a non-match: the next one after it in tree order. */
	tuitree_select(T, 7); /* idle */
	cr_assert_str_eq(kofm(), "0/4");
	cr_assert_eq(tuitree_search_next(T, -1, &w), 0);
	cr_assert_eq(tuitree_selected(T), 6);
	tuitree_select(T, 7);
	cr_assert_eq(tuitree_search_next(T, 1, NULL), 0);
	cr_assert_eq(tuitree_selected(T), 9);
	/* No match: nothing moves. */
	tuitree_search(T, "zzz", false);
	w = true;
	cr_assert_eq(tuitree_search_next(T, 1, &w), -1);
	cr_assert_not(w);
	cr_assert_eq(tuitree_selected(T), 9);
}

Test(tuitree, search_single_match_wraps_onto_itself)
{
	tuitree_set_tree(T, mk(TS));
	tuitree_search(T, "idle", true);
	bool w = true;
	cr_assert_eq(tuitree_search_next(T, 1, &w), 0);
	cr_assert_not(w);
	cr_assert_str_eq(sel_label(), "idle");
	cr_assert_str_eq(kofm(), "1/1");
	cr_assert_eq(tuitree_search_next(T, 1, &w), 0);
	cr_assert(w);
	cr_assert_str_eq(kofm(), "1/1");
}

Test(tuitree, search_under_zoom)
{
	struct flame_tree *ft = mk(TS);
	tuitree_set_tree(T, ft);
	tuitree_select(T, 1); /* a */
	cr_assert_eq(tuitree_zoom_in(T), 0);
	cr_assert_str_eq(rows(), ">0work 0b+");
	tuitree_search(T, "work", false);
	cr_assert_str_eq(kofm(), "1/2");
	bool w = true;
	cr_assert_eq(tuitree_search_next(T, 1, &w), 0);
	cr_assert_not(w);
	cr_assert_str_eq(rows(), "0work* 0b- >1work*");
	cr_assert_str_eq(kofm(), "2/2");
	cr_assert_eq(tuitree_search_next(T, 1, &w), 0);
	cr_assert(w);
	cr_assert_eq(tuitree_selected(T), 0);
	cr_assert_eq(tuitree_search_next(T, -1, &w), 0);
	cr_assert(w);
	cr_assert_eq(tuitree_selected(T), 2);
	cr_assert_eq(tuitree_search_first(T), 0);
	cr_assert_eq(tuitree_selected(T), 0);
	cr_assert_eq(tuitree_display_root(T), node_at(ft, "main;a"));
	cr_assert_eq(tuitree_zoom_depth(T), 1);
	/* idle is outside the zoom. */
	tuitree_search(T, "idle", false);
	cr_assert_str_eq(kofm(), "0/0");
	cr_assert_eq(tuitree_search_next(T, 1, &w), -1);
	cr_assert_eq(tuitree_search_first(T), -1);
	cr_assert_eq(tuitree_selected(T), 0);
	cr_assert_eq(tuitree_zoom_out(T), 0);
	cr_assert_str_eq(kofm(), "0/1");
	cr_assert_eq(tuitree_search_first(T), 0);
	cr_assert_str_eq(rows(), "0main- 1a- 2work 2b- 3work 1c- 2work >2idle* 0other+");
}

Test(tuitree, search_recomputed_on_a_new_tree)
{
	tuitree_set_tree(T, mk(T1));
	tuitree_search(T, "spin", false);
	cr_assert_str_eq(kofm(), "1/2");
	tuitree_set_tree(T, mk(T2));
	cr_assert_str_eq(kofm(), "1/1");
	tuitree_set_tree(T, mk(T3));
	cr_assert_str_eq(kofm(), "1/2");
}

/* Labels are matched whole, however long (C++ names): a pattern past the
 * first 511 bytes is found, and the name matches itself exactly. */
Test(tuitree, search_long_label)
{
	char name[701];
	memset(name, 'n', 690);
	strcpy(name + 690, "TAILMARKER");
	char spec[800];
	snprintf(spec, sizeof(spec), "%s 1\n", name);
	tuitree_set_tree(T, mk(spec));
	tuitree_search(T, "TAILMARKER", false);
	cr_assert_str_eq(kofm(), "1/1");
	tuitree_search(T, name, true);
	cr_assert_str_eq(kofm(), "1/1");
}

/* ---- scrolling ------------------------------------------------------------------- */

/* 20 leaves f00 (40 samples) .. f19 (21): rows in that order, no hot path. */
static struct flame_tree *flat(int extra)
{
	char spec[1024];
	size_t len = 0;
	for (int i = 0; i < 20; i++)
		len += (size_t)snprintf(spec + len, sizeof(spec) - len, "f%02d %d\n", i, 40 - i);
	for (int i = 0; i < extra; i++)
		len += (size_t)snprintf(spec + len, sizeof(spec) - len, "e%d %d\n", i, 50 + i);
	return mk(spec);
}

Test(tuitree, top_keeps_selection_visible)
{
	tuitree_set_tree(T, flat(0));
	cr_assert_eq(tuitree_nrows(T), 20);
	cr_assert_eq(tuitree_selected(T), 0);
	cr_assert_eq(tuitree_top(T, 5), 0);
	tuitree_select(T, 4);
	cr_assert_eq(tuitree_top(T, 5), 0);
	tuitree_select(T, 5);
	cr_assert_eq(tuitree_top(T, 5), 1);
	tuitree_select(T, 19);
	cr_assert_eq(tuitree_top(T, 5), 15);
	tuitree_select(T, 12); /* above the panel: it scrolls up to it */
	cr_assert_eq(tuitree_top(T, 5), 12);
	tuitree_move(T, -1);
	cr_assert_eq(tuitree_top(T, 5), 11);
	tuitree_select(T, 14); /* inside 11..15: the top stays */
	cr_assert_eq(tuitree_top(T, 5), 11);
	cr_assert_eq(tuitree_top(T, 5), 11);
	/* A taller panel is filled. */
	tuitree_select(T, 19);
	cr_assert_eq(tuitree_top(T, 5), 15);
	cr_assert_eq(tuitree_top(T, 10), 10);
	cr_assert_eq(tuitree_top(T, 30), 0);
	cr_assert_eq(tuitree_top(T, 0), 0);
	cr_assert_eq(tuitree_top(T, 1), 19);
}

Test(tuitree, top_centres_after_a_search_jump)
{
	tuitree_set_tree(T, flat(0));
	cr_assert_eq(tuitree_top(T, 5), 0);
	tuitree_search(T, "f15", true);
	cr_assert_eq(tuitree_search_first(T), 0);
	cr_assert_eq(tuitree_selected(T), 15);
	cr_assert_eq(tuitree_top(T, 5), 13);
	cr_assert_eq(tuitree_top(T, 5), 13);
	/* A jump inside the panel does not scroll. */
	tuitree_search(T, "f14", true);
	cr_assert_eq(tuitree_search_next(T, -1, NULL), 0);
	cr_assert_eq(tuitree_selected(T), 14);
	cr_assert_eq(tuitree_top(T, 5), 13);
	/* A plain move off-screen scrolls just enough. */
	tuitree_select(T, 2);
	cr_assert_eq(tuitree_top(T, 5), 2);
	/* Centring near the end still fills the panel. */
	tuitree_search(T, "f19", true);
	cr_assert_eq(tuitree_search_next(T, 1, NULL), 0);
	cr_assert_eq(tuitree_top(T, 5), 15);
}

Test(tuitree, top_keeps_the_selected_row_in_place_across_refreshes)
{
	tuitree_set_tree(T, flat(0));
	tuitree_select(T, 12);
	cr_assert_eq(tuitree_top(T, 5), 8); /* 4th row of the panel */
	/* Two heavier leaves come first: f12 is row 14, still the 4th. */
	tuitree_set_tree(T, flat(2));
	cr_assert_eq(tuitree_nrows(T), 22);
	cr_assert_eq(tuitree_selected(T), 14);
	cr_assert_str_eq(sel_label(), "f12");
	cr_assert_eq(tuitree_top(T, 5), 10);
	/* And back. */
	tuitree_set_tree(T, flat(0));
	cr_assert_eq(tuitree_selected(T), 12);
	cr_assert_eq(tuitree_top(T, 5), 8);
}
