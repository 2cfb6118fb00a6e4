/* Unit tests for the thread table's JSON (render/threadtable.h): the rows
 * sonde threads prints, as the `threads` command's data and sonde serve's
 * /api/threads give them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "profile.h"
#include "sonde_abi.h"
#include "threadstates.h"
#include "threadtable.h"

#define MS 1000000ull

Test(threadtable, json_rows_exact)
{
	struct profile *p = profile_new();
	uint32_t probe = profile_probe_add(p, "handle_request", "/bin/server", 0x1000);
	uint32_t a = profile_thread_intern(p, 10, 11, "read\"er"), b = profile_thread_intern(p, 10, 12, "spin");
	/* a: asleep in read since before sonde (seeded: lower bounds), in a
	 * traced call; b: running, its system call not known from /proc */
	profile_add_thread_sample(p, &(struct thread_sample){
		.time_ns = 100 * MS, .thread = a, .state = TSTATE_SLEEPING, .state_since_ns = 40 * MS,
		.syscall = 0, .syscall_since_ns = 40 * MS, .span_id = 7, .span_start_ns = 30 * MS,
		.probe = probe, .flags = TSTATE_FLAG_SEEDED | TSTATE_FLAG_SYSCALL_SEEDED});
	profile_add_thread_sample(p, &(struct thread_sample){
		.time_ns = 100 * MS, .thread = b, .state = TSTATE_RUNNING, .state_since_ns = 99 * MS,
		.syscall = TSTATE_SYSCALL_UNKNOWN});
	struct threadstate_row *rows;
	uint64_t when;
	size_t n = threadstates_last_pass(p, &rows, &when);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	threadtable_write_json(out, p, rows, n, when, 150 * MS);
	fclose(out);
	cr_assert_str_eq(
		text,
		"{\"time_ns\":100000000,\"ago_ns\":50000000,\"counts\":{\"running\":1,\"runnable\":0,"
		"\"sleeping\":1,\"uninterruptible\":0,\"disk\":0,\"stopped\":0},\"threads\":["
		"{\"tid\":12,\"pid\":10,\"comm\":\"spin\",\"state\":\"running\",\"state_ns\":1000000,"
		"\"state_lower_bound\":false,\"syscall\":\"?\",\"syscall_ns\":null,"
		"\"syscall_lower_bound\":false,\"call\":null,\"call_ns\":null,\"span_id\":null,"
		"\"stack\":\"-\",\"frames\":[],\"stack_ns\":null},"
		"{\"tid\":11,\"pid\":10,\"comm\":\"read\\\"er\",\"state\":\"sleeping\",\"state_ns\":60000000,"
		"\"state_lower_bound\":true,\"syscall\":\"read\",\"syscall_ns\":60000000,"
		"\"syscall_lower_bound\":true,\"call\":\"handle_request\",\"call_ns\":70000000,"
		"\"span_id\":7,\"stack\":\"-\",\"frames\":[],\"stack_ns\":null}]}");
	free(text);
	free(rows);
	/* No pass yet: nulls and no rows. */
	text = NULL;
	out = open_memstream(&text, &len);
	threadtable_write_json(out, p, NULL, 0, 0, 150 * MS);
	fclose(out);
	cr_assert_str_eq(text, "{\"time_ns\":null,\"ago_ns\":null,\"counts\":{\"running\":0,"
			       "\"runnable\":0,\"sleeping\":0,\"uninterruptible\":0,\"disk\":0,"
			       "\"stopped\":0},\"threads\":[]}");
	free(text);
	profile_free(p);
}
