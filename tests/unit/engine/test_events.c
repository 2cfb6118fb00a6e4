/* Unit tests for events: event specs as users write them (perf's names and
 * aliases, tracepoints as category:name), what is refused, and the online
 * CPU list. */
#include <criterion/criterion.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "events.h"

Test(events, software_events_and_their_aliases)
{
	struct event_spec e;
	char err[512] = "";
	cr_assert_eq(events_parse("cpu-clock", &e, err, sizeof(err)), 0);
	cr_expect_eq(e.type, EVENT_SOFTWARE);
	cr_expect_eq(e.config, PERF_COUNT_SW_CPU_CLOCK);
	cr_expect(e.time_based);
	cr_expect_str_eq(e.name, "cpu-clock");
	cr_assert_eq(events_parse("faults", &e, err, sizeof(err)), 0);
	cr_expect_eq(e.config, PERF_COUNT_SW_PAGE_FAULTS);
	cr_expect_str_eq(e.name, "page-faults", "an alias gets the canonical name");
	cr_expect(!e.time_based);
	cr_assert_eq(events_parse("cs", &e, err, sizeof(err)), 0);
	cr_expect_eq(e.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	cr_assert_eq(events_parse("migrations", &e, err, sizeof(err)), 0);
	cr_expect_str_eq(e.name, "cpu-migrations");
	cr_assert_eq(events_parse("task-clock", &e, err, sizeof(err)), 0);
	cr_expect_eq(e.config, PERF_COUNT_SW_TASK_CLOCK);
	cr_expect(e.time_based);
}

Test(events, tracepoints_as_category_name)
{
	struct event_spec e;
	char err[512] = "";
	cr_assert_eq(events_parse("sched:sched_switch", &e, err, sizeof(err)), 0);
	cr_expect_eq(e.type, EVENT_TRACEPOINT);
	cr_expect_str_eq(e.category, "sched");
	cr_expect_str_eq(e.tp_name, "sched_switch");
	cr_expect_str_eq(e.name, "sched:sched_switch");
	cr_expect(!e.time_based);
	cr_assert_eq(events_parse("block:block_rq-insert2", &e, err, sizeof(err)), 0);
	cr_expect_str_eq(e.tp_name, "block_rq-insert2");
}

static bool refused(const char *spec)
{
	struct event_spec e;
	char err[512] = "";
	int r = events_parse(spec, &e, err, sizeof(err));
	if (r == 0)
		return false;
	char want[300];
	snprintf(want, sizeof(want), "unknown event '%s'", spec);
	cr_expect(strstr(err, want), "'%s' does not say %s", err, want);
	cr_expect(strstr(err, "cpu-clock"), "'%s' lists no valid name", err);
	return true;
}

Test(events, what_is_refused)
{
	cr_expect(refused("cycles"));
	cr_expect(refused(""));
	cr_expect(refused("CPU-CLOCK"));
	cr_expect(refused("sched:"));
	cr_expect(refused(":sched_switch"));
	cr_expect(refused("a:b:c"));
	cr_expect(refused("sched:sched switch"));
	cr_expect(refused("sched/x:y"));
	char longcat[80];
	memset(longcat, 'c', 64);
	strcpy(longcat + 64, ":x");
	cr_expect(refused(longcat), "a category longer than 63 characters");
}

Test(events, online_cpus)
{
	int cpus[1024];
	int n = events_online_cpus(cpus, 1024);
	cr_assert_gt(n, 0);
	for (int i = 0; i < n; i++) {
		cr_expect_geq(cpus[i], 0);
		if (i)
			cr_expect_gt(cpus[i], cpus[i - 1], "ascending, each once");
	}
	int one[1] = {-1};
	cr_expect_eq(events_online_cpus(one, 1), 1, "at most max");
	cr_expect_eq(one[0], cpus[0]);
}
