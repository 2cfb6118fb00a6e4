/* view_args — the offline commands' view options. The contract is in
 * view_args.h. */
#include "view_args.h"

#include <stdint.h>

#include "optval.h"

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
