/* command — the commands as values: equality, their names, which change
 * what the kernel gathers. The API is command.h; its rooms are cmdparse
 * (command_parse, with cmdwords, cmdvalues, cmdsuggest, cmdargs, cmdtable:
 * the table and help) and cmdformat (command_format). */
#include "command.h"

#include <string.h>

static bool uses_arg(enum command_kind k)
{
	switch (k) {
	case CMD_TRACE:
	case CMD_UNTRACE:
	case CMD_SAMPLE_EVENT:
	case CMD_SAMPLE_IN:
	case CMD_SAMPLE_WHEN:
	case CMD_SAMPLE_SLOW:
	case CMD_VIEW_IN:
	case CMD_VIEW_SLOW:
	case CMD_VIEW_FAST:
	case CMD_FILTER_COMM:
	case CMD_SAVE:
	case CMD_BY:
	case CMD_HELP:
		return true;
	default:
		return false;
	}
}

bool command_equal(const struct command *a, const struct command *b)
{
	if (a->kind != b->kind)
		return false;
	if (uses_arg(a->kind) && strncmp(a->arg, b->arg, sizeof(a->arg)) != 0)
		return false;
	switch (a->kind) {
	case CMD_SAMPLE_HZ:
		return a->hz == b->hz;
	case CMD_SAMPLE_SLOW:
	case CMD_WINDOW:
	case CMD_EWMA:
		return a->ns == b->ns;
	case CMD_FILTER_PID:
		return a->pid == b->pid;
	case CMD_FILTER_TID:
		return a->tid == b->tid;
	case CMD_VIEW_SLOW:
	case CMD_VIEW_FAST:
		if (a->has_threshold != b->has_threshold)
			return false;
		return !a->has_threshold || threshold_equal(&a->threshold, &b->threshold);
	default:
		return true;
	}
}

bool command_changes_gathering(enum command_kind kind)
{
	return kind >= CMD_TRACE && kind <= CMD_SAMPLE_SLOW_OFF;
}

const char *command_name(enum command_kind kind)
{
	switch (kind) {
	case CMD_NONE:
		return "";
	case CMD_TRACE:
		return "trace";
	case CMD_UNTRACE:
		return "untrace";
	case CMD_SAMPLE_HZ:
	case CMD_SAMPLE_OFF:
	case CMD_SAMPLE_EVENT:
	case CMD_SAMPLE_OFFCPU:
	case CMD_SAMPLE_OFFCPU_OFF:
	case CMD_SAMPLE_THREADS:
	case CMD_SAMPLE_THREADS_OFF:
		return "sample";
	case CMD_SAMPLE_IN:
	case CMD_SAMPLE_IN_OFF:
		return "sample-in";
	case CMD_SAMPLE_WHEN:
	case CMD_SAMPLE_WHEN_OFF:
		return "sample-when";
	case CMD_SAMPLE_SLOW:
	case CMD_SAMPLE_SLOW_OFF:
		return "sample-slow";
	case CMD_VIEW_IN:
		return "in";
	case CMD_VIEW_SLOW:
		return "slow";
	case CMD_VIEW_FAST:
		return "fast";
	case CMD_VIEW_ALL:
		return "all";
	case CMD_WINDOW:
		return "window";
	case CMD_EWMA:
		return "ewma";
	case CMD_FILTER_PID:
	case CMD_FILTER_TID:
	case CMD_FILTER_COMM:
	case CMD_FILTER_CLEAR:
		return "filter";
	case CMD_RESET:
		return "reset";
	case CMD_SAVE:
		return "save";
	case CMD_STATUS:
		return "status";
	case CMD_THREADS:
		return "threads";
	case CMD_BY:
		return "by";
	case CMD_HELP:
		return "help";
	}
	return "";
}
