/* view_args — the offline commands' view options. The contract is in
 * view_args.h. */
#include "view_args.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "errbuf.h"
#include "optval.h"
#include "query.h"
#include "util.h"

int view_args_parse_option(struct view *v, enum view_time *time, int c, const char *arg)
{
	uint64_t id;
	switch (c) {
	case 'P':
	case 'T':
		if (optval_count(c == 'P' ? "--pid" : "--tid", arg, 1, UINT32_MAX, &id))
			return -1;
		*(c == 'P' ? &v->pid : &v->tid) = (int64_t)id;
		return 1;
	case 'C':
		v->comm = arg;
		return 1;
	case 'E':
		v->event = arg;
		return 1;
	case 'O':
		v->show_overhead = true;
		return 1;
	}
	if (!time)
		return 0;
	switch (c) {
	case 'X':
		*time = VIEW_OFF_CPU;
		return 1;
	case 'L':
		*time = VIEW_WALL;
		return 1;
	case 'K':
		*time = VIEW_WAKERS;
		return 1;
	}
	return 0;
}

int view_args_parse_span(struct view_span_arg *s, int c, const char *arg)
{
	if (c == VIEW_ARGS_OPT_WHEN) {
		s->when = arg;
		return 1;
	}
	if (c != VIEW_ARGS_OPT_IN && c != VIEW_ARGS_OPT_SLOW && c != VIEW_ARGS_OPT_FAST)
		return 0;
	if (s->arg) {
		errorf("give one of --in, --slow, --fast");
		return -1;
	}
	s->arg = arg;
	s->cls = c == VIEW_ARGS_OPT_IN ? SPAN_IN : c == VIEW_ARGS_OPT_SLOW ? SPAN_SLOW : SPAN_FAST;
	return 1;
}

/* --when: the line or branch outcome probe named, its bit in v. */
static int apply_when(const char *when, const struct profile *p, struct view *v, char *desc,
		      size_t desclen)
{
	int id = profile_probe_find(p, when);
	if (id < 0 || p->probes[id].point < 0) {
		char list[512] = "";
		size_t off = 0;
		for (size_t i = 0; i < p->nprobes && off < sizeof(list); i++)
			if (p->probes[i].point >= 0) {
				int w = snprintf(list + off, sizeof(list) - off, "%s%s", off ? ", " : "",
						 p->probes[i].name);
				off = w < 0 ? sizeof(list) : off + (size_t)w;
			}
		errorf("--when %s: no line or branch outcome of that name was traced%s%s", when,
		       off ? "; traced: " : " (record with --trace 'FILE:LINE' or --trace 'branch "
					    "FILE:LINE')",
		       list);
		return -1;
	}
	v->when_points |= 1ull << (p->probes[id].point & 63);
	size_t len = strlen(desc);
	if (len < desclen)
		snprintf(desc + len, desclen - len, " during which %s %s", when,
			 p->probes[id].branch ? "happened" : "ran");
	return 0;
}

int view_args_apply_span(const struct view_span_arg *s, struct profile *p, struct view *v,
			 char *desc, size_t desclen)
{
	char err[512];
	struct span_query q;
	if (query_parse(p, s->cls, s->arg, &q, err, sizeof(err))) {
		errorf("%s", err);
		return -1;
	}
	query_apply(&q, v);
	query_describe(&q, p, v, desc, desclen);
	return s->when ? apply_when(s->when, p, v, desc, desclen) : 0;
}

int view_args_check_when(const struct view_span_arg *s)
{
	if (s->when && !s->arg) {
		errorf("--when %s needs the calls it is about: --in, --slow or --fast FUNC", s->when);
		return -1;
	}
	return 0;
}
