/* view_args — the offline commands' view options. The contract is in
 * view_args.h. */
#include "view_args.h"

#include <stdint.h>

#include "errbuf.h"
#include "optval.h"
#include "query.h"

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
	return 0;
}
